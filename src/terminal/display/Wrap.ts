/**
 * Lines broken at word boundaries to fit the terminal's width, for the banner
 * and the notices Mino writes itself: a terminal left to wrap them cuts words in
 * two. Pure and total: text that already fits comes back unchanged, a word wider
 * than the line is the only thing ever cut, spaces change only where a line
 * breaks, and a continued line keeps the first line's indentation (so an
 * indented list item stays one visual block).
 *
 * The text is what will be drawn (already escaped, not yet styled); widths are
 * counted as the line editor counts them (East Asian wide characters and emoji
 * take two columns).
 */
import { width } from "./Width.js"

/** `text` with each of its lines fitted to `columns`; `undefined` columns (no terminal) leaves it as it is. */
export const wrap = (text: string, columns: number | undefined): string =>
  columns === undefined || columns <= 0 ? text : text.split("\n").map((line) => fitLine(line, columns)).join("\n")

const fitLine = (line: string, columns: number): string => {
  if (width(line) <= columns) return line
  const indent = /^ */.exec(line)?.[0] ?? ""
  // An indentation that leaves less than half the width is not kept on continued lines.
  const hanging = width(indent) * 2 <= columns ? indent : ""
  const rows: Array<string> = []
  let row = indent
  let rowWidth = width(indent)
  let started = false
  // Words and the gaps between them, alternately: a gap is kept inside a row (it may be part of
  // what is quoted, such as a denied answer) and dropped where the line breaks.
  const parts = line.slice(indent.length).split(/( +)/)
  for (let i = 0; i < parts.length; i += 2) {
    const word = parts[i] ?? ""
    if (word.length === 0) continue
    const gap = parts[i - 1] ?? " "
    const wordWidth = width(word)
    if (started && rowWidth + gap.length + wordWidth <= columns) {
      row += gap + word
      rowWidth += gap.length + wordWidth
      continue
    }
    if (started) {
      rows.push(row)
      row = hanging
      rowWidth = width(hanging)
    }
    started = true
    // Only a word wider than a whole line is cut, at the line's end.
    let rest = word
    while (rowWidth + width(rest) > columns) {
      const [head, tail] = cut(rest, columns - rowWidth)
      if (head.length === 0) break
      rows.push(row + head)
      row = hanging
      rowWidth = width(hanging)
      rest = tail
    }
    row += rest
    rowWidth += width(rest)
  }
  rows.push(row)
  return rows.join("\n")
}

/** The longest start of `word` that fits in `room` columns (at least one character), and the rest. */
const cut = (word: string, room: number): readonly [string, string] => {
  const chars = [...word]
  let taken = 0
  let used = 0
  while (taken < chars.length) {
    const next = width(chars[taken] ?? "")
    if (used + next > room && taken > 0) break
    used += next
    taken++
  }
  return [chars.slice(0, taken).join(""), chars.slice(taken).join("")]
}
