/**
 * What each streamed Responses event means for Mino: text to show, the completed
 * response to act on, or the failure that ends the stream. Plain code, not
 * Effects: it runs for every streamed event.
 *
 * Only a successful `response.completed` (status `completed` when given, no
 * `error`) yields a response. Text that arrived only in `output_item.done` or in
 * `response.completed` (no deltas for that item) is shown then, once.
 */
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { ModelError, ModelEvent } from "./ModelEvent.js"
import * as ResponseItem from "./ResponseItem.js"

/** The line a context-window failure ends with; #12's `--new` starts that conversation. */
export const CONTEXT_WINDOW_MESSAGE =
  "the conversation no longer fits in the model's context window; start a new conversation with `mino --new`"

/** Whether an API error is the context window overflowing (OpenAI's code, or the wording of compatible servers). */
export const isContextWindow = (code: string | null | undefined, message: string | null | undefined): boolean =>
  code === "context_length_exceeded" || /context (window|length)|maximum context/i.test(message ?? "")


/** A failure, before the client makes it one redacted line. */
export interface Failure {
  readonly reason: ModelError["reason"]
  readonly message: string
}

const failure = (reason: Failure["reason"], message: string): Failure => ({ reason, message })

/** What the model reported as a failure (response.failed, an error event, an error in response.completed). */
export const reportedFailure = (
  prefix: string,
  problem: { readonly message?: string | null | undefined; readonly code?: string | null | undefined }
): Failure =>
  isContextWindow(problem.code, problem.message)
    ? failure("context_window", `${prefix}: ${CONTEXT_WINDOW_MESSAGE}`)
    : failure("failed", `${prefix}: ${problem.message ?? problem.code ?? "no reason given"}`)

