/**
 * What one streamed event does to a response in progress: the text it shows,
 * the finished items it keeps, the response it completes, or the failure that
 * ends the stream; and what the stream's end means. Pure: `advance` takes a
 * `ResponseInProgress` and an event already read (`StreamEvents.ts` decodes the
 * wire's events into `StreamEvent`s) and returns the next state with what to
 * pass on; no state is ever changed in place, so any state can be advanced again.
 *
 * Text is shown once whatever ids are missing: a delta belongs to its `item_id`,
 * else its `output_index`, else to the message being streamed (`anonymous` counts
 * the messages finished, each closing one); a message seen whole whose text
 * already streamed under any of those is not shown again (only what the deltas
 * left out of its end). A response.completed that renames the finished messages
 * lists them in the same order: its k-th message is the k-th finished one.
 *
 * The end of the stream has one owner, `end`: before `response.completed` it is
 * a failure, after it nothing. What is kept is bounded (ResponseBudget.ts).
 */
import * as HashMap from "effect/HashMap"
import * as HashSet from "effect/HashSet"
import * as Option from "effect/Option"
import { CONTEXT_WINDOW_MESSAGE, isContextWindow, type Problem } from "../ErrorBody.js"
import { type ModelError, type ModelEvent, usageOf } from "../../protocol/ModelEvent.js"
import * as ResponseItem from "../../protocol/ResponseItem.js"
import * as ResponseBudget from "./ResponseBudget.js"

/** A failure, before the client makes it one redacted line. */
export interface Failure {
  readonly reason: ModelError["reason"]
  readonly message: string
}

export const failure = (reason: Failure["reason"], message: string): Failure => ({ reason, message })

/** What the model reported as a failure (response.failed, an error event, an error in response.completed). */
export const reportedFailure = (prefix: string, problem: Problem): Failure =>
  isContextWindow(problem)
    ? failure("context_window", `${prefix}: ${CONTEXT_WINDOW_MESSAGE}`)
    : failure("failed", `${prefix}: ${problem.message ?? (problem.code === null || problem.code === undefined ? "no reason given" : String(problem.code))}`)

/** The one failure of a stream that ends cleanly before its response completed. */
export const ENDED_EARLY: Failure = failure("incomplete", "model stream ended before response.completed")

/** The body of a `response.completed` event, as read. */
export interface CompletedBody {
  readonly id?: string | null | undefined
  readonly output?: ReadonlyArray<ResponseItem.ResponseItem> | null | undefined
  readonly status?: string | null | undefined
  readonly usage?: unknown
  readonly error?: Problem | null | undefined
  readonly incomplete_details?: { readonly reason?: string | null | undefined } | null | undefined
}

/** A streamed event as the core reads it. */
export type StreamEvent =
  /** Text of a message (`refusal`: of a refusal), under the ids the server gave. */
  | { readonly _tag: "Delta"; readonly delta: string; readonly itemId: string | null | undefined; readonly index: number | null | undefined; readonly refusal: boolean }
  /** An item finished (`output_item.done`). */
  | { readonly _tag: "ItemDone"; readonly item: ResponseItem.ResponseItem; readonly index: number | undefined }
  | { readonly _tag: "Completed"; readonly response: CompletedBody }
  /** The stream reported a failure, or sent what cannot be read: it ends here. */
  | { readonly _tag: "Failed"; readonly failure: Failure }
  /** Progress that changes nothing (created, in_progress, argument deltas...). */
  | { readonly _tag: "Progress" }

/** Events to pass on (none for progress), or the failure that ends the stream. */
export type Interpretation = ReadonlyArray<ModelEvent> | Failure

export const isFailure = (interpretation: Interpretation): interpretation is Failure => !Array.isArray(interpretation)

