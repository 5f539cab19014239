/**
 * What a terminal shows, from the bytes a program wrote to it: a small emulator
 * of the sequences Mino uses (text, `\r`, `\n`, `\b`, tab, cursor up/down/left/
 * right/column, erase in line and below; SGR colours and private modes are
 * ignored), with xterm's deferred wrap at the right margin. A newline starts the
 * next row at its first column, as the terminal's `onlcr` output processing makes it. Rows scroll into an
 * unlimited history, so `text()` is the whole session as a person would read it
 * by scrolling back, trailing blanks of each row removed.
 *
 * A character's width comes from Unicode's data as Python's `unicodedata` holds
 * it (East Asian Width Wide or Fullwidth: two cells), never from Mino's own
 * `Width`, so a screen test catches a width Mino gets wrong.
 */
import { execFileSync } from "node:child_process"

// Ranges of assigned Wide and Fullwidth code points, "first-last,first-last…" in hex;
// combining marks (Mn, Mc, Me) join the character before them, as wcwidth counts them.
const WIDE_RANGES = `
import sys, unicodedata
ranges = []
for cp in range(0x110000):
    ch = chr(cp)
    if unicodedata.category(ch) in ("Cn", "Cs", "Mn", "Mc", "Me") or unicodedata.east_asian_width(ch) not in "WF": continue
    if ranges and ranges[-1][1] == cp - 1: ranges[-1][1] = cp
    else: ranges.append([cp, cp])
sys.stdout.write(",".join("%x-%x" % (a, b) for a, b in ranges))
`

let wide: ReadonlyArray<readonly [number, number]> | undefined

/** Cells a code point takes: two for East Asian Wide and Fullwidth, one for the rest. */
export const cellsOf = (ch: string): number => {
  wide ??= execFileSync("python3", ["-c", WIDE_RANGES], { encoding: "utf8" }).split(",").map((range) => {
    const [first = "0", last = "0"] = range.split("-")
    return [parseInt(first, 16), parseInt(last, 16)] as const
  })
  const cp = ch.codePointAt(0) ?? 0
  if (cp < 0x1100) return 1
  let low = 0
  let high = wide.length - 1
  while (low <= high) {
    const middle = (low + high) >> 1
    const [first, last] = wide[middle] ?? [0, 0]
    if (cp < first) high = middle - 1
    else if (cp > last) low = middle + 1
    else return 2
  }
  return 1
}

export const render = (output: string, columns: number): string => {
  const rows: Array<Array<string>> = [[]]
  let row = 0
  let column = 0
  // Writing in the last column leaves the cursor there until the next character (xterm).
  let pendingWrap = false
  const line = () => (rows[row] ??= [])
  const down = () => {
    row += 1
    while (rows.length <= row) rows.push([])
  }
  const put = (ch: string) => {
    const cells = cellsOf(ch)
    if (pendingWrap || column + cells > columns) {
      down()
      column = 0
      pendingWrap = false
    }
    const cellsOfRow = line()
    while (cellsOfRow.length < column) cellsOfRow.push(" ")
    cellsOfRow[column] = ch
    // A wide character's second cell holds nothing of its own.
    if (cells === 2) cellsOfRow[column + 1] = ""
    column += cells
    if (column >= columns) {
      column = columns - 1
      pendingWrap = true
    }
  }
  const chars = [...output]
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i] ?? ""
    if (ch === "\u001b") {
      const next = chars[i + 1]
      if (next !== "[") {
        // A two-character escape (or a lone ESC): nothing Mino's screen relies on.
        i += 1
        continue
      }
      let j = i + 2
      let params = ""
      while (j < chars.length && /[0-9;?]/.test(chars[j] ?? "")) params += chars[j++]
      const final = chars[j] ?? ""
      i = j
      if (params.startsWith("?")) continue
      const n = Math.max(1, Number(params.split(";")[0] || "1"))
      pendingWrap = false
      switch (final) {
        case "A":
          row = Math.max(0, row - n)
          break
        case "B":
          for (let k = 0; k < n; k++) down()
          break
        case "C":
          column = Math.min(columns - 1, column + n)
          break
        case "D":
          column = Math.max(0, column - n)
          break
        case "G":
          column = Math.min(columns - 1, n - 1)
          break
        case "K": {
          const mode = Number(params || "0")
          const cells = line()
          if (mode === 0) cells.length = Math.min(cells.length, column)
          else if (mode === 2) cells.length = 0
          else for (let k = 0; k <= column && k < cells.length; k++) cells[k] = " "
          break
        }
        case "J":
          if (Number(params || "0") === 0) {
            line().length = Math.min(line().length, column)
            rows.length = row + 1
          }
          break
        default:
          // SGR (m) and anything else: no change to the text.
          break
      }
      continue
    }
    if (ch === "\r") {
      column = 0
      pendingWrap = false
    } else if (ch === "\n") {
      // The terminal's output processing (onlcr) makes every newline a CR LF; Pty.screen shows it as "\n".
      down()
      column = 0
      pendingWrap = false
    } else if (ch === "\b") {
      column = Math.max(0, column - 1)
      pendingWrap = false
    } else if (ch === "\t") {
      column = Math.min(columns - 1, (Math.floor(column / 8) + 1) * 8)
    } else if (ch === "\u0007") {
      continue
    } else {
      put(ch)
    }
  }
  return rows.map((cells) => cells.join("").replace(/ +$/, "")).join("\n").replace(/\n*$/, "\n")
}
