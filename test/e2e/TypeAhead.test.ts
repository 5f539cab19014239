/**
 * Type-ahead can never approve, whatever the timing: the built `mino` in a real
 * pseudo-terminal, sent a reply whose multi-megabyte reasoning item keeps it
 * busy (parsing and saving) after its last byte, with `y` Enter typed at tens
 * of offsets from that last byte to past the busy period, and with Mino
 * SIGSTOPped while the reply arrives and the keys typed while it is stopped.
 * In no run does the command run. The test asserts its coverage: offsets from
 * 0 to past each run's busy period (measured from the driver's time stamps),
 * and answers inside the guard; runs are added when a loaded machine stretched
 * the busy period past the fixed offsets.
 *
 * Each answer is typed while Mino is held for an instant (SIGSTOP, the keys
 * typed and in the terminal's input queue, SIGCONT), so each run knows exactly
 * what was on the screen when its keys were queued: everything Mino wrote
 * before the stop is relayed first. A run whose prompt was already up types
 * nothing (that answer would be a person's, and may approve); every other run
 * queues `y` Enter before the prompt existed, and must end denied, with the
 * screen saying the line was ignored.
 *
 * The guard is not what makes this hold: a second test runs the shipped
 * `Terminal` (dist/lib) with no guard at all (`guardMs: 0`) behind a busy
 * stretch, `y` Enter queued at offsets all through it, and the drain alone
 * discards every one.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import { GUARD_MS } from "../../src/terminal/Terminal.js"
import * as Pty from "../support/Pty.js"
import {
  answerPrompt,
  bashCall,
  BIN,
  environment,
  exitsWith,
  recordSummary,
  requestsReceived,
  ROOT,
  sandbox,
  scriptedServer,
  sessionRecords
} from "../support/MinoProcess.js"
import { PROC } from "../support/Proc.js"

const PROMPT = "Approve this operation? [y/N] "
const IGNORED = "(ignored 1 line(s) typed before this question)\n"
/** The reasoning item's size: enough to keep Mino busy for a while after the reply's last byte. */
const REASONING_BYTES = 4 * 1024 * 1024

/**
 * When the keys are queued: Mino stopped before the reply's last event is sent (`stopped`); some
 * milliseconds after that last byte (into the busy period); some milliseconds after the approval
 * screen was seen (into the guard, and past it).
 */
type Offset = { readonly from: "stopped" } | { readonly from: "last byte" | "screen"; readonly ms: number }
const OFFSETS: ReadonlyArray<Offset> = [
  ...Array.from({ length: 4 }, (): Offset => ({ from: "stopped" })),
  ...Array.from({ length: 16 }, (_, i): Offset => ({ from: "last byte", ms: i * 100 })),
  ...Array.from({ length: 12 }, (_, i): Offset => ({ from: "screen", ms: i * 60 }))
]
const CONCURRENCY = 6

const label = (offset: Offset): string => (offset.from === "stopped" ? "stopped" : `${offset.from} +${offset.ms}`)

type Class = "stopped while the reply arrived" | "before the screen" | "screen up, prompt guarded" | "prompt already up"

/** Waits until the kernel reports `pid` stopped. */
const stopped = (pid: number) =>
  Effect.gen(function*() {
    const deadline = Date.now() + 10_000
    while (Date.now() < deadline) {
      const stat = fs.readFileSync(`${PROC}/${pid}/stat`, "utf8")
      if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("T")) return
      yield* Effect.sleep("1 millis")
    }
    return yield* Effect.die(new Error(`process ${pid} did not stop`))
  })

/** Holds Mino, looks at what it has shown, types `y` Enter unless the prompt is up, and lets it go. */
const typeWhileHeld = (mino: Pty.Pty, shownBefore: number) =>
  Effect.gen(function*() {
    yield* mino.kill("SIGSTOP")
    yield* stopped(mino.pid)
    yield* mino.flushOutput
    const screen = (yield* mino.screen).slice(shownBefore)
    const kind: Class = screen.includes(PROMPT) ? "prompt already up" : screen.includes("[Tool: bash]") ? "screen up, prompt guarded" : "before the screen"
    if (kind !== "prompt already up") yield* mino.typeAcked("y\r")
    yield* mino.kill("SIGCONT")
    return kind
  })

