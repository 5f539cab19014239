/**
 * The approval screen, drawn from a call's typed display fields. This is the one
 * place their raw text is escaped, each field by its kind, so what the screen
 * shows reads back to exactly what runs, and nothing in it can move the cursor,
 * reorder text or hide text behind blanks:
 *
 * ```
 * [Tool: bash]
 * Command: "go version"
 * Directory: /home/you/project
 * Environment: PATH=/home/you/project/node_modules/.bin:/home/you/node_modules/.bin:
 *                   /usr/local/bin:/usr/bin:/bin
 *              HOME=/home/you     LANG=C.UTF-8       TERM=dumb
 *              SHELL=/bin/bash    PWD=/home/you/project
 * Timeout: 30 s
 * ```
 *
 * Pure: the Approver writes it and asks.
 */
import * as Option from "effect/Option"
import * as Escape from "../security/Escape.js"
import * as Width from "../terminal/display/Width.js"
import type { Screen } from "../terminal/Terminal.js"
import type { DisplayEntry, DisplayField, ToolDisplay } from "../tools/Tool.js"

export interface RenderOptions {
  /** The terminal's width: entries wider than it are wrapped at `:` (default 80). */
  readonly columns?: number
  /** How the command is emphasised (bold on a colour terminal). */
  readonly emphasis?: (text: string) => string
}

export const DEFAULT_COLUMNS = 80

/**
 * A displayed command longer than this may not fit on a screen: its beginning is
 * repeated beside the prompt. On a terminal, a screen taller than the terminal
 * gets the reminder too, however short the command.
 */
export const LONG_COMMAND = 1000

/** The command as shown: a JSON string literal (same value, read back by `JSON.parse`), blanks visible. */
export const commandLiteral = (command: string): string => Escape.jsonString(command)

/** A value as shown on one line: escaped, a backslash doubled, blanks visible. */
export const valueText = (value: string): string => Escape.forValue(value)

/** An entry as shown: `NAME=value`, escaped as a value, a space inside it as `\x20`. */
export const entryText = (entry: DisplayEntry): string =>
  Escape.visible(`${Escape.forValue(entry.name)}=${Escape.forValue(entry.value)}`.replace(/ /g, "\\x20"))

/** An entry too wide for the screen, wrapped after its `:` separators, the rest indented under its value. */
const wrapped = (shown: string, indent: number, columns: number): Array<string> => {
  if (indent + Width.width(shown) <= columns || !shown.includes(":")) return [shown]
  const name = shown.slice(0, shown.indexOf("=") + 1)
  const hang = indent + Width.width(name)
  const lines: Array<string> = []
  let line = ""
  for (const piece of shown.slice(name.length).split(/(?<=:)/)) {
    if (line.length > 0 && hang + Width.width(line + piece) > columns) {
      lines.push(line)
      line = ""
    }
    line += piece
  }
  lines.push(line)
  return lines.map((text, row) => (row === 0 ? name + text : " ".repeat(hang - indent) + text))
}

/**
 * Entries laid out under the first, starting at column `indent`: each entry
 * too long to share a row on its own lines (a `PATH` wrapped at `:`), then the
 * others in aligned columns, two spaces or more apart (a space inside an entry
 * is `\x20`, so the gaps cannot be mistaken for one). Nothing is left out.
 */
const entriesLines = (indent: number, entries: ReadonlyArray<DisplayEntry>, columns: number): Array<string> => {
  const room = Math.max(1, columns - indent)
  const shown = entries.map(entryText)
  const own = shown.filter((text) => (Width.width(text) + 2) * 2 > room + 2)
  const short = shown.filter((text) => (Width.width(text) + 2) * 2 <= room + 2)
  const lines = own.flatMap((text) => wrapped(text, indent, columns))
  // As many columns as fit, each as wide as its widest entry and two spaces.
  for (let perRow = short.length; perRow >= 1 && short.length > 0; perRow--) {
    const widths = Array.from({ length: perRow }, (_, column) =>
      Math.max(...short.filter((_, i) => i % perRow === column).map(Width.width)) + 2)
    if (perRow > 1 && widths.reduce((sum, width) => sum + width, 0) > room + 2) continue
    for (let at = 0; at < short.length; at += perRow) {
      const row = short.slice(at, at + perRow)
      lines.push(row.map((text, i) => (i === row.length - 1 ? text : text + " ".repeat((widths[i] ?? 0) - Width.width(text)))).join(""))
    }
    break
  }
  return lines.map((line, row) => (row === 0 ? line : " ".repeat(indent) + line))
}

const fieldLines = (field: DisplayField, columns: number, emphasis: (text: string) => string): Array<string> => {
  const label = `${Escape.forLine(field.label)}: `
  switch (field.kind) {
    case "command":
      return [label + emphasis(commandLiteral(field.value))]
    case "value":
      return [label + valueText(field.value)]
    case "entries": {
      const [first = "", ...rest] = entriesLines(Width.width(label), field.entries, columns)
      return [label + first, ...rest]
    }
  }
}

/** The approval screen, ending with a newline: the prompt goes on the next row. */
export const render = (display: ToolDisplay, options: RenderOptions = {}): string => {
  const columns = options.columns ?? DEFAULT_COLUMNS
  const emphasis = options.emphasis ?? ((text: string) => text)
  return [`[Tool: ${Escape.forLine(display.tool)}]`, ...display.fields.flatMap((field) => fieldLines(field, columns, emphasis))]
    .join("\n") + "\n"
}

/** Rows `text` takes on a terminal `columns` wide (each line wraps; an empty line takes one). */
export const rowsOf = (text: string, columns: number): number =>
  text.split("\n").reduce((rows, line) => rows + Width.rows(line, columns), 0)

/**
 * For a command too long to be sure its start is still on the screen, the line
 * beside the prompt: its size and its first line again. `screen` is the
 * terminal's size, when there is one: the approval screen and the prompt must
 * fit in its rows, or the command's beginning may have scrolled away.
 */
export const reminder = (display: ToolDisplay, screen: Option.Option<Screen> = Option.none()): string | undefined => {
  const first = display.fields[0]
  if (first === undefined || first.kind !== "command") return undefined
  // The screen's rows with the prompt's (the text ends with a newline: the prompt's row),
  // and one to spare for the line that may say what typed-ahead input was ignored.
  const scrolls = Option.exists(screen, ({ columns, rows }) => rowsOf(render(display, { columns }), columns) + 1 > rows)
  if (commandLiteral(first.value).length <= LONG_COMMAND && !scrolls) return undefined
  const text = first.value
  const lines = text.split("\n")
  const head = lines[0] ?? ""
  const shown = commandLiteral(head.length > 120 ? head.slice(0, 120) : head) + (head.length > 120 || lines.length > 1 ? " …" : "")
  const size = `${Buffer.byteLength(text, "utf8").toLocaleString("en-US")} bytes, ${lines.length.toLocaleString("en-US")} line(s)`
  return `${Escape.forLine(first.label)} above: ${size}; it begins ${shown}\n`
}