/** Streamed text under one key: an item id (`id:`), an output index (`#`), or the message being streamed (`anonymous:`). */
export interface Group {
  readonly key: string
  readonly kind: "id" | "index" | "anonymous"
  /** A message seen whole took this text as its own. */
  readonly claimed: boolean
  /** All of it shown so far. */
  readonly text: string
}

/** Where a finished message is on the screen: a group's text (which may still grow), or text of its own. */
export type Screen =
  | { readonly _tag: "Group"; readonly key: string }
  | { readonly _tag: "Own"; readonly key: string; readonly text: string }

/** A persistent list, newest first. */
export type Stack<A> = { readonly head: A; readonly tail: Stack<A> } | undefined

const push = <A>(stack: Stack<A>, head: A): Stack<A> => ({ head, tail: stack })

/** A stack's elements, oldest first. */
export const oldestFirst = <A>(stack: Stack<A>): Array<A> => {
  const elements: Array<A> = []
  for (let rest = stack; rest !== undefined; rest = rest.tail) elements.push(rest.head)
  return elements.reverse()
}

/** A persistent queue: `front` oldest first, `back` newest first (reversed onto `front` when it runs out). */
export interface Queue<A> {
  readonly front: Stack<A>
  readonly back: Stack<A>
}

const emptyQueue: Queue<never> = { front: undefined, back: undefined }

const enqueue = <A>(queue: Queue<A>, element: A): Queue<A> => ({ front: queue.front, back: push(queue.back, element) })

/** The same queue with its oldest element at the front of `front`, when it has one. */
const ready = <A>(queue: Queue<A>): Queue<A> => {
  if (queue.front !== undefined || queue.back === undefined) return queue
  let front: Stack<A> = undefined
  for (let back: Stack<A> = queue.back; back !== undefined; back = back.tail) front = push(front, back.head)
  return { front, back: undefined }
}

/** A group that began, and when (the how-many-th). */
export interface Begun {
  readonly key: string
  readonly order: number
}

export interface ResponseInProgress {
  /** Streamed text by key (but `latest`'s group, which is newer here than there). */
  readonly groups: HashMap.HashMap<string, Group>
  /**
   * The group the latest delta went to, and the output_index it named: a stream's deltas come in
   * runs under one key, and a run costs no map update per delta. Read groups through `groupAt`.
   */
  readonly latest: { readonly group: Group; readonly index: number | null | undefined } | undefined
  /** `#index` → the key of the id group whose deltas also named that index. */
  readonly aliases: HashMap.HashMap<string, string>
  /**
   * Anonymous and id groups in the order they began, each kind apart, for a message that finds no text
   * of its own. Claimed groups are dropped from the front as they are met: a claim is never undone.
   */
  readonly anonymousBegun: Queue<Begun>
  readonly idBegun: Queue<Begun>
  /** How many groups began. */
  readonly begunCount: number
  /** Messages already accounted for (shown, or found streamed), by `id:` and `#index` keys. */
  readonly handled: HashSet.HashSet<string>
  /** Messages finished so far: the number of the anonymous group being streamed. */
  readonly anonymous: number
  /** The `output_item.done` items, newest first, and how many. */
  readonly done: Stack<{ readonly item: ResponseItem.ResponseItem; readonly index: number | undefined }>
  readonly doneCount: number
  /** Messages finished in `output_item.done`, each with where it is on the screen, newest first. */
  readonly finished: Stack<{ readonly index: number | undefined; readonly screen: Screen }>
  readonly budget: ResponseBudget.Budget
  /** A successful response.completed was read: nothing more is. */
  readonly completed: boolean
}

export const empty: ResponseInProgress = {
  groups: HashMap.empty(),
  latest: undefined,
  aliases: HashMap.empty(),
  anonymousBegun: emptyQueue,
  idBegun: emptyQueue,
  begunCount: 0,
  handled: HashSet.empty(),
  anonymous: 0,
  done: undefined,
  doneCount: 0,
  finished: undefined,
  budget: ResponseBudget.empty,
  completed: false
}

