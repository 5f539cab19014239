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

/** A drawn character as compared: compatibility forms (fullwidth letters) folded, lower case, lookalikes taken for Latin. */
const fold = (ch: string): string =>
  Array.from(ch.normalize("NFKC").toLowerCase()).map((c) => LOOKALIKE[c] ?? c).join("")

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
}

export const make = (styled: boolean): Filter => ({ phase: "start", held: "", head: "", marks: 0, styled })

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

/** Whether a held line's opening is decided by `head`: `apart`, `plain`, or not yet. */
const decide = (head: string): "apart" | "plain" | undefined => {
  if (head.length === 0) return undefined
  if (OPENINGS.some((opening) => head.startsWith(opening))) return "apart"
  return OPENINGS.some((opening) => opening.startsWith(head)) ? undefined : "plain"
}

/** Filters `output` (the next piece of what `Markdown` writes): the text to write now and the filter after it. */
export const feed = (filter: Filter, output: string): { readonly filter: Filter; readonly output: string } => {
  let { head, held, marks, phase } = filter
  let written = ""
  const emit = (text: string) => {
    if (phase === "start") held += text
    else written += text
  }
  for (const token of output.match(TOKENS) ?? []) {
    if (token === "\n") {
      written += held + token
      held = ""
      head = ""
      marks = 0
      phase = "start"
      continue
    }
    if (token === SOFT_BREAK) {
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
    if (token.startsWith("\u001b")) {
      emit(token)
      continue
    }
    const shown = Escape.marksFrom(marks, token)
    marks = shown.marks
    if (phase !== "start") {
      emit(shown.text)
      continue
    }
    // Character by character while the opening is not decided.
    const chars = Array.from(shown.text)
    let at = 0
    for (const ch of chars) {
      at++
      held += ch
      if ((head.length === 0 || head.endsWith(" ")) && Escape.BLANK.test(ch)) continue
      head += fold(ch)
      const decided = decide(head)
      if (decided === undefined) continue
      written += (decided === "apart" ? marker(filter) : "") + held
      held = ""
      head = ""
      phase = decided
      written += chars.slice(at).join("")
      break
    }
  }
  return { filter: { ...filter, head, held, marks, phase }, output: written }
}

/** The end of the text: what is held is written as it is (an opening not complete is no opening). */
export const end = (filter: Filter): { readonly filter: Filter; readonly output: string } => ({
  filter: make(filter.styled),
  output: filter.held
})

/** A whole text (a command's output) through the filter. */
export const whole = (text: string, styled: boolean): string => {
  const step = feed(make(styled), text)
  return step.output + end(step.filter).output
}
