/**
 * The stream reader as it was before its decisions moved into a pure core
 * (src/model/stream/ResponseInProgress.ts, commit 49ea4a2's StreamEvents.ts,
 * verbatim but for its import paths): the oracle that generated streams hold
 * the new reader to, event by event (test/model/ResponseInProgress.test.ts).
 * Not used by anything in src.
 *
 * Its own header follows.
 *
 * ---
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
 */
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { CONTEXT_WINDOW_MESSAGE, isContextWindow, type Problem } from "../../../src/model/ErrorBody.js"
import { type ModelError, type ModelEvent, usageOf } from "../../../src/protocol/ModelEvent.js"
import * as ResponseItem from "../../../src/protocol/ResponseItem.js"
import * as ResponseBudget from "../../../src/model/stream/ResponseBudget.js"

/** A failure, before the client makes it one redacted line. */
export interface Failure {
  readonly reason: ModelError["reason"]
  readonly message: string
}

const failure = (reason: Failure["reason"], message: string): Failure => ({ reason, message })

/** What the model reported as a failure (response.failed, an error event, an error in response.completed). */
export const reportedFailure = (prefix: string, problem: Problem): Failure =>
  isContextWindow(problem)
    ? failure("context_window", `${prefix}: ${CONTEXT_WINDOW_MESSAGE}`)
    : failure("failed", `${prefix}: ${problem.message ?? (problem.code === null || problem.code === undefined ? "no reason given" : String(problem.code))}`)

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

/** Events to pass on (none for progress), or the failure that ends the stream. */
export type Interpretation = ReadonlyArray<ModelEvent> | Failure

export const isFailure = (interpretation: Interpretation): interpretation is Failure => !Array.isArray(interpretation)

/** A message's text on the screen: the key it went under, and all of it shown so far. */
interface OnScreen {
  readonly key: string
  text: string
}

/** Streamed text under one key: an item id, an output index, or the message being streamed. */
interface Group extends OnScreen {
  readonly kind: "id" | "index" | "anonymous"
  claimed: boolean
}

/** The output of `output_item.done` events: by `output_index` when every item has one, else as they came. */
const assemble = (done: ReadonlyArray<{ readonly item: ResponseItem.ResponseItem; readonly index: number | undefined }>) =>
  done.every((entry) => entry.index !== undefined)
    ? [...done].sort((a, b) => (a.index ?? 0) - (b.index ?? 0)).map((entry) => entry.item)
    : done.map((entry) => entry.item)