/** A state and what the event it read passes on. */
export interface Step {
  readonly progress: ResponseInProgress
  readonly interpretation: Interpretation
}

const unchanged = (progress: ResponseInProgress, interpretation: Interpretation): Step => ({ progress, interpretation })

/** What `event` does to `progress`. */
export const advance = (progress: ResponseInProgress, event: StreamEvent): Step => {
  switch (event._tag) {
    case "Delta":
      return delta(progress, event)
    case "ItemDone":
      return itemDone(progress, event.item, event.index)
    case "Completed":
      return completed(progress, event.response)
    case "Failed":
      return unchanged(progress, event.failure)
    case "Progress":
      return unchanged(progress, [])
  }
}

/** What the stream's clean end means: the failure when no response completed, else nothing. */
export const end = (progress: ResponseInProgress): Failure | undefined => progress.completed ? undefined : ENDED_EARLY

/** The group under `key`. */
const groupAt = (progress: ResponseInProgress, key: string): Group | undefined =>
  progress.latest !== undefined && progress.latest.group.key === key ? progress.latest.group : Option.getOrUndefined(HashMap.get(progress.groups, key))

/** `progress` with `group` as it is now: the latest delta's group is kept as `latest`, written to `groups` once another replaces it. */
const withGroup = (progress: ResponseInProgress, group: Group): ResponseInProgress => {
  const latest = progress.latest
  if (latest !== undefined && latest.group.key === group.key) return { ...progress, latest: { ...latest, group } }
  return { ...progress, groups: HashMap.set(progress.groups, group.key, group) }
}

const charge = (progress: ResponseInProgress, items: number, kept: number): ResponseBudget.Budget | Failure => {
  const charged = ResponseBudget.charge(progress.budget, items, kept)
  return ResponseBudget.isExceeded(charged) ? failure("too_large", charged.message) : charged
}

const isBudget = (charged: ResponseBudget.Budget | Failure): charged is ResponseBudget.Budget => !("reason" in charged)

const delta = (progress: ResponseInProgress, event: Extract<StreamEvent, { _tag: "Delta" }>): Step => {
  const { itemId, index } = event
  const [key, kind]: readonly [string, Group["kind"]] = typeof itemId === "string"
    ? [`id:${itemId}`, "id"]
    : typeof index === "number"
    ? [`#${index}`, "index"]
    : [`anonymous:${progress.anonymous}`, "anonymous"]
  const run = progress.latest !== undefined && progress.latest.group.key === key
  const existing = groupAt(progress, key)
  const budget = charge(progress, existing === undefined ? 1 : 0, event.delta.length + ResponseBudget.PIECE_COST)
  if (!isBudget(budget)) return unchanged(progress, budget)
  const group = existing ?? { key, kind, claimed: false, text: "" }
  // A delta naming both an item_id and an output_index makes its group findable by either (the
  // latest delta's pair is found already).
  const alias = kind === "id" && typeof index === "number" && !(run && progress.latest?.index === index) &&
    !HashMap.has(progress.aliases, `#${index}`)
  // The group of the run before this one goes to the map.
  const latest = progress.latest
  const groups = run || latest === undefined ? progress.groups : HashMap.set(progress.groups, latest.group.key, latest.group)
  // Written out, not spread: this runs for every streamed token.
  return {
    progress: {
      groups,
      latest: { group: { key, kind: group.kind, claimed: group.claimed, text: group.text + event.delta }, index },
      aliases: alias ? HashMap.set(progress.aliases, `#${index}`, key) : progress.aliases,
      anonymousBegun: existing === undefined && kind === "anonymous" ? enqueue(progress.anonymousBegun, { key, order: progress.begunCount }) : progress.anonymousBegun,
      idBegun: existing === undefined && kind === "id" ? enqueue(progress.idBegun, { key, order: progress.begunCount }) : progress.idBegun,
      begunCount: existing === undefined ? progress.begunCount + 1 : progress.begunCount,
      handled: progress.handled,
      anonymous: progress.anonymous,
      done: progress.done,
      doneCount: progress.doneCount,
      finished: progress.finished,
      budget,
      completed: progress.completed
    },
    interpretation: [{ _tag: "TextDelta", text: event.delta, item: key, ...(event.refusal ? { refusal: true } : {}) }]
  }
}


