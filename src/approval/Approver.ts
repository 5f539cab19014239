/**
 * Approval of one prepared call. The Approver sees only a copy of the call's
 * display fields; it cannot change what runs. Only `y` or `yes` (any case,
 * surrounding spaces ignored) approves; anything else, Enter, and end of input
 * deny. Each call gets its own decision: on a terminal, everything typed before
 * the prompt appeared is discarded rather than taken as the answer. With piped
 * input the prompt reads nothing (the next line is the next question) and
 * denies; end of input at the prompt ends the turn `cancelled`.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Escape from "../security/Escape.js"
import * as LineEditor from "../terminal/LineEditor.js"
import { type Screen, Terminal } from "../terminal/Terminal.js"
import type { ToolDisplay } from "../tools/Tool.js"

export type Decision =
  | { readonly approved: true }
  /** `endTurn`: the user left (end of input); the turn ends `cancelled` and nothing more is asked of the model. */
  | { readonly approved: false; readonly reason: string; readonly endTurn?: boolean }

export interface ApproverShape {
  readonly decide: (display: ToolDisplay) => Effect.Effect<Decision>
}

export const PROMPT = "Approve this operation? [y/N] "

export const isApproval = (answer: string): boolean => /^(y|yes)$/i.test(answer.trim())

/**
 * A displayed command longer than this may not fit on a screen: its beginning is
 * repeated beside the prompt. On a terminal, a screen taller than the terminal
 * gets the reminder too, however short the command.
 */
export const LONG_COMMAND = 1000

/** Rows `text` takes on a terminal `columns` wide (each line wraps; an empty line takes one). */
const rowsOf = (text: string, columns: number): number =>
  text.split("\n").reduce((rows, line) => rows + Math.max(1, Math.ceil(LineEditor.width(line) / columns)), 0)

/** In a JSON string literal, a run of this many spaces is shown as `\u0020` escapes (same value, visible). */
const BLANK_RUN = / {8,}/g
const visibleBlanks = (literal: string): string =>
  /^".*"$/s.test(literal) ? literal.replace(BLANK_RUN, (run) => "\\u0020".repeat(run.length)) : literal

/** The text a JSON string literal holds, else the literal itself. */
const literalText = (literal: string): string => {
  try {
    const parsed: unknown = JSON.parse(literal)
    return typeof parsed === "string" ? parsed : literal
  } catch {
    return literal
  }
}

/**
 * The approval screen, values escaped so nothing can hide: the tool, the first
 * field (the command) emphasised, then the others; a list (the environment) on
 * one line, its entries two spaces apart (a space inside an entry is `\x20`).
 */
export const render = (display: ToolDisplay, style: (text: string) => string = (text) => text): string =>
  [
    `[Tool: ${Escape.forLine(display.tool)}]`,
    ...display.fields.map(({ label, value }, index) =>
      typeof value === "string"
        ? `${label}: ${index === 0 ? style(visibleBlanks(Escape.forLine(value))) : Escape.forLine(value)}`
        : `${label}: ${value.map((entry) => Escape.forLine(entry).replace(/ /g, "\\x20")).join("  ")}`
    )
  ].join("\n") + "\n"

/**
 * For a command too long to be sure its start is still on the screen, the line
 * beside the prompt: its size and its first line again. `screen` is the
 * terminal's size, when there is one: the approval screen and the prompt must
 * fit in its rows, or the command's beginning may have scrolled away.
 */
export const reminder = (display: ToolDisplay, screen: Option.Option<Screen> = Option.none()): string | undefined => {
  const first = display.fields[0]
  if (first === undefined || typeof first.value !== "string") return undefined
  // The screen's rows with the prompt's (the text ends with a newline: the prompt's row),
  // and one to spare for the line that may say what typed-ahead input was ignored.
  const scrolls = Option.exists(screen, ({ columns, rows }) => rowsOf(render(display), columns) + 1 > rows)
  if (first.value.length <= LONG_COMMAND && !scrolls) return undefined
  const text = literalText(first.value)
  const lines = text.split("\n")
  const head = lines[0] ?? ""
  const shown = Escape.jsonString(head.length > 120 ? head.slice(0, 120) : head) + (head.length > 120 || lines.length > 1 ? " …" : "")
  const size = `${Buffer.byteLength(text, "utf8").toLocaleString("en-US")} bytes, ${lines.length.toLocaleString("en-US")} line(s)`
  return `${first.label} above: ${size}; it begins ${shown}\n`
}

export class Approver extends Context.Tag("mino/Approver")<Approver, ApproverShape>() {
  /** Asks on the terminal, reading the answer from the same input as the chat. */
  static readonly layer = Layer.effect(
    Approver,
    Effect.map(Terminal, (terminal) =>
      Approver.of({
        decide: (display) =>
          Effect.gen(function*() {
            yield* terminal.write(render(display, (text) => terminal.style("bold", text)))
            const repeat = reminder(display, yield* terminal.screen)
            if (repeat !== undefined) yield* terminal.write(terminal.style("bold", repeat))
            if (!terminal.interactive) {
              yield* terminal.write(`${PROMPT}\nDenied: standard input is not a terminal, so no command can be approved.\n`)
              return { approved: false, reason: "standard input is not a terminal" } as const
            }
            const answer = yield* terminal.readLine(PROMPT, { fresh: true })
            if (Option.isNone(answer)) {
              return { approved: false, reason: "end of input at the approval prompt", endTurn: true } as const
            }
            return isApproval(answer.value)
              ? ({ approved: true } as const)
              : ({ approved: false, reason: "the user did not approve" } as const)
          })
      })
    )
  )

  /** Decides without asking: for tests and for programs with their own policy. */
  static readonly layerStatic = (decide: (display: ToolDisplay) => boolean) =>
    Layer.succeed(
      Approver,
      Approver.of({
        decide: (display) =>
          Effect.sync(() =>
            decide(structuredClone(display)) ? { approved: true } : { approved: false, reason: "denied by policy" }
          )
      })
    )
}
