/**
 * The model's Markdown, drawn for a terminal as it streams: headings, emphasis,
 * inline code, fenced code blocks, lists, quotes and links. A pure state
 * machine over the text, like `LineEditor`: `feed(renderer, text)` returns what
 * to write now and the renderer that follows; `end` finishes the last line.
 *
 * - Escape first, style after: every piece of the model's text passes through
 *   `Escape.forDisplayPiece` before it is written; the only escape sequences in the
 *   output are the SGR styles chosen here. No OSC 8 hyperlink is written: a link
 *   shows its URL as text, `text (url)`.
 * - Append-only: nothing is redrawn and the cursor never moves, so a line the
 *   terminal wraps cannot be corrupted. Text is written as it arrives; only a
 *   marker whose meaning depends on what follows waits — a line's first
 *   characters (`#`, `-`, `>`, a fence), or an opening `**`, `` ` `` or `[` until
 *   its span closes, its line ends, or `SPAN_LIMIT` characters pass without a
 *   closer (then the marker is shown as typed).
 * - The same output however the text is cut into pieces: a decision is taken
 *   only on text that is there, so more text never changes what was written.
 * - Given the screen's width (`columns`), prose, headings, list items and
 *   quotes are broken at word boundaries with hanging indents (`Flow`): a word
 *   waits until a blank ends it or it fills a row.
 * - Tables (GFM, lines starting with `|`) wait until their last row has come and
 *   are drawn with aligned columns (`Table`); a table holding more than
 *   `TABLE_LIMIT` characters is drawn in parts, each part as it fills.
 * - Fenced code is verbatim (no inline markup, no re-wrapping) behind a gutter.
 * - Without colour (`colour: false`: `NO_COLOR`) the same structure is drawn
 *   with no style: heading marks and code spans' backticks are kept to stand in
 *   for the styles.
 * - Unstyled (`styled: false`: `TERM=dumb`, output not a terminal) the text is
 *   written as the model wrote it, escaped, markers and all.
 * - Styled or not, the model's text cannot pass for Mino's own screen: a line
 *   that reads like one of Mino's is drawn behind a marker, and a long run of
 *   combining marks is escaped however the stream was cut (`SetApart`).
 *
 * A subset of CommonMark/GFM, line by line: what is not recognised is shown as
 * written. Setext headings, indented code and HTML stay as text.
 */
import * as Escape from "../../security/Escape.js"
import * as Flow from "./Flow.js"
import * as SetApart from "./SetApart.js"
import * as Table from "./Table.js"

/** How far (in UTF-16 units) an opening marker looks for its closer, by default. */
export const SPAN_LIMIT = 600

/** Characters of a table held before what has come is drawn (the rest of the table is drawn after it). */
export const TABLE_LIMIT = 64 * 1024

export interface Options {
  /** Drawn (a terminal that is not `TERM=dumb`); off, the text is written as it is, escaped. */
  readonly styled: boolean
  /** Colour and other styles when drawn (default: `styled`); off under `NO_COLOR`. */
  readonly colour?: boolean
  /** The screen's width: lines are broken to it; `undefined` leaves that to the terminal. */
  readonly columns?: number | undefined
  /** Columns already taken on the first line (by `Assistant> `). */
  readonly column?: number
  /** How far an opening marker looks for its closer (`SPAN_LIMIT`); tests make it small. */
  readonly spanLimit?: number
}

/** The fence of the code block being drawn. */
interface Fence {
  readonly marker: "`" | "~"
  readonly length: number
  /** The opening fence's indentation: kept before the gutter, removed from the code. */
  readonly indent: string
}

/** How the rest of the current line is drawn, once its first characters are known. */
type Layout =
  | { readonly _tag: "Inline"; readonly base: Sgr }
  | { readonly _tag: "Code" }

/** A table being held: its header line (alone, until the next line shows it is a table), then its rows. */
interface HeldTable {
  readonly header: string
  readonly aligns: ReadonlyArray<Table.Align> | undefined
  /** Its rows, last first (adding one copies nothing). */
  readonly rows: Rows
  /** Characters held. */
  readonly size: number
  /** Part of a table whose start was drawn already (its header is not drawn again). */
  readonly continued: boolean
}

type Rows = { readonly last: string; readonly before: Rows } | undefined

const inOrder = (rows: Rows): Array<string> => {
  const all: Array<string> = []
  for (let at = rows; at !== undefined; at = at.before) all.push(at.last)
  return all.reverse()
}

