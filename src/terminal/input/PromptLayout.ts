/**
 * How a prompt and the line being edited are drawn, and redrawn after each
 * change: pure, from what is on the screen now to the text that updates it.
 * A redraw writes at most a screenful: a line longer than the screen is shown
 * as a window around the cursor, with how much is left out on each side.
 *
 * - `ansi` draws over several rows, moving the cursor with CSI sequences;
 *   typing at the end only writes what was added.
 * - `plain` (TERM=dumb, or output that is not a terminal) draws one row and
 *   moves only with `\r` and `\b`: no escape sequence is ever written.
 */
import * as LineEditor from "./LineEditor.js"
import * as Width from "../display/Width.js"

export interface Frame {
  /** The prompt as written (it may hold colour). */
  readonly prompt: string
  /** Columns the prompt takes. */
  readonly promptWidth: number
  readonly line: LineEditor.Line
  readonly columns: number
  readonly rows: number
}

/** What a redraw left on the screen. */
export interface Drawn {
  /** Rows between the prompt's first row and the cursor. */
  readonly cursorRow: number
  /** Columns the prompt and the line take. */
  readonly width: number
  /** The line as drawn, when the cursor was at its end: typing there only appends. */
  readonly atEnd: string | undefined
}

/** A line is drawn in at most this many rows (fewer on a smaller screen); a longer one as a window. */
const WINDOW_ROWS = 10

/** Room kept for the markers of a window. */
const MARKERS = 40

// Formatted when a marker is drawn: a NumberFormat made at load costs the first prompt
// about a fifth of Node's own start (ICU's data).
const marker = (hidden: number): string => `[… ${hidden.toLocaleString("en-US")} more]`

/** The line, as a window when it does not fit in `space` columns. */
const shown = (line: LineEditor.Line, space: number) => {
  const view = LineEditor.view(line, space)
  const head = view.hiddenBefore > 0 ? `${marker(view.hiddenBefore)} ` : ""
  const tail = view.hiddenAfter > 0 ? ` ${marker(view.hiddenAfter)}` : ""
  const text = head + view.before + view.after + tail
  return { text, cursorColumn: Width.width(head + view.before), atEnd: view.after.length === 0 && tail.length === 0 }
}

export const ansi = (drawn: Drawn | undefined, frame: Frame): { readonly text: string; readonly drawn: Drawn } => {
  const cols = Math.max(1, frame.columns)
  const space = Math.max(10, cols * Math.max(1, Math.min(frame.rows - 2, WINDOW_ROWS)) - frame.promptWidth - MARKERS)
  const { text: line, cursorColumn, atEnd } = shown(frame.line, space)
  const total = frame.promptWidth + Width.width(line)
  const at = frame.promptWidth + cursorColumn
  const appended = drawn?.atEnd !== undefined && atEnd && line.startsWith(drawn.atEnd)
  // Typing at the end only adds characters; anything else redraws from the prompt.
  let text = appended
    ? line.slice(drawn.atEnd?.length ?? 0)
    : drawn === undefined
    ? frame.prompt + line
    : `${drawn.cursorRow > 0 ? `\u001b[${drawn.cursorRow}A` : ""}\r\u001b[J${frame.prompt}${line}`
  // At the exact end of a row the cursor waits to wrap: move it to the next row's start.
  if (total > 0 && total % cols === 0) text += " \r"
  const endRow = Math.floor(total / cols)
  const cursorRow = Math.floor(at / cols)
  if (at !== total || total % cols === 0) {
    if (endRow > cursorRow) text += `\u001b[${endRow - cursorRow}A`
    text += `\r${at % cols > 0 ? `\u001b[${at % cols}C` : ""}`
  }
  return { text, drawn: { cursorRow, width: total, atEnd: atEnd ? line : undefined } }
}

export const plain = (drawn: Drawn | undefined, frame: Frame): { readonly text: string; readonly drawn: Drawn } => {
  // One row, never reaching the last column, so nothing wraps.
  const space = Math.max(10, frame.columns - 1 - frame.promptWidth - MARKERS)
  const { text: line, cursorColumn, atEnd } = shown(frame.line, space)
  const total = frame.promptWidth + Width.width(line)
  const at = frame.promptWidth + cursorColumn
  if (drawn?.atEnd !== undefined && atEnd && line.startsWith(drawn.atEnd)) {
    return { text: line.slice(drawn.atEnd.length), drawn: { cursorRow: 0, width: total, atEnd: line } }
  }
  // Rewrite the row, blank out what the last one left beyond it, and step back to the cursor.
  const pad = Math.max(0, (drawn?.width ?? 0) - total)
  const text = `${drawn === undefined ? "" : "\r"}${frame.prompt}${line}${" ".repeat(pad)}${"\b".repeat(total + pad - at)}`
  return { text, drawn: { cursorRow: 0, width: total, atEnd: atEnd ? line : undefined } }
}
