/**
 * What each streamed Responses event means for Mino: text to show, the completed
 * response to act on, or the failure that ends the stream. Plain code, not
 * Effects: it runs for every streamed event.
 *
 * Only a successful `response.completed` (status `completed` when given, no
 * `error`) yields a response. Its output is `response.output` when that is a
 * non-empty list; else (Codex's test servers, minimal proxies send none) the items
 * of the `response.output_item.done` events, in `output_index` order (arrival
 * order when an index is missing).
 *
 * Text is shown once whatever ids are missing: a delta belongs to its `item_id`,
 * else its `output_index`, else to the message being streamed; a message seen
 * whole (in `output_item.done` or `response.completed`) whose text was already
 * streamed under any of those is not shown again (only what the deltas left out
 * of its end, if they stopped short), and one whose text never streamed is shown
 * then. A response.completed that renames the finished messages (new ids and new
 * places: LiteLLM's bridge before it aligned them) lists them in the same order:
 * its k-th message is the k-th finished one, shown once.
 *
 * What is kept until the response completes (finished items, streamed text) is
 * bounded (ResponseBudget.ts): past the bound the stream fails, `too_large`.
 *
 * This file reads the wire: it decodes each event into a `StreamEvent` (the
 * failures an event reports are decided here, from the event alone); what the
 * event does to the response so far is ResponseInProgress.ts, a pure core.
 */
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { Problem } from "../ErrorBody.js"
import * as ResponseInProgress from "./ResponseInProgress.js"
import { failure, type Interpretation, reportedFailure, type StreamEvent } from "./ResponseInProgress.js"

export { type Failure, type Interpretation, isFailure, reportedFailure } from "./ResponseInProgress.js"

const Item = Schema.Record({ key: Schema.String, value: Schema.Unknown })
const OutputItemList = Schema.Array(Item)
const Where = {
  item_id: Schema.optional(Schema.NullOr(Schema.String)),
  output_index: Schema.optional(Schema.NullOr(Schema.Number))
}
const Delta = Schema.Struct({ delta: Schema.String, ...Where })
const ItemDone = Schema.Struct({ item: Item, ...Where })
const CodeSchema = Schema.optional(Schema.NullOr(Schema.Union(Schema.String, Schema.Number)))
const ProblemSchema = Schema.NullOr(Schema.Struct({
  message: Schema.optional(Schema.NullOr(Schema.String)),
  code: CodeSchema,
  type: Schema.optional(Schema.NullOr(Schema.String))
}))
const Completed = Schema.Struct({
  response: Schema.Struct({
    id: Schema.optional(Schema.NullOr(Schema.String)),
    output: Schema.optional(Schema.NullOr(OutputItemList)),
    status: Schema.optional(Schema.NullOr(Schema.String)),
    // Read by hand (usageOf): a malformed usage is no usage, never a failed response.
    usage: Schema.optional(Schema.Unknown),
    error: Schema.optional(ProblemSchema),
    incomplete_details: Schema.optional(Schema.NullOr(Schema.Struct({ reason: Schema.optional(Schema.NullOr(Schema.String)) })))
  })
})
const Failed = Schema.Struct({ response: Schema.Struct({ error: Schema.optional(ProblemSchema) }) })
const Incomplete = Schema.Struct({
  response: Schema.Struct({
    incomplete_details: Schema.optional(Schema.NullOr(Schema.Struct({ reason: Schema.optional(Schema.NullOr(Schema.String)) })))
  })
})
const ErrorEvent = Schema.Struct({
  message: Schema.optional(Schema.NullOr(Schema.String)),
  code: CodeSchema,
  type: Schema.optional(Schema.NullOr(Schema.String))
})

// Built once: a decoder per event would be rebuilt for every streamed token.
const decodeDelta = Schema.decodeUnknownOption(Delta)
// Checked, not decoded: decoding copies each output item key by key, and a key such
// as `__proto__` would be lost. The items must reach the session verbatim.
const isItemDone = Schema.is(ItemDone)
const isCompleted = Schema.is(Completed)
const decodeFailed = Schema.decodeUnknownOption(Failed)
const decodeIncomplete = Schema.decodeUnknownOption(Incomplete)
const decodeErrorEvent = Schema.decodeUnknownOption(ErrorEvent)

const PROGRESS: StreamEvent = { _tag: "Progress" }

const failed = (reason: Parameters<typeof failure>[0], message: string): StreamEvent => ({ _tag: "Failed", failure: failure(reason, message) })

/** What one event from the wire is, for the core: malformed text and completions, and reported failures, end the stream. */
export const decode = (event: unknown): StreamEvent => {
  // A plain check on the hot path; the events that matter are decoded with their schema below.
  const type = typeof event === "object" && event !== null && "type" in event && typeof event.type === "string" ? event.type : ""
  switch (type) {
    case "response.output_text.delta":
    case "response.refusal.delta":
      return Option.match(decodeDelta(event), {
        onNone: () => failed("protocol", `model stream sent a malformed ${type} event`),
        onSome: ({ delta, item_id, output_index }): StreamEvent => ({
          _tag: "Delta",
          delta,
          itemId: item_id,
          index: output_index,
          refusal: type === "response.refusal.delta"
        })
      })
    case "response.output_item.done":
      return isItemDone(event)
        ? { _tag: "ItemDone", item: event.item, index: typeof event.output_index === "number" ? event.output_index : undefined }
        : PROGRESS
    case "response.completed":
      return isCompleted(event) ? { _tag: "Completed", response: event.response } : failed("protocol", "model stream sent a malformed response.completed event")
    case "response.failed": {
      const problem = Option.getOrElse(
        Option.flatMap(decodeFailed(event), (failed) => Option.fromNullable(failed.response.error)),
        (): Problem => ({})
      )
      return { _tag: "Failed", failure: reportedFailure("model response failed", problem) }
    }
    case "response.incomplete": {
      const reason = Option.flatMap(decodeIncomplete(event), (incomplete) => Option.fromNullable(incomplete.response.incomplete_details?.reason))
      return failed("incomplete", `model response incomplete: ${Option.getOrElse(reason, () => "no reason given")}`)
    }
    case "error": {
      const problem = Option.getOrElse(decodeErrorEvent(event), (): typeof ErrorEvent.Type => ({}))
      return { _tag: "Failed", failure: reportedFailure("model stream error", { ...problem, message: problem.message ?? "no message given" }) }
    }
    default:
      return PROGRESS
  }
}

/** What one event from the wire does to the response so far. */
export const read = (progress: ResponseInProgress.ResponseInProgress, event: unknown): ResponseInProgress.Step =>
  ResponseInProgress.advance(progress, decode(event))

/** A reader for one stream: it holds the response so far. */
export const reader = (): (event: unknown) => Interpretation => {
  let progress = ResponseInProgress.empty
  return (event) => {
    const step = read(progress, event)
    progress = step.progress
    return step.interpretation
  }
}
