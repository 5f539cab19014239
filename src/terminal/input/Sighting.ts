/**
 * When the person can have seen an approval screen: the terminal says so. A
 * terminal answers a cursor position request (`ESC [ 6 n`) only once it has
 * processed everything written before it, and over SSH the answer makes the
 * round trip; so the answer to a request written after the screen means the
 * screen is on the display. Until then no answer can count (`KeyReader` keeps
 * the question guarded), however long the display takes.
 *
 * Answers come back in the order the requests were written. Each request a
 * question writes first moves the cursor to a column drawn at random on the
 * empty row below the screen (and back to the row's start after), so its
 * answer names that column; the request Mino writes at start (to learn
 * whether the terminal answers at all) may be answered with any position.
 * A report is matched against the requests still due, oldest first; earlier
 * ones it passes over were lost (a terminal drops nothing, but a report read
 * inside a paste is dropped by `KeyDecoder`, as pasted text never types).
 *
 * A report that matches no request still due was not the terminal's answer to
 * Mino: someone or something typed it. While a question waits it is then
 * `forged`: the question is denied, since a forger who tried every column
 * would otherwise hit the one asked for. A pasted report never gets here.
 *
 * A terminal may clamp the column (resized narrower): such an answer names
 * the screen's new width and still matches. A request not answered in
 * `REPEAT_MS` is made again with a new column, once what the terminal has
 * sent is read (an answer already waiting is never taken for lost). A terminal that has never
 * answered (one that does not implement the request) is waited for at most
 * `UNANSWERED_MS`; then the question is shown on the guard alone, as when the
 * output takes no escape sequences at all (`TERM=dumb`). Pure; `KeyReader`
 * does the writing, reading and timing.
 */

/** The request on its own, at start: any answer tells that the terminal answers. */
export const REQUEST = "\u001b[6n"

/** A question's request: its answer must name `column`; the cursor starts and ends at the row's start. */
export const request = (column: number): string => `\u001b[${column}G${REQUEST}\r`

/** A request not answered by then is made again, with a new column. */
export const REPEAT_MS = 1000

/** A terminal that has not answered any request by then is taken not to answer. */
export const UNANSWERED_MS = 2000

/** Columns asked for stay within this (and within the screen's width). */
const MAX_COLUMN = 250

/** A request written and not answered yet: the column it asked for (`undefined`: any), and which question wrote it. */
interface Due {
  readonly column: number | undefined
  readonly question: number | undefined
}

export interface Sighting {
  /** The terminal has answered a request since Mino started. */
  readonly answers: boolean
  /** Requests written and not answered yet, oldest first. */
  readonly due: ReadonlyArray<Due>
  /** The question waiting for its screen to be seen, by number. */
  readonly waiting: number | undefined
  /** Questions begun so far. */
  readonly questions: number
}

export const initial: Sighting = { answers: false, due: [], waiting: undefined, questions: 0 }

/** The request written at start. */
export const started = (sighting: Sighting): Sighting => ({ ...sighting, due: [...sighting.due, { column: undefined, question: undefined }] })

/** A question starts waiting for its screen to be seen. */
export const begin = (sighting: Sighting): Sighting => ({ ...sighting, waiting: sighting.questions + 1, questions: sighting.questions + 1 })

/**
 * A column for the question's next request: from 2 to the screen's width, one
 * not asked for by a request still due while any is left (`random` is uniform in [0, 1)).
 */
export const column = (sighting: Sighting, columns: number, random: () => number): number => {
  const last = Math.max(2, Math.min(columns, MAX_COLUMN))
  const taken = new Set(sighting.due.map((due) => due.column))
  const all = Array.from({ length: last - 1 }, (_, i) => i + 2)
  const free = all.filter((c) => !taken.has(c))
  const from = free.length > 0 ? free : all
  return from[Math.min(from.length - 1, Math.floor(random() * from.length))] ?? 2
}

/** The waiting question wrote a request for `column`. */
export const asked = (sighting: Sighting, column: number): Sighting => ({
  ...sighting,
  due: [...sighting.due, { column, question: sighting.waiting }]
})

export type Seen = "seen" | "not yet" | "forged"

/**
 * A report arrived, naming `column`, on a screen `columns` wide: `seen` when
 * it answers a request of the waiting question, `forged` when it answers no
 * request still due while a question waits, else `not yet`.
 */
export const report = (sighting: Sighting, column: number, columns: number): { readonly sighting: Sighting; readonly seen: Seen } => {
  const index = sighting.due.findIndex((due) =>
    due.column === undefined || due.column === column || (column === columns && due.column > columns)
  )
  if (index === -1) return { sighting, seen: sighting.waiting === undefined ? "not yet" : "forged" }
  const answered = sighting.due[index]
  const next = { ...sighting, answers: true, due: sighting.due.slice(index + 1) }
  if (sighting.waiting === undefined || answered?.question !== sighting.waiting) return { sighting: next, seen: "not yet" }
  return { sighting: { ...next, waiting: undefined }, seen: "seen" }
}

/** The question no longer waits (seen, given up, or interrupted). */
export const end = (sighting: Sighting): Sighting => ({ ...sighting, waiting: undefined })

/** What to do when `elapsed` ms have passed since the question began and no request of it was answered. */
export const onRepeat = (sighting: Sighting, elapsed: number): "ask again" | "give up" =>
  !sighting.answers && elapsed >= UNANSWERED_MS ? "give up" : "ask again"

/** Requests still due: the end waits a moment for their answers, so none reaches the shell as typing. */
export const unanswered = (sighting: Sighting): number => sighting.due.length
