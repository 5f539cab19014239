/**
 * Where input goes (`InputGate`, pure) and the key reader over a stream
 * (`KeyReader` through `Terminal`, with keys decoded as on a terminal): input
 * typed while no prompt is shown waits for the next question, an approval
 * question discards everything until its prompt is shown, and a pasted answer
 * is marked pasted. The real terminal (its input queue drained at the guard's
 * end) is tested against the built `mino` in test/e2e/Keys.test.ts.
 */
import { PassThrough } from "node:stream"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as InputGate from "../../src/terminal/input/InputGate.js"
import type { Input } from "../../src/terminal/input/KeyDecoder.js"
import * as LineEditor from "../../src/terminal/input/LineEditor.js"
import * as Sighting from "../../src/terminal/input/Sighting.js"
import { Secrets } from "../../src/security/Secrets.js"
import { Terminal } from "../../src/terminal/Terminal.js"
import { streamKeys } from "../support/StreamKeys.js"

const text = (value: string): Input => ({ _tag: "Text", text: value })
const enter: Input = { _tag: "Key", name: "enter", ctrl: false, meta: false }
const paste = (value: string): Input => ({ _tag: "Paste", text: value })

const feedAll = (gate: InputGate.Gate, inputs: ReadonlyArray<Input>) =>
  inputs.reduce<{ gate: InputGate.Gate; outcomes: Array<InputGate.Outcome["_tag"]> }>((acc, input) => {
    const step = InputGate.feed(acc.gate, input)
    return { gate: step.gate, outcomes: [...acc.outcomes, step.outcome._tag] }
  }, { gate, outcomes: [] })

describe("InputGate", () => {
  it("input typed while no prompt is shown waits, and counts at the next prompt up to its first Enter", () => {
    const { gate } = feedAll(InputGate.idle, [text("first"), enter, text("second")])
    const opened = InputGate.open(gate, [])
    expect(opened.outcome).toMatchObject({ _tag: "Submitted", text: "first", pasted: false })
    expect(opened.gate._tag === "Idle" && InputGate.queued(opened.gate.pending)).toEqual([text("second")])
    const next = InputGate.open(opened.gate, [])
    expect(next.outcome._tag).toBe("Edited")
    expect(next.gate._tag === "Reading" && LineEditor.text(next.gate.editor)).toBe("second")
  })

  it("an approval question discards what waits and everything until it is released, and counts it", () => {
    const waiting = feedAll(InputGate.idle, [text("yes"), enter, text("y")]).gate
    const guarded = InputGate.guard(waiting)
    const during = feedAll(guarded, [enter, paste("y\n"), { _tag: "Stop", key: "interrupt" }])
    // Nothing reaches a line; the stop key still acts.
    expect(during.outcomes).toEqual(["Held", "Held", "Stop"])
    expect(InputGate.notice(InputGate.ignored(during.gate))).toBe("(ignored 2 line(s) and pasted text typed before this question)\n")
    const released = InputGate.release(during.gate)
    expect(released._tag === "Reading" && LineEditor.length(released.editor)).toBe(0)
    const answered = feedAll(released, [text("y"), enter])
    expect(answered.outcomes).toEqual(["Edited", "Submitted"])
  })

  it("a question asked anew after a stop stays guarded: what it ignored is kept, and a line typed at its prompt counts as ignored", () => {
    const guarded = feedAll(InputGate.guard(InputGate.idle), [text("y"), enter]).gate
    const again = InputGate.guard(InputGate.askedAgain(guarded))
    expect(InputGate.notice(InputGate.ignored(again))).toBe("(ignored 1 line(s) typed before this question)\n")
    const reading = feedAll(InputGate.release(InputGate.guard(InputGate.idle)), [text("ye")]).gate
    const asked = InputGate.guard(InputGate.askedAgain(reading))
    expect(InputGate.notice(InputGate.ignored(asked))).toBe("(ignored a partial line typed before this question)\n")
    // Nothing typed: nothing to say.
    expect(InputGate.notice(InputGate.ignored(InputGate.guard(InputGate.askedAgain(InputGate.release(InputGate.guard(InputGate.idle))))))).toBeUndefined()
  })

  it("a line that answered the question but whose answer was not taken when Mino was continued counts as ignored, with what followed it", () => {
    const submitted = feedAll(InputGate.release(InputGate.guard(InputGate.idle)), [text("y"), enter, text("ye")])
    expect(submitted.outcomes).toEqual(["Edited", "Submitted", "Held"])
    const asked = InputGate.guard(InputGate.askedAgain(submitted.gate, { pasted: false }))
    expect(InputGate.notice(InputGate.ignored(asked))).toBe("(ignored 1 line(s) and a partial line typed before this question)\n")
    const pasted = InputGate.askedAgain(feedAll(InputGate.release(InputGate.guard(InputGate.idle)), [paste("y"), enter]).gate, { pasted: true })
    expect(InputGate.notice(InputGate.ignored(pasted))).toBe("(ignored 1 line(s) and pasted text typed before this question)\n")
  })

  it("a flood of type-ahead costs time in proportion to it: 40,000 lines queued and taken one prompt at a time", () => {
    /** Milliseconds to queue `lines` typed lines while no prompt is shown, then take them at one prompt after another (best of 5). */
    const cost = (lines: number): number => {
      let best = Infinity
      for (let round = 0; round < 5; round++) {
        const started = performance.now()
        let gate = InputGate.idle
        for (let i = 0; i < lines; i++) gate = InputGate.feed(InputGate.feed(gate, text(`line ${i}`)).gate, enter).gate
        let taken = 0
        for (let step = InputGate.open(gate, []); step.outcome._tag === "Submitted"; step = InputGate.open(step.gate, [])) taken++
        expect(taken).toBe(lines)
        best = Math.min(best, performance.now() - started)
      }
      return best
    }
    cost(1_000) // warm up
    const small = cost(1_000)
    const large = cost(40_000)
    console.log(`1,000 lines typed ahead: ${small.toFixed(1)} ms; 40,000: ${large.toFixed(1)} ms (${(large / small).toFixed(1)}×)`)
    // Forty times the lines: about forty times the work; a copy of the queue per input would be 1,600 times.
    // The bound leaves a loaded machine five times the linear ratio (a run at load 16 measured 10,000 lines
    // beside 2,000 at 30x, for a linear 10x).
    expect(large / small).toBeLessThan(200)
  })

  it("the notice names lines, a partial line and pasted text, and nothing when nothing was typed", () => {
    const notice = (inputs: ReadonlyArray<Input>) => InputGate.notice(InputGate.ignored(InputGate.guard(feedAll(InputGate.idle, inputs).gate)))
    expect(notice([])).toBeUndefined()
    expect(notice([text("y")])).toBe("(ignored a partial line typed before this question)\n")
    expect(notice([text("yes"), enter, text("y")])).toBe("(ignored 1 line(s) and a partial line typed before this question)\n")
    expect(notice([text("a"), enter, text("b"), paste("c")])).toBe("(ignored 1 line(s), a partial line and pasted text typed before this question)\n")
  })
})

