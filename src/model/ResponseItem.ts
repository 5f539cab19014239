/**
 * The Responses vocabulary in one place: an output item as Mino keeps it
 * (verbatim, every field), what Mino reads from it, which items the API can take
 * back as input, and the validation of a completed response before anything in
 * it executes (chapter 2.1 and 4.1): only output items Mino can handle, every
 * call finished and with a `call_id`, no two calls in the response sharing one,
 * no `call_id` already used earlier in the turn, and something to act on (text
 * or a call). Any violation stops the whole response: none of its calls execute.
 */
import * as Either from "effect/Either"

/** One output (or input) item, verbatim: every field kept, unknown ones included. */
export type ResponseItem = Readonly<Record<string, unknown>>
type Item = ResponseItem

const isRecord = (value: unknown): value is Item => typeof value === "object" && value !== null

/** The text of a message item: its `output_text` parts and refusals, in order. */
export const messageText = (item: Item): string => {
  const content = item["content"]
  if (!Array.isArray(content)) return ""
  let text = ""
  for (const part of content) {
    if (!isRecord(part)) continue
    if (part["type"] === "output_text" && typeof part["text"] === "string") text += part["text"]
    if (part["type"] === "refusal" && typeof part["refusal"] === "string") text += part["refusal"]
  }
  return text
}

/** A message whose content is a refusal (and no other text): the model declined. */
export const isRefusal = (item: Item): boolean => {
  const content = item["content"]
  return Array.isArray(content) && content.some((part) => isRecord(part) && part["type"] === "refusal") &&
    !content.some((part) => isRecord(part) && part["type"] === "output_text" && part["text"] !== "")
}

/**
 * Whether an input item can be sent under `store: false`. A reasoning item is
 * resolved by the API from its `encrypted_content`; without it the API looks the
 * id up in storage that `store: false` never wrote, and answers 404.
 */
export const replayable = (item: unknown): boolean => {
  if (!isRecord(item) || item["type"] !== "reasoning") return true
  const encrypted = item["encrypted_content"]
  return typeof encrypted === "string" && encrypted.length > 0
}

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

/** The call ids a response names, for recovery; calls without one are skipped. */
export const callIds = (output: ReadonlyArray<Item>): ReadonlyArray<string> =>
  functionCalls(output).flatMap((item) => {
    const id = item["call_id"]
    return typeof id === "string" && id.length > 0 ? [id] : []
  })

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
    if (type === "message") text ||= messageText(item).length > 0
    if (type !== "function_call") continue
    const { call_id, name, arguments: args, status } = item
    if (typeof call_id !== "string" || call_id.length === 0) {
      return Either.left("a tool call has no call_id")
    }
    if (status !== undefined && status !== "completed") {
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