export interface Renderer {
  readonly styled: boolean
  readonly colour: boolean
  readonly columns: number | undefined
  /** Columns taken on the current line before its text (`Options.column` on the first line, then 0). */
  readonly column: number
  readonly spanLimit: number
  /** The current line's word breaking, once its layout is known (with `columns`, in prose). */
  readonly flow: Flow.Flow | undefined
  /** A table whose end has not come. */
  readonly table: HeldTable | undefined
  /** Inside a fenced code block. */
  readonly fence: Fence | undefined
  /** The current line's layout; `undefined` until its first characters decide it. */
  readonly layout: Layout | undefined
  /** Text of the current line not written yet: from the line's start while `layout` is undecided. */
  readonly pending: string
  /** The code point before `pending` on its line (`""` at the line's start), for emphasis rules. */
  readonly before: string
  /** The SGR parameters in effect on the screen (`""`: none). */
  readonly sgr: Sgr
  /** The last stage: lines that read like Mino's own set apart, runs of marks escaped. */
  readonly apart: SetApart.Filter
}

export interface Rendered {
  readonly renderer: Renderer
  readonly output: string
}

export const make = (options: Options): Renderer => ({
  styled: options.styled,
  colour: options.colour ?? options.styled,
  columns: options.columns !== undefined && options.columns > 0 ? options.columns : undefined,
  column: options.column ?? 0,
  spanLimit: options.spanLimit ?? SPAN_LIMIT,
  flow: undefined,
  table: undefined,
  fence: undefined,
  layout: undefined,
  pending: "",
  before: "",
  sgr: "",
  apart: SetApart.make(options.colour ?? options.styled)
})

/** `rendered`'s output through the last stage. */
const setApart = (rendered: Rendered, last = false): Rendered => {
  const step = SetApart.feed(rendered.renderer.apart, rendered.output)
  const tail = last ? SetApart.end(step.filter) : { filter: step.filter, output: "" }
  return { renderer: { ...rendered.renderer, apart: tail.filter }, output: step.output + tail.output }
}

/** Renders `text`, the next piece of the model's text. */
export const feed = (renderer: Renderer, text: string): Rendered => setApart(draw(renderer, text))

const draw = (renderer: Renderer, text: string): Rendered => {
  if (!renderer.styled) return plain(renderer, renderer.pending + text)
  const pieces = text.split("\n")
  let state = renderer
  let output = ""
  pieces.forEach((piece, index) => {
    const step = advance(state, piece, index < pieces.length - 1)
    state = step.renderer
    output += step.output
  })
  return { renderer: state, output }
}

/** Finishes the last line (as if it were complete, without a newline); the renderer after it starts afresh. */
export const end = (renderer: Renderer): Rendered => {
  const fresh = make({ ...renderer, column: 0 })
  const finished = setApart({ renderer, output: finish(renderer) }, true)
  return { renderer: fresh, output: finished.output }
}

const finish = (renderer: Renderer): string => {
  if (!renderer.styled) return Escape.forDisplayPiece(renderer.pending)
  if (renderer.table !== undefined) {
    // The last line completes the table or follows it; the table is drawn then.
    const last = renderer.layout === undefined && renderer.pending === "" ? { renderer, output: "" } : advance(renderer, "", true)
    return last.output + flushTable(last.renderer, true).output
  }
  const last = renderer.layout === undefined && renderer.pending === "" ? { renderer, output: "" } : line(renderer, "", true)
  return last.output + reset(last.renderer.sgr)
}

// ---------------------------------------------------------------------------
// Styles

/** SGR parameters, sorted and `;`-separated (`"1;4"`); `""` is no style. */
type Sgr = string

const STYLE = {
  strong: "1",
  emphasis: "3",
  strike: "9",
  code: "36",
  link: "4",
  /** Gutters, bullets, rules, fence labels and a link's URL. */
  mark: "2",
  heading: "1",
  title: "1;4"
} as const

const combined = new Map<string, Sgr>()
const combine = (a: Sgr, b: Sgr): Sgr => {
  const key = `${a}|${b}`
  let both = combined.get(key)
  if (both === undefined) {
    both = [...new Set([...a.split(";"), ...b.split(";")].filter((p) => p !== ""))].sort((x, y) => Number(x) - Number(y)).join(";")
    combined.set(key, both)
  }
  return both
}

/** A piece of text (the model's, or a mark of Mino's own) and its style. */
interface Run {
  readonly sgr: Sgr
  readonly text: string
}

const reset = (sgr: Sgr): string => (sgr === "" ? "" : "\u001b[0m")

/** Writes runs: each text escaped, then a style change only where the style changes. */
const emit = (sgr: Sgr, runs: ReadonlyArray<Run>): { readonly sgr: Sgr; readonly output: string } => {
  let current = sgr
  let output = ""
  for (const run of runs) {
    if (run.text.length === 0) continue
    if (run.sgr !== current) {
      output += reset(current) + (run.sgr === "" ? "" : `\u001b[${run.sgr}m`)
      current = run.sgr
    }
    // A row break of the layout's own (that very run, never the model's text: a U+0085 of the model's is escaped) passes as it is.
    output += run === Flow.BREAK ? run.text : Escape.forDisplayPiece(run.text)
  }
  return { sgr: current, output }
}

