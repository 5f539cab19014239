/**
 * Validation of a completed response before anything in it executes (chapter
 * 2.1 and 4.1): only output items Mino can handle, every call finished and with
 * a `call_id`, no two calls in the response sharing one, no `call_id` already
 * used earlier in the turn, and something to act on (text or a call). Any
 * violation stops the whole response: none of its calls execute.
 */
import * as Either from "effect/Either"
import { messageText } from "../model/OutputItems.js"

export interface FunctionCall {
  readonly call_id: string
  readonly name: string
  readonly arguments: string
}

type Item = Readonly<Record<string, unknown>>

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
