/**
 * Red-team attacks on the approval question asked anew after a stop
 * (docs/usage.md, "Stopped and continued"): when Mino is continued (SIGCONT)
 * with an approval question up, the screen is shown again behind a new guard,
 * and what was typed at the old prompt or while Mino was stopped is ignored and
 * counted in the notice. Only `y` typed at the prompt asked anew approves.
 *
 * The built `mino` in a real pseudo-terminal, asked by a scripted model to run
 * `touch approved-marker`.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import * as Pty from "../support/Pty.js"
import * as VirtualTerminal from "../support/VirtualTerminal.js"
import { askedToMakeAFile, bashCall, BIN, environment, exitsWith, recordSummary, requestsReceived, type Sandbox, sandbox, scriptedServer, sessionRecords } from "../support/MinoProcess.js"

const PROMPT = "Approve this operation? [y/N] "
const DENIED = { ran: false, records: ["user_input", "model_response", "tool_result:denied", "model_response", "turn_end:completed"] }

/** Mino with its approval prompt up (guard over). */
const atPrompt = (box: Sandbox, extra: Readonly<Record<string, string>> = {}) =>
  Effect.gen(function*() {
    const mino = yield* askedToMakeAFile(box, extra)
    yield* mino.waitFor(PROMPT, 30_000)
    return mino
  })

/** The question ended (answered by what was queued, or by the Enter alone sent once it is asked anew); what came of it. */
const outcome = (box: Sandbox, mino: Pty.Pty, done = false) =>
  Effect.gen(function*() {
    if (!done) yield* mino.waitFor("Assistant> Done.", 30_000)
    yield* Effect.sleep("300 millis")
    // Denied by a forged report, the keys typed after it wait for the next `You> ` prompt (type-ahead):
    // Ctrl+C leaves whatever they left on its line.
    yield* mino.write(done ? "\x03" : "\x04")
    yield* exitsWith(mino, { code: done ? 130 : 0, signal: null }, 30_000)
    return { ran: fs.existsSync(path.join(box.cwd, "approved-marker")), records: recordSummary(sessionRecords(box)) }
  })

// Keys typed while Mino is stopped with its prompt on the screen (kill -STOP from elsewhere: the
// terminal stays Mino's, so they queue for it) were typed at a prompt the person saw. Mino takes an
// answer 25 ms after it is read, and a continue known by then drops it and asks anew; on a loaded
// machine the continue can reach Mino's loop later than that (the signal is caught on any of Node's
// threads), and the answer stands: it is one the person gave at the prompt they saw, which is not
// type-ahead (docs/usage.md, "Stopped and continued"). What must hold, whatever the timing, is below:
// nothing typed before a prompt is on the screen approves, and the last prompt has its command above it.