// ---------------------------------------------------------------------------
// Lines

const isHighSurrogate = (unit: string | undefined): boolean => {
  const code = unit?.charCodeAt(0) ?? 0
  return code >= 0xd800 && code <= 0xdbff
}
const isLowSurrogate = (unit: string): boolean => {
  const code = unit.charCodeAt(0)
  return code >= 0xdc00 && code <= 0xdfff
}

/** Unstyled: the text as written, escaped; a high surrogate at the end waits for its pair. */
const plain = (renderer: Renderer, text: string): Rendered => {
  const keep = isHighSurrogate(text.at(-1)) ? 1 : 0
  return {
    renderer: { ...renderer, pending: text.slice(text.length - keep) },
    output: Escape.forDisplayPiece(text.slice(0, text.length - keep))
  }
}

/** One piece of a line; `complete` when a newline followed it. */
const advance = (renderer: Renderer, piece: string, complete: boolean): Rendered =>
  tableLine(renderer, piece, complete) ?? lineEnd(renderer, piece, complete)

/** A line that is not the table's, `piece` added: drawn, with its newline when `complete`. */
const lineEnd = (renderer: Renderer, piece: string, complete: boolean): Rendered => {
  const step = line(renderer, piece, complete)
  if (!complete) return step
  return {
    renderer: { ...step.renderer, layout: undefined, pending: "", before: "", sgr: "", flow: undefined, column: 0 },
    output: `${step.output}${reset(step.renderer.sgr)}\n`
  }
}

// ---------------------------------------------------------------------------
// Tables

/** Whether a line starts with `|` (up to three spaces before it); `undefined` while it cannot tell. */
const startsRow = (text: string, complete: boolean): boolean | undefined => {
  const first = /^ {0,3}([^ ])/.exec(text)
  if (first !== null) return first[1] === "|"
  return complete || text.length > 3 ? false : undefined
}

/** The line at the renderer's line start when a table is held or may begin; `undefined` when tables have no part in it. */
const tableLine = (renderer: Renderer, piece: string, complete: boolean): Rendered | undefined => {
  if (renderer.layout !== undefined || renderer.fence !== undefined) return undefined
  const text = renderer.pending + piece
  const row = startsRow(text, complete)
  const held = renderer.table
  if (held === undefined && row !== true) return undefined
  if (row === undefined || (row && !complete)) return { renderer: { ...renderer, pending: text }, output: "" }
  const start: Renderer = { ...renderer, pending: "", layout: undefined }
  if (!row) {
    // The table ended before this line.
    const flushed = flushTable(start, false)
    const next = advance(flushed.renderer, text, complete)
    return { renderer: next.renderer, output: flushed.output + next.output }
  }
  if (held === undefined) return { renderer: { ...start, table: heldTable(text, false) }, output: "" }
  if (held.aligns === undefined) {
    const aligns = Table.delimiter(text)
    if (aligns !== undefined && aligns.length === Table.cells(held.header).length) {
      return { renderer: { ...start, table: { ...held, aligns, size: held.size + text.length } }, output: "" }
    }
    // Not a table after all: the line before is drawn as prose, and this one may start a table.
    const released = flushTable(start, false)
    return { renderer: { ...released.renderer, table: heldTable(text, false) }, output: released.output }
  }
  const table = { ...held, rows: { last: text, before: held.rows }, size: held.size + text.length }
  if (table.size <= TABLE_LIMIT) return { renderer: { ...start, table }, output: "" }
  const drawn = flushTable({ ...start, table }, false)
  return { renderer: { ...drawn.renderer, table: { header: held.header, aligns: held.aligns, rows: undefined, size: 0, continued: true } }, output: drawn.output }
}

const heldTable = (header: string, continued: boolean): HeldTable => ({ header, aligns: undefined, rows: undefined, size: header.length, continued })

