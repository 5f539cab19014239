/**
 * Styled text broken at word boundaries as it streams, for the model's prose
 * (`Markdown`): a pure state machine over runs of text, like `LineEditor`.
 * `push(flow, runs)` returns the runs to write now (a run `BREAK` starts a new
 * row, drawn after the flow's `hang`) and the flow that follows; `close` ends
 * the line.
 *
 * - Append-only: a word is held until a blank ends it or it fills a whole row,
 *   so at most one row's worth of text ever waits.
 * - No row is wider than `columns`; only a word wider than a whole row is cut.
 * - The text is what was given: only the blanks where a row breaks (and at the
 *   line's end, when they do not fit) are left out; a tab in a gap is drawn as
 *   the spaces to its stop.
 * - Widths are those of the text as it will be shown: each character is measured
 *   as `Escape.forDisplay` draws it (a control is its escape, `\e` two columns).
 */
import * as Escape from "../../security/Escape.js"
import { SOFT_BREAK } from "./SetApart.js"
import * as Width from "./Width.js"

/** A piece of the model's text (not escaped yet) and its style. */
export interface Run {
  readonly sgr: string
  readonly text: string
}

export interface Flow {
  /** The row's width. */
  readonly columns: number
  /** Drawn at the start of every row after the first (a list item's indentation, a quote's bars). */
  readonly hang: ReadonlyArray<Run>
  readonly hangWidth: number
  /** Columns taken on the current row. */
  readonly column: number
  /** Whether a word is on the current row (a break before the first word would only leave a blank row). */
  readonly filled: boolean
  /** The word being typed, not written yet. */
  readonly word: ReadonlyArray<Run>
  readonly wordWidth: number
  /** The blanks between the row's last word and `word`, not written yet. */
  readonly gap: string
  /** The style the gap came in (a blank between two bold words is bold). */
  readonly gapSgr: string
  /** Inside a word wider than a row: its characters are written as they come, the row broken when full. */
  readonly cutting: boolean
  /** Non-moving characters in a row at the end of the text (see `cells`). */
  readonly marks: number
}

/** A flow for a row `columns` wide whose first `column` columns are taken; continued rows start with `hang`. */
export const make = (columns: number, column: number, hang: ReadonlyArray<Run>): Flow => {
  const hangWidth = runsWidth(hang)
  // A hang that leaves less than half the row is not drawn (a list nested fifty deep).
  const kept = hangWidth * 2 <= columns ? hang : []
  return {
    columns: Math.max(1, columns),
    hang: kept,
    hangWidth: kept === hang ? hangWidth : 0,
    column,
    filled: false,
    word: [],
    wordWidth: 0,
    gap: "",
    gapSgr: "",
    cutting: false,
    marks: 0
  }
}

export interface Pushed {
  readonly flow: Flow
  readonly runs: ReadonlyArray<Run>
}

/** A row break of the flow's own (`SetApart.SOFT_BREAK`, written as a newline after the display's last check). */
export const BREAK: Run = { sgr: "", text: SOFT_BREAK }
const isBlank = (ch: string): boolean => ch === " " || ch === "\t"

/** Marks and joining jamo, which the display's rule for long runs of them counts. */
const NON_MOVING = /^[\p{M}\u1160-\u11ff\ud7b0-\ud7ff]$/u
/**
 * Marks in a row past this many are shown escaped by the display's rule for
 * long runs (`Escape.MARKS_KEPT`, `\u0301`), so each counts as its escape.
 */
const MARKS_KEPT = 8
const escapedMark = (ch: string): number => ((ch.codePointAt(0) ?? 0) > 0xffff ? 4 + (ch.codePointAt(0) ?? 0).toString(16).length : 6)

/** Widths of the characters met so far that are not plain ASCII (measuring escapes them first). */
const measured = new Map<string, number>()
const MEASURED_MAX = 4096

/** Columns `ch` takes as shown, and the run of marks after it. */
const cells = (ch: string, marks: number): readonly [number, number] => {
  const code = ch.charCodeAt(0)
  if (code >= 0x20 && code < 0x7f) return [1, 0]
  if (NON_MOVING.test(ch)) return [marks + 1 > MARKS_KEPT ? escapedMark(ch) : Width.ofChar(ch), marks + 1]
  let width = measured.get(ch)
  if (width === undefined) {
    const shown = Escape.forDisplay(ch)
    width = shown === ch ? Width.ofChar(ch) : Width.width(shown)
    if (measured.size < MEASURED_MAX) measured.set(ch, width)
  }
  return [width, 0]
}