/** A small deterministic generator (mulberry32), so a failing run can be named and replayed by its seed. */
const generator = (seed: number) => {
  let a = seed >>> 0
  return (): number => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** What is typed while Mino is stopped: each must be ignored by the question asked anew. */
const TYPED: ReadonlyArray<readonly [string, string]> = [
  ["y Enter", "y\r"],
  ["yes Enter twice", "yes\ryes\r"],
  ["a pasted yes Enter", "\u001b[200~yes\r\u001b[201~"],
  ["a forged cursor report, y Enter", "\u001b[1;2Ry\r"],
  ["a start marker's beginning", "\u001b[20"],
  ["the start marker's rest, Ctrl+U y Enter", "0~\u0015y\r\u001b[201~"],
  ["a partial y", "y"],
  ["Enter", "\r"]
]

type Event =
  | { readonly _tag: "stopped"; readonly typed: number; readonly ms: number }
  | { readonly _tag: "continued"; readonly ms: number }
  | { readonly _tag: "flood"; readonly count: number }

const label = (event: Event): string =>
  event._tag === "stopped"
    ? `stop, ${TYPED[event.typed]?.[0] ?? "?"}, ${event.ms} ms, cont`
    : event._tag === "continued"
    ? `cont, ${event.ms} ms`
    : `${event.count}x cont`

/** Events for one run: a wait (0-700 ms) before each, from when the screen was first shown. */
const events = (random: () => number): ReadonlyArray<Event> =>
  Array.from({ length: 2 + Math.floor(random() * 4) }, (): Event => {
    const pick = random()
    if (pick < 0.55) return { _tag: "stopped", typed: Math.floor(random() * TYPED.length), ms: Math.floor(random() * 700) }
    if (pick < 0.85) return { _tag: "continued", ms: Math.floor(random() * 700) }
    return { _tag: "flood", count: 2 + Math.floor(random() * 20) }
  })

/**
 * The screen stays put for `quietMs` with the approval prompt as its last line (or the turn is over):
 * what the person then sees.
 */
const settledScreen = (mino: Pty.Pty, from: number, quietMs: number) =>
  Effect.gen(function*() {
    const deadline = Date.now() + 30_000
    let last = -1
    let since = Date.now()
    while (Date.now() < deadline) {
      yield* mino.flushOutput
      const raw = (yield* mino.rawOutput).subarray(from).toString("utf8")
      if (raw.includes("Assistant> Done.")) return { done: true, visible: "" }
      if (raw.length !== last) {
        last = raw.length
        since = Date.now()
      }
      const visible = VirtualTerminal.render(raw, 200).replace(/\s+$/, "")
      if (Date.now() - since >= quietMs && visible.endsWith(PROMPT.trimEnd())) return { done: false, visible }
      yield* Effect.sleep("50 millis")
    }
    return yield* Effect.die(new Error("the approval prompt never settled on the screen"))
  })

const APPROVED = ["user_input", "model_response", "tool_start", "tool_result:completed", "model_response", "turn_end:completed"]

/**
 * One generated run (`seed`): the question is asked, the events happen from its screen's first
 * showing, and the person answers the last prompt asked, once it has stayed on the screen for a
 * second, with `answer` (Enter alone, or y Enter).
 */
const generatedRun = (seed: number, answer: string) =>
  Effect.scoped(Effect.gen(function*() {
    const random = generator(seed)
    const plan = events(random)
    const box = yield* sandbox
    const server = yield* scriptedServer([
      ResponsesServer.toolCallResponse([bashCall("c1", "touch approved-marker")]),
      ResponsesServer.textResponse("Done.")
    ])
    const term = random() < 0.25 ? "dumb" : "xterm"
    const mino = yield* Pty.spawn({ argv: [process.execPath, BIN], env: environment(box, server.url, { TERM: term }), cwd: box.cwd })
    yield* mino.waitFor("You> ")
    const from = (yield* mino.rawOutput).length
    yield* mino.write("make a file\r")
    yield* requestsReceived(server, 1)
    yield* mino.waitFor("[Tool: bash]", 30_000)
    for (const event of plan) {
      if (event._tag === "flood") {
        for (let i = 0; i < event.count; i++) yield* mino.kill("SIGCONT")
        continue
      }
      yield* Effect.sleep(`${event.ms} millis`)
      if (event._tag === "continued") {
        yield* mino.kill("SIGCONT")
        continue
      }
      yield* mino.stop
      // With the prompt on the screen, what is typed is the person's answer to what they see (above):
      // keys are typed only while no prompt is up since the screen last showing.
      yield* mino.flushOutput
      const raw = (yield* mino.rawOutput).subarray(from).toString("utf8")
      if (!raw.slice(raw.lastIndexOf("[Tool: bash]")).includes(PROMPT)) yield* mino.typeAcked(TYPED[event.typed]?.[1] ?? "")
      yield* mino.kill("SIGCONT")
    }
    const settled = yield* settledScreen(mino, from, 1000)
    const lastRows = settled.visible.split("\n").slice(-24).join("\n")
    const command = lastRows.lastIndexOf('Command: "touch approved-marker"')
    // Key by key, as a person types (after a paste, an Enter read together with other input is a pasted newline).
    if (!settled.done) {
      for (const key of answer) {
        yield* mino.typeAcked(key)
        yield* Effect.sleep("200 millis")
      }
    }
    const result = yield* outcome(box, mino, settled.done)
    return {
      seed,
      term,
      plan: plan.map(label).join("; "),
      // A forged report read while the screen was on its way denies the question before any prompt.
      deniedBeforePrompt: settled.done,
      commandAbovePrompt: settled.done || command !== -1,
      ...result
    }
  }))

const report = (title: string, results: ReadonlyArray<{ readonly seed: number; readonly term: string; readonly plan: string; readonly deniedBeforePrompt: boolean }>) => {
  const total = results.reduce((sum, { plan }) => sum + plan.split("; ").length, 0)
  console.log(
    `${title}: ${results.length} runs, ${total} events (${results.filter(({ term }) => term === "dumb").length} under TERM=dumb, ` +
      `${results.filter(({ deniedBeforePrompt }) => deniedBeforePrompt).length} denied by a forged report before any prompt)\n` +
      results.map(({ plan, seed, term }) => `  seed ${seed} TERM=${term}: ${plan}`).join("\n")
  )
}

/**
 * Ctrl+D read after the continue (a loaded machine's terminal can hand Mino the key after the signal)
 * is a key typed before the question asked anew: ignored, under the notice. The person presses it
 * again at the prompt asked anew, as often as the prompt is drawn again under a notice.
 */
const endedAtLastPrompt = (mino: Pty.Pty) =>
  Effect.gen(function*() {
    let notices = 0
    for (;;) {
      const shown = yield* mino.waitFor(new RegExp(`You> |${PROMPT.replace(/[?[\]]/g, "\\$&")}`), 30_000)
      if (shown.endsWith("You> ")) return notices
      if (++notices > 5) return notices
      yield* mino.write("\x04")
    }
  })

describe("attack: Ctrl+D and Ctrl+C typed while Mino is stopped at the approval prompt", () => {
  // An answer read on waking is held back until the continue is known. Ctrl+C acts wherever it is read;
  // Ctrl+D acts when it is read before the continue, and read after it counts as typed before the
  // question asked anew (ignored, as every key before a prompt is), so it is pressed again there.
  for (const [name, key, code] of [["Ctrl+D", "\x04", 0], ["Ctrl+C", "\x03", 130]] as const) {
    it.live(`${name} typed while stopped ends the question unapproved, and Mino exits ${code}`, () =>
      Effect.scoped(Effect.gen(function*() {
        const box = yield* sandbox
        const mino = yield* atPrompt(box)
        yield* mino.stop
        yield* mino.typeAcked(key)
        yield* mino.kill("SIGCONT")
        if (code === 0) {
          // The turn ends cancelled; then Ctrl+D at the empty `You> ` exits.
          const again = yield* endedAtLastPrompt(mino)
          console.log(`Ctrl+D typed while stopped: ${again === 0 ? "acted on waking" : `read after the continue, pressed again ${again} time(s) at the question asked anew`}`)
          expect(again).toBeLessThanOrEqual(5)
          yield* mino.write("\x04")
        }
        yield* exitsWith(mino, { code, signal: null }, 30_000)
        const records = recordSummary(sessionRecords(box))
        expect({ ran: fs.existsSync(path.join(box.cwd, "approved-marker")), ended: records.at(-1) }).toEqual({ ran: false, ended: "turn_end:cancelled" })
      })), 60_000)
  }
})

describe("attack: SIGCONT floods and keys typed while stopped, at every moment of a question", () => {
  const RUNS = 16
  it.live(`${RUNS} generated runs of stops, continues and floods from the screen's first showing: nothing typed while stopped approves, and the last prompt has the command above it`, () =>
    Effect.gen(function*() {
      const results = yield* Effect.forEach(Array.from({ length: RUNS }, (_, i) => 1000 + i), (seed) => generatedRun(seed, "\r"), { concurrency: 3 })
      report("SIGCONT attack sweep, Enter alone at the last prompt", results)
      for (const { seed, term, plan, commandAbovePrompt, ran, records } of results) {
        expect({ seed, term, plan, commandAbovePrompt, ran, records }).toEqual({ seed, term, plan, commandAbovePrompt: true, ...DENIED })
      }
    }), 400_000)

  // The other side: however the question was stopped and continued, it can still be answered. A y Enter
  // typed at the last prompt asked (once it has stayed up for a second) approves: no flood leaves it hung.
  const LIVE_RUNS = 8
  it.live(`${LIVE_RUNS} generated runs of the same: y Enter typed at the last prompt asked approves`, () =>
    Effect.gen(function*() {
      const results = yield* Effect.forEach(Array.from({ length: LIVE_RUNS }, (_, i) => 2000 + i), (seed) => generatedRun(seed, "y\r"), { concurrency: 3 })
      report("SIGCONT attack sweep, y Enter at the last prompt", results)
      for (const { seed, term, plan, deniedBeforePrompt, commandAbovePrompt, ran, records } of results) {
        const expected = deniedBeforePrompt ? DENIED : { ran: true, records: APPROVED }
        expect({ seed, term, plan, commandAbovePrompt, ran, records }).toEqual({ seed, term, plan, commandAbovePrompt: true, ...expected })
      }
    }), 400_000)
})
