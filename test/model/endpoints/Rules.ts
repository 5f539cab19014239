/**
 * Each server's input rules for a request: what it accepts and rejects, written
 * from its source (file and commit named per rule set). A rule set answers the
 * problems the server would report for a request body; [] means it takes it.
 */
import { isObject, type ResponseItem } from "../../../src/protocol/ResponseItem.js"
import { inputOf, pairing } from "./Driver.js"

const isString = (value: unknown): value is string => typeof value === "string"
const parts = (item: ResponseItem): ReadonlyArray<ResponseItem> => (Array.isArray(item["content"]) ? item["content"].filter(isObject) : [])

/**
 * OpenAI and Azure OpenAI (one service): under `store: false` a reasoning item is resolved only from its `encrypted_content`; without it the id
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
 * xAI (closed source), its published API description: xai-org/xai-sdk-ts spec/openapi.json @
 * 41e766acb9160402c47301beca97764ace073ffc (ModelInputPart, Reasoning, FunctionToolCall, FunctionToolCallOutput):
 * a reasoning item needs `type` and a `summary` list; a function_call `arguments`, `call_id`, `name`; its output
 * `call_id`, `output`. Under `store: false` reasoning is resolved from its `encrypted_content`, as OpenAI's
 * (its store:false recordings carry it the same way).
 */
export const xai = (body: unknown): ReadonlyArray<string> => [
  ...openAi(body),
  ...inputOf(body).flatMap((item, index) => {
    if (item["type"] === "reasoning" && !Array.isArray(item["summary"])) return [`input[${index}].summary: required`]
    if (item["type"] === "function_call" && !(isString(item["arguments"]) && isString(item["call_id"]) && isString(item["name"]))) return [`input[${index}]: arguments, call_id, name required`]
    if (item["type"] === "function_call_output" && !(isString(item["call_id"]) && item["output"] !== undefined)) return [`input[${index}]: call_id, output required`]
    return []
  })
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
        return isObject(args) ? [] : [`input[${index}]: failed to parse function call arguments`]
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
 * part has text ("item['content'] is not an array", "is empty"), and only that first part is read (a
 * second is lost without an error: flagged here); anything else: "Cannot determine type of 'item'".
 * `previous_response_id` is refused.
 */
export const llamaCpp = (body: unknown): ReadonlyArray<string> => {
  if (isObject(body) && isString(body["previous_response_id"]) && body["previous_response_id"] !== "") {
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
      if (!isObject(content[0]) || !isString(content[0]["text"])) return ["item['content']['text'] is not a string"]
      // Only content[0].text becomes reasoning_content: the other parts are lost without a word.
      return content.length > 1 ? ["(silent) only item['content'][0] is read; the other parts are lost"] : []
    }
    return ["Cannot determine type of 'item'"]
  })
}

/**
 * vLLM, vllm/entrypoints/openai/responses/utils.py @ 01ca842df5b1ddd7f91aa376294040d126a453f2
 * (_construct_message_from_response_item): a reasoning item with non-empty `encrypted_content` is refused
 * ("Encrypted content is not supported."); its text is `content[0].text` when `content` has parts, else
 * `summary[0].text`: any later part is lost without an error (flagged here). Its harmony path for gpt-oss
 * models, vllm/entrypoints/harmony_utils.py @ 04750fc2fdd5343d0fb84be35d4fff1b96c93185 (parse_response_input),
 * asserts exactly one content part (a 500 otherwise).
 */
