/**
 * How much of one response Mino holds before it completes, and the rule that ends
 * a response past it. A response is acted on, and saved as one record, only once
 * it completes; until then what it streamed is held in memory. An endpoint that
 * never completes (items of 1 MiB for ever) or sends one event without end would
 * otherwise grow Mino until the process aborts.
 *
 * Three measures, each with its bound:
 * - one event, as received, before it is parsed: its bytes and its line ends
 *   (`EventFrames.ts` holds an event until its blank line; the SDK keeps a string
 *   per line of it);
 * - what the reader keeps of the response (`StreamEvents.ts`): the finished items
 *   and the streamed text, bounded by what one saved record can hold
 *   (`MAX_RECORD_BYTES`; a response is saved as one record);
 * - how many things the reader keeps apart: finished items and streamed texts
 *   (each new `item_id` or `output_index` of a delta begins one).
 *
 * Over a bound, the stream ends there with one line naming it; nothing of the
 * response is kept. Pure: a state record and the function that charges it.
 */
import { MAX_RECORD_BYTES } from "../../defaults.js"

/** The most one event may take before its end: twice a record, for a response.completed that repeats the output, escaped. */
export const MAX_EVENT_BYTES = 2 * MAX_RECORD_BYTES

/** The most line ends one event may have (real events have two or three). */
export const MAX_EVENT_LINES = 100_000

/**
 * The most the reader keeps of one response before it completes: what one saved
 * record can hold. A message's text counts as it streams and again when it is
 * finished, so a response is held to half of this in text (8 MiB, some 2 million
 * tokens: far beyond any model's output limit).
 */
export const MAX_KEPT_BYTES = MAX_RECORD_BYTES

/** The most items and streamed texts the reader keeps apart for one response. */
export const MAX_ITEMS = 10_000

/**
 * What one more piece of streamed text costs to keep beyond its characters: the
 * text grows by joining (V8 keeps a rope node of about 32 bytes per piece), so a
 * stream of one-character deltas costs what it holds, not a 32nd of it.
 */
export const PIECE_COST = 32

const MIB = 1024 * 1024

/** What the reader holds of one response so far. */
export interface Budget {
  /** Finished items and streamed texts kept apart. */
  readonly items: number
  /** Characters kept: the streamed text (and `PIECE_COST` per piece of it), each finished item's strings and keys (one more per value). */
  readonly kept: number
}

export const empty: Budget = { items: 0, kept: 0 }

/** A response past a bound: the one line that says which. */
export interface Exceeded {
  readonly _tag: "Exceeded"
  readonly message: string
}

const exceeded = (message: string): Exceeded => ({ _tag: "Exceeded", message })

export const isExceeded = (charged: Budget | Exceeded): charged is Exceeded => "_tag" in charged

/** `budget` with `items` more kept apart and `kept` more characters, or the bound that would pass. */
export const charge = (budget: Budget, items: number, kept: number): Budget | Exceeded => {
  const next = { items: budget.items + items, kept: budget.kept + kept }
  if (next.items > MAX_ITEMS) {
    return exceeded(`the model's response grew past ${MAX_ITEMS} items before it completed, the most Mino keeps of one response`)
  }
  if (next.kept > MAX_KEPT_BYTES) {
    return exceeded(`the model's response grew past ${MAX_KEPT_BYTES / MIB} MiB before it completed, the most Mino keeps of one response`)
  }
  return next
}

/** Why an event of `bytes` bytes and `lines` line ends so far may not be read on, if so. */
export const eventRefusal = (bytes: number, lines: number): string | undefined =>
  bytes > MAX_EVENT_BYTES
    ? `the model stream sent more than ${MAX_EVENT_BYTES / MIB} MiB without ending an event, the most Mino reads of one event`
    : lines > MAX_EVENT_LINES
    ? `the model stream sent more than ${MAX_EVENT_LINES} lines without ending an event, the most Mino reads of one event`
    : undefined

/**
 * About what `value` (parsed JSON) costs to keep: the characters of its strings
 * and keys, and one per value. Without recursion: an item nested a million deep
 * is measured, not a stack overflow.
 */
export const size = (value: unknown): number => {
  let total = 0
  const stack: Array<unknown> = [value]
  while (stack.length > 0) {
    const next = stack.pop()
    total += 1
    if (typeof next === "string") total += next.length
    else if (Array.isArray(next)) for (const element of next) stack.push(element)
    else if (typeof next === "object" && next !== null) {
      for (const [key, field] of Object.entries(next)) {
        total += key.length
        stack.push(field)
      }
    }
  }
  return total
}
