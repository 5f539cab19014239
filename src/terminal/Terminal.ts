/**
 * The one input stream and the screen. Chat questions and approval answers are
 * read from the same input, so an answer is consumed as a decision and never
 * becomes the next question.
 *
 * On a terminal Mino owns the input: the terminal is in raw mode with bracketed
 * paste on, keys are decoded by Node's `readline.emitKeypressEvents`, and the
 * line is edited here (`LineEditor`). Keys typed while no prompt is shown wait
 * for the next question, and are discarded before an approval prompt. Ctrl+C and
 * Ctrl+\ arrive as keys, not signals, and are handed to `onStopKey`. The modes
 * are re-asserted before every prompt and restored when the scope closes (and,
 * as a backstop, when the process exits).
 *
 * Piped input is read line by line and echoed, so a transcript reads as typed.
 */
import * as readline from "node:readline"
import type { Readable, Writable } from "node:stream"
import * as tty from "node:tty"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import { REDACTED, Secrets, type SecretsShape } from "../security/Secrets.js"
import * as LineEditor from "./LineEditor.js"

export interface TerminalShape {
  /** Standard input is a terminal: only then can anything be approved. */
  readonly interactive: boolean
  /** Colour: the output is a terminal and `NO_COLOR` is unset. */
  readonly decorated: boolean
  /**
   * Shows `prompt` and reads one line; `None` at end of input (Ctrl+D at an
   * empty line). With `fresh`, everything typed before the prompt appeared
   * (complete lines and a partial line) is discarded first, and the screen says
   * so: an answer typed ahead cannot approve a command its author has not seen.
   * `history` is what ↑ and ↓ recall, oldest first.
   */
  readonly readLine: (
    prompt: string,
    options?: { readonly fresh?: boolean; readonly history?: ReadonlyArray<string> }
  ) => Effect.Effect<Option.Option<string>>
  /** Writes text as it is: callers escape what they did not write themselves. */
  readonly write: (text: string) => Effect.Effect<void>
  /** Shows `label` with elapsed seconds until the scope closes (only when the output is a terminal). */
  readonly spinner: (label: string) => Effect.Effect<void, never, Scope.Scope>
  /** Wraps text in an SGR style when decorated. */
  readonly style: (style: Style, text: string) => string
  /** Completes when standard output has been closed by its reader (`mino | head`). */
  readonly outputClosed: Effect.Effect<void>
  /** The screen's size now, when standard output is a terminal. */
  readonly screen: Effect.Effect<Option.Option<Screen>>
}

export interface Screen {
  readonly columns: number
  readonly rows: number
}

export type Style = "bold" | "dim" | "cyan" | "yellow" | "red" | "green"
const SGR: Readonly<Record<Style, string>> = { bold: "1", dim: "2", cyan: "36", yellow: "33", red: "31", green: "32" }

export interface TerminalOptions {
  readonly input: Readable
  readonly output: Writable
  readonly interactive: boolean
  /** Colour. */
  readonly decorated: boolean
  /** A spinner while waiting (default: `decorated`); `NO_COLOR` turns off colour, not this. */
  readonly animated?: boolean
  /** Decode keys and edit lines here (the input is a terminal), instead of reading whole lines. */
  readonly keys?: boolean
  /** Ctrl+C (`interrupt`) and Ctrl+\ (`quit`) in raw mode, where the terminal sends no signal. */
  readonly onStopKey?: (key: StopKey) => void
}

export type StopKey = "interrupt" | "quit"

/**
 * Raw mode turns off the terminal's own signals. Without a handler of its own
 * (`Terminal.layer`'s `onStopKey`; `main.ts` passes StopSignals' request), Mino
 * raises them itself, so the keys take the same path as a signal sent from elsewhere.
 */
const raiseSignal = (key: StopKey): void => {
  process.kill(process.pid, key === "quit" && process.listenerCount("SIGQUIT") > 0 ? "SIGQUIT" : "SIGINT")
}

