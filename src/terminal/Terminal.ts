/**
 * The one input stream and the screen. Chat questions and approval answers are
 * read from the same input, so an answer is consumed as a decision and never
 * becomes the next question.
 *
 * On a terminal Mino owns the input (`KeyReader`): raw mode, bracketed paste,
 * keys decoded and the line edited by Mino, an approval question guarded so
 * that nothing typed before it can answer it. Piped input is read line by line
 * (`LineReader`). The output is decorated (colour) and animated (a spinner,
 * cursor movement, bracketed paste) only on a terminal that is not `TERM=dumb`;
 * otherwise it is plain text with no escape sequence at all.
 */
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
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import { REDACTED, Secrets, type SecretsShape } from "../security/Secrets.js"
import type { StopKey } from "./input/KeyDecoder.js"
import * as KeyReader from "./input/KeyReader.js"
import * as LineReader from "./input/LineReader.js"
import type { Texts } from "../TextList.js"

export type { StopKey } from "./input/KeyDecoder.js"
export type { Answer } from "./input/KeyReader.js"

export interface TerminalShape {
  /** Standard input is a terminal: only then can anything be approved. */
  readonly interactive: boolean
  /** Colour: the output is a terminal and `NO_COLOR` is unset. */
  readonly decorated: boolean
  /** Drawn: the output is a terminal that is not `TERM=dumb` (`NO_COLOR` set or not). */
  readonly animated: boolean
  /**
   * Shows `prompt` and reads one line; `None` at end of input (Ctrl+D at an
   * empty line). What was typed while no prompt was shown counts as typed here.
   * `history` is what ↑ and ↓ recall, oldest first.
   */
  readonly readLine: (
    prompt: string,
    options?: { readonly history?: Texts; readonly completions?: ReadonlyArray<string> }
  ) => Effect.Effect<Option.Option<string>>
  /**
   * Writes `screen` (an approval question), then shows `prompt` and reads the
   * answer; `None` at end of input. On a terminal nothing typed before the
   * prompt was shown can answer it: whatever was typed before, whatever arrives
   * before the terminal reports that it has drawn the screen (where the output
   * takes escape sequences: `input/Sighting`), and whatever arrives during a
   * guard period (`GUARD_MS`) after that, is discarded, and the screen says so.
   */
  readonly ask: (screen: string, prompt: string) => Effect.Effect<Option.Option<KeyReader.Answer>>
  /** Writes text as it is: callers escape what they did not write themselves. */
  readonly write: (text: string) => Effect.Effect<void>
  /** Shows `label` with elapsed seconds until the scope closes (only when the output is a terminal). */
  readonly spinner: (label: string) => Effect.Effect<void, never, Scope.Scope>
  /** Wraps text in an SGR style when decorated. */
  readonly style: (style: Style, text: string) => string
  /** Completes when standard output has been closed by its reader (`mino | head`). */
  /**
   * Completes when standard output can no longer be written: `"hangup"` when it is
   * a terminal that hung up (EIO: the terminal closed, as SIGHUP also says),
   * `"closed"` when its reader went away (`mino | head`).
   */
  readonly outputClosed: Effect.Effect<OutputClosed>
  /** The screen's size now, when standard output is a terminal. */
  readonly screen: Effect.Effect<Option.Option<Screen>>
}

export type OutputClosed = "hangup" | "closed"

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
  /**
   * The output takes cursor movement (default: `decorated`): a spinner while
   * waiting, line redraws, bracketed paste. `NO_COLOR` turns off colour, not this.
   */
  readonly animated?: boolean
  /** Decode keys and edit lines here (the input is a terminal), instead of reading whole lines. */
  readonly keys?: boolean
  /** Ctrl+C (`interrupt`) and Ctrl+\ (`quit`) in raw mode, where the terminal sends no signal. */
  readonly onStopKey?: (key: StopKey) => void
  /** How long an approval question is guarded (default `GUARD_MS`). */
  readonly guardMs?: number
}

/**
 * After an approval screen is written, input is discarded for this long, then
 * drained, before the prompt is shown and an answer read: long enough that
 * keys typed as the screen appeared (by reflex, or on their way to a remote
 * terminal) are not taken as the answer, short enough that a person reading
 * the screen never meets it. Chrome ignores clicks on a permission prompt for
 * the platform's double-click interval (500 ms by default) after it is shown;
 * Firefox keeps a dialog's buttons disabled for 1 s (`security.dialog_enable_delay`).
 */
export const GUARD_MS = 500

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
          animated: animates(),
          onStopKey
        })
      )
    )

  /** Given streams, e.g. pipes in tests. */
  static readonly layerStreams = (options: TerminalOptions) => Layer.scoped(Terminal, make(options))
}

/** Cursor movement on standard output: only on a terminal that is not `TERM=dumb`. */
export const animates = (): boolean => process.stdout.isTTY === true && process.env["TERM"] !== "dumb"

/** Colour on standard output: only where it animates, and never with `NO_COLOR` set. */
export const decorates = (): boolean => animates() && (process.env["NO_COLOR"] ?? "") === ""

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]

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

