/**
 * Ctrl+C while an approved command runs: mino exits at once, the command's whole
 * process group is killed, and the turn is saved as cancelled, the result keeping
 * the output captured so far.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import {
  approvedGroup,
  bashCall,
  eventually,
  exitsWith,
  groupMembers,
  recordSummary,
  sandbox,
  scriptedServer,
  sessionRecords,
  startReady
} from "../support/MinoProcess.js"

describe("Ctrl+C during a running command", () => {
  it.scopedLive("exits 130, kills the command's process group, and ends the turn cancelled", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const server = yield* scriptedServer([
        ResponsesServer.toolCallResponse([bashCall("call_sleep_1", "echo started; echo $$ > bash.pid; sleep 30 & sleep 30")])
      ])
      const { mino } = yield* startReady(box, server.url)
      const group = yield* approvedGroup(box, mino, "Wait for a while.", 3)

      const pressed = Date.now()
      yield* mino.write("\x03")
      yield* exitsWith(mino, { code: 130, signal: null }, 5_000)
      expect(Date.now() - pressed).toBeLessThan(5_000)
      // SIGKILL is delivered at once, but a dying process leaves the table asynchronously.
      yield* eventually(`process group ${group} to be gone`, 2_000, Effect.sync(() => groupMembers(group).length === 0 || undefined))

      const records = sessionRecords(box)
      expect(recordSummary(records)).toEqual(["user_input", "model_response", "tool_start", "tool_result:unknown", "turn_end:cancelled"])
      expect(records[3]?.["call_id"]).toBe("call_sleep_1")
      expect(records[3]?.["result"]).toMatchObject({
        cancelled: true,
        output: "started\n[Cancelled by Ctrl+C while it ran; process group killed. It may have had effects.]"
      })
      expect(records[4]?.["reason"]).toBe("Cancelled by Ctrl+C")
      // Cancelled while running: nothing went back to the model.
      expect((yield* server.requests).length).toBe(1)
    }), 60_000)
})
