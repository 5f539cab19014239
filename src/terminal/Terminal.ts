/**
 * The one input stream and the screen. Chat questions and approval answers are
 * read from the same queue of lines, so an answer is consumed as a decision and
 * never becomes the next question. The input is read in the terminal's cooked
 * mode: the kernel echoes and edits the line, Ctrl+D at an empty line ends
 * input, and Ctrl+C reaches Mino as SIGINT.
 */
import * as readline from "node:readline"
import type { Readable, Writable } from "node:stream"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Secrets from "../security/Secrets.js"

export interface TerminalShape {
  /** Standard input is a terminal: only then can anything be approved. */
  readonly interactive: boolean
  /** Colour and spinners: the output is a terminal and `NO_COLOR` is unset. */
  readonly decorated: boolean
  /**
   * Shows `prompt` and reads one line; `None` at end of input. With `fresh`, on a
   * terminal, lines typed before the prompt appeared are discarded first, so an
   * answer typed ahead cannot approve a command its author has not seen.
   */
  readonly readLine: (prompt: string, options?: { readonly fresh?: boolean }) => Effect.Effect<Option.Option<string>>
  /** Writes text as it is: callers escape what they did not write themselves. */
  readonly write: (text: string) => Effect.Effect<void>
  /** Shows `label` with elapsed seconds until the scope closes (only when decorated). */
  readonly spinner: (label: string) => Effect.Effect<void, never, Scope.Scope>
  /** Wraps text in an SGR style when decorated. */
  readonly style: (style: Style, text: string) => string
}

export type Style = "bold" | "dim" | "cyan" | "yellow" | "red" | "green"
const SGR: Readonly<Record<Style, string>> = { bold: "1", dim: "2", cyan: "36", yellow: "33", red: "31", green: "32" }

export interface TerminalOptions {
  readonly input: Readable
  readonly output: Writable
  readonly interactive: boolean
  readonly decorated: boolean
  /** Strings that must never reach the screen (the API key); replaced by `[redacted]`. */
  readonly secrets?: ReadonlyArray<string>
}

export class Terminal extends Context.Tag("mino/Terminal")<Terminal, TerminalShape>() {
  static readonly make = (options: TerminalOptions) => make(options)

  /** The process's standard input and output. */
  static readonly layer = (secrets: ReadonlyArray<string>) =>
    Layer.scoped(
      Terminal,
      make({
        input: process.stdin,
        output: process.stdout,
        interactive: process.stdin.isTTY === true,
        decorated: decorates(),
        secrets
      })
    )

  /** Given streams, e.g. pipes in tests. */
  static readonly layerStreams = (options: TerminalOptions) => Layer.scoped(Terminal, make(options))
}

/** Colour and spinners on standard output: only on a terminal, and never with `NO_COLOR` set. */
export const decorates = (): boolean => process.stdout.isTTY === true && (process.env["NO_COLOR"] ?? "") === ""

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]

const make = (options: TerminalOptions) =>
  Effect.gen(function*() {
    const lines = yield* Queue.unbounded<Option.Option<string>>()
    const ended = yield* Ref.make(false)
    const reader = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const rl = readline.createInterface({ input: options.input, terminal: false, crlfDelay: Infinity })
        rl.on("line", (line) => Queue.unsafeOffer(lines, Option.some(line)))
        rl.on("close", () => Queue.unsafeOffer(lines, Option.none()))
        return rl
      }),
      (rl) => Effect.sync(() => rl.close())
    )
    void reader
    const secrets = Secrets.effective(options.secrets ?? [])
    const redact = (text: string) => Secrets.redact(text, secrets)

    // Streamed model text can split a secret across writes: each write keeps back
    // a tail that could begin one, until the next write shows what follows it.
    let held = ""
    const heldBack = (text: string): number => {
      let keep = 0
      for (const secret of secrets) {
        for (let n = Math.min(secret.length - 1, text.length); n > keep; n--) {
          if (text.endsWith(secret.slice(0, n))) {
            keep = n
            break
          }
        }
      }
      return keep
    }
    yield* Effect.addFinalizer(() => Effect.sync(() => held === "" || options.output.write(held)))

    /** `flush` shows held-back text too: before a prompt, which must not wait for more. */
    const writeText = (text: string, flush: boolean) =>
      Effect.async<void>((resume) => {
        const combined = redact(held + text)
        const keep = flush ? 0 : heldBack(combined)
        held = combined.slice(combined.length - keep)
        // Respect back-pressure so a flood of output cannot pile up in memory.
        if (options.output.write(combined.slice(0, combined.length - keep))) resume(Effect.void)
        else options.output.once("drain", () => resume(Effect.void))
      })
    const write = (text: string) => writeText(text, false)

    const readLine = (prompt: string, readOptions?: { readonly fresh?: boolean }) =>
      Effect.gen(function*() {
        if (yield* Ref.get(ended)) return Option.none<string>()
        if (readOptions?.fresh === true && options.interactive) {
          const typedAhead = yield* Queue.takeAll(lines)
          // End of input is not typed ahead: keep it for this read.
          if ([...typedAhead].some(Option.isNone)) yield* Queue.offer(lines, Option.none())
          const discarded = [...typedAhead].filter(Option.isSome).length
          if (discarded > 0) yield* write(`(ignored ${discarded} line(s) typed before this question)\n`)
        }
        yield* writeText(prompt, true)
        const line = yield* Queue.take(lines)
        if (Option.isNone(line)) {
          yield* Ref.set(ended, true)
          yield* write("\n")
        } else if (!options.interactive) {
          // Piped input is not echoed by a terminal: show it so the transcript reads as typed.
          yield* write(line.value + "\n")
        }
        return line
      })

    const style = (name: Style, text: string) => options.decorated ? `\u001b[${SGR[name]}m${text}\u001b[0m` : text

    const spinner = (label: string) =>
      options.decorated
        ? Effect.gen(function*() {
          const started = yield* Clock.currentTimeMillis
          let frame = 0
          const draw = Effect.flatMap(Clock.currentTimeMillis, (now) =>
            write(`\r${style("dim", `${FRAMES[frame++ % FRAMES.length]} ${label} ${Math.floor((now - started) / 1000)}s`)}\u001b[K`))
          const fiber = yield* Effect.forkDaemon(Effect.repeat(draw, Schedule.spaced(Duration.millis(100))))
          yield* Effect.addFinalizer(() => Effect.zipRight(Fiber.interrupt(fiber), write("\r\u001b[K")))
        })
        : Effect.void

    return Terminal.of({ interactive: options.interactive, decorated: options.decorated, readLine, write, spinner, style })
  })