/** Draws the held table (or, when no delimiter row followed it, its one line as prose); `last` leaves off the final newline. */
const flushTable = (renderer: Renderer, last: boolean): Rendered => {
  const held = renderer.table
  const start: Renderer = { ...renderer, table: undefined }
  if (held === undefined) return { renderer: start, output: "" }
  if (held.aligns === undefined) {
    const drawn = lineEnd(start, held.header, true)
    return { renderer: drawn.renderer, output: last ? drawn.output.slice(0, -1) : drawn.output }
  }
  const parse = (cell: string) =>
    inline({ text: cell, from: 0, to: cell.length, complete: true, limit: renderer.spanLimit, plainCode: !renderer.colour }, "").runs
  const width = held.aligns.length
  const row = (line: string) => Table.cells(line).slice(0, width).map(parse)
  const lines = Table.draw({
    header: held.continued ? undefined : row(held.header),
    rows: inOrder(held.rows).map(row),
    aligns: held.aligns,
    columns: renderer.columns,
    mark: STYLE.mark,
    strong: STYLE.strong
  })
  // A table starts on a line of its own (not after `Assistant> `).
  let output = renderer.column > 0 ? "\n" : ""
  lines.forEach((runs, i) => {
    const written = emit("", renderer.colour ? runs : uncoloured(runs))
    output += written.output + reset(written.sgr) + (last && i === lines.length - 1 ? "" : "\n")
  })
  return { renderer: { ...start, column: 0 }, output }
}

/** Runs without their styles (`NO_COLOR`). */
const uncoloured = (runs: ReadonlyArray<Run>): ReadonlyArray<Run> => runs.map((run) => (run.sgr === "" ? run : { sgr: "", text: run.text }))

/** Renders as much of the current line as is decided, `piece` added. */
const line = (renderer: Renderer, piece: string, complete: boolean): Rendered => {
  let { layout, pending, before, sgr, flow } = renderer
  pending += piece
  let output = ""
  const write = (runs: ReadonlyArray<Run>) => {
    const written = emit(sgr, renderer.colour ? runs : uncoloured(runs))
    sgr = written.sgr
    output += written.output
  }
  // (`fence` is passed each time: a closing fence passes `undefined`, which a default would replace.)
  const after = (waiting: string, fence: Fence | undefined): Rendered => ({
    renderer: { ...renderer, fence, layout, pending: waiting, before, sgr, flow },
    output
  })
  if (layout === undefined) {
    const decided = decide(renderer.fence, pending, complete, renderer.spanLimit, renderer.colour)
    if (decided === undefined) return after(pending, renderer.fence)
    const prefix = decided._tag === "Line" && decided.layout._tag === "Inline" ? fitted(decided.runs, renderer.columns) : ruled(decided.runs, renderer.columns === undefined ? undefined : renderer.columns - renderer.column)
    write(prefix)
    if (decided._tag === "Whole") return after("", decided.fence)
    layout = decided.layout
    if (layout._tag === "Inline" && renderer.columns !== undefined) {
      flow = Flow.make(renderer.columns, renderer.column + Flow.runsWidth(prefix), hangOf(prefix))
    }
    before = pointBefore(pending, decided.consumed)
    pending = pending.slice(decided.consumed)
  }
  if (layout._tag === "Code") {
    // Verbatim; only a high surrogate at the end waits for its pair.
    const keep = !complete && isHighSurrogate(pending.at(-1)) ? 1 : 0
    write([{ sgr: "", text: pending.slice(0, pending.length - keep) }])
    return after(pending.slice(pending.length - keep), renderer.fence)
  }
  const text = before + pending
  const done = inline({ text, from: before.length, to: text.length, complete, limit: renderer.spanLimit, plainCode: !renderer.colour }, layout.base)
  if (flow === undefined) write(done.runs)
  else {
    const pushed = Flow.push(flow, done.runs)
    flow = pushed.flow
    write(pushed.runs)
    if (complete) write(Flow.close(flow))
  }
  if (done.next > before.length) before = pointBefore(text, done.next)
  return after(text.slice(done.next), renderer.fence)
}

/** A thematic break no wider than the screen. */
const ruled = (runs: ReadonlyArray<Run>, columns: number | undefined): ReadonlyArray<Run> => {
  if (columns === undefined || runs.at(-1)?.text !== RULE) return runs
  const room = Math.max(1, columns - Flow.runsWidth(runs.slice(0, -1)))
  return [...runs.slice(0, -1), mark(RULE.slice(0, room))]
}

/** Blank runs only (a line's indentation). */
const isIndent = (run: Run): boolean => /^[ \t]*$/.test(run.text)

/**
 * A line's prefix as drawn: tabs in its indentation as four spaces (CommonMark's
 * tab stop for blocks), and the indentation left out when the prefix would take
 * more than half the screen (a list nested fifty deep).
 */
const fitted = (runs: ReadonlyArray<Run>, columns: number | undefined): ReadonlyArray<Run> => {
  if (columns === undefined) return runs
  const expanded = runs.map((run) => (run.sgr === STYLE.mark ? run : { ...run, text: run.text.replace(/\t/g, "    ") }))
  return Flow.runsWidth(expanded) * 2 <= columns ? expanded : expanded.filter((run) => !isIndent(run))
}

/** What continues a line's rows under its prefix: its quote bars kept, the rest (indentation, a bullet) as blanks. */
const hangOf = (prefix: ReadonlyArray<Run>): ReadonlyArray<Run> =>
  prefix.map((run) => (run.sgr === STYLE.mark && run.text.startsWith("┃") ? run : { sgr: "", text: " ".repeat(Flow.runsWidth([run])) }))