/** A reader for one stream: it remembers which text was shown and which items finished. */
export const reader = (): (event: unknown) => Interpretation => {
  // Streamed text, by key, in the order it began; a delta naming both an item_id and an
  // output_index makes its group findable by either.
  const groups = new Map<string, Group>()
  const aliases = new Map<string, Group>()
  // Messages already accounted for (shown, or found streamed), by `id:` and `#index` keys.
  const handled = new Set<string>()
  // Anonymous deltas (no item_id, no output_index) belong to the message being streamed;
  // each finished message closes the current anonymous group.
  let anonymous = 0
  const done: Array<{ readonly item: ResponseItem.ResponseItem; readonly index: number | undefined }> = []
  // Messages finished in output_item.done (with their output_index), each as it is on the screen: a
  // response.completed that renames them (new ids and new places, as LiteLLM's bridge did before it
  // aligned its ids with the streamed ones) lists the same messages in the same order.
  const finished: Array<{ readonly index: number | undefined; readonly screen: OnScreen }> = []
  // What is kept of the response so far; charged before anything more is kept.
  let budget = ResponseBudget.empty
  const spend = (items: number, kept: number): Failure | undefined => {
    const charged = ResponseBudget.charge(budget, items, kept)
    if (ResponseBudget.isExceeded(charged)) return failure("too_large", charged.message)
    budget = charged
    return undefined
  }

  const deltaGroup = (itemId: string | null | undefined, index: number | null | undefined): Group => {
    const [key, kind]: readonly [string, Group["kind"]] = typeof itemId === "string"
      ? [`id:${itemId}`, "id"]
      : typeof index === "number"
      ? [`#${index}`, "index"]
      : [`anonymous:${anonymous}`, "anonymous"]
    let group = groups.get(key)
    if (group === undefined) groups.set(key, group = { key, kind, claimed: false, text: "" })
    if (kind === "id" && typeof index === "number" && !aliases.has(`#${index}`)) aliases.set(`#${index}`, group)
    return group
  }

  /** The text a message streamed: under its id, its index, or as the text nobody claimed yet. */
  const streamed = (id: string | undefined, index: number): Group | undefined => {
    const own = (id === undefined ? undefined : groups.get(`id:${id}`)) ?? groups.get(`#${index}`) ?? aliases.get(`#${index}`)
    if (own !== undefined) {
      own.claimed = true
      return own
    }
    for (const group of groups.values()) {
      // A message without an id may be the one an item_id named; one with an id, only anonymous text.
      if (!group.claimed && (group.kind === "anonymous" || (group.kind === "id" && id === undefined))) {
        group.claimed = true
        return group
      }
    }
    return undefined
  }

  /**
   * A message seen whole: the text to show of it (none when it was shown already), and what of it is
   * on the screen. `same` is the finished message it may be under another id and place.
   */
  const wholeMessage = (item: ResponseItem.ResponseItem, index: number, same?: OnScreen): { readonly event: ModelEvent | undefined; readonly screen: OnScreen } | undefined => {
    if (item["type"] !== "message") return undefined
    const id = typeof item["id"] === "string" ? item["id"] : undefined
    const keys = [...(id === undefined ? [] : [`id:${id}`]), `#${index}`]
    if (keys.some((key) => handled.has(key))) return undefined
    for (const key of keys) handled.add(key)
    const text = ResponseItem.messageText(item)
    const refusal = ResponseItem.isRefusal(item) ? { refusal: true } : {}
    const shown = (screen: OnScreen, rest: string) => {
      screen.text += rest
      return { event: rest.length > 0 ? { _tag: "TextDelta" as const, text: rest, item: screen.key, ...refusal } : undefined, screen }
    }
    // The same message renamed: only an end not yet shown is added.
    if (same !== undefined && same.text.length > 0 && text.startsWith(same.text)) return shown(same, text.slice(same.text.length))
    const group = streamed(id, index)
    // What streamed is shown; only an end the deltas left out is added (never the text a second time).
    if (group === undefined) return shown({ key: keys[0]!, text: "" }, text)
    return shown(group, text.startsWith(group.text) ? text.slice(group.text.length) : "")
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
    // completed.output wins when it has items; else the stream's finished items are the output.
    const output = response.output !== undefined && response.output !== null && response.output.length > 0 ? response.output : assemble(done)
    const events: Array<ModelEvent> = []
    const order = finished.every((message) => message.index !== undefined)
      ? [...finished].sort((a, b) => (a.index ?? 0) - (b.index ?? 0))
      : finished
    let messages = 0
    output.forEach((item, index) => {
      const same = item["type"] === "message" ? order[messages++]?.screen : undefined
      const seen = wholeMessage(item, index, same)
      if (seen?.event !== undefined) events.push(seen.event)
    })
    const usage = usageOf(response.usage)
    events.push({ _tag: "Completed", response: { id: response.id ?? "", output, ...(usage === undefined ? {} : { usage }) } })
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
            const groupsBefore = groups.size
            const group = deltaGroup(item_id, output_index)
            const over = spend(groups.size - groupsBefore, delta.length + ResponseBudget.PIECE_COST)
            if (over !== undefined) return over
            group.text += delta
            const refusal = type === "response.refusal.delta" ? { refusal: true } : {}
            return [{ _tag: "TextDelta", text: delta, item: group.key, ...refusal }]
          }
        })
      case "response.output_item.done": {
        if (!isItemDone(event)) return []
        const { item, output_index } = event
        const index = typeof output_index === "number" ? output_index : undefined
        const over = spend(1, ResponseBudget.size(item))
        if (over !== undefined) return over
        done.push({ item, index })
        const seen = wholeMessage(item, index ?? done.length - 1)
        if (seen !== undefined) finished.push({ index, screen: seen.screen })
        if (item["type"] === "message") anonymous += 1
        return seen?.event === undefined ? [] : [seen.event]
      }
      case "response.completed":
        return isCompleted(event) ? completed(event) : failure("protocol", "model stream sent a malformed response.completed event")
      case "response.failed": {
        const problem = Option.getOrElse(
          Option.flatMap(decodeFailed(event), (failed) => Option.fromNullable(failed.response.error)),
          (): Problem => ({})
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
        return reportedFailure("model stream error", { ...problem, message: problem.message ?? "no message given" })
      }
      default:
        return []
    }
  }
}
