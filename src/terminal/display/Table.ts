/**
 * A Markdown table (GFM) as rows to draw: the cells of its lines (`cells`), its
 * alignments from the delimiter row (`delimiter`), and the drawing (`draw`),
 * pure over runs of the model's text not escaped yet (the caller escapes as it
 * writes; widths are those of the escaped text, `Flow.runsWidth`).
 *
 * - Columns as wide as their widest cell, `│` between them, a rule under the
 *   header; a right-aligned column's text ends in one column, a centred one's
 *   is centred.
 * - Wider than the screen: the widest columns are narrowed and their cells
 *   broken at word boundaries (`Flow`) over as many rows as they need; when even
 *   that cannot fit (too many columns), each row is drawn as a record, one
 *   `header: value` line per column, records apart by a blank line.
 */
import * as Flow from "./Flow.js"

export type Align = "left" | "center" | "right"
type Run = Flow.Run

/** A column narrower than this is not readable: such a table is drawn as records. */
const NARROWEST = 6
const SEPARATOR = " │ "
const CROSSING = "─┼─"

/** The cells of a table line (`| a | b |`): split at each `|` not escaped, `\|` read as `|`, blanks around trimmed. */
export const cells = (line: string): ReadonlyArray<string> => {
  let text = line.replace(/^[ \t]*\|?/, "")
  if (/(?:^|[^\\])\|[ \t]*$/.test(text)) text = text.replace(/\|[ \t]*$/, "")
  const found: Array<string> = []
  let cell = ""
  for (let at = 0; at < text.length; at++) {
    const ch = text[at] ?? ""
    if (ch === "\\" && text[at + 1] === "|") {
      cell += "|"
      at++
    } else if (ch === "|") {
      found.push(cell)
      cell = ""
    } else cell += ch
  }
  found.push(cell)
  // (A tab inside a cell is a space: where a tab stop falls in a column is not the column's business.)
  return found.map((c) => c.replace(/^[ \t]+|[ \t]+$/g, "").replace(/\t/g, " "))
}

/** The alignments a delimiter row (`|:--|--:|`) gives, or `undefined` when the line is not one. */
export const delimiter = (line: string): ReadonlyArray<Align> | undefined => {
  if (!line.includes("-")) return undefined
  const found = cells(line)
  if (!found.every((cell) => /^:?-+:?$/.test(cell))) return undefined
  return found.map((cell) => (cell.endsWith(":") ? (cell.startsWith(":") ? "center" : "right") : "left"))
}

export interface Drawing {
  /** The header's cells and each row's, as runs (inline Markdown already applied). */
  readonly header: ReadonlyArray<ReadonlyArray<Run>> | undefined
  readonly rows: ReadonlyArray<ReadonlyArray<ReadonlyArray<Run>>>
  readonly aligns: ReadonlyArray<Align>
  /** The screen's width; `undefined` draws the table at its natural width. */
  readonly columns: number | undefined
  /** Style of the rule and the bars, and of the header's cells. */
  readonly mark: string
  readonly strong: string
}

/** Lines of runs to write, each to be ended by a newline. */
export const draw = (table: Drawing): ReadonlyArray<ReadonlyArray<Run>> => {
  const all = table.header === undefined ? table.rows : [table.header, ...table.rows]
  const natural = table.aligns.map((_, i) => Math.max(1, ...all.map((row) => Flow.runsWidth(row[i] ?? []))))
  const fitted = widths(natural, table.columns)
  return fitted === undefined ? records(table) : grid(table, fitted)
}

/** Column widths that fit `columns`, narrowing the widest first; `undefined` when they cannot. */
const widths = (natural: ReadonlyArray<number>, columns: number | undefined): ReadonlyArray<number> | undefined => {
  const room = columns === undefined ? Infinity : columns - SEPARATOR.length * (natural.length - 1)
  const total = natural.reduce((a, b) => a + b, 0)
  if (total <= room) return natural
  if (room < natural.length * NARROWEST) return undefined
  // The largest cap every column can be narrowed to that fits, then the room left to the capped ones.
  let cap = Math.max(...natural)
  const capped = (limit: number) => natural.reduce((sum, w) => sum + Math.min(w, limit), 0)
  while (cap > NARROWEST && capped(cap) > room) cap--
  let left = room - capped(cap)
  return natural.map((w) => {
    if (w <= cap) return w
    const extra = left > 0 && cap < w ? 1 : 0
    left -= extra
    return cap + extra
  })
}

