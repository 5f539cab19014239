/**
 * Codex's test servers (the SSE builders its own tests serve) — rebuilt from their source.
 *
 * Streams: openai/codex, codex-rs/core/tests/common/responses.rs @ 03c6d30a608753394657450032f4f82a1f39281d
 * (ev_response_created, ev_output_text_delta, ev_assistant_message, ev_reasoning_item, ev_function_call,
 * ev_completed, sse_failed): response.completed carries only id and usage (no output, no status), the items
 * come only in output_item.done without output_index, deltas carry neither item_id nor output_index, and a
 * function_call has no id or status.
 * Error shapes: sse_failed's `response.failed` with `{code, message}`.
 *
 * Input rules: Rules.codex (validate_request_body_invariants): every output after its call, every call with
 * its output.
 */
import { describe } from "@effect/vitest"
import { conformance, type Family, load } from "./Driver.js"
import * as Rules from "./Rules.js"

const failed = (code: string, message: string) => [
  { raw: `event: response.created\ndata: ${JSON.stringify({ type: "response.created", response: { id: "resp-9" } })}\n\n` },
  { raw: `event: response.failed\ndata: ${JSON.stringify({ type: "response.failed", response: { id: "resp-9", error: { code, message } } })}\n\n` }
]

const family: Family = {
  name: "Codex test server",
  model: "gpt-5.1-codex",
  text: load("codex.text"),
  toolCall: load("codex.tool-call"),
  afterTool: load("codex.after-tool"),
  accepts: Rules.codex,
  reasoning: "content",
  errors: [
    {
      name: "response.failed context_length_exceeded",
      reply: failed("context_length_exceeded", "Your input exceeds the context window of this model. Please adjust your input and try again."),
      line: /^model response failed: the conversation no longer fits in the model's context window; start a new conversation with `mino --new`$/
    },
    {
      name: "response.failed rate_limit_exceeded",
      reply: failed("rate_limit_exceeded", "Rate limit reached for gpt-5.1-codex. Please try again in 11.054s."),
      line: /^model response failed: Rate limit reached for gpt-5\.1-codex\. Please try again in 11\.054s\.$/
    }
  ]
}

describe("endpoint conformance", () => {
  conformance(family)
})
