/**
 * Whole lines from a pipe (or a test's stream), for input that is not a
 * terminal. A piped line is echoed, so a transcript reads as typed. Over a
 * stream marked interactive (tests only: Mino's own input is interactive only
 * when it is a terminal, and then `KeyReader` reads it), an approval question
 * discards the lines already read, and says so.
 */
import * as readline from "node:readline"
import type { Readable } from "node:stream"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as InputGate from "./InputGate.js"
import type { Answer } from "./KeyReader.js"
import * as LineEditor from "./LineEditor.js"

export interface LineReaderOptions {
  readonly input: Readable
  readonly interactive: boolean
  /** Writes text after what is held back; `flush` shows what is held back too. */
  readonly write: (text: string, flush: boolean) => Effect.Effect<void>
}

export const make = (options: LineReaderOptions) =>
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

    const take = (prompt: string) =>
      Effect.gen(function*() {
        if (yield* Ref.get(ended)) return Option.none<string>()
        yield* options.write(prompt, true)
        const line = yield* Queue.take(lines)
        if (Option.isNone(line)) {
          yield* Ref.set(ended, true)
          yield* options.write("\n", false)
        } else if (!options.interactive) {
          yield* options.write(line.value + "\n", false)
        }
        return line
      })

    const readLine = (prompt: string) => take(prompt)

    const ask = (prompt: string) =>
      Effect.gen(function*() {
        if (options.interactive) {
          const typedAhead = [...(yield* Queue.takeAll(lines))]
          // End of input is not typed ahead: keep it for this read.
          if (typedAhead.some(Option.isNone)) yield* Queue.offer(lines, Option.none())
          const notice = InputGate.notice({ lines: typedAhead.filter(Option.isSome).length, partial: LineEditor.empty(), pasted: false })
          if (notice !== undefined) yield* options.write(notice, false)
        }
        const line = yield* take(prompt)
        return Option.map(line, (text): Answer => ({ text, pasted: false }))
      })

    return { readLine, ask }
  })
