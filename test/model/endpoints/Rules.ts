/**
 * Each server's input rules for a request: what it accepts and rejects, written
 * from its source (file and commit named per rule set). A rule set answers the
 * problems the server would report for a request body; [] means it takes it.
 */
import { inputOf, type Json, pairing } from "./Driver.js"

const isJson = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)
const isString = (value: unknown): value is string => typeof value === "string"
const parts = (item: Json): ReadonlyArray<Json> => (Array.isArray(item["content"]) ? item["content"].filter(isJson) : [])

/**
 * OpenAI and Azure OpenAI (one service), xAI (its store:false recordings carry encrypted reasoning the same
 * way): under `store: false` a reasoning item is resolved only from its `encrypted_content`; without it the id
 * is looked up in storage never written (404 "Item with id 'rs_…' not found"). An output needs its call.
 */
export const openAi = (body: unknown): ReadonlyArray<string> => [
  ...pairing(body),
  ...inputOf(body).flatMap((item) =>
    item["type"] === "reasoning" && (!isString(item["encrypted_content"]) || item["encrypted_content"] === "")
      ? [`Item with id '${String(item["id"])}' not found (reasoning without encrypted_content under store: false)`]
      : []
  )
]

/**
 * Ollama, openai/responses.go @ 01d04d50f8c3098d1e6e562f40666b2bc5679bc5 (unmarshalResponsesInputItem,
 * unmarshalResponsesContent, FromResponsesRequest): item types message, function_call,
 * function_call_output, reasoning, web_search_call ("unknown input item type"); content parts input_text,
 * input_image, output_text, input_file ("unknown content type": a refusal part is refused); a call's
 * arguments must parse as a JSON object ("failed to parse function call arguments"); reasoning is read from
 * `encrypted_content` (the thinking Ollama itself put there).
 */
export const ollama = (body: unknown): ReadonlyArray<string> => {
  const types = new Set(["message", "function_call", "function_call_output", "reasoning", "web_search_call"])
  const contentTypes = new Set(["input_text", "input_image", "output_text", "input_file"])
  return inputOf(body).flatMap((item, index) => {
    const type = isString(item["type"]) ? item["type"] : isString(item["role"]) ? "message" : ""
    if (!types.has(type)) return [`input[${index}]: unknown input item type: ${JSON.stringify(type)}`]
    if (type === "message" && Array.isArray(item["content"])) {
      return parts(item).flatMap((part) => (contentTypes.has(String(part["type"])) ? [] : [`input[${index}]: unknown content type: ${String(part["type"])}`]))
    }
    if (type === "function_call") {
      try {
        const args = JSON.parse(String(item["arguments"])) as unknown
        return isJson(args) ? [] : [`input[${index}]: failed to parse function call arguments`]
      } catch {
        return [`input[${index}]: failed to parse function call arguments`]
      }
    }
    return []
  })
}

/**
 * llama.cpp, tools/server/server-chat.cpp @ 03eb25f39343f1c9ecc6f85ca4f9796a6ab7b230
 * (server_chat_convert_responses_to_chatcmpl): a user/system/developer message takes only input_text and
 * input_image parts; an assistant message needs `type: "message"` and output_text, input_text or refusal
 * parts; a function_call needs string arguments, call_id and name; a function_call_output a call_id and a
 * string or list output; a reasoning item needs a `summary` array and a non-empty `content` whose first
 * part has text ("item['content'] is not an array", "is empty"); anything else: "Cannot determine type of
 * 'item'". `previous_response_id` is refused.
 */
export const llamaCpp = (body: unknown): ReadonlyArray<string> => {
  if (isJson(body) && isString(body["previous_response_id"]) && body["previous_response_id"] !== "") {
    return ["llama.cpp does not support 'previous_response_id'."]
  }
  return inputOf(body).flatMap((item): ReadonlyArray<string> => {
    const role = item["role"]
    const content = item["content"]
    if ((role === "user" || role === "system" || role === "developer") && (Array.isArray(content) || isString(content))) {
      if (isString(content)) return []
      return parts(item).flatMap((part) =>
        part["type"] === "input_text" || part["type"] === "input_image" ? [] : ["'type' must be one of 'input_text', 'input_image', or 'input_file'"]
      )
    }
    if (role === "assistant" && item["type"] === "message") {
      return parts(item).flatMap((part) =>
        part["type"] === "output_text" || part["type"] === "input_text" || part["type"] === "refusal" ? [] : ["'type' must be one of 'output_text' or 'refusal'"]
      )
    }
    if (item["type"] === "function_call" && isString(item["arguments"]) && isString(item["call_id"]) && isString(item["name"])) return []
    if (item["type"] === "function_call_output" && isString(item["call_id"]) && (isString(item["output"]) || Array.isArray(item["output"]))) return []
    if (item["type"] === "reasoning" && Array.isArray(item["summary"])) {
      if (!Array.isArray(content)) return ["item['content'] is not an array"]
      if (content.length === 0) return ["item['content'] is empty"]
      return isJson(content[0]) && isString(content[0]["text"]) ? [] : ["item['content']['text'] is not a string"]
    }
    return ["Cannot determine type of 'item'"]
  })
}