/** A Terminal reading keys from a stream, and everything it wrote. */
const keysTerminal = keysTerminalWith(false)

function keysTerminalWith(animated: boolean) {
  return Effect.gen(function*() {
  const input = new PassThrough()
  const output = new PassThrough()
  let written = ""
  output.on("data", (chunk: Buffer) => void (written += chunk.toString("utf8")))
  const terminal = yield* Terminal.make({ input, output, interactive: true, keys: true, decorated: false, animated }).pipe(
    Effect.provide(Secrets.layerNone)
  )
  const waitFor = (needle: string | RegExp) =>
    Effect.gen(function*() {
      while (typeof needle === "string" ? !written.includes(needle) : !needle.test(written)) yield* Effect.sleep("10 millis")
    })
  return { terminal, input, output, screen: () => written, waitFor }
})
}

describe("KeyReader over a stream", () => {
  it.scopedLive("keys typed while no prompt is shown count as typed at the next question", () =>
    Effect.gen(function*() {
      const { terminal, input } = yield* keysTerminal
      input.write("hello\r")
      yield* Effect.sleep("50 millis")
      expect(yield* terminal.readLine("You> ")).toEqual(Option.some("hello"))
    }))

  it.scopedLive("an approval answer typed ahead or during the guard is discarded; one typed after the prompt answers", () =>
    Effect.gen(function*() {
      const { terminal, input, screen, waitFor } = yield* keysTerminal
      input.write("y\r")
      yield* Effect.sleep("50 millis")
      const asking = yield* Effect.fork(terminal.ask("[Tool: bash]\n", "Approve? "))
      yield* waitFor("[Tool: bash]\n")
      // Typed after the screen, before the prompt: still discarded.
      input.write("yes\r")
      yield* waitFor("Approve? ")
      expect(screen()).toContain("[Tool: bash]\n(ignored 2 line(s) typed before this question)\nApprove? ")
      input.write("n\r")
      expect(yield* Fiber.join(asking)).toEqual(Option.some({ text: "n", pasted: false }))
    }))

  it.scopedLive("keys that arrive while the prompt is being written were typed before it was seen: ignored, and the prompt drawn again under its notice", () =>
    Effect.gen(function*() {
      const { terminal, input, output, screen, waitFor } = yield* keysTerminal
      // As when Mino is held between the guard's drain and the prompt's write: the keys are in the input
      // queue, not yet handed to the reader, when the prompt goes out.
      let typed = false
      output.on("data", (chunk: Buffer) => {
        if (typed || !chunk.toString("utf8").includes("Approve? ")) return
        typed = true
        input.pause()
        input.write("y\r")
        setImmediate(() => input.resume())
      })
      const asking = yield* Effect.fork(terminal.ask("[Tool: bash]\n", "Approve? "))
      yield* waitFor("(ignored 1 line(s) typed before this question)\nApprove? ")
      // Drawn again on a line of its own: this terminal takes no escape sequences.
      expect(screen()).toContain("[Tool: bash]\nApprove? \n(ignored 1 line(s) typed before this question)\nApprove? ")
      expect(screen()).not.toContain("\u001b")
      yield* Effect.sleep("50 millis")
      input.write("n\r")
      expect(yield* Fiber.join(asking)).toEqual(Option.some({ text: "n", pasted: false }))
    }))

  it.scopedLive("a pasted answer is marked pasted, and its newline does not answer", () =>
    Effect.gen(function*() {
      const { terminal, input, waitFor } = yield* keysTerminal
      const asking = yield* Effect.fork(terminal.ask("screen\n", "Approve? "))
      yield* waitFor("Approve? ")
      input.write("\u001b[200~y\r\u001b[201~")
      yield* Effect.sleep("400 millis")
      input.write("\r")
      expect(yield* Fiber.join(asking)).toEqual(Option.some({ text: "y\n", pasted: true }))
    }))

  it.scopedLive("plain output (TERM=dumb) edits with \\r and \\b only: no escape sequence", () =>
    Effect.gen(function*() {
      const { terminal, input, screen } = yield* keysTerminal
      const reading = yield* Effect.fork(terminal.readLine("You> "))
      input.write("helo")
      yield* Effect.sleep("50 millis")
      input.write("\u001b[Dl\u001b[F!\u007f\r")
      expect(yield* Fiber.join(reading)).toEqual(Option.some("hello"))
      expect(screen()).not.toContain("\u001b")
    }))
})

