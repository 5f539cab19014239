/**
 * Red-team attacks on the request's repeat reading what the terminal sent first
 * (`KeyReader`, `Question.onRepeat`: `Sighting.REPEAT_MS` after a request with
 * no answer read, the terminal is drained through the ordinary read path, and
 * only a question still waiting for its sighting asks again).
 *
 * The promise attacked (README, docs/usage.md "The screen must have reached
 * your display", docs/safety.md): only `y` or `yes` typed at the prompt
 * approves; nothing typed before the prompt was on the screen, and nothing the
 * terminal did not send as the answer to Mino's own request, can answer; a
 * forged cursor report denies the question.
 *
 * The bytes a hostile terminal or person sends are held in the input stream
 * (paused: the stream hands them over only when read) until the repeat is due,
 * as when Mino was stopped or busy with them already in the terminal's queue;
 * the drain inside the timer callback is then the first thing to read them.
 * Every read's listener is watched for nesting (an `onData` running inside
 * another) and every byte for being handed over exactly once.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import type * as KeyReader from "../../src/terminal/input/KeyReader.js"
import * as Sighting from "../../src/terminal/input/Sighting.js"
import { streamKeys } from "../support/StreamKeys.js"

const PROMPT = "Approve? "
const PASTE_OFF = "\u001b[?2004l"
const START = "\u001b[200~"
const END = "\u001b[201~"

/** The columns of the question's requests written so far, in order. */
const requested = (screen: string): Array<number> => [...screen.matchAll(/\u001b\[(\d+)G\u001b\[6n\r/g)].map((m) => Number(m[1]))

const report = (column: number): string => `\u001b[24;${column}R`

/**
 * A key reader over streams (`streamKeys`),
 * with what it wrote, the stops it requested, and a watch on its reads: the
 * deepest nesting of `data` listeners seen, and the bytes handed over.
 */
const reader = (guardMs: number) =>
  Effect.gen(function*() {
    const { keys, input, screen, stops } = yield* streamKeys(guardMs)
    // Around Mino's own listener: one before it, one after. A read inside a read would be seen at depth 2.
    const watch = { depth: 0, deepest: 0, bytes: 0 }
    input.prependListener("data", (chunk: Buffer) => {
      watch.depth++
      watch.deepest = Math.max(watch.deepest, watch.depth)
      watch.bytes += chunk.length
    })
    input.on("data", () => void watch.depth--)
    let sent = 0
    const send = (text: string) => {
      sent += Buffer.byteLength(text)
      input.write(text)
    }
    const waitFor = (done: () => boolean, what: string, ms = 15_000) =>
      Effect.gen(function*() {
        const until = performance.now() + ms
        while (!done()) {
          if (performance.now() > until) return yield* Effect.die(new Error(`waited ${ms} ms for ${what}; screen: ${JSON.stringify(screen())}`))
          yield* Effect.sleep("10 millis")
        }
      })
    // The start's own request (it matches any report), answered: this terminal answers.
    send("\u001b[1;1R")
    yield* waitFor(() => input.readableLength === 0 && watch.bytes === sent, "the start's answer read")
    return { keys, input, screen, stops, watch, send, sent: () => sent, waitFor }
  })

type Reader = Effect.Effect.Success<ReturnType<typeof reader>>

/** Asks, and returns once the question's first request is written. */
const askHeld = (r: Reader) =>
  Effect.gen(function*() {
    const before = requested(r.screen()).length
    const asking = yield* Effect.fork(r.keys.ask(PROMPT))
    yield* r.waitFor(() => requested(r.screen()).length > before, "the question's request")
    return asking
  })

/** Held until the repeat's drain reads it: pause, write, and wait for the stream to be read empty. */
const holdUntilRepeat = (r: Reader, bytes: string) =>
  Effect.gen(function*() {
    r.input.pause()
    r.send(bytes)
    // Nothing but the repeat's drain reads a paused stream; with nothing held, the repeat is known by its request.
    const asked = requested(r.screen()).length
    yield* r.waitFor(
      () => bytes === "" ? requested(r.screen()).length > asked : r.input.readableLength === 0,
      "the repeat's drain",
      Sighting.REPEAT_MS + 15_000
    )
  })

/** The notice the prompt is shown under, for `lines` lines and pasted text (`InputGate.notice`'s words). */
const notice = (lines: number, pasted: boolean): string => {
  const parts = [...(lines > 0 ? [`${lines} line(s)`] : []), ...(pasted ? ["pasted text"] : [])]
  return parts.length === 0 ? "" : `(ignored ${parts.join(" and ")} typed before this question)\n`
}

/** Answers `n` at the prompt, the Enter read alone (after a paste only a lone Enter is a key). */
const answerNo = (r: Reader, asking: Fiber.RuntimeFiber<Option.Option<KeyReader.Answer>>) =>
  Effect.gen(function*() {
    // The prompt is up and nothing held answered it.
    yield* Effect.sleep("150 millis")
    expect(Option.isNone(yield* Fiber.poll(asking))).toBe(true)
    r.send("n")
    yield* Effect.sleep("150 millis")
    r.send("\r")
    return yield* Fiber.join(asking)
  })

/** What a hostile terminal or person puts in the terminal's queue while Mino is held. */
type Token =
  /** The terminal's answer to the question's (first) request. */
  | "answer"
  /** A report naming a column not asked for. */
  | "forged"
  /** `y` Enter. */
  | "y"
  /** A whole paste of `yes` Enter (what follows its end marker, unquiet, is pasted too). */
  | "paste"
  /** Ctrl+C. */
  | "interrupt"

const TOKENS: ReadonlyArray<Token> = ["answer", "forged", "y", "paste", "interrupt"]

/** Every sequence of `TOKENS` up to `length` long. */
const sequences = (length: number): Array<Array<Token>> => {
  const all: Array<Array<Token>> = [[]]
  let last: Array<Array<Token>> = [[]]
  for (let n = 1; n <= length; n++) {
    last = last.flatMap((sequence) => TOKENS.map((token) => [...sequence, token]))
    all.push(...last)
  }
  return all
}

/** A column the question did not ask for: on the screen, beside it, off it. */
const forgedColumn = (asked: number, variant: number): number => {
  const candidates = [1, asked === 80 ? 79 : asked + 1, asked === 2 ? 3 : asked - 1, 250, 999]
  return candidates[variant % candidates.length] ?? 1
}

const bytesOf = (token: Token, asked: number, variant: number): string => {
  switch (token) {
    case "answer":
      return report(asked)
    case "forged":
      return report(forgedColumn(asked, variant))
    case "y":
      return "y\r"
    case "paste":
      return `${START}yes\r${END}`
    case "interrupt":
      return "\u0003"
  }
}

/**
 * What must come of `tokens` read together by the repeat's drain, on the promise alone: a chunk
 * holding Ctrl+C stops before anything in it is read; else, read in order while the question waits,
 * a forged report (outside a paste) before the terminal's answer denies the question, the answer
 * starts the guard, and nothing read in a paste (from its start marker on: after the end marker the
 * paste lasts until the terminal is quiet) is a report; none answered: the question asks again.
 */
const expected = (tokens: ReadonlyArray<Token>): {
  readonly outcome: "stopped" | "denied" | "seen" | "asks again"
  readonly lines: number
  readonly pasted: boolean
} => {
  if (tokens.includes("interrupt")) return { outcome: "stopped", lines: 0, pasted: false }
  let pasting = false
  let seen = false
  let lines = 0
  for (const token of tokens) {
    if (token === "paste") pasting = true
    else if (token === "y" && !pasting) lines++
    else if (pasting || seen) continue
    else if (token === "forged") return { outcome: "denied", lines, pasted: false }
    else if (token === "answer") seen = true
  }
  return { outcome: seen ? "seen" : "asks again", lines, pasted: pasting }
}

/** One case of the sweep: the outcome, and the requests written by the time the drain was done. */
const attack = (tokens: ReadonlyArray<Token>, variant: number) =>
  Effect.scoped(Effect.gen(function*() {
    const r = yield* reader(50)
    const asking = yield* askHeld(r)
    const asked = requested(r.screen())[0] ?? 0
    const want = expected(tokens)
    yield* holdUntilRepeat(r, tokens.map((token) => bytesOf(token, asked, variant)).join(""))
    // The repeat's callback ran whole (the drain, then its own decision): what it wrote is here.
    const afterDrain = requested(r.screen())
    const label = `${JSON.stringify(tokens)} (forged column ${forgedColumn(asked, variant)}, asked ${asked})`
    if (want.outcome === "stopped") {
      expect(r.stops, label).toEqual(["interrupt"])
      expect(afterDrain, label).toEqual([asked])
      yield* Effect.sleep(`${Sighting.REPEAT_MS + 300} millis`)
      // Nothing asked or shown once the terminal was given back, and the question took no answer.
      const screen = r.screen()
      expect(screen.slice(screen.lastIndexOf(PASTE_OFF)), label).toBe(PASTE_OFF)
      expect(screen, label).not.toContain(PROMPT)
      expect(Option.isNone(yield* Fiber.poll(asking)), label).toBe(true)
      yield* Fiber.interrupt(asking)
      expect(r.watch.deepest, label).toBe(1)
      expect(r.watch.bytes, label).toBe(r.sent())
      return "stopped"
    }
    r.input.resume()
    if (want.outcome === "denied") {
      expect(yield* Fiber.join(asking), label).toEqual(Option.some({ text: "", pasted: false, forgedReport: true }))
      expect(afterDrain, label).toEqual([asked])
    } else {
      // Seen: nothing asked again. Not yet: asked once more, with a column not asked before.
      expect(afterDrain.length, label).toBe(want.outcome === "seen" ? 1 : 2)
      if (want.outcome === "asks again") {
        expect(afterDrain[1], label).not.toBe(asked)
        // A paste's end is known once the terminal was quiet; then the terminal answers the request made
        // again (and, should a loaded machine have read it inside the paste still, the next one).
        yield* Effect.sleep("300 millis")
        for (let tries = 0; !r.screen().includes(PROMPT); tries++) {
          expect(tries, label).toBeLessThan(10)
          r.send(report(requested(r.screen()).at(-1) ?? 0))
          yield* Effect.sleep(`${Sighting.REPEAT_MS + 500} millis`)
        }
      }
      yield* r.waitFor(() => r.screen().includes(PROMPT), "the prompt")
      expect(r.screen(), label).toContain(`${notice(want.lines, want.pasted)}${PROMPT}`)
      expect(yield* answerNo(r, asking), label).toEqual(Option.some({ text: "n", pasted: false }))
    }
    // Once the question is over, no timer of it is left to ask again.
    const over = requested(r.screen()).length
    yield* Effect.sleep(`${Sighting.REPEAT_MS + 300} millis`)
    expect(requested(r.screen()).length, label).toBe(over)
    // No read inside a read, and every byte handed over once.
    expect(r.watch.deepest, label).toBe(1)
    expect(r.watch.bytes, label).toBe(r.sent())
    return want.outcome
  }))

describe("attack: the request's repeat reads the terminal first", () => {
  it.scopedLive("whatever the held input, the repeat's drain neither lets it answer nor asks again for a screen seen: every sequence of up to 3 of answer, forged report, y Enter, paste, Ctrl+C", () =>
    Effect.gen(function*() {
      const cases = sequences(3)
      // Each reader listens for the process's exit and signals: 16 at once are more than Node's warning limit.
      yield* Effect.acquireRelease(
        Effect.sync(() => {
          const limit = process.getMaxListeners()
          process.setMaxListeners(limit + 16)
          return limit
        }),
        (limit) => Effect.sync(() => process.setMaxListeners(limit))
      )
      const outcomes = yield* Effect.forEach(cases, (tokens, i) => attack(tokens, i), { concurrency: 52 })
      const tally = new Map<string, number>()
      for (const outcome of outcomes) tally.set(outcome, (tally.get(outcome) ?? 0) + 1)
      console.log(`repeat drain sweep: ${cases.length} held sequences: ${[...tally].map(([k, v]) => `${v} ${k}`).join(", ")}`)
      expect(cases.length).toBe(1 + 5 + 25 + 125)
      // Every outcome was reached.
      expect([...tally.keys()].sort()).toEqual(["asks again", "denied", "seen", "stopped"])
    }), { timeout: 300_000 })

  it.scopedLive("continued (SIGCONT) while the answer read by the repeat's drain runs the guard: the question is asked anew, its old timers are gone, and what the drain read is counted, never an answer", () =>
    Effect.gen(function*() {
      const r = yield* reader(2_000)
      const asking = yield* askHeld(r)
      const asked = requested(r.screen())[0] ?? 0
      yield* holdUntilRepeat(r, `y\r${report(asked)}yes\r`)
      r.input.resume()
      expect(requested(r.screen())).toEqual([asked])
      // The guard (2 s) is running on the drain's sighting: the continue comes now.
      process.emit("SIGCONT")
      expect(yield* Fiber.join(asking)).toEqual(Option.some({ text: "", pasted: false, continued: true }))
      // The old question's guard and repeat timers are gone: nothing is asked or shown.
      const before = r.screen()
      yield* Effect.sleep(`${Sighting.REPEAT_MS + 2_300} millis`)
      expect(r.screen()).toBe(before)
      // Asked anew: what the old question ignored is in the notice, and only `n` at the new prompt answers.
      const again = yield* askHeld(r)
      const column = requested(r.screen()).at(-1) ?? 0
      expect(column).not.toBe(asked)
      r.send(report(column))
      yield* r.waitFor(() => r.screen().includes(PROMPT), "the prompt asked anew", 20_000)
      expect(r.screen()).toContain(`${notice(2, false)}${PROMPT}`)
      expect(yield* answerNo(r, again)).toEqual(Option.some({ text: "n", pasted: false }))
      expect(r.watch.deepest).toBe(1)
      expect(r.watch.bytes).toBe(r.sent())
    }), { timeout: 60_000 })

  it.scopedLive("continued (SIGCONT) before the repeat is due, the answer and a forged report held: no drain and no request come of the old question's timer; read before the question asked anew, they answer and deny nothing of it", () =>
    Effect.gen(function*() {
      const r = yield* reader(50)
      const asking = yield* askHeld(r)
      const asked = requested(r.screen())[0] ?? 0
      r.input.pause()
      const held = `${report(asked)}y\r${report(forgedColumn(asked, 1))}`
      r.send(held)
      process.emit("SIGCONT")
      expect(yield* Fiber.join(asking)).toEqual(Option.some({ text: "", pasted: false, continued: true }))
      yield* Effect.sleep(`${Sighting.REPEAT_MS + 300} millis`)
      // The old repeat never ran: the held bytes are still unread, and nothing was asked again.
      expect(r.input.readableLength).toBe(Buffer.byteLength(held))
      expect(requested(r.screen())).toEqual([asked])
      // Asked anew: its start reads them (before it waits), so they are no answer to it and deny nothing.
      const again = yield* askHeld(r)
      expect(r.input.readableLength).toBe(0)
      r.input.resume()
      const column = requested(r.screen()).at(-1) ?? 0
      expect(requested(r.screen())).toHaveLength(2)
      yield* Effect.sleep("200 millis")
      expect(Option.isNone(yield* Fiber.poll(again))).toBe(true)
      expect(r.screen()).not.toContain(PROMPT)
      r.send(report(column))
      yield* r.waitFor(() => r.screen().includes(PROMPT), "the prompt asked anew")
      expect(r.screen()).toContain(`${notice(1, false)}${PROMPT}`)
      expect(yield* answerNo(r, again)).toEqual(Option.some({ text: "n", pasted: false }))
    }), { timeout: 60_000 })

  it.scopedLive("a late answer to an earlier question's request, read by the repeat's drain, is no sighting of the question waiting: it asks again, and only its own answer shows the prompt", () =>
    Effect.gen(function*() {
      const r = yield* reader(50)
      // The first question is denied by a forged report; its request is still due.
      const first = yield* askHeld(r)
      const stale = requested(r.screen())[0] ?? 0
      r.send(report(forgedColumn(stale, 0)))
      expect(yield* Fiber.join(first)).toEqual(Option.some({ text: "", pasted: false, forgedReport: true }))
      const second = yield* askHeld(r)
      const asked = requested(r.screen()).at(-1) ?? 0
      expect(asked).not.toBe(stale)
      // The terminal's answer to the first question's request, and y Enter, held until the repeat is due.
      yield* holdUntilRepeat(r, `${report(stale)}y\r`)
      r.input.resume()
      const now = requested(r.screen())
      expect(now).toHaveLength(3)
      expect(now[2]).not.toBe(stale)
      expect(now[2]).not.toBe(asked)
      yield* Effect.sleep("200 millis")
      expect(r.screen()).not.toContain(PROMPT)
      expect(Option.isNone(yield* Fiber.poll(second))).toBe(true)
      // The terminal answers both of the second question's requests, in order: one sighting.
      r.send(`${report(asked)}${report(now[2] ?? 0)}`)
      yield* r.waitFor(() => r.screen().includes(PROMPT), "the prompt")
      expect(r.screen()).toContain(`${notice(1, false)}${PROMPT}`)
      expect(yield* answerNo(r, second)).toEqual(Option.some({ text: "n", pasted: false }))
      const over = requested(r.screen()).length
      yield* Effect.sleep(`${Sighting.REPEAT_MS + 300} millis`)
      expect(requested(r.screen())).toHaveLength(over)
      expect(r.watch.deepest).toBe(1)
      expect(r.watch.bytes).toBe(r.sent())
    }), { timeout: 60_000 })

  it.scopedLive("input that ends behind held keys: the question ends unanswered, and no request is made once the end is read", () =>
    Effect.gen(function*() {
      const r = yield* reader(50)
      let endedAt: number | undefined
      r.input.on("end", () => void (endedAt = r.screen().length))
      const asking = yield* askHeld(r)
      r.input.pause()
      r.send("y\ryes\r")
      r.input.end()
      expect(yield* Fiber.join(asking)).toEqual(Option.none())
      expect(endedAt).toBeDefined()
      // Once the end was read, nothing more is asked (a request written before it, by the repeat, asked while it was unknown).
      yield* Effect.sleep(`${Sighting.REPEAT_MS + 300} millis`)
      expect(requested(r.screen().slice(endedAt))).toEqual([])
      expect(r.screen()).toContain(`${notice(2, false)}${PROMPT}`)
    }), { timeout: 60_000 })

  it.scopedLive("the answer cut across the repeat's drain (its start read by the drain, the rest after the request made again) still counts as the terminal's answer, and nothing typed answers; answers to both requests count one sighting", () =>
    Effect.gen(function*() {
      let runs = 0
      // Cut at every byte of the report, and both requests answered in order after it.
      const answer = report(42)
      for (let cut = 1; cut < answer.length; cut++) {
        yield* Effect.scoped(Effect.gen(function*() {
          const r = yield* reader(50)
          const asking = yield* askHeld(r)
          const asked = requested(r.screen())[0] ?? 0
          const whole = report(asked)
          const at = Math.min(cut, whole.length - 1)
          yield* holdUntilRepeat(r, `y\r${whole.slice(0, at)}`)
          r.input.resume()
          // The rest follows at once: the drain's request made again is already out (a cut sequence is
          // no sighting), and the terminal's answer to it follows the first's.
          const again = requested(r.screen())
          r.send(`${whole.slice(at)}${again.length > 1 ? report(again[1] ?? 0) : ""}`)
          yield* r.waitFor(() => r.screen().includes(PROMPT) || requested(r.screen()).length > again.length, "the prompt or a request")
          if (!r.screen().includes(PROMPT)) {
            // The cut answer was taken apart by the decoder's quiet spell (a loaded machine): it was lost, and asked again.
            r.send(report(requested(r.screen()).at(-1) ?? 0))
            yield* r.waitFor(() => r.screen().includes(PROMPT), "the prompt")
          }
          expect(r.screen()).toContain(PROMPT)
          expect(yield* answerNo(r, asking)).toEqual(Option.some({ text: "n", pasted: false }))
          expect(r.watch.deepest).toBe(1)
          runs++
        }))
      }
      console.log(`report cut across the repeat's drain: ${runs} cuts`)
      expect(runs).toBe(answer.length - 1)
    }), { timeout: 120_000 })
})
