/**
 * Validation of a completed response before anything in it executes (chapter
 * 2.1): every call needs a `call_id`, no two calls in the response may share one,
 * and a `call_id` already used earlier in the turn stops the whole response.
 */
import * as Either from "effect/Either"

export interface FunctionCall {
  readonly call_id: string
  readonly name: string
  readonly arguments: string
}

type Item = Readonly<Record<string, unknown>>

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
  for (const item of functionCalls(output)) {
    const { call_id, name, arguments: args } = item
    if (typeof call_id !== "string" || call_id.length === 0) {
      return Either.left("a tool call has no call_id")
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
  return Either.right(calls)
}