const OutputItemList = Schema.Array(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
const Where = {
  item_id: Schema.optional(Schema.NullOr(Schema.String)),
  output_index: Schema.optional(Schema.NullOr(Schema.Number))
}
const Delta = Schema.Struct({ delta: Schema.String, ...Where })
const ItemDone = Schema.Struct({ item: Schema.Record({ key: Schema.String, value: Schema.Unknown }), ...Where })
const Problem = Schema.NullOr(Schema.Struct({
  message: Schema.optional(Schema.NullOr(Schema.String)),
  code: Schema.optional(Schema.NullOr(Schema.String))
}))
const Completed = Schema.Struct({
  response: Schema.Struct({
    id: Schema.String,
    output: OutputItemList,
    status: Schema.optional(Schema.NullOr(Schema.String)),
    error: Schema.optional(Problem),
    incomplete_details: Schema.optional(Schema.NullOr(Schema.Struct({ reason: Schema.optional(Schema.NullOr(Schema.String)) })))
  })
})
const Failed = Schema.Struct({ response: Schema.Struct({ error: Schema.optional(Problem) }) })
const Incomplete = Schema.Struct({
  response: Schema.Struct({
    incomplete_details: Schema.optional(Schema.NullOr(Schema.Struct({ reason: Schema.optional(Schema.NullOr(Schema.String)) })))
  })
})
const ErrorEvent = Schema.Struct({
  message: Schema.optional(Schema.NullOr(Schema.String)),
  code: Schema.optional(Schema.NullOr(Schema.String))
})

// Built once: a decoder per event would be rebuilt for every streamed token.
const decodeDelta = Schema.decodeUnknownOption(Delta)
const decodeItemDone = Schema.decodeUnknownOption(ItemDone)
// Checked, not decoded: decoding copies each output item key by key, and a key such
// as `__proto__` would be lost. The items must reach the session verbatim.
const isCompleted = Schema.is(Completed)
const decodeFailed = Schema.decodeUnknownOption(Failed)
const decodeIncomplete = Schema.decodeUnknownOption(Incomplete)
const decodeErrorEvent = Schema.decodeUnknownOption(ErrorEvent)

/** Events to pass on (none for progress), or the failure that ends the stream. */
export type Interpretation = ReadonlyArray<ModelEvent> | Failure

export const isFailure = (interpretation: Interpretation): interpretation is Failure => !Array.isArray(interpretation)

const itemKey = (id: string | null | undefined, index: number | null | undefined): string =>
  typeof id === "string" ? id : `#${index ?? "?"}`

/** A reader for one stream: it remembers which message items already had text shown, by id (or position). */
export const reader = (): (event: unknown) => Interpretation => {
  const shown = new Set<string>()

  /** Text of message items that streamed no deltas: what a person would otherwise never see. */
  const unshownText = (item: ResponseItem.ResponseItem, index: number | null | undefined): ModelEvent | undefined => {
    if (item["type"] !== "message") return undefined
    const id = item["id"]
    const key = itemKey(typeof id === "string" ? id : undefined, index)
    if (shown.has(key)) return undefined
    shown.add(key)
    const text = ResponseItem.messageText(item)
    const refusal = ResponseItem.isRefusal(item) ? { refusal: true } : {}
    return text.length > 0 ? { _tag: "TextDelta", text, item: key, ...refusal } : undefined
  }

  /** Acts only on a successful response.completed: status `completed` (when given) and no error. */
  const completed = (event: typeof Completed.Type): Interpretation => {
    const { response } = event
    if (response.error !== undefined && response.error !== null) {
      return reportedFailure("model response failed", response.error)
    }
    const status = response.status
    if (status !== undefined && status !== null && status !== "completed") {
      return status === "incomplete"
        ? failure("incomplete", `model response incomplete: ${response.incomplete_details?.reason ?? "no reason given"}`)
        : failure("failed", `model response ended with status ${JSON.stringify(status)}, not completed`)
    }
    const events: Array<ModelEvent> = []
    response.output.forEach((item, index) => {
      const text = unshownText(item, index)
      if (text !== undefined) events.push(text)
    })
    events.push({ _tag: "Completed", response: { id: response.id, output: response.output } })
    return events
  }

  return (event: unknown): Interpretation => {
    // A plain check on the hot path; the events that matter are decoded with their schema below.
    const type = typeof event === "object" && event !== null && "type" in event && typeof event.type === "string" ? event.type : ""
    switch (type) {
      case "response.output_text.delta":
      case "response.refusal.delta":
        return Option.match(decodeDelta(event), {
          onNone: () => failure("protocol", `model stream sent a malformed ${type} event`),
          onSome: ({ delta, item_id, output_index }) => {
            const item = itemKey(item_id, output_index)
            shown.add(item)
            const refusal = type === "response.refusal.delta" ? { refusal: true } : {}
            return [{ _tag: "TextDelta", text: delta, item, ...refusal }]
          }
        })
      case "response.output_item.done":
        return Option.match(decodeItemDone(event), {
          onNone: () => [],
          onSome: ({ item, output_index }) => {
            const text = unshownText(item, output_index)
            return text === undefined ? [] : [text]
          }
        })
      case "response.completed":
        return isCompleted(event) ? completed(event) : failure("protocol", "model stream sent a malformed response.completed event")
      case "response.failed": {
        const problem = Option.getOrElse(
          Option.flatMap(decodeFailed(event), (failed) => Option.fromNullable(failed.response.error)),
          () => ({})
        )
        return reportedFailure("model response failed", problem)
      }
      case "response.incomplete": {
        const reason = Option.flatMap(decodeIncomplete(event), (incomplete) =>
          Option.fromNullable(incomplete.response.incomplete_details?.reason)
        )
        return failure("incomplete", `model response incomplete: ${Option.getOrElse(reason, () => "no reason given")}`)
      }
      case "error": {
        const problem = Option.getOrElse(decodeErrorEvent(event), (): typeof ErrorEvent.Type => ({}))
        return reportedFailure("model stream error", { code: problem.code, message: problem.message ?? "no message given" })
      }
      default:
        return []
    }
  }
}