type Decision =
  /** The line goes on in `layout`, after `consumed` characters drawn as `runs`. */
  | { readonly _tag: "Line"; readonly runs: ReadonlyArray<Run>; readonly consumed: number; readonly layout: Layout }
  /** The whole (complete) line, drawn as `runs`; `fence` is the code block after it. */
  | { readonly _tag: "Whole"; readonly runs: ReadonlyArray<Run>; readonly fence: Fence | undefined }

const mark = (text: string): Run => ({ sgr: STYLE.mark, text })
const as = (text: string): Run => ({ sgr: "", text })

const RULE = "─".repeat(40)

/**
 * What a line's first characters make of it; `undefined` while they cannot tell
 * yet. A line whose first `limit` characters cannot tell (a long run of `-`, a
 * fence's long info) is text (code in a code block): decided from those
 * characters alone, whether or not more has come, so it is the same either way.
 */
const decide = (fence: Fence | undefined, text: string, complete: boolean, limit: number, colour: boolean): Decision | undefined => {
  if (text.length <= limit) return lineStart(fence, text, complete, colour)
  return lineStart(fence, text.slice(0, limit + 1), false, colour) ?? (fence === undefined
    ? { _tag: "Line", runs: [], consumed: 0, layout: { _tag: "Inline", base: "" } }
    : codeLine(fence, text))
}