export const vllm = (body: unknown): ReadonlyArray<string> => [
  ...pairing(body),
  ...inputOf(body).flatMap((item) => {
    if (item["type"] !== "reasoning") return []
    if (isString(item["encrypted_content"]) && item["encrypted_content"] !== "") return ["Encrypted content is not supported."]
    return parts(item).length > 1 ? ["(silent) only content[0] is read; the harmony path asserts len(content) == 1"] : []
  })
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
  if (isObject(body) && Array.isArray(body["tools"])) {
    for (const tool of body["tools"].filter(isObject)) {
      if (tool["type"] === "function" && (!isString(tool["name"]) || !isObject(tool["parameters"]))) problems.push("body.tools: a function needs name and parameters")
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
 * The Open Responses specification, which LM Studio implements (closed source: lmstudio.ai/blog/lmstudio-v0.3.29
 * documents `/v1/responses`; its recorded exchanges, vercel/ai packages/open-responses fixtures, are the only
 * traffic): openresponses/openresponses schema/components/schemas/ReasoningItemParam.json @
 * ebf2ab1492e13fca6925c8be6dcd762755543022 (a reasoning item needs `type` and a `summary` array; `content` is a
 * list of `reasoning_text` parts with text, `encrypted_content` a string or null); the item types Mino sends;
 * an output after its call.
 */
export const openResponses = (body: unknown): ReadonlyArray<string> => [
  ...pairing(body),
  ...inputOf(body).flatMap((item, index) => {
    const type = item["type"] ?? (isString(item["role"]) ? "message" : undefined)
    if (!["message", "function_call", "function_call_output", "reasoning"].includes(String(type))) return [`input[${index}]: unknown input item type ${JSON.stringify(type)}`]
    if (type !== "reasoning") return []
    const problems: Array<string> = []
    if (!Array.isArray(item["summary"])) problems.push(`input[${index}].summary: required`)
    const content = item["content"]
    if (content !== undefined && content !== null && !Array.isArray(content)) problems.push(`input[${index}].content: not a list`)
    for (const part of parts(item)) {
      if (part["type"] !== "reasoning_text" || !isString(part["text"])) problems.push(`input[${index}].content: a part of type ${String(part["type"])}`)
    }
    return problems
  })
]

/**
 * OpenRouter (closed source), its published API description: OpenRouterTeam/docs openapi/openapi.yaml @
 * c26125a5fa92cb52ac67f0c75b717229567db716. A reasoning input item (ReasoningItem over OutputItemReasoning)
 * requires `type`, `id` and a `summary` list of `summary_text` parts; `content` is a list of `reasoning_text`
 * parts (or null), `encrypted_content` a string or null (OpenRouter passes it on to the provider that made it);
 * a function_call needs `call_id`, `name` and `arguments`, a function_call_output `call_id` and `output`; an
 * output needs its call.
 */
export const openRouter = (body: unknown): ReadonlyArray<string> => [
  ...openResponses(body),
  ...inputOf(body).flatMap((item, index) => {
    if (item["type"] === "reasoning") {
      const summaryOk = Array.isArray(item["summary"]) && item["summary"].every((part) => isObject(part) && part["type"] === "summary_text" && isString(part["text"]))
      return [...(isString(item["id"]) ? [] : [`input[${index}].id: required`]), ...(summaryOk ? [] : [`input[${index}].summary: summary_text parts`])]
    }
    if (item["type"] === "function_call" && !(isString(item["call_id"]) && isString(item["name"]) && isString(item["arguments"]))) return [`input[${index}]: call_id, name, arguments required`]
    if (item["type"] === "function_call_output" && !(isString(item["call_id"]) && (isString(item["output"]) || Array.isArray(item["output"])))) return [`input[${index}]: call_id, output required`]
    return []
  })
]

/**
 * LiteLLM's Responses-to-chat bridge, litellm/responses/litellm_completion_transformation/transformation.py @
 * 005f04edb6e853cbb89a797a4d0e4638ea800a75 (_transform_responses_api_input_item_to_chat_completion_message,
 * _transform_responses_api_content_to_chat_completion_content), the commit of the fixtures' streams: a
 * function_call becomes an assistant tool call; a function_call_output without `call_id` is dropped, so its
 * call has no result (flagged); any other item with `content` becomes a chat message of its `role`, "user" when
 * it has none, and its content must be a string or a list ("Invalid content type"). LiteLLM's own reasoning
 * items carry `role: "assistant"` and their Anthropic thinking blocks in `encrypted_content`, read back on replay
 * (reasoning_items.py @ af9d71e); a later commit (0014cd6, BerriAI/litellm#26395) skips reasoning items here.
 */
export const liteLlm = (body: unknown): ReadonlyArray<string> => [
  ...pairing(body),
  ...inputOf(body).flatMap((item, index) => {
    if (item["type"] === "function_call_output" && !(isString(item["call_id"]) && item["call_id"] !== "")) return [`input[${index}]: dropped (no call_id)`]
    if (item["type"] === "function_call") return []
    const content = item["content"]
    return content === undefined || content === null || isString(content) || Array.isArray(content) ? [] : [`input[${index}]: Invalid content type`]
  })
]
