/**
 * Styled text broken at word boundaries as it streams, for the model's prose
 * (`Markdown`): a pure state machine over runs of text, like `LineEditor`.
 * `push(flow, runs)` returns the runs to write now (a run `"\n"` starts a new
 * row, drawn after the flow's `hang`) and the flow that follows; `close` ends
 * the line.
 *
 * - Append-only: a word is held until a blank ends it or it fills a whole row,
 *   so at most one row's worth of text ever waits.
 * - No row is wider than `columns`; only a word wider than a whole row is cut.
 * - The text is what was given: only the blanks where a row breaks (and at the
 *   line's end) are left out; a tab in a gap is drawn as the spaces to its stop.
 * - Widths are those of the text as it will be shown: each character is measured
 *   as `Escape.forDisplay` draws it (a control is its escape, `\e` two columns).
 */
import * as Escape from "../../security/Escape.js"
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

const BREAK: Run = { sgr: "", text: "\n" }
const isBlank = (ch: string): boolean => ch === " " || ch === "\t"

/** Marks and joining jamo, which the display's rule for long runs of them counts. */
const NON_MOVING = /^[\p{M}\u1160-\u11ff\ud7b0-\ud7ff]$/u
/**
 * Marks in a row past this many may be shown escaped (the display's rule for
 * long runs, `Escape.MARKS_KEPT`), so each counts as its longest escape
 * (`\u{10ffff}`): a row can come out shorter, never longer.
 */
const MARKS_KEPT = 8
const ESCAPED_MARK = 10

/** Columns `ch` takes as shown, and the run of marks after it. */
const cells = (ch: string, marks: number): readonly [number, number] => {
  const code = ch.charCodeAt(0)
  if (code >= 0x20 && code < 0x7f) return [1, 0]
  if (NON_MOVING.test(ch)) return [marks + 1 > MARKS_KEPT ? ESCAPED_MARK : Width.ofChar(ch), marks + 1]
  const shown = Escape.forDisplay(ch)
  return [shown === ch ? Width.ofChar(ch) : Width.width(shown), 0]
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
  if (last !== undefined && last.sgr === sgr && last.text !== "\n") runs[runs.length - 1] = { sgr, text: last.text + text }
  else runs.push({ sgr, text })
}

/** A gap's width at `column`: a tab goes to the next multiple of eight. */
const gapShown = (gap: string, column: number): string => {
  let shown = ""
  for (const ch of gap) shown += ch === "\t" ? " ".repeat(8 - ((column + shown.length) % 8)) : ch
  return shown
}

/** The state `push` works on: the flow's fields, mutable inside one call only. */
interface Work {
  flow: Flow
  readonly out: Array<Run>
  word: Array<Run>
}

const newRow = (work: Work): void => {
  work.out.push(BREAK)
  for (const run of work.flow.hang) append(work.out, run.sgr, run.text)
  work.flow = { ...work.flow, column: work.flow.hangWidth, filled: false, gap: "" }
}

/** Writes the held word after the held gap, on this row if both fit, else on the next. */
const place = (work: Work): void => {
  const { flow } = work
  if (work.word.length === 0) return
  const gap = gapShown(flow.gap, flow.column)
  const over = flow.column + gap.length + flow.wordWidth > flow.columns
  // (A row holding only what came before the text, `Assistant> `, breaks too; a hang alone does not.)
  if (over && (flow.filled || flow.column > flow.hangWidth)) newRow(work)
  else if (gap.length > 0) {
    append(work.out, flow.gapSgr, gap)
    work.flow = { ...work.flow, column: flow.column + gap.length }
  }
  for (const run of work.word) append(work.out, run.sgr, run.text)
  work.flow = { ...work.flow, column: work.flow.column + flow.wordWidth, filled: true, gap: "", word: [], wordWidth: 0 }
  work.word = []
}

/** One character of a word wider than a row: written now, after a break when the row is full. */
const cut = (work: Work, sgr: string, ch: string, width: number): void => {
  if (width > 0 && work.flow.column + width > work.flow.columns && work.flow.column > work.flow.hangWidth) newRow(work)
  append(work.out, sgr, ch)
  work.flow = { ...work.flow, column: work.flow.column + width, filled: true }
}

/** One character of the text. */
const step = (work: Work, sgr: string, ch: string): void => {
  if (isBlank(ch)) {
    place(work)
    const gapSgr = work.flow.gap === "" ? sgr : work.flow.gapSgr
    work.flow = { ...work.flow, gap: work.flow.gap + ch, gapSgr, cutting: false, marks: 0 }
    return
  }
  const [width, marks] = cells(ch, work.flow.marks)
  work.flow = { ...work.flow, marks }
  if (work.flow.cutting) return cut(work, sgr, ch, width)
  append(work.word, sgr, ch)
  work.flow = { ...work.flow, wordWidth: work.flow.wordWidth + width }
  if (work.flow.wordWidth <= work.flow.columns - work.flow.hangWidth) return
  // Wider than a whole row: cut, starting on a row of its own.
  const held = work.word
  work.word = []
  work.flow = { ...work.flow, word: [], wordWidth: 0, cutting: true, gap: "" }
  if (work.flow.filled) newRow(work)
  let before = 0
  for (const run of held) {
    for (const piece of run.text) {
      const [w, after] = cells(piece, before)
      before = after
      cut(work, run.sgr, piece, w)
    }
  }
}

/** Adds `runs` to the line: what can be written now, and the flow after it. */
export const push = (flow: Flow, runs: ReadonlyArray<Run>): Pushed => {
  const work: Work = { flow, out: [], word: [...flow.word] }
  for (const run of runs) for (const ch of run.text) step(work, run.sgr, ch)
  return { flow: { ...work.flow, word: work.word }, runs: work.out }
}

/** Ends the line: the held word is written, the blanks after it left out. */
export const close = (flow: Flow): ReadonlyArray<Run> => {
  const work: Work = { flow, out: [], word: [...flow.word] }
  place(work)
  return work.out
}
