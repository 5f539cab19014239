/**
 * xAI (api.x.ai) — recorded text; the tool call rebuilt on that recording from xAI's published API description.
 *
 * Text: vercel/ai, packages/xai/src/responses/__fixtures__/xai-text-with-reasoning-streaming-store-false.1.chunks.txt
 * @ 248b5403c5a752a22aba8cdd96471b87a2b47a1c (store: false: a reasoning summary with encrypted_content, then text).
 * Tool call: that recording's envelope and encrypted reasoning, its message replaced by a function_call in the
 * FunctionToolCall shape of xai-org/xai-sdk-ts spec/openapi.json @ 41e766acb9160402c47301beca97764ace073ffc
 * (xAI's own description of its REST API); xAI is closed source and no recording of a Responses tool call
 * from it is public.
 * Error bodies: xAI answers `{"code": "...", "error": "<text>"}`, the error a string, as quoted for a bad key
 * in i-am-bee/beeai-framework#447 and continuedev/continue#10778 and for a bad message in
 * nocmt/LLMSearchPlus#2; its context limit as cline/cline#3120 quotes it (HTTP 400, "maximum prompt length").
 *
 * Input rules: Rules.xai (that description; reasoning goes back with its encrypted_content, as to OpenAI).
 */
import { describe } from "@effect/vitest"
import { conformance, type Family, load } from "./Driver.js"
import * as Rules from "./Rules.js"

const family: Family = {
  name: "xAI",
  host: "api.x.ai",
  model: "grok-code-fast-1",
  text: load("xai.text"),
  toolCall: load("xai.tool-call"),
  accepts: Rules.xai,
  reasoning: "verbatim",
  errors: [
    {
      name: "HTTP 400 with the error as a string (a bad key)",
      reply: {
        status: 400,
        body: { code: "Client specified an invalid argument", error: "Incorrect API key provided: xa***c. You can obtain an API key from https://console.x.ai." }
      },
      line: /^model request failed: HTTP 400: Incorrect API key provided: xa\*\*\*c\. You can obtain an API key from https:\/\/console\.x\.ai\.$/
    },
    {
      name: "HTTP 400 prompt too long",
      reply: {
        status: 400,
        body: { code: "Client specified an invalid argument", error: "This model's maximum prompt length is 131072 but the request contains 136973 tokens." }
      },
      line: /context window; start a new conversation with `mino --new`$/
    }
  ]
}

describe("endpoint conformance", () => {
  conformance(family)
})