const lineStart = (fence: Fence | undefined, text: string, complete: boolean, colour: boolean): Decision | undefined => {
  if (fence === undefined) return block(text, 0, [], complete, 0, colour)
  const lead = /^[ \t]*/.exec(text)?.[0] ?? ""
  const rest = text.slice(lead.length)
  const marks = rest.length - rest.replace(fence.marker === "`" ? /^`+/ : /^~+/, "").length
  // Only fence characters and blanks so far: this may be the closing fence.
  if (/^[ \t]*$/.test(rest.slice(marks))) {
    if (!complete) return undefined
    if (marks >= fence.length) return { _tag: "Whole", runs: [as(fence.indent), mark("╰─")], fence: undefined }
  }
  return codeLine(fence, text)
}

/** A line inside a code block: behind the gutter, without the fence's indentation. */
const codeLine = (fence: Fence, text: string): Decision => {
  let strip = 0
  while (strip < fence.indent.length && text[strip] === " ") strip++
  return { _tag: "Line", runs: [as(fence.indent), mark("│ ")], consumed: strip, layout: { _tag: "Code" } }
}

/** Quotes nest this deep at most; a deeper `>` is text. */
const QUOTE_DEPTH = 8

/** The block markers at `at` (after `prefix`, already drawn quote marks), `depth` quotes in. */
const block = (text: string, at: number, prefix: ReadonlyArray<Run>, complete: boolean, depth: number, colour: boolean): Decision | undefined => {
  const lead = /^[ \t]*/.exec(text.slice(at))?.[0] ?? ""
  const start = at + lead.length
  const head = [...prefix, as(lead)]
  const rest = text.slice(start)
  const first = rest[0]
  if (first === undefined) return complete ? { _tag: "Whole", runs: head, fence: undefined } : undefined
  const continues = (consumed: number, runs: ReadonlyArray<Run> = head, base: Sgr = ""): Decision => ({
    _tag: "Line",
    runs,
    consumed,
    layout: { _tag: "Inline", base }
  })

  if (depth === 0 && (first === "`" || first === "~")) {
    const run = first === "`" ? /^`+/.exec(rest)?.[0] ?? "" : /^~+/.exec(rest)?.[0] ?? ""
    if (run.length === rest.length && !complete) return undefined
    if (run.length >= 3) {
      if (!complete) return undefined
      const info = blanksTrimmed(rest.slice(run.length))
      if (!(first === "`" && info.includes("`"))) {
        return {
          _tag: "Whole",
          runs: [as(lead), mark(info === "" ? "╭─" : `╭─ ${info}`)],
          fence: { marker: first, length: run.length, indent: lead }
        }
      }
    }
    return continues(start)
  }
  if (first === "-" || first === "*" || first === "_") {
    // A thematic break (`---`, `* * *`): only that character and blanks on the line.
    if (new RegExp(`^(?:\\${first}[ \\t]*)+$`).test(rest)) {
      if (!complete) return undefined
      if (rest.split(first).length > 3) return { _tag: "Whole", runs: [...head, mark(RULE)], fence: undefined }
    }
  }
  if (first === "#") {
    const hashes = /^#{1,6}/.exec(rest)?.[0].length ?? 0
    const after = rest[hashes]
    if (after === undefined && !complete) return undefined
    if (after === undefined || after === " " || after === "\t") {
      const consumed = start + hashes + (after === undefined ? 0 : 1)
      // Without styles, the heading's marks show that it is one.
      const runs = colour ? head : [...head, mark(`${rest.slice(0, hashes)} `)]
      return continues(consumed, runs, hashes === 1 ? STYLE.title : STYLE.heading)
    }
    return continues(start)
  }
  if (first === ">" && depth < QUOTE_DEPTH) {
    const after = rest[1]
    if (after === undefined && !complete) return undefined
    return block(text, start + (after === " " ? 2 : 1), [...head, mark("┃ ")], complete, depth + 1, colour)
  }
  if (first === "-" || first === "*" || first === "+") {
    const after = rest[1]
    if (after === undefined && !complete) return undefined
    if (after === undefined) return continues(start + 1, [...head, as("•")])
    if (after === " " || after === "\t") return continues(start + 2, [...head, as(`•${after}`)])
  }
  if (first >= "0" && first <= "9") {
    // An ordered item (`1.`, `2)`): its number kept, its rows hung under its text.
    if (/^[0-9]{1,9}$/.test(rest) && !complete) return undefined
    const number = /^[0-9]{1,9}[.)]/.exec(rest)?.[0]
    if (number !== undefined) {
      const after = rest[number.length]
      if (after === undefined && !complete) return undefined
      if (after === " " || after === "\t") return continues(start + number.length + 1, [...head, as(number + after)])
    }
  }
  return continues(start)
}

// ---------------------------------------------------------------------------
// Inline markup

/** The text being parsed, `[from, to)`; `complete` when nothing follows `to` on the line. */
interface Span {
  readonly text: string
  readonly from: number
  readonly to: number
  readonly complete: boolean
  /** How far past its opener a span may close. */
  readonly limit: number
  /** Code spans keep their backticks (no style to show them by). */
  readonly plainCode: boolean
}

interface Parsed {
  readonly runs: ReadonlyArray<Run>
  readonly next: number
}

const WAIT = undefined
type Wait = typeof WAIT

/** Beyond the span: `""` (a blank) when it is complete, `WAIT` when more text may come. */
const charAt = (span: Span, at: number): string | Wait =>
  at < span.to ? span.text[at] ?? "" : span.complete ? "" : WAIT

/** The code point at `at`, or `""`/`WAIT` beyond the span (a high surrogate at the end waits for its pair). */
const pointAt = (span: Span, at: number): string | Wait => {
  const unit = charAt(span, at)
  if (unit === WAIT || !isHighSurrogate(unit)) return unit
  const low = charAt(span, at + 1)
  return low === WAIT ? WAIT : unit + low
}

const pointBefore = (text: string, at: number): string => {
  if (at <= 0) return ""
  const low = text[at - 1] ?? ""
  const high = text[at - 2]
  return isLowSurrogate(low) && isHighSurrogate(high) ? (high ?? "") + low : low
}

const isBlank = (ch: string): boolean => ch === "" || /^\s$/u.test(ch)
const isPunctuation = (ch: string): boolean => /^[\p{P}\p{S}]$/u.test(ch)

const SPECIAL = /[\\`*_~[!<]/
const NEXT_SPECIAL = /[\\`*_~[!<]/g

/** Runs of a delimiter longer than this are text, however long they go on. */
const LONG_RUN = 16

/** The length of the run of `ch` at `at`, or `WAIT` when it reaches the end of what has come. */
const runOf = (span: Span, at: number, ch: string): number | Wait => {
  let end = at
  while (end < span.to && span.text[end] === ch && end - at <= LONG_RUN) end++
  // A long run is decided by its first characters: it delimits nothing.
  if (end - at > LONG_RUN) return end - at
  return end === span.to && !span.complete ? WAIT : end - at
}

/** Whether a delimiter run at `[at, at + length)` can open and close emphasis (CommonMark's flanking rules). */
const flanking = (span: Span, at: number, length: number, ch: string) => {
  const before = at > 0 ? pointBefore(span.text, at) : ""
  const after = pointAt(span, at + length)
  if (after === WAIT) return WAIT
  const left = !isBlank(after) && (!isPunctuation(after) || isBlank(before) || isPunctuation(before))
  const right = !isBlank(before) && (!isPunctuation(before) || isBlank(after) || isPunctuation(after))
  return ch === "_"
    ? { open: left && (!right || isPunctuation(before)), close: right && (!left || isPunctuation(after)) }
    : { open: left, close: right }
}

type Found = { readonly _tag: "Found"; readonly at: number } | { readonly _tag: "None" }
const NONE: Found = { _tag: "None" }

/** Past the end of what has come: no closer when the line is complete, else wait. */
const exhausted = (span: Span): Found | Wait => (span.complete ? NONE : WAIT)

/**
 * The closing backtick run of a code span opened by `length` backticks at `at`,
 * within the limit counted from `origin` (the outermost opener being matched).
 */
const codeCloser = (span: Span, at: number, length: number, origin = at): Found | Wait => {
  let scan = at + length
  while (true) {
    if (scan - origin > span.limit) return NONE
    if (scan >= span.to) return exhausted(span)
    if (span.text[scan] !== "`") {
      scan++
      continue
    }
    const run = runOf(span, scan, "`")
    if (run === WAIT) return WAIT
    if (run === length) return { _tag: "Found", at: scan }
    scan += run
  }
}