export class Terminal extends Context.Tag("mino/Terminal")<Terminal, TerminalShape>() {
  static readonly make = (options: TerminalOptions) => make(options)

  /** The process's standard input and output. */
  static readonly layer = (onStopKey: (key: StopKey) => void = raiseSignal) =>
    Layer.scoped(
      Terminal,
      Effect.suspend(() =>
        make({
          input: process.stdin,
          output: process.stdout,
          interactive: process.stdin.isTTY === true,
          keys: process.stdin.isTTY === true,
          decorated: decorates(),
          animated: process.stdout.isTTY === true,
          onStopKey
        })
      )
    )

  /** Given streams, e.g. pipes in tests. */
  static readonly layerStreams = (options: TerminalOptions) => Layer.scoped(Terminal, make(options))
}

/** Colour on standard output: only on a terminal that is not `TERM=dumb`, and never with `NO_COLOR` set. */
export const decorates = (): boolean =>
  process.stdout.isTTY === true && process.env["TERM"] !== "dumb" && (process.env["NO_COLOR"] ?? "") === ""

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]

const PASTE_ON = "\u001b[?2004h"
const PASTE_OFF = "\u001b[?2004l"
const SGR_CODES = /\u001b\[[0-9;]*m/g

/**
 * Text as the screen draws it: Mino's own styles (SGR; the only escape sequences
 * written, everything else is escaped) are drawn as nothing, so a secret with a
 * style change inside it (Markdown around part of it) still shows whole. Returns
 * the drawn characters and, for each, its index in `text`.
 */
const drawn = (text: string): { readonly chars: string; readonly index: (at: number) => number } => {
  if (!text.includes("\u001b")) return { chars: text, index: (at) => at }
  let chars = ""
  const index: Array<number> = []
  let from = 0
  const take = (to: number) => {
    for (let i = from; i < to; i++) {
      chars += text[i] ?? ""
      index.push(i)
    }
  }
  for (const style of text.matchAll(SGR_CODES)) {
    take(style.index)
    from = style.index + style[0].length
  }
  take(text.length)
  return { chars, index: (at) => index[at] ?? text.length }
}

/**
 * `text` with the key replaced as drawn; styles inside a replaced key are kept,
 * after `[redacted]`. Where the key is, is found with `contains` alone (the
 * shortest drawn stretch that holds it), so the key itself stays in `Secrets`.
 */
const redactDrawn = (text: string, secrets: SecretsShape): string => {
  if (!text.includes("\u001b")) return secrets.redact(text)
  const { chars, index } = drawn(text)
  if (!secrets.contains(chars)) return text
  // Drawn stretches [start, end) that hold the key, left to right.
  const found: Array<readonly [number, number]> = []
  let from = 0
  while (secrets.contains(chars.slice(from))) {
    // The first end at which the key is whole, then the last start that still holds it (both by halving).
    const end = firstTrue(from + 1, chars.length, (at) => secrets.contains(chars.slice(from, at)))
    const start = firstTrue(from, end - 1, (at) => !secrets.contains(chars.slice(at + 1, end)))
    found.push([start, end])
    from = end
  }
  let result = ""
  let raw = 0
  for (const [start, end] of found) {
    const first = index(start)
    result += text.slice(raw, first) + REDACTED
    // The styles inside the key, so the style after it is still right.
    result += (text.slice(first, index(end - 1) + 1).match(SGR_CODES) ?? []).join("")
    raw = index(end - 1) + 1
  }
  return result + text.slice(raw)
}

/** The least `at` in `[low, high]` for which `holds` (which stays true once true); `high` if none before it. */
const firstTrue = (low: number, high: number, holds: (at: number) => boolean): number => {
  while (low < high) {
    const middle = Math.floor((low + high) / 2)
    if (holds(middle)) high = middle
    else low = middle + 1
  }
  return low
}

/**
 * How much of the end of `text` to hold back: from the first drawn character of
 * the drawn tail that could begin the key.
 */
const drawnTail = (text: string, secrets: SecretsShape): number => {
  const { chars, index } = drawn(text)
  const keep = secrets.heldBack(chars)
  return keep === 0 ? 0 : text.length - index(chars.length - keep)
}

/** What a discarded type-ahead held, for the line that says so. */
const discardedSummary = (lines: number, partial: boolean): string | undefined => {
  const parts = [...(lines > 0 ? [`${lines} line(s)`] : []), ...(partial ? ["a partial line"] : [])]
  return parts.length === 0 ? undefined : `(ignored ${parts.join(" and ")} typed before this question)\n`
}

const make = (options: TerminalOptions) =>
  Effect.gen(function*() {
    // The key never reaches the screen: every write is redacted (`Secrets`), as it is drawn.
    const secrets = yield* Secrets
    const redact = (text: string) => redactDrawn(text, secrets)
    const { output } = options

    // Standard output closed by its reader: writes stop, and whoever waits on `outputClosed` ends the chat.
    const closed = yield* Deferred.make<void>()
    let outputOpen = true
    const onOutputError = () => {
      outputOpen = false
      Deferred.unsafeDone(closed, Exit.void)
    }
    // Kept for the life of the stream: an EPIPE reported after the chat ended must
    // not surface as an unhandled 'error' event with a stack trace.
    yield* Effect.sync(() => output.on("error", onOutputError))
    const raw = (text: string) => {
      if (outputOpen && text.length > 0) output.write(text)
    }

    // Streamed model text can split a secret across writes: each write keeps back
    // a tail that could begin one, until the next write shows what follows it.
    let held = ""
    const heldBack = (text: string): number => drawnTail(text, secrets)
    yield* Effect.addFinalizer(() => Effect.sync(() => raw(held)))

    /** `flush` shows held-back text too: before a prompt, which must not wait for more. */
    const writeText = (text: string, flush: boolean) =>
      Effect.async<void>((resume) => {
        const combined = redact(held + text)
        const keep = flush ? 0 : heldBack(combined)
        held = combined.slice(combined.length - keep)
        const shown = combined.slice(0, combined.length - keep)
        // Respect back-pressure so a flood of output cannot pile up in memory.
        if (!outputOpen || shown.length === 0 || output.write(shown)) return resume(Effect.void)
        const done = () => {
          output.off("drain", done)
          output.off("error", done)
          resume(Effect.void)
        }
        output.once("drain", done)
        output.once("error", done)
      })
    const write = (text: string) => writeText(text, false)

    const readLine = options.keys === true ? yield* keyReader(options, raw, writeText) : yield* lineReader(options, writeText)

    const style = (name: Style, text: string) => options.decorated ? `\u001b[${SGR[name]}m${text}\u001b[0m` : text

    const spinner = (label: string) =>
      (options.animated ?? options.decorated)
        ? Effect.gen(function*() {
          const started = yield* Clock.currentTimeMillis
          let frame = 0
          const draw = Effect.flatMap(Clock.currentTimeMillis, (now) =>
            write(`\r${style("dim", `${FRAMES[frame++ % FRAMES.length]} ${label} ${Math.floor((now - started) / 1000)}s`)}\u001b[K`))
          const fiber = yield* Effect.forkDaemon(Effect.repeat(draw, Schedule.spaced(Duration.millis(100))))
          yield* Effect.addFinalizer(() => Effect.zipRight(Fiber.interrupt(fiber), write("\r\u001b[K")))
        })
        : Effect.void

    return Terminal.of({
      interactive: options.interactive,
      decorated: options.decorated,
      readLine,
      write,
      spinner,
      style,
      outputClosed: Deferred.await(closed),
      screen: Effect.sync(() =>
        output instanceof tty.WriteStream && output.columns > 0 && output.rows > 0
          ? Option.some({ columns: output.columns, rows: output.rows })
          : Option.none()
      )
    })
  })

type WriteText = (text: string, flush: boolean) => Effect.Effect<void>
type ReadLine = TerminalShape["readLine"]

/** Whole lines from a pipe (or a test's stream); a piped line is echoed so the transcript reads as typed. */
const lineReader = (options: TerminalOptions, writeText: WriteText) =>
  Effect.gen(function*() {
    const lines = yield* Queue.unbounded<Option.Option<string>>()
    const ended = yield* Ref.make(false)
    yield* Effect.acquireRelease(
      Effect.sync(() => {
        const rl = readline.createInterface({ input: options.input, terminal: false, crlfDelay: Infinity })
        rl.on("line", (line) => Queue.unsafeOffer(lines, Option.some(line)))
        rl.on("close", () => Queue.unsafeOffer(lines, Option.none()))
        return rl
      }),
      (rl) => Effect.sync(() => rl.close())
    )
    const readLine: ReadLine = (prompt, readOptions) =>
      Effect.gen(function*() {
        if (yield* Ref.get(ended)) return Option.none<string>()
        if (readOptions?.fresh === true && options.interactive) {
          const typedAhead = yield* Queue.takeAll(lines)
          // End of input is not typed ahead: keep it for this read.
          if ([...typedAhead].some(Option.isNone)) yield* Queue.offer(lines, Option.none())
          const notice = discardedSummary([...typedAhead].filter(Option.isSome).length, false)
          if (notice !== undefined) yield* writeText(notice, false)
        }
        yield* writeText(prompt, true)
        const line = yield* Queue.take(lines)
        if (Option.isNone(line)) {
          yield* Ref.set(ended, true)
          yield* writeText("\n", false)
        } else if (!options.interactive) {
          yield* writeText(line.value + "\n", false)
        }
        return line
      })
    return readLine
  })

/** Keys from a terminal in raw mode, edited here. */
const keyReader = (options: TerminalOptions, raw: (text: string) => void, writeText: WriteText) =>
  Effect.gen(function*() {
    const { input, output } = options
    const ttyInput = input instanceof tty.ReadStream ? input : undefined
    const ttyOutput = output instanceof tty.WriteStream ? output : undefined
    let ended = false
    let pasting = false
    // Keys typed while no prompt is shown, in order.
    const pending: Array<LineEditor.Key> = []
    // The prompt being edited, when one is shown.
    let active: ((key: LineEditor.Key) => void) | undefined
    let modesSet = false

    /**
     * Raw mode and bracketed paste. Turning raw mode off first makes libuv restore
     * the modes Mino started with, so turning it on again repairs whatever a
     * command did to the terminal meanwhile (libuv skips a switch to the mode it
     * believes is already set).
     */
    const assertModes = () => {
      if (ttyInput !== undefined) {
        ttyInput.setRawMode(false)
        ttyInput.setRawMode(true)
      }
      if (ttyOutput !== undefined) raw(PASTE_ON)
      modesSet = true
    }
    const restoreModes = () => {
      if (!modesSet) return
      modesSet = false
      if (ttyOutput !== undefined) raw(PASTE_OFF)
      if (ttyInput !== undefined) ttyInput.setRawMode(false)
    }

    const stopKey = (key: LineEditor.Key): boolean => {
      const action = LineEditor.press(LineEditor.empty(), key)
      if (action._tag === "Interrupt") options.onStopKey?.("interrupt")
      else if (action._tag === "Quit") options.onStopKey?.("quit")
      else return false
      return true
    }

    const onKeypress = (_: string | undefined, key: readline.Key | undefined) => {
      if (key === undefined) return
      if (key.name === "paste-start") pasting = true
      else if (key.name === "paste-end") pasting = false
      else {
        const typed: LineEditor.Key = { name: key.name, sequence: key.sequence, ctrl: key.ctrl, meta: key.meta, pasted: pasting }
        if (active !== undefined) active(typed)
        // Ctrl+C while the model thinks or a command runs acts at once.
        else if (!stopKey(typed)) pending.push(typed)
      }
    }

    yield* Effect.acquireRelease(
      Effect.sync(() => {
        readline.emitKeypressEvents(input)
        assertModes()
        input.on("keypress", onKeypress)
        process.on("exit", restoreModes)
      }),
      () =>
        Effect.sync(() => {
          input.off("keypress", onKeypress)
          process.off("exit", restoreModes)
          restoreModes()
          input.pause()
        })
    )

    const columns = () => (ttyOutput !== undefined && ttyOutput.columns > 0 ? ttyOutput.columns : 80)

    const readLine: ReadLine = (prompt, readOptions) =>
      Effect.gen(function*() {
        if (ended) return Option.none<string>()
        assertModes()
        if (readOptions?.fresh === true) {
          let lines = 0
          let scratch = LineEditor.empty()
          for (const key of pending.splice(0)) {
            const action = LineEditor.press(scratch, key)
            if (action._tag === "Submit") {
              lines++
              scratch = LineEditor.empty()
            } else if (action._tag === "Edit") scratch = action.editor
          }
          const notice = discardedSummary(lines, scratch.chars.length > 0)
          if (notice !== undefined) yield* writeText(notice, false)
        }
        yield* writeText("", true)
        return yield* Effect.async<Option.Option<string>>((resume) => {
          const promptWidth = LineEditor.width(prompt.replace(SGR_CODES, ""))
          let editor = LineEditor.empty(readOptions?.history ?? [])
          // Rows between the prompt's first row and the cursor; what is drawn, when the cursor is at its end.
          let row = 0
          let drawnAtEnd: string | undefined
          let first = true
          const render = () => {
            const cols = columns()
            const { cursorColumn, line } = LineEditor.draw(editor)
            const total = promptWidth + LineEditor.width(line)
            const at = promptWidth + cursorColumn
            const appended = !first && drawnAtEnd !== undefined && at === total && line.startsWith(drawnAtEnd)
            // Typing at the end only adds characters; anything else redraws from the prompt.
            let text = appended
              ? line.slice(drawnAtEnd?.length ?? 0)
              : `${row > 0 ? `\u001b[${row}A` : ""}${first ? "" : "\r\u001b[J"}${prompt}${line}`
            first = false
            drawnAtEnd = at === total ? line : undefined
            // At the exact end of a row the cursor waits to wrap: move it to the next row's start.
            if (total > 0 && total % cols === 0) text += " \r"
            const endRow = Math.floor(total / cols)
            const cursorRow = Math.floor(at / cols)
            if (at !== total || total % cols === 0) {
              if (endRow > cursorRow) text += `\u001b[${endRow - cursorRow}A`
              text += `\r${at % cols > 0 ? `\u001b[${at % cols}C` : ""}`
            }
            row = cursorRow
            raw(text)
          }
          const finish = (line: Option.Option<string>) => {
            active = undefined
            raw("\n")
            resume(Effect.succeed(line))
          }
          active = (key) => {
            const action = LineEditor.press(editor, key)
            switch (action._tag) {
              case "Edit":
                editor = action.editor
                return render()
              case "Submit":
                editor = { ...editor, cursor: editor.chars.length }
                render()
                return finish(Option.some(action.text))
              case "EndOfInput":
                ended = true
                return finish(Option.none())
              case "Interrupt":
                return options.onStopKey?.("interrupt")
              case "Quit":
                return options.onStopKey?.("quit")
            }
          }
          render()
          // Keys typed while no prompt was shown count as typed at this one.
          while (active !== undefined && pending.length > 0) {
            const key = pending.shift()
            if (key !== undefined) active(key)
          }
          return Effect.sync(() => {
            active = undefined
          })
        })
      })
    return readLine
  })