export const runsWidth = (runs: ReadonlyArray<Run>): number => {
  let total = 0
  let marks = 0
  for (const run of runs) {
    for (const ch of run.text) {
      const [width, after] = cells(ch, marks)
      total += width
      marks = after
    }
  }
  return total
}

/** Appends `text` in `sgr` to `runs`, joining it to the last run when the style is the same. */
const append = (runs: Array<Run>, sgr: string, text: string): void => {
  const last = runs.at(-1)
  if (last !== undefined && last.sgr === sgr && last.text !== BREAK.text) runs[runs.length - 1] = { sgr, text: last.text + text }
  else runs.push({ sgr, text })
}

/** A gap's width at `column`: a tab goes to the next multiple of eight. */
const gapShown = (gap: string, column: number): string => {
  let shown = ""
  for (const ch of gap) shown += ch === "\t" ? " ".repeat(8 - ((column + shown.length) % 8)) : ch
  return shown
}

/** The state `push` works on: the flow's fields, mutable inside one call only, and what it writes. */
type Work = { -readonly [K in keyof Flow]: Flow[K] } & { readonly out: Array<Run>; word: Array<Run> }

const newRow = (work: Work): void => {
  work.out.push(BREAK)
  for (const run of work.hang) append(work.out, run.sgr, run.text)
  work.column = work.hangWidth
  work.filled = false
  work.gap = ""
}

/** Writes the held word after the held gap, on this row if both fit, else on the next. */
const place = (work: Work): void => {
  if (work.word.length === 0) return
  const gap = gapShown(work.gap, work.column)
  const over = work.column + gap.length + work.wordWidth > work.columns
  // (A row holding only what came before the text, `Assistant> `, breaks too; a hang alone does not.)
  if (over && (work.filled || work.column > work.hangWidth)) newRow(work)
  else if (gap.length > 0) {
    append(work.out, work.gapSgr, gap)
    work.column += gap.length
  }
  for (const run of work.word) append(work.out, run.sgr, run.text)
  work.column += work.wordWidth
  work.filled = true
  work.gap = ""
  work.word = []
  work.wordWidth = 0
}

/** One character of a word wider than a row: written now, after a break when the row is full. */
const cut = (work: Work, sgr: string, ch: string, width: number): void => {
  if (width > 0 && work.column + width > work.columns && work.column > work.hangWidth) newRow(work)
  append(work.out, sgr, ch)
  work.column += width
  work.filled = true
}

/** A held word wider than a whole row: cut, starting on a row of its own. */
const startCutting = (work: Work): void => {
  const held = work.word
  work.word = []
  work.wordWidth = 0
  work.cutting = true
  work.gap = ""
  if (work.filled) newRow(work)
  let before = 0
  for (const run of held) {
    for (const piece of run.text) {
      const [w, after] = cells(piece, before)
      before = after
      cut(work, run.sgr, piece, w)
    }
  }
}

/** One character of the text. */
const step = (work: Work, sgr: string, ch: string): void => {
  if (isBlank(ch)) {
    place(work)
    if (work.gap === "") work.gapSgr = sgr
    work.gap += ch
    work.cutting = false
    work.marks = 0
    return
  }
  const [width, marks] = cells(ch, work.marks)
  work.marks = marks
  if (work.cutting) return cut(work, sgr, ch, width)
  append(work.word, sgr, ch)
  work.wordWidth += width
  if (work.wordWidth > work.columns - work.hangWidth) startCutting(work)
}

const settled = (work: Work): Flow => ({
  columns: work.columns,
  hang: work.hang,
  hangWidth: work.hangWidth,
  column: work.column,
  filled: work.filled,
  word: work.word,
  wordWidth: work.wordWidth,
  gap: work.gap,
  gapSgr: work.gapSgr,
  cutting: work.cutting,
  marks: work.marks
})

/** Adds `runs` to the line: what can be written now, and the flow after it. */
export const push = (flow: Flow, runs: ReadonlyArray<Run>): Pushed => {
  const work: Work = { ...flow, out: [], word: [...flow.word] }
  for (const run of runs) for (const ch of run.text) step(work, run.sgr, ch)
  return { flow: settled(work), runs: work.out }
}

/** Ends the line: the held word is written, and the blanks after it when they fit on its row. */
export const close = (flow: Flow): ReadonlyArray<Run> => {
  const work: Work = { ...flow, out: [], word: [...flow.word] }
  place(work)
  const gap = gapShown(work.gap, work.column)
  if (gap.length > 0 && work.column + gap.length <= work.columns) append(work.out, work.gapSgr, gap)
  return work.out
}