const run = (offset: Offset) =>
  Effect.scoped(Effect.gen(function*() {
    const box = yield* sandbox
    // Known to the server's script once Mino has started.
    const started: { mino?: Pty.Pty } = {}
    let lastByte = 0
    let kind: Class | undefined
    const reply = ResponsesServer.toolCallResponse([bashCall("c1", "touch approved-marker")], {
      reasoning: { encrypted_content: `gAAAA${"x".repeat(REASONING_BYTES)}` }
    })
    // Just before the last event (the completed response, holding the reasoning item once more).
    const beforeLast = Effect.gen(function*() {
      lastByte = Date.now()
      if (started.mino !== undefined && offset.from === "stopped") {
        yield* started.mino.kill("SIGSTOP")
        yield* stopped(started.mino.pid)
      }
    })
    const server = yield* scriptedServer([
      [...reply.slice(0, -1), { wait: beforeLast }, ...reply.slice(-1)],
      ResponsesServer.textResponse("Not run.")
    ])
    // The driver stamps when it read each piece of output: when the screen came, on the test's clock.
    const mino = yield* Pty.spawn({ argv: [process.execPath, BIN], env: environment(box, server.url), cwd: box.cwd, stamps: true })
    yield* mino.waitFor("You> ")
    started.mino = mino
    const shownBefore = (yield* mino.screen).length
    yield* mino.write("make a file\r")
    yield* requestsReceived(server, 1)
    while (lastByte === 0) yield* Effect.sleep("5 millis")
    if (offset.from === "stopped") {
      // The reply arrives while Mino is stopped; the keys are typed while it is stopped.
      yield* Effect.sleep("300 millis")
      yield* mino.typeAcked("y\r")
      yield* Effect.sleep("300 millis")
      yield* mino.kill("SIGCONT")
      kind = "stopped while the reply arrived"
    } else if (offset.from === "last byte") {
      yield* Effect.sleep(`${Math.max(0, lastByte + offset.ms - Date.now())} millis`)
      kind = yield* typeWhileHeld(mino, shownBefore)
    } else {
      yield* mino.waitFor("[Tool: bash]", 60_000)
      yield* Effect.sleep(`${offset.ms} millis`)
      kind = yield* typeWhileHeld(mino, shownBefore)
    }
    // Continued with its question up (the screen was shown when it was held), Mino shows the screen again
    // and asks anew: the answer below goes to the question asked anew, after its own guard.
    if (kind === "screen up, prompt guarded" || kind === "prompt already up") {
      for (let seen = offset.from === "screen" ? 1 : 0; seen < 2; seen++) yield* mino.waitFor("[Tool: bash]", 60_000)
    }
    yield* mino.waitFor(PROMPT, 60_000)
    // The busy period: from the reply's last byte to the approval screen's first byte on the terminal.
    const raw = yield* mino.rawOutput
    const screenAt = yield* mino.relayedAt(raw.indexOf("[Tool: bash]"))
    const busy = (screenAt ?? Infinity) - lastByte
    // Then the person answers: Enter alone, as someone who did not mean `y`.
    yield* answerPrompt(mino, "")
    yield* mino.waitFor("Assistant> Not run.", 60_000)
    if (kind !== "prompt already up") {
      // Keys that came while the prompt was being written get the notice under a prompt drawn again.
      const shown = (yield* mino.screen).slice(shownBefore)
      expect({ offset: label(offset), kind, ignored: shown.includes(IGNORED + PROMPT) }).toEqual({ offset: label(offset), kind, ignored: true })
    }
    yield* mino.write("\x04")
    yield* exitsWith(mino, { code: 0, signal: null }, 30_000)
    const ran = fs.existsSync(path.join(box.cwd, "approved-marker"))
    expect({ offset: label(offset), kind, ran }).toEqual({ offset: label(offset), kind, ran: false })
    expect(recordSummary(sessionRecords(box))).toEqual(["user_input", "model_response", "tool_result:denied", "model_response", "turn_end:completed"])
    return { offset, kind, busy }
  }))