/** What one write shows now and what it keeps back for the next. */
export interface WriteStep {
  readonly shown: string
  readonly held: string
}

/**
 * One write, pure: what was held back and the new text, redacted as drawn,
 * less the drawn tail that could begin the key (nothing is held when `flush`).
 */
export const writeStep = (held: string, text: string, flush: boolean, secrets: SecretsShape): WriteStep => {
  const combined = redactDrawn(held + text, secrets)
  const keep = flush ? 0 : drawnTail(combined, secrets)
  return { shown: combined.slice(0, combined.length - keep), held: combined.slice(combined.length - keep) }
}

/** Text in a style, when the terminal is decorated. */
const styled = (decorated: boolean) => (name: Style, text: string) => decorated ? `\u001b[${SGR[name]}m${text}\u001b[0m` : text

/** One frame of the spinner: its glyph, the label and the whole seconds since it started. */
export const spinnerFrame = (frame: number, label: string, elapsedMs: number): string =>
  `${FRAMES[frame % FRAMES.length]} ${label} ${Math.floor(elapsedMs / 1000)}s`

/** The terminal's size, when the output is one. */
const screenOf = (output: NodeJS.WritableStream) =>
  Effect.sync(() =>
    output instanceof tty.WriteStream && output.columns > 0 && output.rows > 0
      ? Option.some({ columns: output.columns, rows: output.rows })
      : Option.none()
  )

/** A question under its screen; one Mino was stopped and continued at is asked anew, under its screen shown again. */
const askedUnderScreen = (
  screen: Effect.Effect<void>,
  question: Effect.Effect<Option.Option<KeyReader.Answer>>
): Effect.Effect<Option.Option<KeyReader.Answer>> =>
  Effect.flatMap(
    Effect.zipRight(screen, question),
    (answer) => Option.isSome(answer) && answer.value.continued === true ? askedUnderScreen(screen, question) : Effect.succeed(answer)
  )

const make = (options: TerminalOptions) =>
  Effect.gen(function*() {
    // The key never reaches the screen: every write is redacted (`Secrets`), as it is drawn.
    const secrets = yield* Secrets
    const { output } = options

    // Standard output closed by its reader: writes stop, and whoever waits on `outputClosed` ends the chat.
    const closed = yield* Deferred.make<OutputClosed>()
    let outputOpen = true
    const onOutputError = (error: unknown) => {
      outputOpen = false
      const hungUp = output instanceof tty.WriteStream && typeof error === "object" && error !== null && "code" in error && error.code === "EIO"
      Deferred.unsafeDone(closed, Exit.succeed(hungUp ? "hangup" : "closed"))
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
    yield* Effect.addFinalizer(() => Effect.sync(() => raw(held)))

    /** `flush` shows held-back text too: before a prompt, which must not wait for more. */
    const writeText = (text: string, flush: boolean) =>
      Effect.async<void>((resume) => {
        const step = writeStep(held, text, flush, secrets)
        held = step.held
        const { shown } = step
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

    const reader = options.keys === true
      ? yield* KeyReader.make({
        input: options.input,
        output,
        raw,
        animated: options.animated ?? options.decorated,
        onStopKey: options.onStopKey ?? raiseSignal,
        guardMs: options.guardMs ?? GUARD_MS
      })
      : undefined
    const lines = reader === undefined
      ? yield* LineReader.make({ input: options.input, interactive: options.interactive, write: writeText })
      : undefined

    const readLine: TerminalShape["readLine"] = (prompt, readOptions) =>
      Effect.zipRight(
        writeText("", true),
        reader !== undefined ? reader.readLine(prompt, readOptions?.history ?? [], readOptions?.completions ?? []) : lines !== undefined ? lines.readLine(prompt) : Effect.succeedNone
      )
    // The screen goes out first, whole (held-back text included): the guard starts once it is on the terminal.
    const ask: TerminalShape["ask"] = (screen, prompt) =>
      askedUnderScreen(
        writeText(screen, true),
        reader !== undefined ? reader.ask(prompt) : lines !== undefined ? lines.ask(prompt) : Effect.succeedNone
      )

    const style = styled(options.decorated)

    const spinner = (label: string) =>
      (options.animated ?? options.decorated)
        ? Effect.gen(function*() {
          const started = yield* Clock.currentTimeMillis
          let frame = 0
          const draw = Effect.flatMap(Clock.currentTimeMillis, (now) => write(`\r${style("dim", spinnerFrame(frame++, label, now - started))}\u001b[K`))
          const fiber = yield* Effect.forkDaemon(Effect.repeat(draw, Schedule.spaced(Duration.millis(100))))
          yield* Effect.addFinalizer(() => Effect.zipRight(Fiber.interrupt(fiber), write("\r\u001b[K")))
        })
        : Effect.void

    return Terminal.of({
      interactive: options.interactive,
      decorated: options.decorated,
      animated: options.animated ?? options.decorated,
      readLine,
      ask,
      write,
      spinner,
      style,
      outputClosed: Deferred.await(closed),
      screen: screenOf(output)
    })
  })
