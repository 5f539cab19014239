/**
 * Text Mino did not write (the model's, drawn by `Markdown`) can never pass for
 * Mino's own screen:
 *
 * - A line whose drawn text begins as one of Mino's own lines does (the
 *   approval screen's `[Tool: …]`, `Command: …`, `Directory: …`,
 *   `Environment: …`, `Timeout: …`, `Output limit: …`, `Permissions: …`, the prompt `Approve this operation?`, the
 *   `(ignored …)` and `Denied: …` lines, `You>`, `Assistant>`, a result's
 *   `[Tool result: …]`, `Turn failed` and `Turn cancelled`) is drawn behind
 *   `MARKER`, which no line of Mino's begins with. The comparison is on what
 *   the line looks like: styles left out, leading blanks skipped, case, width
 *   and compatibility forms folded (NFKC), and the Cyrillic and Greek letters
 *   that look like Latin ones taken for them.
 * - A row the terminal starts by wrapping a long line is a line's start too:
 *   given the screen's width, the filter counts the columns written (its own
 *   output, and what others wrote on the row, `advance`), so text padded or
 *   filled to push `Command:` to the start of a row is set apart there.
 * - Characters that are not ASCII after folding (lookalikes no table lists:
 *   U+2236 for `:`, Cherokee or other letters like Latin ones) may stand in for
 *   up to a third of an opening's characters, and combining marks are not
 *   counted at all, so `Ϲommand∶` or a mark before `Command:` is an opening.
 * - Non-moving characters (combining marks) run on across pieces and styles
 *   are counted as one run: past `Escape.MARKS_KEPT` in a row each is escaped
 *   however the stream was cut (`Escape.marksFrom`).
 *
 * Streaming and pure: a line's start is held only while it could still become
 * one of those openings (a few dozen characters at most), so the output is the
 * same however the text arrives. Input is output already escaped: the only
 * escape sequences in it are SGR styles.
 */
import * as Escape from "../../security/Escape.js"
import * as Width from "./Width.js"

/** Drawn before a line of the model's that reads like one of Mino's own. */
export const MARKER = "┊ "

/** How Mino's own lines begin, folded (see `fold`). */
const OPENINGS = [
  "[tool:",
  "[tool result",
  "command:",
  "command above:",
  "directory:",
  "environment:",
  "timeout:",
  "output limit:",
  "permissions:",
  "approve this operation",
  "(ignored",
  "denied:",
  "you>",
  "assistant>",
  "turn failed",
  "turn cancelled"
]

// Letters of other scripts drawn like Latin ones (Unicode's confusables for these alphabets' lookalikes).
const LOOKALIKE: Readonly<Record<string, string>> = {
  "а": "a", "в": "b", "с": "c", "ԁ": "d", "е": "e", "һ": "h", "і": "i", "ј": "j", "к": "k", "ӏ": "l", "м": "m", "н": "h",
  "о": "o", "р": "p", "ԛ": "q", "г": "r", "ѕ": "s", "т": "t", "υ": "u", "ѵ": "v", "ԝ": "w", "х": "x", "у": "y", "ᴢ": "z",
  "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "μ": "u", "ν": "v", "ο": "o", "ρ": "p", "τ": "t", "χ": "x",
  "γ": "y", "ω": "w", "ı": "i", "ℓ": "l", "ɡ": "g", "ɑ": "a", "ȷ": "j"
}

/** Stands in `head` for a character that folds to no ASCII: it may match any one of an opening's. */
const WILD = "\u0000"

const MARK = /^[\p{Mn}\p{Me}]$/u

/** A drawn character as compared: compatibility forms (fullwidth letters) folded, lower case, lookalikes taken for Latin, anything else not ASCII a `WILD`. */
const fold = (ch: string): string =>
  Array.from(ch.normalize("NFKC").toLowerCase()).map((c) => LOOKALIKE[c] ?? c).map((c) => (c.charCodeAt(0) < 0x80 ? c : WILD)).join("")

/** Columns a character of escaped output takes: marks none, wide characters two. */
const cells = (ch: string): number => (MARK.test(ch) ? 0 : Width.ofChar(ch))

export interface Filter {
  /** `start`: the line's opening is not decided yet; `plain` or `apart` once it is. */
  readonly phase: "start" | "plain" | "apart"
  /** What was held back since the line began, as it would be written. */
  readonly held: string
  /** The line's drawn text so far, folded, leading blanks left out (only while `start`). */
  readonly head: string
  /** Non-moving characters in a row at the end of what was written. */
  readonly marks: number
  /** The marker is dim (the output has styles). */
  readonly styled: boolean
  /** The screen's width (0: unknown, rows the terminal wraps are not seen). */
  readonly columns: number
  /** The column the next character lands in, on the screen's current row. */
  readonly column: number
}

export const make = (styled: boolean, columns = 0): Filter => ({ phase: "start", held: "", head: "", marks: 0, styled, columns, column: 0 })

