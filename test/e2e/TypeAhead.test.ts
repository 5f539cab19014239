/**
 * Type-ahead can never approve, whatever the timing: the built `mino` in a real
 * pseudo-terminal, sent a reply whose multi-megabyte reasoning item keeps it
 * busy (parsing and saving) after its last byte, with `y` Enter typed at tens
 * of offsets from that last byte to past the busy period, and with Mino
 * SIGSTOPped while the reply arrives and the keys typed while it is stopped.
 * In no run does the command run.
 *
 * Each answer is typed while Mino is held for an instant (SIGSTOP, the keys
 * typed and in the terminal's input queue, SIGCONT), so each run knows exactly
 * what was on the screen when its keys were queued: everything Mino wrote
 * before the stop is relayed first. A run whose prompt was already up types
 * nothing (that answer would be a person's, and may approve); every other run
 * queues `y` Enter before the prompt existed, and must end denied, with the
 * screen saying the line was ignored.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ResponsesServer from "../../src/model/ResponsesServer.js"
import { GUARD_MS } from "../../src/terminal/Terminal.js"
import type * as Pty from "../support/Pty.js"
import { bashCall, exitsWith, recordSummary, requestsReceived, sandbox, scriptedServer, sessionRecords, startReady } from "../support/MinoProcess.js"

const PROMPT = "Approve this operation? [y/N] "
const IGNORED = "(ignored 1 line(s) typed before this question)\n"
/** The reasoning item's size: enough to keep Mino busy for a while after the reply's last byte. */
const REASONING_BYTES = 2 * 1024 * 1024

/**
 * When the keys are queued: Mino stopped before the reply's last event is sent (`stopped`); some
 * milliseconds after that last byte (into the busy period); some milliseconds after the approval
 * screen was seen (into the guard, and past it).
 */
type Offset = { readonly from: "stopped" } | { readonly from: "last byte" | "screen"; readonly ms: number }
const OFFSETS: ReadonlyArray<Offset> = [
  ...Array.from({ length: 4 }, (): Offset => ({ from: "stopped" })),
  ...Array.from({ length: 12 }, (_, i): Offset => ({ from: "last byte", ms: i * 100 })),
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
      const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
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
    const { mino } = yield* startReady(box, server.url)
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
    const approval = yield* mino.waitFor(PROMPT, 60_000)
    if (kind !== "prompt already up") {
      expect({ offset: label(offset), kind, ignored: approval.endsWith(IGNORED + PROMPT) }).toEqual({ offset: label(offset), kind, ignored: true })
    }
    // Then the person answers: Enter alone, as someone who did not mean `y`.
    yield* mino.write("\r")
    yield* mino.waitFor("Assistant> Not run.", 60_000)
    yield* mino.write("\x04")
    yield* exitsWith(mino, { code: 0, signal: null }, 30_000)
    const ran = fs.existsSync(path.join(box.cwd, "approved-marker"))
    expect({ offset: label(offset), kind, ran }).toEqual({ offset: label(offset), kind, ran: false })
    expect(recordSummary(sessionRecords(box))).toEqual(["user_input", "model_response", "tool_result:denied", "model_response", "turn_end:completed"])
    return { offset, kind }
  }))

describe("type-ahead never approves", () => {
  it.live(`y Enter queued at ${OFFSETS.length} offsets around a busy reply (guard ${GUARD_MS} ms): the command never runs`, () =>
    Effect.gen(function*() {
      const results = yield* Effect.forEach(OFFSETS, run, { concurrency: CONCURRENCY })
      const counts = new Map<Class, Array<string>>()
      for (const { offset, kind } of results) counts.set(kind, [...(counts.get(kind) ?? []), label(offset)])
      console.log(
        `type-ahead sweep: guard ${GUARD_MS} ms, reasoning item ${REASONING_BYTES / 1024 / 1024} MiB, ${results.length} runs, ${CONCURRENCY} at a time\n` +
          [...counts.entries()].map(([kind, offsets]) => `  ${kind}: ${offsets.length} (when, ms: ${offsets.join(", ")})`).join("\n")
      )
      expect(results).toHaveLength(OFFSETS.length)
    }), 240_000)
})