describe("KeyReader waits until the terminal has drawn the question", () => {
  /** The column the question's last request asked for. */
  const asked = (screen: string): number => Number([...screen.matchAll(/\u001b\[(\d+)G\u001b\[6n\r/g)].at(-1)?.[1] ?? "0")

  /** A terminal that answered Mino's start request, asked a question: returns once the question's request is written. */
  const askedOnAnsweringTerminal = Effect.gen(function*() {
    const shell = yield* keysTerminalWith(true)
    yield* shell.waitFor("\u001b[6n")
    shell.input.write("\u001b[1;1R")
    const asking = yield* Effect.fork(shell.terminal.ask("[Tool: bash]\n", "Approve? "))
    yield* shell.waitFor(/\u001b\[\d+G\u001b\[6n\r/)
    return { ...shell, asking }
  })

  it.scopedLive("until the terminal answers the request, nothing typed answers and no prompt is shown; the answer naming its column starts the guard", () =>
    Effect.gen(function*() {
      // The start's own request, answered: this terminal answers.
      const { input, screen, waitFor, asking } = yield* askedOnAnsweringTerminal
      // Longer than the guard and than a terminal that never answers is waited for: still no prompt.
      for (let i = 0; i < 6; i++) {
        input.write("y\r")
        yield* Effect.sleep("500 millis")
      }
      expect(screen()).not.toContain("Approve? ")
      input.write(`\u001b[24;${asked(screen())}R`)
      yield* waitFor("Approve? ")
      expect(screen()).toContain("(ignored 6 line(s) typed before this question)\nApprove? ")
      input.write("n\r")
      expect(yield* Fiber.join(asking)).toEqual(Option.some({ text: "n", pasted: false }))
    }), { timeout: 20_000 })

  it.scopedLive("an answer already waiting when the request's repeat is due is read first: nothing is asked again", () =>
    Effect.gen(function*() {
      const { input, screen, waitFor, asking } = yield* askedOnAnsweringTerminal
      // As when Mino was stopped with the answer on its way and woken after the repeat was due: the
      // timer runs before the read. Paused, the stream hands the answer over only when read.
      input.pause()
      input.write(`\u001b[24;${asked(screen())}R`)
      yield* Effect.sleep(`${Sighting.REPEAT_MS + 300} millis`)
      expect([...screen().matchAll(/\u001b\[\d+G\u001b\[6n\r/g)].length).toBe(1)
      input.resume()
      yield* waitFor("Approve? ")
      input.write("n\r")
      expect(yield* Fiber.join(asking)).toEqual(Option.some({ text: "n", pasted: false }))
    }), { timeout: 20_000 })

  it.scopedLive("a report naming a column not asked for denies the question; a report before the question is no answer to it", () =>
    Effect.gen(function*() {
      const { terminal, input, waitFor } = yield* keysTerminalWith(true)
      yield* waitFor("\u001b[6n")
      input.write("\u001b[1;1R\u001b[5;5R")
      yield* Effect.sleep("50 millis")
      const asking = yield* Effect.fork(terminal.ask("[Tool: bash]\n", "Approve? "))
      yield* waitFor(/\u001b\[\d+G\u001b\[6n\r/)
      input.write("\u001b[24;1R")
      expect(yield* Fiber.join(asking)).toEqual(Option.some({ text: "", pasted: false, forgedReport: true }))
    }), { timeout: 20_000 })

  it.scopedLive("a terminal that never answered is waited for a bounded time, then asked on the guard alone", () =>
    Effect.gen(function*() {
      const { terminal, input, waitFor } = yield* keysTerminalWith(true)
      const asking = yield* Effect.fork(terminal.ask("[Tool: bash]\n", "Approve? "))
      yield* waitFor("Approve? ")
      input.write("y\r")
      expect(yield* Fiber.join(asking)).toEqual(Option.some({ text: "y", pasted: false }))
    }), { timeout: 20_000 })
})

describe("KeyReader's shell over its core (ReaderState)", () => {
  /** A key reader over streams, with what it wrote and the stops it requested. */
  const reader = (guardMs: number) =>
    Effect.gen(function*() {
      const { keys, input, screen, stops } = yield* streamKeys(guardMs)
      const waitFor = (done: () => boolean) =>
        Effect.gen(function*() {
          while (!done()) yield* Effect.sleep("10 millis")
        })
      return { keys, input, screen, stops, waitFor }
    })

  it.scopedLive("a stop key gives the terminal back and requests the stop before anything else in its chunk is read; nothing after it is read", () =>
    Effect.gen(function*() {
      const { keys, input, screen, stops, waitFor } = yield* reader(50)
      const reading = yield* Effect.fork(keys.readLine("You> ", []))
      yield* waitFor(() => screen().includes("You> "))
      input.write("ab\u0003cd\r")
      yield* waitFor(() => stops.length > 0)
      expect(stops).toEqual(["interrupt"])
      // Bracketed paste turned off, and the line never took the keys around the stop.
      expect(screen()).toContain("\u001b[?2004l")
      expect(screen()).not.toMatch(/ab|cd/)
      input.write("\u001c y\r")
      yield* Effect.sleep("100 millis")
      expect(stops).toEqual(["interrupt"])
      expect(Option.isNone(yield* Fiber.poll(reading))).toBe(true)
      yield* Fiber.interrupt(reading)
    }))

  it.scopedLive("input that ends while a question waits for its screen to be seen: the guard still runs to its end, and the question ends unanswered", () =>
    Effect.gen(function*() {
      const { keys, input, screen } = yield* reader(50)
      input.write("\u001b[1;1R")
      yield* Effect.sleep("50 millis")
      const asking = yield* Effect.fork(keys.ask("Approve? "))
      yield* Effect.sleep("50 millis")
      input.write("y\r")
      input.end()
      expect(yield* Fiber.join(asking)).toEqual(Option.none())
      expect(screen()).toContain("(ignored 1 line(s) typed before this question)\nApprove? ")
    }))
})