/**
 * Steps over what a closer cannot be inside: a backslash escape, a code span.
 * Returns the next position to look at, or `WAIT`.
 */
const skip = (span: Span, at: number, origin: number): number | Wait => {
  const ch = span.text[at]
  if (ch === "\\") return at + 2
  if (ch !== "`") return at + 1
  const run = runOf(span, at, "`")
  if (run === WAIT) return WAIT
  const closer = codeCloser(span, at, run, origin)
  if (closer === WAIT) return WAIT
  return closer._tag === "Found" ? closer.at + run : at + run
}

/** The closing run (`length` times `ch`, able to close) of emphasis opened at `at`. */
const emphasisCloser = (span: Span, at: number, length: number, ch: string): Found | Wait => {
  let scan = at + length
  while (true) {
    if (scan - at > span.limit) return NONE
    if (scan >= span.to) return exhausted(span)
    if (span.text[scan] === ch) {
      const run = runOf(span, scan, ch)
      if (run === WAIT) return WAIT
      if (run === length && scan > at + length) {
        const sides = flanking(span, scan, run, ch)
        if (sides === WAIT) return WAIT
        if (sides.close) return { _tag: "Found", at: scan }
      }
      scan += run
      continue
    }
    const next = skip(span, scan, at)
    if (next === WAIT) return WAIT
    scan = next
  }
}

/**
 * The `]` closing a link's text opened at `at`. Simpler than CommonMark: the text
 * holds no other `[` (`[a [b](u)` links only `b`), so a run of `[` costs no rescans.
 */
const labelCloser = (span: Span, at: number): Found | Wait => {
  let scan = at + 1
  while (true) {
    if (scan - at > span.limit) return NONE
    if (scan >= span.to) return exhausted(span)
    const ch = span.text[scan]
    if (ch === "]") return { _tag: "Found", at: scan }
    if (ch === "[") return NONE
    const next = skip(span, scan, at)
    if (next === WAIT) return WAIT
    scan = next
  }
}

/** The `)` closing a link's destination that starts at `at` (after its `(`), parentheses nested. */
const destinationCloser = (span: Span, start: number, at: number): Found | Wait => {
  let depth = 0
  let scan = at
  while (true) {
    if (scan - start > span.limit) return NONE
    if (scan >= span.to) return exhausted(span)
    const ch = span.text[scan]
    if (ch === ")" && depth === 0) return { _tag: "Found", at: scan }
    if (ch === "(") depth++
    if (ch === ")") depth--
    scan += ch === "\\" ? 2 : 1
  }
}

/** Without the spaces and tabs around it (not `trim`: a `\r` is text to show, escaped). */
const blanksTrimmed = (text: string): string => text.replace(/^[ \t]+|[ \t]+$/g, "")

