/**
 * OpenAI (api.openai.com) — recorded traffic.
 *
 * Streams: vercel/ai, packages/openai/src/responses/__fixtures__/
 * - openai-phase.1.chunks.txt @ 66a374c235388d9fff270e959db4a5042699763d (text, two messages with phases)
 * - openai-reasoning-encrypted-content.1.chunks.txt @ 55cd1a40625f1ea6eda228cb413234328c215537
 *   (store: false, encrypted reasoning then a call; the call renamed bash, its arguments replaced)
 * - openai-error.1.chunks.txt @ 23f132b48dd12c87de610f437348eb8b0ab34a2e (an `error` event, then response.failed)
 * Error bodies: the include refusal as pydantic/pydantic-ai#2865 and NousResearch/hermes-agent#23450 quote it
 * (`param: "include"`), `invalid_encrypted_content` as openai/codex#8128 quotes it, the context window and the
 * bad key in OpenAI's documented error shape.
 *
 * Input rules (under `store: false`): a reasoning item is resolved only from its `encrypted_content`
 * (without it: 404, the id is looked up in storage never written); a function_call_output needs its call.
 * Mino adapts: `include` refused → asked again without it; unverifiable reasoning → left out of later turns.
 */
import { describe } from "@effect/vitest"
import { adaptsToNoInclude, adaptsToUnverifiableReasoning, conformance, type Family, load, steps } from "./Driver.js"
import * as Rules from "./Rules.js"

const openAiError = (status: number, message: string, code: string | null, param: string | null = null) => ({
  status,
  body: { error: { message, type: "invalid_request_error", param, code } }
})

const family: Family = {
  name: "OpenAI",
  host: "api.openai.com",
  model: "gpt-5.1",
  text: load("openai.text"),
  toolCall: load("openai.tool-call"),
  afterTool: load("openai.after-tool"),
  accepts: Rules.openAi,
  reasoning: "verbatim",
  errors: [
    { name: "an error event mid-stream (recorded: insufficient_quota)", reply: steps(load("openai.error-quota")), line: /^model stream error: You exceeded your current quota/ },
    {
      name: "HTTP 400 context_length_exceeded",
      reply: openAiError(400, "Your input exceeds the context window of this model. Please adjust your input and try again.", "context_length_exceeded", "input"),
      line: /^model request failed: HTTP 400: the conversation no longer fits in the model's context window; start a new conversation with `mino --new`$/
    },
    {
      name: "HTTP 401 invalid_api_key",
      reply: openAiError(401, "Incorrect API key provided: sk-conf********9e1f. You can find your API key at https://platform.openai.com/account/api-keys.", "invalid_api_key"),
      line: /^model request failed: HTTP 401: Incorrect API key provided/
    },
    {
      name: "HTTP 400 invalid_encrypted_content with no earlier reasoning to leave out",
      reply: openAiError(400, "The encrypted content gAAA...ng== could not be verified.", "invalid_encrypted_content"),
      line: /^model request failed: HTTP 400: The encrypted content gAAA\.\.\.ng== could not be verified\.$/
    }
  ]
}

describe("endpoint conformance", () => {
  conformance(family)
  describe("OpenAI adaptations", () => {
    adaptsToNoInclude(family, openAiError(400, "Encrypted content is not supported with this model.", null, "include"))
    adaptsToUnverifiableReasoning(family, openAiError(400, "The encrypted content gAAA...ng== could not be verified.", "invalid_encrypted_content"))
  })
})
