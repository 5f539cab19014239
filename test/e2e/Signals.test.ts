/**
 * SIGTERM, SIGHUP (the terminal closing) and SIGQUIT (Ctrl+\) sent to the built
 * `mino` while an approved command runs are handled like Ctrl+C: the command's
 * whole group is killed, its result is saved with the output captured so far and
 * the signal named, the turn ends `cancelled` with a reason naming the signal,
 * and mino exits 128+N. SIGQUIT leaves no core file.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import {
  approvedGroup,
  BIN,
  bashCall,
  environment,
  eventually,
  exitsWith,
  groupMembers,
  type Json,
  recordSummary,
  sandbox,
  scriptedServer,
  sessionRecords
} from "../support/MinoProcess.js"
import * as Pty from "../support/Pty.js"

const COMMAND = "echo partial-output; echo $$ > bash.pid; sleep 45 & sleep 45"

const cases = [
  { signal: "SIGTERM", code: 143 },
  { signal: "SIGHUP", code: 129 },
  { signal: "SIGQUIT", code: 131 }
] as const

/**
 * The built mino, with core files allowed as a user may have them (a SIGQUIT it
 * did not handle would leave one), running COMMAND after approval: both sleeps
 * started. The group is killed when the test ends, whatever happened.
 */
const commandRunning = (callId: string, options: { readonly hangupable?: boolean } = {}) =>
  Effect.gen(function*() {
    const box = yield* sandbox
    const server = yield* scriptedServer([ResponsesServer.toolCallResponse([bashCall(callId, COMMAND)])])
    const mino = yield* Pty.spawn({
      argv: ["/bin/bash", "-c", `ulimit -c unlimited 2>/dev/null; exec "$0" "$1"`, process.execPath, BIN],
      env: environment(box, server.url),
      cwd: box.cwd,
      ...options
    })
    yield* mino.waitFor("You> ")
    const group = yield* approvedGroup(box, mino, "Wait for a while.", 3)
    return { box, server, mino, group }
  })

describe("a signal to mino while a command runs", () => {
  for (const { code, signal } of cases) {
    it.scopedLive(`${signal}: the group is killed, the output kept, the turn cancelled naming ${signal}, exit ${code}`, () =>
      Effect.gen(function*() {
        const { box, group, mino, server } = yield* commandRunning("call_sig_1")

        yield* mino.kill(signal)
        yield* exitsWith(mino, { code, signal: null }, 10_000)
        yield* eventually(`process group ${group} to be gone`, 2_000, Effect.sync(() => groupMembers(group).length === 0 || undefined))

        const records = sessionRecords(box)
        expect(recordSummary(records)).toEqual(["user_input", "model_response", "tool_start", "tool_result:unknown", "turn_end:cancelled"])
        const result = records[3]?.["result"] as Json
        expect(result).toMatchObject({ status: "unknown", cancelled: true, signal: "SIGKILL" })
        expect(result["output"]).toBe(
          `partial-output\n[Cancelled by ${signal} while it ran; process group killed. It may have had effects.]`
        )
        expect(records[4]?.["reason"]).toBe(`Cancelled by ${signal}`)
        // Cancelled while running: nothing went back to the model.
        expect((yield* server.requests).length).toBe(1)
        expect(fs.readdirSync(box.cwd).filter((name) => name.startsWith("core"))).toEqual([])
      }), 60_000)
  }

  // The hangup reaches Mino twice, as SIGHUP and as the terminal's EIO, in either order: both are the hangup.
  const HANGUPS = 4
  it.live(`closing the terminal (a real hangup, ${HANGUPS} times) kills the group, closes the turn cancelled by SIGHUP and exits 129`, () =>
    Effect.gen(function*() {
      for (let run = 0; run < HANGUPS; run++) {
        yield* Effect.scoped(Effect.gen(function*() {
          const { box, group, mino } = yield* commandRunning(`call_hup_${run}`, { hangupable: true })

          yield* mino.hangup
          // Not SIGABRT: Node must not die restoring the modes of a terminal that is gone.
          yield* exitsWith(mino, { code: 129, signal: null }, 10_000)
          yield* eventually(`process group ${group} to be gone`, 2_000, Effect.sync(() => groupMembers(group).length === 0 || undefined))
          const records = sessionRecords(box)
          expect(recordSummary(records)).toEqual(["user_input", "model_response", "tool_start", "tool_result:unknown", "turn_end:cancelled"])
          expect(records[4]?.["reason"]).toBe("Cancelled by SIGHUP")
          expect(fs.readdirSync(box.cwd).filter((name) => name.startsWith("core"))).toEqual([])
        }))
      }
      console.log(`a real hangup: ${HANGUPS} runs, each closed the turn "Cancelled by SIGHUP"`)
    }), 180_000)

  it.scopedLive("SIGTERM at the prompt exits 143 and leaves the conversation as it was", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const server = yield* scriptedServer([])
      const mino = yield* Pty.spawn({ argv: [process.execPath, BIN], env: environment(box, server.url), cwd: box.cwd })
      yield* mino.waitFor("You> ")
      yield* mino.kill("SIGTERM")
      yield* exitsWith(mino, { code: 143, signal: null }, 10_000)
      // Nothing was asked: no conversation file was made.
      expect(fs.readdirSync(path.join(box.home, ".mino", "sessions")).filter((name) => name.endsWith(".jsonl"))).toEqual([])
    }), 60_000)
})
