/**
 * OpenRouter (openrouter.ai/api/v1) — recorded text; the tool call rebuilt from OpenRouter's published API
 * description (OpenRouter is closed source; no recording of a Responses tool call is public).
 *
 * Text: pydantic/pydantic-ai, tests/models/cassettes/test_openai_responses/test_openai_responses_raw_cot_stream_openrouter.yaml
 * @ a1da64ce8901320ca86100f14f4bf39b02f735a3: `: OPENROUTER PROCESSING` first, `data:` lines without `event:`,
 * reasoning as `content` text with no encrypted_content, ids in response.completed that differ from the
 * streamed ones, then `data: [DONE]`.
 * Tool call: OpenRouterTeam/docs, openapi/openapi.yaml @ c26125a5fa92cb52ac67f0c75b717229567db716 (the event
 * and item shapes), in that recording's framing; the call's arguments empty in every streamed event and
 * given only in response.completed, as OpenRouterTeam/ai-sdk-provider commit fb49892 reports of OpenRouter's
 * Responses stream.
 * Error bodies: OpenRouter's `{"error": {"code": <number>, "message": ...}}` (numeric codes).
 *
 * Input rules: Rules.openRouter (that API description): reasoning needs an `id` and a `summary` list, its
 * text as `reasoning_text` parts; reasoning goes back as its text.
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
  accepts: Rules.openRouter,
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
