/**
 * OpenRouter (openrouter.ai/api/v1) — recorded traffic, the tool call rebuilt on it.
 *
 * Stream: pydantic/pydantic-ai, tests/models/cassettes/test_openai_responses/test_openai_responses_raw_cot_stream_openrouter.yaml
 * @ a1da64ce8901320ca86100f14f4bf39b02f735a3: `: OPENROUTER PROCESSING` first, `data:` lines without `event:`,
 * reasoning as `content` text with no encrypted_content, ids in response.completed that differ from the
 * streamed ones, then `data: [DONE]`. The tool call keeps that framing and those shapes, with a function_call.
 * Error bodies: OpenRouter's `{"error": {"code": <number>, "message": ...}}` (numeric codes).
 *
 * Input rules: the Open Responses shapes (Rules.openResponses); reasoning goes back as its text.
 */
import { describe } from "@effect/vitest"
import { conformance, type Family, load } from "./Driver.js"
import * as Rules from "./Rules.js"

const family: Family = {
  name: "OpenRouter",
  host: "openrouter.ai",
  model: "openai/gpt-oss-20b",
  text: load("openrouter.text"),
  toolCall: load("openrouter.tool-call"),
  accepts: Rules.openResponses,
  reasoning: "content",
  errors: [
    {
      name: "HTTP 400 context length, numeric code",
      reply: {
        status: 400,
        body: { error: { code: 400, message: "This endpoint's maximum context length is 131072 tokens. However, you requested about 140213 tokens." }, user_id: "user_2x" }
      },
      line: /context window; start a new conversation with `mino --new`$/
    },
    {
      name: "HTTP 402 insufficient credits",
      reply: { status: 402, body: { error: { code: 402, message: "Insufficient credits. Add more using https://openrouter.ai/settings/credits" } } },
      line: /^model request failed: HTTP 402: Insufficient credits\./
    }
  ]
}

describe("endpoint conformance", () => {
  conformance(family)
})
