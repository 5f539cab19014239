/**
 * vLLM (`vllm serve`, `http://localhost:8000/v1`) — rebuilt from its source.
 *
 * Streams: vllm-project/vllm, vllm/entrypoints/openai/responses/simple_streaming_events.py
 * @ 25af204a63a43d02b0b28136f41683e28cc8de35 (the openai types, dumped with their null fields: a reasoning
 * item with `encrypted_content: null`, content parts with `logprobs: null`), envelope from responses/utils.py.
 * Error bodies: vLLM's ErrorResponse, `{"error": {"message", "type": "BadRequestError", "param", "code": 400}}`
 * (the HTTP status as a number), with its context wording "maximum context length".
 *
 * Input rules: Rules.vllm (responses/utils.py @ 01ca842df5b1ddd7f91aa376294040d126a453f2): reasoning with
 * encrypted content is refused ("Encrypted content is not supported."); its text is `content[0]` when it has
 * content parts, else `summary[0]`, so reasoning goes back with its text as one part.
 */
import { describe } from "@effect/vitest"
import { conformance, continuesOn, type Family, load, ollamaTurn } from "./Driver.js"
import * as Rules from "./Rules.js"

const vllmError = (status: number, message: string, type: string) => ({ status, body: { error: { message, type, param: null, code: status } } })

const family: Family = {
  name: "vLLM",
  model: "Qwen/Qwen3-8B",
  text: load("vllm.text"),
  toolCall: load("vllm.tool-call"),
  afterTool: load("vllm.after-tool"),
  accepts: Rules.vllm,
  reasoning: "content",
  errors: [
    {
      name: "HTTP 400 maximum context length, numeric code",
      reply: vllmError(
        400,
        "This model's maximum context length is 4096 tokens. However, you requested 5097 tokens (4097 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.",
        "BadRequestError"
      ),
      line: /context window; start a new conversation with `mino --new`$/
    },
    {
      name: "HTTP 404 unknown model",
      reply: vllmError(404, "The model `gpt-5.1` does not exist.", "NotFoundError"),
      line: /^model request failed: HTTP 404: The model `gpt-5\.1` does not exist\.$/
    }
  ]
}

describe("endpoint conformance", () => {
  conformance(family)
  describe("vLLM adaptations", () => {
    continuesOn(ollamaTurn(Rules.ollama), family, (problem) => vllmError(400, problem, "BadRequestError"))
  })
})