describe("type-ahead never approves", () => {
  it.live(`y Enter queued at ${OFFSETS.length} offsets around a busy reply (guard ${GUARD_MS} ms): the command never runs`, () =>
    Effect.gen(function*() {
      const results = yield* Effect.forEach(OFFSETS, run, { concurrency: CONCURRENCY })
      // The sweep must cover what it claims: after the last byte, from 0 to past the busy period (some
      // keys queued while Mino was busy, some once its screen was up); after the screen, inside the
      // guard and past it. Six at a time on a loaded machine, the busy period can outlast the fixed
      // offsets, the test reach Mino only once its screen is up, or see a screen only once its guard
      // is over: runs are then added, one at a time, right at the last byte, at 1.3 times the longest
      // busy period seen, or right at the screen, until it does.
      const whileBusy = () => results.some(({ kind, offset }) => offset.from === "last byte" && kind === "before the screen")
      const pastBusy = () => results.some(({ busy, offset }) => offset.from === "last byte" && offset.ms > busy)
      const inGuard = () => results.some(({ kind, offset }) => offset.from === "screen" && kind === "screen up, prompt guarded")
      let added = 0
      for (; added < 6 && !(whileBusy() && pastBusy() && inGuard()); added++) {
        const longest = Math.max(...results.flatMap(({ busy, offset }) => (offset.from === "last byte" ? [busy] : [])))
        const next: Offset = !whileBusy()
          ? { from: "last byte", ms: 0 }
          : !pastBusy()
          ? { from: "last byte", ms: Math.ceil((longest * 1.3) / 100) * 100 }
          : { from: "screen", ms: 0 }
        results.push(yield* run(next))
      }
      const counts = new Map<Class, Array<string>>()
      for (const { offset, kind } of results) counts.set(kind, [...(counts.get(kind) ?? []), label(offset)])
      const afterLastByte = results.flatMap(({ busy, offset }) => (offset.from === "last byte" ? [{ ms: offset.ms, busy }] : []))
      const afterScreen = results.flatMap(({ offset }) => (offset.from === "screen" ? [offset.ms] : []))
      const busyTimes = afterLastByte.map(({ busy }) => busy).sort((a, b) => a - b)
      console.log(
        `type-ahead sweep: guard ${GUARD_MS} ms, reasoning item ${REASONING_BYTES / 1024 / 1024} MiB, ${results.length} runs ` +
          `(${OFFSETS.length} ${CONCURRENCY} at a time, ${added} added alone for coverage)\n` +
          [...counts.entries()].map(([kind, offsets]) => `  ${kind}: ${offsets.length} (when, ms: ${offsets.join(", ")})`).join("\n") +
          `\ncoverage: after the last byte ${Math.min(...afterLastByte.map(({ ms }) => ms))}–${Math.max(...afterLastByte.map(({ ms }) => ms))} ms ` +
          `against busy periods of ${busyTimes[0]?.toFixed(0)}–${busyTimes.at(-1)?.toFixed(0)} ms (median ${busyTimes[busyTimes.length >> 1]?.toFixed(0)}); ` +
          `after the screen ${Math.min(...afterScreen)}–${Math.max(...afterScreen)} ms against the ${GUARD_MS} ms guard`
      )
      expect(results.length).toBeGreaterThanOrEqual(OFFSETS.length)
      expect(OFFSETS.length).toBeGreaterThanOrEqual(20)
      expect(Math.min(...afterLastByte.map(({ ms }) => ms))).toBe(0)
      expect(whileBusy()).toBe(true)
      expect(pastBusy()).toBe(true)
      expect(inGuard()).toBe(true)
      expect(Math.max(...afterScreen)).toBeGreaterThan(GUARD_MS)
    }), 400_000)
})

/**
 * The shipped library's `Terminal` with no guard: rounds of a synchronous busy stretch (as saving a
 * large reply is), then an approval question; each answer is printed.
 */