/**
 * vLLM, vllm/entrypoints/openai/responses/utils.py @ 01ca842df5b1ddd7f91aa376294040d126a453f2
 * (_construct_message_from_response_item): a reasoning item with non-empty `encrypted_content` is refused
 * ("Encrypted content is not supported."); its text is read from `content[0]`, else `summary[0]`.
 */
export const vllm = (body: unknown): ReadonlyArray<string> => [
  ...pairing(body),
  ...inputOf(body).flatMap((item) =>
    item["type"] === "reasoning" && isString(item["encrypted_content"]) && item["encrypted_content"] !== "" ? ["Encrypted content is not supported."] : []
  )
]

/**
 * gpt-oss's reference server, gpt_oss/responses_api/types.py and api_server.py @
 * 7b583341fe16729127f6d5b94a7b09ccae97e1a1 (pydantic models: unknown fields ignored, missing ones 422): a
 * message's role is user, assistant or system, its content a string or parts of type text, input_text or
 * output_text with a string text; a reasoning item needs a `summary` list (of summary_text parts) and its
 * `content` parts are reasoning_text; a function_call needs name and arguments; a function_call_output a
 * string output and a function_call before it ("Function call … not found", a 500); a function tool needs a
 * name and parameters.
 */
export const gptOss = (body: unknown): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const calls = new Set<unknown>()
  if (isJson(body) && Array.isArray(body["tools"])) {
    for (const tool of body["tools"].filter(isJson)) {
      if (tool["type"] === "function" && (!isString(tool["name"]) || !isJson(tool["parameters"]))) problems.push("body.tools: a function needs name and parameters")
    }
  }
  inputOf(body).forEach((item, index) => {
    const type = item["type"] ?? "message"
    if (type === "message") {
      if (!["user", "assistant", "system"].includes(String(item["role"]))) problems.push(`body.input.${index}.role: Input should be 'user', 'assistant' or 'system'`)
      const content = item["content"]
      if (!isString(content)) {
        for (const part of parts(item)) {
          if (!["text", "input_text", "output_text"].includes(String(part["type"])) || !isString(part["text"])) problems.push(`body.input.${index}.content: a part of type ${String(part["type"])}`)
        }
      }
    } else if (type === "reasoning") {
      if (!Array.isArray(item["summary"])) problems.push(`body.input.${index}.summary: Field required`)
      for (const part of parts(item)) if (part["type"] !== "reasoning_text" || !isString(part["text"])) problems.push(`body.input.${index}.content: not reasoning_text`)
    } else if (type === "function_call") {
      if (!isString(item["name"]) || !isString(item["arguments"])) problems.push(`body.input.${index}: function_call needs name and arguments`)
      calls.add(item["call_id"] ?? "call_1234")
    } else if (type === "function_call_output") {
      if (!isString(item["output"])) problems.push(`body.input.${index}.output: Input should be a valid string`)
      if (!calls.has(item["call_id"] ?? "call_1234")) problems.push(`Function call ${String(item["call_id"])} not found`)
    } else if (type !== "web_search_call" && type !== "code_interpreter_call") {
      problems.push(`body.input.${index}: no input item type ${JSON.stringify(type)}`)
    }
  })
  return problems
}

/**
 * Codex's test servers, codex-rs/core/tests/common/responses.rs @ 03c6d30a608753394657450032f4f82a1f39281d
 * (validate_request_body_invariants): no output without a non-empty call_id, every output after its call,
 * and every call with its output.
 */
export const codex = (body: unknown): ReadonlyArray<string> => {
  const problems = [...pairing(body)]
  const input = inputOf(body)
  const outputs = new Set(input.filter((item) => item["type"] === "function_call_output").map((item) => item["call_id"]))
  for (const item of input) {
    if (item["type"] === "function_call_output" && (!isString(item["call_id"]) || item["call_id"] === "")) problems.push("function_call_output without call_id")
    if (item["type"] === "function_call" && !outputs.has(item["call_id"])) problems.push(`function_call ${String(item["call_id"])} has no output`)
  }
  return problems
}

/**
 * Servers that rebuild a chat from the items and document no stricter rule (LM Studio, closed source, whose
 * recorded follow-ups carry reasoning as content text; OpenRouter; LiteLLM's bridge,
 * litellm/responses/litellm_completion_transformation/transformation.py, which maps messages, calls,
 * outputs and reasoning): the known item types, an output after its call, and reasoning as text (an item
 * with neither text nor encrypted content carries nothing they can use).
 */
export const openResponses = (body: unknown): ReadonlyArray<string> => [
  ...pairing(body),
  ...inputOf(body).flatMap((item) => {
    const type = item["type"] ?? (isString(item["role"]) ? "message" : undefined)
    if (!["message", "function_call", "function_call_output", "reasoning"].includes(String(type))) return [`unknown input item type ${JSON.stringify(type)}`]
    if (type === "reasoning" && !parts(item).some((part) => isString(part["text"]) && part["text"] !== "") && !(isString(item["encrypted_content"]) && item["encrypted_content"] !== "")) {
      return ["a reasoning item without text"]
    }
    return []
  })
]