/** `runs` broken into rows `width` wide. */
const fill = (runs: ReadonlyArray<Run>, width: number): ReadonlyArray<ReadonlyArray<Run>> => {
  if (Flow.runsWidth(runs) <= width) return [runs]
  const flow = Flow.make(width, 0, [])
  const pushed = Flow.push(flow, runs)
  const all = [...pushed.runs, ...Flow.close(pushed.flow)]
  const lines: Array<Array<Run>> = [[]]
  for (const run of all) {
    if (run === Flow.BREAK) lines.push([])
    else lines[lines.length - 1]?.push(run)
  }
  return lines
}

const padded = (runs: ReadonlyArray<Run>, width: number, align: Align): ReadonlyArray<Run> => {
  const room = Math.max(0, width - Flow.runsWidth(runs))
  const left = align === "right" ? room : align === "center" ? Math.floor(room / 2) : 0
  return [{ sgr: "", text: " ".repeat(left) }, ...runs, { sgr: "", text: " ".repeat(room - left) }]
}

const styled = (runs: ReadonlyArray<Run>, sgr: string): ReadonlyArray<Run> =>
  sgr === "" ? runs : runs.map((run) => ({ ...run, sgr: run.sgr === "" ? sgr : `${sgr};${run.sgr}` }))

/** One table row as lines: each cell broken to its column, the row as tall as its tallest cell. */
const gridRow = (table: Drawing, row: ReadonlyArray<ReadonlyArray<Run>>, widths: ReadonlyArray<number>, sgr: string) => {
  const broken = widths.map((width, i) => fill(styled(row[i] ?? [], sgr), width))
  const height = Math.max(...broken.map((lines) => lines.length))
  const lines: Array<ReadonlyArray<Run>> = []
  for (let r = 0; r < height; r++) {
    const line: Array<Run> = []
    widths.forEach((width, i) => {
      if (i > 0) line.push({ sgr: table.mark, text: SEPARATOR })
      line.push(...padded(broken[i]?.[r] ?? [], width, table.aligns[i] ?? "left"))
    })
    // No blanks at the row's end.
    const end = line.at(-1)
    if (end !== undefined && end.sgr === "" && /^ *$/.test(end.text)) line.pop()
    lines.push(line)
  }
  return lines
}

const grid = (table: Drawing, widths: ReadonlyArray<number>): ReadonlyArray<ReadonlyArray<Run>> => {
  const lines: Array<ReadonlyArray<Run>> = []
  if (table.header !== undefined) {
    lines.push(...gridRow(table, table.header, widths, table.strong))
    lines.push([{ sgr: table.mark, text: widths.map((w) => "─".repeat(w)).join(CROSSING) }])
  }
  for (const row of table.rows) lines.push(...gridRow(table, row, widths, ""))
  return lines
}

/** Too many columns for the screen: each row as `header: value` lines, a blank line between rows. */
const records = (table: Drawing): ReadonlyArray<ReadonlyArray<Run>> => {
  const columns = table.columns ?? Infinity
  const lines: Array<ReadonlyArray<Run>> = []
  // A header alone: its names, one a line.
  if (table.rows.length === 0) for (const name of table.header ?? []) lines.push(...fill(styled(name, table.strong), columns))
  table.rows.forEach((row, r) => {
    if (r > 0) lines.push([])
    table.aligns.forEach((_, i) => {
      const name: ReadonlyArray<Run> = [...styled(table.header?.[i] ?? [{ sgr: "", text: `${i + 1}` }], table.strong), { sgr: "", text: ": " }]
      const flow = Flow.make(Number.isFinite(columns) ? columns : Number.MAX_SAFE_INTEGER, 0, [{ sgr: "", text: "  " }])
      const first = Flow.push(flow, [...name, ...(row[i] ?? [])])
      const all = [...first.runs, ...Flow.close(first.flow)]
      let line: Array<Run> = []
      for (const run of all) {
        if (run === Flow.BREAK) {
          lines.push(line)
          line = []
        } else line.push(run)
      }
      lines.push(line)
    })
  })
  return lines
}