const unescapePunctuation = (text: string): string => text.replace(/\\([!-/:-@[-`{-~])/g, "$1")

/** A link's destination as shown: as written (a title too), without `<…>` around it. */
const url = (destination: string): string => {
  const trimmed = blanksTrimmed(destination)
  return unescapePunctuation(/^<([^<>]*)>$/.exec(trimmed)?.[1] ?? trimmed)
}

/** Everything in the span, as far as it is decided; `next` is where waiting starts. */
const inline = (span: Span, sgr: Sgr): Parsed => {
  const runs: Array<Run> = []
  let at = span.from
  while (at < span.to) {
    const parsed = token(span, at, sgr)
    if (parsed === WAIT) break
    runs.push(...parsed.runs)
    at = parsed.next
  }
  return { runs, next: at }
}

const literal = (span: Span, at: number, length: number, sgr: Sgr): Parsed => ({
  runs: [{ sgr, text: span.text.slice(at, at + length) }],
  next: at + length
})

/** The text of `[from, to)` of the span's text, parsed as a whole. */
const inner = (span: Span, from: number, to: number, sgr: Sgr): ReadonlyArray<Run> =>
  inline({ ...span, from, to, complete: true }, sgr).runs

/** The next piece of inline text at `at`, or `WAIT` when what follows decides it. */
const token = (span: Span, at: number, sgr: Sgr): Parsed | Wait => {
  const ch = span.text[at] ?? ""
  if (!SPECIAL.test(ch)) {
    NEXT_SPECIAL.lastIndex = at
    let end = Math.min(NEXT_SPECIAL.exec(span.text)?.index ?? span.to, span.to)
    // A high surrogate at the end of what has come waits for its pair.
    if (end === span.to && !span.complete && isHighSurrogate(span.text[end - 1])) end--
    return end === at ? WAIT : literal(span, at, end - at, sgr)
  }
  switch (ch) {
    case "\\": {
      const next = charAt(span, at + 1)
      if (next === WAIT) return WAIT
      return /^[!-/:-@[-`{-~]$/.test(next) ? { runs: [{ sgr, text: next }], next: at + 2 } : literal(span, at, 1, sgr)
    }
    case "`": {
      const run = runOf(span, at, "`")
      if (run === WAIT) return WAIT
      if (run > LONG_RUN) return literal(span, at, run, sgr)
      const closer = codeCloser(span, at, run)
      if (closer === WAIT) return WAIT
      if (closer._tag === "None") return literal(span, at, run, sgr)
      const content = span.text.slice(at + run, closer.at)
      const trimmed = /^ .*[^ ].* $/s.test(content) ? content.slice(1, -1) : content
      const shown = span.plainCode ? span.text.slice(at, closer.at + run) : trimmed
      return { runs: [{ sgr: combine(sgr, STYLE.code), text: shown }], next: closer.at + run }
    }
    case "*":
    case "_":
    case "~": {
      const run = runOf(span, at, ch)
      if (run === WAIT) return WAIT
      const style = ch === "~" ? (run === 2 ? STYLE.strike : undefined) : [STYLE.emphasis, STYLE.strong, `${STYLE.strong};${STYLE.emphasis}`][run - 1]
      if (style === undefined) return literal(span, at, run, sgr)
      const sides = flanking(span, at, run, ch)
      if (sides === WAIT) return WAIT
      if (!sides.open) return literal(span, at, run, sgr)
      const closer = emphasisCloser(span, at, run, ch)
      if (closer === WAIT) return WAIT
      if (closer._tag === "None") return literal(span, at, run, sgr)
      return { runs: inner(span, at + run, closer.at, combine(sgr, style)), next: closer.at + run }
    }
    case "!": {
      const next = charAt(span, at + 1)
      if (next === WAIT) return WAIT
      if (next !== "[") return literal(span, at, 1, sgr)
      const image = link(span, at + 1, sgr)
      if (image === WAIT) return WAIT
      return image ?? literal(span, at, 1, sgr)
    }
    case "[": {
      const parsed = link(span, at, sgr)
      if (parsed === WAIT) return WAIT
      return parsed ?? literal(span, at, 1, sgr)
    }
    case "<": {
      // An autolink: `<scheme:…>` or `<name@host>`, shown without its brackets.
      let end = at + 1
      while (true) {
        if (end - at > span.limit) return literal(span, at, 1, sgr)
        const next = charAt(span, end)
        if (next === WAIT) return WAIT
        if (next === "" || next === "<" || next === ">" || /\s/.test(next)) break
        end++
      }
      const address = span.text.slice(at + 1, end)
      const isLink = span.text[end] === ">" &&
        (/^[A-Za-z][A-Za-z0-9+.-]{1,31}:/.test(address) || /^[^\s@\\]+@[A-Za-z0-9.-]+$/.test(address))
      return isLink ? { runs: [{ sgr: combine(sgr, STYLE.link), text: address }], next: end + 1 } : literal(span, at, 1, sgr)
    }
    default:
      return literal(span, at, 1, sgr)
  }
}

/** `[text](url)` at `at`, drawn `text (url)`; `null` when it is not a link. */
const link = (span: Span, at: number, sgr: Sgr): Parsed | null | Wait => {
  const label = labelCloser(span, at)
  if (label === WAIT) return WAIT
  if (label._tag === "None") return null
  const paren = charAt(span, label.at + 1)
  if (paren === WAIT) return WAIT
  if (paren !== "(") return null
  const closer = destinationCloser(span, at, label.at + 2)
  if (closer === WAIT) return WAIT
  if (closer._tag === "None") return null
  const target = url(span.text.slice(label.at + 2, closer.at))
  const text = inner(span, at + 1, label.at, combine(sgr, STYLE.link))
  const shown = text.map((run) => run.text).join("")
  const next = closer.at + 1
  if (shown === "") return { runs: [{ sgr: combine(sgr, STYLE.link), text: target }], next }
  if (target === "" || target === shown) return { runs: text, next }
  return { runs: [...text, { sgr: combine(sgr, STYLE.mark), text: ` (${target})` }], next }
}