/** `text` was written on the screen by someone else (a prompt before the model's text): where the next character lands. */
export const advance = (filter: Filter, text: string): Filter => {
  let column = filter.column
  for (const token of text.match(TOKENS) ?? []) {
    if (token === "\n") column = 0
    else if (!token.startsWith("\u001b")) for (const ch of token) column = moved(filter.columns, column, cells(ch)).column
  }
  return { ...filter, column }
}

/** Where a character of `width` cells lands from `column`: on a new row when the terminal would wrap before it. */
const moved = (columns: number, column: number, width: number): { readonly column: number; readonly wrapped: boolean } =>
  columns > 0 && width > 0 && column + width > columns ? { column: width, wrapped: true } : { column: column + width, wrapped: false }

/**
 * Where `Markdown` broke a line into rows itself (`Flow`): written as a newline,
 * but the line's opening is still judged across it (a forged prompt broken over
 * two rows is still a forged prompt), and each row's start is judged as well.
 * Escaped text never holds it raw (U+0085 is a control).
 */
export const SOFT_BREAK = "\u0085"

// An SGR style, a newline, a soft break, or a run of anything else.
const TOKENS = /\u001b\[[0-9;]*m|\n|\u0085|[^\u001b\n\u0085]+|\u001b/g

const marker = (filter: Filter): string => (filter.styled ? `\u001b[2m${MARKER.trimEnd()}\u001b[0m ` : MARKER)

/** Whether `head` matches the start of `opening` (as far as both go), with at most a third of the opening's characters `WILD`. */
const matches = (head: string, opening: string): boolean => {
  let wild = 0
  const length = Math.min(head.length, opening.length)
  for (let i = 0; i < length; i++) {
    if (head[i] === WILD) wild++
    else if (head[i] !== opening[i]) return false
  }
  return wild * 3 <= opening.length
}

/** Whether a held line's opening is decided by `head`: `apart`, `plain`, or not yet. */
const decide = (head: string): "apart" | "plain" | undefined => {
  if (head.length === 0) return undefined
  if (OPENINGS.some((opening) => head.length >= opening.length && matches(head, opening))) return "apart"
  return OPENINGS.some((opening) => head.length < opening.length && matches(head, opening)) ? undefined : "plain"
}

/** Filters `output` (the next piece of what `Markdown` writes): the text to write now and the filter after it. */
export const feed = (filter: Filter, output: string): { readonly filter: Filter; readonly output: string } => {
  let { column, head, held, marks, phase } = filter
  let written = ""
  const emit = (text: string) => {
    if (phase === "start") held += text
    else written += text
  }
  /** The line's (or row's) opening is decided: what was held is written, behind the marker when it is set apart. */
  const settle = (decided: "apart" | "plain") => {
    const mark = decided === "apart" ? marker(filter) : ""
    written += mark + held
    // The marker moves what follows it on the row.
    if (mark !== "") column = advance({ ...filter, column }, MARKER).column
    held = ""
    head = ""
    phase = decided
  }
  for (const token of output.match(TOKENS) ?? []) {
    if (token === SOFT_BREAK) {
      column = 0
      // An undecided opening goes on over the break (as one blank); a decided line's next row is judged afresh.
      if (phase === "start" && head.length > 0) {
        held += "\n"
        if (!head.endsWith(" ")) head += " "
        continue
      }
      written += held + "\n"
      held = ""
      head = ""
      phase = "start"
      continue
    }
    if (token === "\n") {
      written += held + token
      held = ""
      head = ""
      marks = 0
      column = 0
      phase = "start"
      continue
    }
    if (token.startsWith("\u001b")) {
      emit(token)
      continue
    }
    const shown = Escape.marksFrom(marks, token)
    marks = shown.marks
    // Character by character: each may start a row, and while the opening is not decided each may decide it.
    for (const ch of shown.text) {
      const place = moved(filter.columns, column, cells(ch))
      column = place.column
      // The terminal wraps here: a new row, whose start is checked as a line's is. What the
      // last row held is written as it is (blanks, or an opening the row cut short).
      if (place.wrapped) {
        written += held
        held = ""
        head = ""
        phase = "start"
      }
      if (phase !== "start") {
        written += ch
        continue
      }
      held += ch
      if (MARK.test(ch) || ((head.length === 0 || head.endsWith(" ")) && Escape.BLANK.test(ch))) continue
      head += fold(ch)
      const decided = decide(head)
      if (decided !== undefined) settle(decided)
    }
  }
  return { filter: { ...filter, column, head, held, marks, phase }, output: written }
}

/** The end of the text: what is held is written as it is (an opening not complete is no opening). */
export const end = (filter: Filter): { readonly filter: Filter; readonly output: string } => ({
  filter: { ...make(filter.styled, filter.columns), column: filter.column },
  output: filter.held
})

/** A whole text (a command's output, starting a row) through the filter, on a screen `columns` wide (0: unknown). */
export const whole = (text: string, styled: boolean, columns = 0): string => {
  const step = feed(make(styled, columns), text)
  return step.output + end(step.filter).output
}
