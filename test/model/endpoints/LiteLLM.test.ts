/**
 * LiteLLM's proxy (`litellm --port 4000`) — rebuilt from its source, errors as recorded in issue threads.
 *
 * Streams: BerriAI/litellm, litellm/responses/litellm_completion_transformation/streaming_iterator.py
 * @ 005f04edb6e853cbb89a797a4d0e4638ea800a75 (the bridge that serves a chat-completions model as Responses):
 * the message at output_index 0, calls from index 1 with the call id as item_id, arguments in 10-character
 * deltas, sequence numbers on most events. The tool call is a Claude turn with extended thinking: the
 * reasoning item and the text both at output_index 0 (the text never announced by output_item.added), the
 * message's output_item.done last with sequence_number 1, and in response.completed (transformation.py at the
 * same commit) a reasoning item with `role: "assistant"`, its thinking as output_text content and the signed
 * thinking blocks JSON-encoded in `encrypted_content`.
 * Error bodies: LiteLLM wraps the upstream error in its own message, `{"error": {"message":
 * "litellm.BadRequestError: OpenAIException - {…}", "type", "param", "code": "400"}}` — the include refusal
 * exactly as pydantic/pydantic-ai#3326 quotes it (the upstream `param: "include"` only inside the text), and a
 * ContextWindowExceededError.
 *
 * Input rules: Rules.liteLlm (transformation.py at the same commit). Reasoning goes back verbatim: it carries
 * `encrypted_content` (the thinking blocks Anthropic needs back with a tool result), which LiteLLM reads.
 */
import { describe } from "@effect/vitest"
import { adaptsToNoInclude, conformance, type Family, load } from "./Driver.js"
import * as Rules from "./Rules.js"

const litellmError = (message: string) => ({ status: 400, body: { error: { message, type: null, param: null, code: "400" } } })

const family: Family = {
  name: "LiteLLM",
  model: "openai/gpt-5-chat-latest",
  text: load("litellm.text"),
  toolCall: load("litellm.tool-call"),
  afterTool: load("litellm.after-tool"),
  accepts: Rules.liteLlm,
  reasoning: "verbatim",
  errors: [
    {
      name: "HTTP 400 ContextWindowExceededError, code as a string",
      reply: litellmError("litellm.ContextWindowExceededError: litellm.BadRequestError: AnthropicException - prompt is too long: 210000 tokens > 200000 maximum"),
      line: /context window; start a new conversation with `mino --new`$/
    },
    {
      name: "HTTP 401 from the proxy",
      reply: { status: 401, body: { error: { message: "Authentication Error, Invalid proxy server token passed.", type: "auth_error", param: "None", code: "401" } } },
      line: /^model request failed: HTTP 401: Authentication Error, Invalid proxy server token passed\.$/
    }
  ]
}

describe("endpoint conformance", () => {
  conformance(family)
  describe("LiteLLM adaptations", () => {
    adaptsToNoInclude(
      family,
      litellmError(
        "litellm.BadRequestError: OpenAIException - {\n  \"error\": {\n    \"message\": \"Encrypted content is not supported with this model.\",\n    \"type\": \"invalid_request_error\",\n    \"param\": \"include\",\n    \"code\": null\n  }\n}No fallback model group found for original model_group=openai/gpt-5-chat-latest. Fallbacks=[]."
      )
    )
  })
})
