/**
 * gpt-oss's reference Responses server (`python -m gpt_oss.responses_api.serve`) — rebuilt from its source.
 *
 * Streams: openai/gpt-oss, gpt_oss/responses_api/api_server.py @ 7b583341fe16729127f6d5b94a7b09ccae97e1a1
 * (StreamResponsesEvents; pydantic models from types.py dumped with their null fields): reasoning as
 * reasoning_text content, a message whose output_item.done has `status: null`, a function call sent only as
 * output_item.done, every event with a sequence_number.
 * Error bodies: FastAPI's, `{"detail": [{"type", "loc", "msg", "input"}]}` for a body it cannot validate (422),
 * `{"detail": "Not Found"}` (404), and a plain-text 500 when an output names a call it cannot find.
 *
 * Input rules: Rules.gptOss (types.py, api_server.py): reasoning needs a summary list; its text goes back
 * as reasoning_text content.
 */
import { describe } from "@effect/vitest"
import { conformance, type Family, load } from "./Driver.js"
import * as Rules from "./Rules.js"

const family: Family = {
  name: "gpt-oss reference server",
  model: "gpt-oss-120b",
  text: load("gptoss.text"),
  toolCall: load("gptoss.tool-call"),
  afterTool: load("gptoss.after-tool"),
  accepts: Rules.gptOss,
  reasoning: "content",
  errors: [
    {
      name: "HTTP 422 FastAPI validation detail",
      reply: {
        status: 422,
        body: { detail: [{ type: "missing", loc: ["body", "input", 1, "ReasoningItem", "summary"], msg: "Field required", input: { type: "reasoning" } }] }
      },
      line: /^model request failed: HTTP 422: body\.input\.1\.ReasoningItem\.summary: Field required$/
    },
    {
      name: "HTTP 404 detail string",
      reply: { status: 404, body: { detail: "Not Found" } },
      line: /^model request failed: HTTP 404: Not Found$/
    },
    {
      name: "HTTP 500 plain text",
      reply: { status: 500, body: null, raw: "Internal Server Error" },
      line: /^model request failed: HTTP 500: Internal Server Error$/
    }
  ]
}

describe("endpoint conformance", () => {
  conformance(family)
})
