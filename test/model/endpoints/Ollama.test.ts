/**
 * Ollama (a local server, `http://localhost:11434/v1`) — rebuilt from its source.
 *
 * Streams: ollama/ollama, openai/responses.go @ 01d04d50f8c3098d1e6e562f40666b2bc5679bc5
 * (ResponsesStreamConverter): thinking streams as reasoning_summary_text deltas and finishes as a reasoning
 * item whose `encrypted_content` is the thinking itself, in plain text; a call is one arguments delta.
 * Error bodies: middleware/openai.go with openai/openai.go NewError at that commit,
 * `{"error": {"message", "type", "param": null, "code": null}}`; llm/llama_server.go's context wordings.
 *
 * Input rules: Rules.ollama (it reads reasoning from `encrypted_content`, so it goes back verbatim; a
 * refusal content part is refused).
 */
import { describe } from "@effect/vitest"
import { conformance, type Family, load } from "./Driver.js"
import * as Rules from "./Rules.js"

const ollamaError = (status: number, message: string, type: string) => ({ status, body: { error: { message, type, param: null, code: null } } })

const family: Family = {
  name: "Ollama",
  model: "qwen3:8b",
  text: load("ollama.text"),
  toolCall: load("ollama.tool-call"),
  afterTool: load("ollama.after-tool"),
  accepts: Rules.ollama,
  reasoning: "verbatim",
  errors: [
    {
      name: "HTTP 400 the prompt is longer than the context length",
      reply: ollamaError(400, "the prompt is longer than the context length currently available to the model; shorten the prompt, adjust the context length in settings, or use a model with a longer context length", "invalid_request_error"),
      line: /context window; start a new conversation with `mino --new`$/
    },
    {
      name: "HTTP 404 model not found",
      reply: ollamaError(404, "model \"qwen3:8b\" not found, try pulling it first", "not_found_error"),
      line: /^model request failed: HTTP 404: model "qwen3:8b" not found, try pulling it first$/
    },
    {
      name: "HTTP 400 an input it cannot read",
      reply: ollamaError(400, "input[2]: content[0]: unknown content type: refusal", "invalid_request_error"),
      line: /^model request failed: HTTP 400: input\[2\]: content\[0\]: unknown content type: refusal$/
    }
  ]
}

describe("endpoint conformance", () => {
  conformance(family)
})