/**
 * The oldest text no message claimed yet that a message may take: anonymous text, or, for a
 * message without an id, text an item_id named.
 */
const unclaimed = (progress: ResponseInProgress, withoutId: boolean): readonly [ResponseInProgress, Group | undefined] => {
  const anonymousBegun = pruned(progress, progress.anonymousBegun)
  const idBegun = withoutId ? pruned(progress, progress.idBegun) : progress.idBegun
  const anonymous = anonymousBegun.front?.head
  const id = withoutId ? idBegun.front?.head : undefined
  const oldest = anonymous === undefined ? id : id === undefined || anonymous.order < id.order ? anonymous : id
  return [{ ...progress, anonymousBegun, idBegun }, oldest === undefined ? undefined : groupAt(progress, oldest.key)]
}

/** `queue` without the claimed groups at its front. */
const pruned = (progress: ResponseInProgress, queue: Queue<Begun>): Queue<Begun> => {
  for (let rest = ready(queue);; rest = ready({ front: rest.front?.tail, back: rest.back })) {
    const head = rest.front?.head
    if (head === undefined || groupAt(progress, head.key)?.claimed !== true) return rest
  }
}

/** The text a message streamed, claimed: under its id, its index, or the text nobody claimed yet. */
const streamed = (progress: ResponseInProgress, id: string | undefined, index: number): readonly [ResponseInProgress, Group | undefined] => {
  const alias = Option.getOrUndefined(HashMap.get(progress.aliases, `#${index}`))
  const own = (id === undefined ? undefined : groupAt(progress, `id:${id}`)) ?? groupAt(progress, `#${index}`) ??
    (alias === undefined ? undefined : groupAt(progress, alias))
  const [pruned, found] = own === undefined ? unclaimed(progress, id === undefined) : [progress, own]
  if (found === undefined) return [pruned, undefined]
  const claimed = { ...found, claimed: true }
  return [withGroup(pruned, claimed), claimed]
}

/** The text of `screen` so far. */
const screenText = (progress: ResponseInProgress, screen: Screen): string =>
  screen._tag === "Own" ? screen.text : groupAt(progress, screen.key)?.text ?? ""

interface Seen {
  readonly progress: ResponseInProgress
  /** The text to show of the message: none when it was shown already. */
  readonly event: ModelEvent | undefined
  readonly screen: Screen
}

/** `rest` shown at the end of `screen`. */
const shown = (progress: ResponseInProgress, screen: Screen, rest: string, refusal: boolean): Seen => {
  const event: ModelEvent | undefined = rest.length === 0 ? undefined : { _tag: "TextDelta", text: rest, item: screen.key, ...(refusal ? { refusal: true } : {}) }
  if (screen._tag === "Own") return { progress, event, screen: { ...screen, text: screen.text + rest } }
  const group = groupAt(progress, screen.key)
  return {
    progress: group === undefined ? progress : withGroup(progress, { ...group, text: group.text + rest }),
    event,
    screen
  }
}

/**
 * A message seen whole (undefined for other items and messages already handled): what of it to
 * show, and where it is on the screen. `same` is the finished message it may be under another id and place.
 */
