/**
 * llama.cpp's server (`llama-server`, `http://localhost:8080/v1`) — rebuilt from its source.
 *
 * Streams: ggml-org/llama.cpp, tools/server/server-task.cpp @ 00efb3e184262872916bf136b3df63c1822a19bd
 * (to_json_oaicompat_resp_stream of the partial and final results): deltas carry an item_id but no
 * output_index, finished items come without output_index, a function_call item has no `id`, reasoning is
 * `content` text with `encrypted_content: ""`, and no event has a sequence_number.
 * Error bodies: server_task_result_error::to_json at that commit, `{"error": {"code": <number>, "message",
 * "type"}}`, with `exceed_context_size_error` and n_prompt_tokens/n_ctx for a full context.
 *
 * Input rules: Rules.llamaCpp (tools/server/server-chat.cpp @ 03eb25f39343f1c9ecc6f85ca4f9796a6ab7b230): a
 * reasoning item needs a summary array and non-empty content text, so reasoning goes back as its text. A
 * conversation begun on an endpoint whose reasoning is only encrypted (Ollama's, OpenAI's) carries items it
 * refuses (`item['content'] is not an array`): Mino leaves the earlier turns' reasoning out from then on.
 */
import { describe } from "@effect/vitest"
import { conformance, continuesOn, type Family, load, ollamaTurn } from "./Driver.js"
import * as Rules from "./Rules.js"

/** llama.cpp's error for a request it cannot convert (server_task_result_error::to_json, invalid_request_error). */
const llamaError = (message: string) => ({ status: 400, body: { error: { code: 400, message, type: "invalid_request_error" } } })

const family: Family = {
  name: "llama.cpp",
  model: "qwen3-8b-q4_k_m.gguf",
  text: load("llamacpp.text"),
  toolCall: load("llamacpp.tool-call"),
  afterTool: load("llamacpp.after-tool"),
  accepts: Rules.llamaCpp,
  reasoning: "content",
  errors: [
    {
      name: "HTTP 400 exceed_context_size_error, numeric code",
      reply: {
        status: 400,
        body: {
          error: {
            code: 400,
            message: "request (9412 tokens) exceeds the available context size (8192 tokens), try increasing it",
            type: "exceed_context_size_error",
            n_prompt_tokens: 9412,
            n_ctx: 8192
          }
        }
      },
      line: /context window; start a new conversation with `mino --new`$/
    },
    {
      name: "HTTP 400 an item it cannot read",
      reply: llamaError("Cannot determine type of 'item'"),
      line: /^model request failed: HTTP 400: Cannot determine type of 'item'$/
    },
    {
      name: "HTTP 503 while the model loads",
      reply: { status: 503, body: { error: { code: 503, message: "Loading model", type: "unavailable_error" } } },
      line: /^model request failed: HTTP 503: Loading model$/
    }
  ]
}

describe("endpoint conformance", () => {
  conformance(family)
  describe("llama.cpp adaptations", () => {
    continuesOn(ollamaTurn(Rules.ollama), family, llamaError)
  })
})
