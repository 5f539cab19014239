/**
 * Azure OpenAI (`*.openai.azure.com`, `*.cognitiveservices.azure.com`, `*.services.ai.azure.com`) — recorded traffic.
 *
 * Streams: vercel/ai, packages/azure/src/__fixtures__/
 * - azure-text.1.chunks.txt @ 1b219322a212e355135a46b01de9eaa3ff30f01c (text, with Azure's content_filters)
 * - azure-reasoning-encrypted-content.1.chunks.txt @ 55cd1a40625f1ea6eda228cb413234328c215537
 *   (first response: encrypted reasoning and a call, renamed bash; last response: the answer)
 * Error bodies: the include refusal as pydantic/pydantic-ai#2865 quotes it (gpt-4o on Azure), Azure's context
 * window wording ("This model's maximum context length is ..."), its content filter and its missing deployment.
 *
 * Input rules: OpenAI's (the same service): reasoning only with `encrypted_content` under `store: false`.
 * The URL: a base URL with `?api-version=` keeps it as a query on every request (`/openai/responses?api-version=`);
 * the key goes in `api-key`, the header Azure documents for key auth, and no bearer token is sent.
 */
import { describe, expect } from "@effect/vitest"
import { adaptsToNoInclude, API_KEY, conformance, type Family, load } from "./Driver.js"
import * as Rules from "./Rules.js"

const API_VERSION = "2025-04-01-preview"

const family: Family = {
  name: "Azure OpenAI",
  host: "mino-test.openai.azure.com",
  baseURL: (loopback) => `${loopback.replace(/\/v1$/, "/openai")}?api-version=${API_VERSION}`,
  model: "gpt-5.1",
  text: load("azure.text"),
  toolCall: load("azure.tool-call"),
  afterTool: load("azure.after-tool"),
  accepts: Rules.openAi,
  reasoning: "verbatim",
  request: (request) => {
    expect(request.url).toBe(`/openai/responses?api-version=${API_VERSION}`)
    expect(request.headers["api-key"]).toBe(API_KEY)
    expect(request.headers["authorization"]).toBeUndefined()
  },
  errors: [
    {
      name: "HTTP 400 context_length_exceeded in Azure's wording",
      reply: {
        status: 400,
        body: {
          error: {
            message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens. Please reduce the length of the messages.",
            type: "invalid_request_error",
            param: "messages",
            code: "context_length_exceeded"
          }
        }
      },
      line: /context window; start a new conversation with `mino --new`$/
    },
    {
      name: "HTTP 400 content_filter",
      reply: {
        status: 400,
        body: {
          error: {
            message: "The response was filtered due to the prompt triggering Azure OpenAI's content management policy.",
            type: null,
            param: "prompt",
            code: "content_filter",
            status: 400
          }
        }
      },
      line: /^model request failed: HTTP 400: The response was filtered due to the prompt triggering Azure OpenAI's content management policy\.$/
    },
    {
      name: "HTTP 404 DeploymentNotFound",
      reply: {
        status: 404,
        body: { error: { code: "DeploymentNotFound", message: "The API deployment for this resource does not exist." } }
      },
      line: /^model request failed: HTTP 404: The API deployment for this resource does not exist\.$/
    }
  ]
}

describe("endpoint conformance", () => {
  conformance(family)
  describe("Azure adaptations", () => {
    adaptsToNoInclude(family, {
      status: 400,
      body: { error: { message: "Encrypted content is not supported with this model.", type: "invalid_request_error", param: "include", code: null } }
    })
  })
})
