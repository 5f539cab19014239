/**
 * Long command output, folded for the screen: its first and last lines, and one
 * line saying how many were not shown. Only the screen is folded; the model and
 * the session file always get the whole capture.
 */

export interface FoldOptions {
  /** Lines kept from the start and from the end. */
  readonly head: number
  readonly tail: number
  /** A longer line is cut, saying how many characters were not shown. */
  readonly lineChars: number
}

export const SCREEN: FoldOptions = { head: 10, tail: 10, lineChars: 2000 }

const cut = (line: string, max: number): string =>
  line.length <= max ? line : `${line.slice(0, max)}… (${(line.length - max).toLocaleString("en-US")} more characters not shown)`

/** `text` as shown: at most `head + tail` lines plus the fold line, each at most `lineChars` long. */
export const fold = (text: string, options: FoldOptions = SCREEN): string => {
  const ended = text.endsWith("\n")
  const lines = (ended ? text.slice(0, -1) : text).split("\n")
  // Folding away fewer than a handful of lines would hide more than it saves.
  const hidden = lines.length - options.head - options.tail
  const kept = hidden <= 3
    ? lines.map((line) => cut(line, options.lineChars))
    : [
      ...lines.slice(0, options.head).map((line) => cut(line, options.lineChars)),
      `… ${hidden.toLocaleString("en-US")} lines not shown here; the model received the whole capture …`,
      ...lines.slice(-options.tail).map((line) => cut(line, options.lineChars))
    ]
  return kept.join("\n") + (ended ? "\n" : "")
}
