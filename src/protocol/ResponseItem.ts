/**
 * The Responses vocabulary in one place: an output item as Mino keeps it
 * (verbatim, every field), what Mino reads from it, and the validation of a completed response before anything in it executes
 * (chapter 2.1 and 4.1): only output items Mino can handle, every message the
 * assistant's and finished, every call finished and with a `call_id`, no two
 * calls in the response sharing one, no `call_id` already used earlier in the
 * turn, and something to act on (text or a call). Any violation stops the whole
 * response: none of its calls execute, and `acceptedCalls` (what replay,
 * recovery and `mino log` read) gives none. How items go back to each endpoint
 * is `Endpoint.ts`.
 *
 * A status of `null` counts as absent: serializers of compatible servers
 * (pydantic's, for gpt-oss and vLLM) write a missing status as `null`.
 *
 * A message whose status is `in_progress` inside a response that completed is
 * taken as finished text: Hugging Face's router (huggingface/responses.js,
 * src/routes/responses.ts @ c0ac6ee, `closeLastOutputItem`) marks only the last
 * output item completed, so a sentence written before a call stays `in_progress`.
 * Text cannot run anything; a call keeps the strict check (only `completed` or
 * absent), and an `incomplete` message still fails the response.
 */
import * as Either from "effect/Either"

/** One output (or input) item, verbatim: every field kept, unknown ones included. */
export type ResponseItem = Readonly<Record<string, unknown>>
type Item = ResponseItem

/** A JSON object (not an array): what an item, a content part or an error body is on the wire. */
export const isObject = (value: unknown): value is ResponseItem => typeof value === "object" && value !== null && !Array.isArray(value)

/** The text of a message item: its `output_text` parts and refusals, in order. */
export const messageText = (item: Item): string => {
  const content = item["content"]
  if (!Array.isArray(content)) return ""
  let text = ""
  for (const part of content) {
    if (!isObject(part)) continue
    if (part["type"] === "output_text" && typeof part["text"] === "string") text += part["text"]
    if (part["type"] === "refusal" && typeof part["refusal"] === "string") text += part["refusal"]
  }
  return text
}

/** A message whose content is a refusal (and no other text): the model declined. */
export const isRefusal = (item: Item): boolean => {
  const content = item["content"]
  return Array.isArray(content) && content.some((part) => isObject(part) && part["type"] === "refusal") &&
    !content.some((part) => isObject(part) && part["type"] === "output_text" && part["text"] !== "")
}

/** The input item for a user's text. */
export const userMessage = (text: string): ResponseItem => ({
  type: "message",
  role: "user",
  content: [{ type: "input_text", text }]
})

/** The input item that pairs a call with its result (`output`: the result as a JSON string). */
export const functionCallOutput = (callId: string, output: string): ResponseItem => ({
  type: "function_call_output",
  call_id: callId,
  output
})

/** A function call of a validated response: what Prepare receives. */
export interface FunctionCall {
  readonly call_id: string
  readonly name: string
  readonly arguments: string
}

/** The output item types Mino has a handler for; any other fails the response. */
const HANDLED = new Set(["message", "reasoning", "function_call"])

/** The function calls of an output, in order, without validating them. */
export const functionCalls = (output: ReadonlyArray<Item>): ReadonlyArray<Item> =>
  output.filter((item) => item["type"] === "function_call")

/** Whether a status is absent (`undefined` or `null`) or `completed`: an item that finished. */
const finished = (status: unknown): boolean => status === undefined || status === null || status === "completed"

/**
 * The response's calls, or a one-line reason why the response is invalid.
 * `earlier` holds the call ids already seen in this turn.
 */
export const validate = (
  output: ReadonlyArray<Item>,
  earlier: ReadonlySet<string>
): Either.Either<ReadonlyArray<FunctionCall>, string> => {
  const calls: Array<FunctionCall> = []
  const seen = new Set<string>()
  let text = false
  for (const item of output) {
    const type = item["type"]
    if (typeof type !== "string") return Either.left("the model sent an output item without a type")
    if (!HANDLED.has(type)) {
      return Either.left(`the model sent an output item of type ${JSON.stringify(type)}, which Mino cannot handle`)
    }
    if (type === "message") {
      // Only the assistant speaks in an output; a `system` or `developer` message saved
      // and replayed would become instructions in every later request.
      if (item["role"] !== "assistant") return Either.left(`the model sent a message with role ${JSON.stringify(item["role"] ?? null)}, not assistant`)
      // A message left `in_progress` inside a completed response is finished text: Hugging Face's
      // router closes only the last output item, so a sentence before a call stays `in_progress`.
      if (!finished(item["status"]) && item["status"] !== "in_progress") {
        return Either.left(`the model sent a message whose status is ${JSON.stringify(item["status"])}, not completed`)
      }
      text ||= messageText(item).length > 0
    }
    if (type !== "function_call") continue
    const { call_id, name, arguments: args, status } = item
    if (typeof call_id !== "string" || call_id.length === 0) {
      return Either.left("a tool call has no call_id")
    }
    if (!finished(status)) {
      return Either.left(`tool call ${JSON.stringify(call_id)} is ${JSON.stringify(status)}, not completed`)
    }
    if (seen.has(call_id)) return Either.left(`two tool calls share call_id ${JSON.stringify(call_id)}`)
    if (earlier.has(call_id)) {
      return Either.left(`call_id ${JSON.stringify(call_id)} was already used earlier in this turn`)
    }
    if (typeof name !== "string" || typeof args !== "string") {
      return Either.left(`tool call ${JSON.stringify(call_id)} has no name or arguments string`)
    }
    seen.add(call_id)
    calls.push({ call_id, name, arguments: args })
  }
  if (calls.length === 0 && !text) return Either.left("the model returned no text or tool calls")
  return Either.right(calls)
}

/**
 * The calls of a saved response that belong to its turn: those of a valid
 * response, none of an invalid one (nothing of it ran or will run). The one rule
 * that replay (`Conversation`), recovery and `mino log` apply to a saved
 * `model_response`, the same `validate` the Agent applied before saving it.
 */
export const acceptedCalls = (output: ReadonlyArray<Item>, earlier: ReadonlySet<string>): ReadonlyArray<FunctionCall> =>
  Either.getOrElse(validate(output, earlier), () => [])