const DRAIN_ONLY = (busyMs: number, rounds: number) => `
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Secrets } from ${JSON.stringify(path.join(ROOT, "dist", "lib", "security", "Secrets.js"))}
import { Terminal } from ${JSON.stringify(path.join(ROOT, "dist", "lib", "terminal", "Terminal.js"))}
const program = Effect.scoped(Effect.gen(function*() {
  const terminal = yield* Terminal.make({ input: process.stdin, output: process.stdout, interactive: true, keys: true, decorated: false, guardMs: 0 })
  for (let round = 0; round < ${rounds}; round++) {
    yield* terminal.write("busy " + round + "\\n")
    const until = Date.now() + ${busyMs}
    while (Date.now() < until) {} // keys typed now wait in the terminal's input queue
    const answer = yield* terminal.ask("[screen " + round + "]\\n", "Approve? ")
    yield* terminal.write("answer " + round + ": " + JSON.stringify(Option.getOrNull(answer)) + "\\n")
  }
}))
Effect.runPromise(Effect.provide(program, Secrets.layerNone)).then(() => process.exit(0))
`

describe("type-ahead is discarded by the drain alone", () => {
  it.live("with no guard, y Enter queued at 12 offsets through a busy stretch never answers", () =>
    Effect.scoped(Effect.gen(function*() {
      const busyMs = 600
      const offsets = Array.from({ length: 12 }, (_, i) => i * 50)
      const box = yield* sandbox
      const env = { HOME: box.home, PATH: "/usr/local/bin:/usr/bin:/bin", LANG: "C.UTF-8", TERM: "xterm" }
      // Run from the package's root, so the script finds `effect` as the library does.
      const argv = [process.execPath, "--input-type=module", "-e", DRAIN_ONLY(busyMs, offsets.length)]
      const fixture = yield* Pty.spawn({ argv, env, cwd: ROOT, stamps: true })
      const rounds: Array<{ readonly ms: number; readonly before: boolean; readonly ignored: boolean; readonly answer: string }> = []
      for (const [round, ms] of offsets.entries()) {
        yield* fixture.waitFor(`busy ${round}\n`, 30_000)
        const raw = yield* fixture.rawOutput
        const busyAt = (yield* fixture.relayedAt(raw.lastIndexOf(`busy ${round}`))) ?? Date.now()
        yield* Effect.sleep(`${Math.max(0, busyAt + ms - Date.now())} millis`)
        // Held while the keys are queued (SIGSTOP, then SIGCONT), so the test knows what was on the screen
        // when they reached the terminal: queued before the screen, or, when a loaded machine let the busy
        // stretch end first, not typed at all (a y typed at a prompt on the screen is a person's answer).
        yield* fixture.stop
        yield* fixture.flushOutput
        const before = !(yield* fixture.rawOutput).includes(`[screen ${round}]`)
        if (before) yield* fixture.typeAcked("y\r")
        yield* fixture.kill("SIGCONT")
        const asked = yield* fixture.waitFor("Approve? ", 30_000)
        // Then the person answers, as someone who did not mean `y`.
        yield* Effect.sleep("200 millis")
        yield* answerPrompt(fixture, "n", "Approve? ")
        const line = yield* fixture.waitFor(new RegExp(`answer ${round}: .*\n`), 30_000)
        const answer = line.slice(line.lastIndexOf(`answer ${round}: `) + `answer ${round}: `.length).trim()
        rounds.push({ ms, before, ignored: asked.includes("(ignored 1 line(s) typed before this question)"), answer })
      }
      yield* exitsWith(fixture, { code: 0, signal: null }, 30_000)
      const before = rounds.filter((round) => round.before)
      console.log(
        `no guard, drain only: a ${busyMs} ms busy stretch, y Enter queued ${offsets[0]}–${offsets.at(-1)} ms into it ` +
          `(${before.length} of ${rounds.length} before the screen); answers: ${rounds.map(({ answer }) => JSON.parse(answer)?.text).join(" ")}`
      )
      expect(before.length).toBeGreaterThanOrEqual(offsets.length / 2)
      // Every y queued before its screen existed is discarded, with the notice; the person's n answers.
      for (const { answer, ignored, ms } of before) {
        expect({ ms, answer, ignored }).toEqual({ ms, answer: "{\"text\":\"n\",\"pasted\":false}", ignored: true })
      }
      for (const { answer } of rounds) expect(answer).not.toContain("\"y\"")
    })), 120_000)
})
