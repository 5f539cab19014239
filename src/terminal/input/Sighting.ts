/**
 * When the person can have seen an approval screen: the terminal says so. A
 * terminal answers a cursor position request (`ESC [ 6 n`) only once it has
 * processed everything written before it, and over SSH the answer makes the
 * round trip; so the answer to a request written after the screen means the
 * screen is on the display. Until then no answer can count (`KeyReader` keeps
 * the question guarded), however long the display takes.
 *
 * A request says where the answer must put the cursor: it first moves the
 * cursor to a column drawn at random on the empty row below the screen (and
 * back to the row's start after), so a report someone else typed must guess
 * it. A report that names no column asked for this question is not its answer
 * (a reply to an earlier request, or a forgery) and changes nothing; a pasted
 * report never even reaches here (`KeyDecoder` drops sequences in a paste).
 *
 * A terminal may drop a reply (read during a paste) or clamp it (resized
 * narrower): the request is repeated every `REPEAT_MS` with a new column.
 * A terminal that has never answered (one that does not implement the
 * request) is waited for at most `UNANSWERED_MS`; then the question is shown
 * on the guard alone, as when the output takes no escape sequences at all
 * (`TERM=dumb`). Pure; `KeyReader` does the writing, reading and timing.
 */

/** The request on its own (at start: it tells whether the terminal answers). */
export const REQUEST = "\u001b[6n"

/** A request whose answer must name `column`; the cursor starts and ends at the row's start. */
export const request = (column: number): string => `\u001b[${column}G${REQUEST}\r`

/** A request not answered by then is made again, with a new column. */
export const REPEAT_MS = 1000

/** A terminal that has not answered any request by then is taken not to answer. */
export const UNANSWERED_MS = 2000

/** Columns asked for stay within this (and within the screen's width). */
const MAX_COLUMN = 250

export interface Sighting {
  /** The terminal has answered a request since Mino started. */
  readonly answers: boolean
  /** The columns this question's requests asked for; `undefined` when no question waits. */
  readonly asked: ReadonlyArray<number> | undefined
}

export const initial: Sighting = { answers: false, asked: undefined }

/**
 * A column for the next request: from 2 to the screen's width, one not asked
 * for yet in this question while any is left (`random` is uniform in [0, 1)).
 */
export const column = (sighting: Sighting, columns: number, random: () => number): number => {
  const last = Math.max(2, Math.min(columns, MAX_COLUMN))
  const asked = new Set(sighting.asked ?? [])
  const free = Array.from({ length: last - 1 }, (_, i) => i + 2).filter((c) => !asked.has(c))
  const from = free.length > 0 ? free : Array.from({ length: last - 1 }, (_, i) => i + 2)
  return from[Math.min(from.length - 1, Math.floor(random() * from.length))] ?? 2
}

/** A question starts waiting for its screen to be seen. */
export const begin = (sighting: Sighting): Sighting => ({ ...sighting, asked: [] })

/** A request for `column` was written. */
export const asked = (sighting: Sighting, column: number): Sighting => ({ ...sighting, asked: [...(sighting.asked ?? []), column] })

/** A report arrived: `seen` when it answers this question's request (the question then waits no more). */
export const report = (sighting: Sighting, column: number): { readonly sighting: Sighting; readonly seen: boolean } => {
  const seen = sighting.asked?.includes(column) === true
  return { sighting: { answers: true, asked: seen ? undefined : sighting.asked }, seen }
}

/** The question no longer waits (answered, given up, or interrupted). */
export const end = (sighting: Sighting): Sighting => ({ ...sighting, asked: undefined })

/** What to do when `elapsed` ms have passed since the question began and no request was answered. */
export const onRepeat = (sighting: Sighting, elapsed: number): "ask again" | "give up" =>
  !sighting.answers && elapsed >= UNANSWERED_MS ? "give up" : "ask again"