const wholeMessage = (progress: ResponseInProgress, item: ResponseItem.ResponseItem, index: number, same?: Screen): Seen | undefined => {
  if (item["type"] !== "message") return undefined
  const id = typeof item["id"] === "string" ? item["id"] : undefined
  const keys = [...(id === undefined ? [] : [`id:${id}`]), `#${index}`]
  if (keys.some((key) => HashSet.has(progress.handled, key))) return undefined
  const handled = { ...progress, handled: keys.reduce((set, key) => HashSet.add(set, key), progress.handled) }
  const text = ResponseItem.messageText(item)
  const refusal = ResponseItem.isRefusal(item)
  // The same message renamed: only an end not yet shown is added.
  const before = same === undefined ? "" : screenText(handled, same)
  if (same !== undefined && before.length > 0 && text.startsWith(before)) return shown(handled, same, text.slice(before.length), refusal)
  const [claimed, group] = streamed(handled, id, index)
  // What streamed is shown; only an end the deltas left out is added (never the text a second time).
  if (group === undefined) return shown(claimed, { _tag: "Own", key: keys[0]!, text: "" }, text, refusal)
  return shown(claimed, { _tag: "Group", key: group.key }, text.startsWith(group.text) ? text.slice(group.text.length) : "", refusal)
}

const itemDone = (progress: ResponseInProgress, item: ResponseItem.ResponseItem, index: number | undefined): Step => {
  const budget = charge(progress, 1, ResponseBudget.size(item))
  if (!isBudget(budget)) return unchanged(progress, budget)
  const kept = { ...progress, budget, done: push(progress.done, { item, index }), doneCount: progress.doneCount + 1 }
  const seen = wholeMessage(kept, item, index ?? progress.doneCount)
  const next = seen === undefined ? kept : { ...seen.progress, finished: push(seen.progress.finished, { index, screen: seen.screen }) }
  return {
    progress: item["type"] === "message" ? { ...next, anonymous: next.anonymous + 1 } : next,
    interpretation: seen?.event === undefined ? [] : [seen.event]
  }
}

/** Whether a response.completed says the response failed, and how. */
export const verdict = (response: CompletedBody): Failure | undefined => {
  if (response.error !== undefined && response.error !== null) return reportedFailure("model response failed", response.error)
  const status = response.status
  if (status === undefined || status === null || status === "completed") return undefined
  return status === "incomplete"
    ? failure("incomplete", `model response incomplete: ${response.incomplete_details?.reason ?? "no reason given"}`)
    : failure("failed", `model response ended with status ${JSON.stringify(status)}, not completed`)
}

/** The output of `output_item.done` events: by `output_index` when every item has one, else as they came. */
const assemble = (progress: ResponseInProgress): ReadonlyArray<ResponseItem.ResponseItem> => {
  const done = oldestFirst(progress.done)
  return done.every((entry) => entry.index !== undefined)
    ? done.sort((a, b) => (a.index ?? 0) - (b.index ?? 0)).map((entry) => entry.item)
    : done.map((entry) => entry.item)
}

/** A successful response.completed: its output (completed.output when it has items, else the finished items), text not yet shown, usage. */
const completed = (progress: ResponseInProgress, response: CompletedBody): Step => {
  const failed = verdict(response)
  if (failed !== undefined) return unchanged(progress, failed)
  const output = response.output !== undefined && response.output !== null && response.output.length > 0 ? response.output : assemble(progress)
  const finished = oldestFirst(progress.finished)
  const order = finished.every((message) => message.index !== undefined) ? finished.sort((a, b) => (a.index ?? 0) - (b.index ?? 0)) : finished
  const events: Array<ModelEvent> = []
  let state = progress
  let messages = 0
  output.forEach((item, index) => {
    const same = item["type"] === "message" ? order[messages++]?.screen : undefined
    const seen = wholeMessage(state, item, index, same)
    if (seen === undefined) return
    state = seen.progress
    if (seen.event !== undefined) events.push(seen.event)
  })
  const usage = usageOf(response.usage)
  events.push({ _tag: "Completed", response: { id: response.id ?? "", output, ...(usage === undefined ? {} : { usage }) } })
  return { progress: { ...state, completed: true }, interpretation: events }
}
