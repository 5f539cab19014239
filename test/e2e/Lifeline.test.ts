/**
 * Nothing outlives mino: whatever way the built `mino` ends or stalls while an
 * approved command runs, the command's whole process group is killed by the
 * lifeline watcher, which does not need mino to be alive or scheduled.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ResponsesServer from "../../src/model/ResponsesServer.js"
import {
  approvedGroup,
  bashCall,
  eventually,
  exitsWith,
  groupMembers,
  type Json,
  recordSummary,
  requestsReceived,
  type Sandbox,
  sandbox,
  scriptedServer,
  sessionRecords,
  startReady
} from "../support/MinoProcess.js"
import type * as Pty from "../support/Pty.js"

/** Asks for the command, approves it, and waits until its group has `members` live processes. */
const runApproved = (box: Sandbox, mino: Pty.Pty, members: number) =>
  Effect.gen(function*() {
    const group = yield* approvedGroup(box, mino, "Run it.", members)
    // Mino arms the lifeline in the same tick as the spawn, but the command can get this far while
    // Mino's thread waits for a core on a loaded machine: give it a moment (the README's known gap).
    yield* Effect.sleep("1 second")
    return group
  })

const gone = (group: number, withinMs: number) =>
  eventually(`process group ${group} to be gone`, withinMs, Effect.sync(() => groupMembers(group).length === 0 || undefined))

describe("the lifeline", () => {
  it.scopedLive("SIGKILL mino during `sleep 45 & sleep 45`: both sleeps are killed with it", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const server = yield* scriptedServer([
        ResponsesServer.toolCallResponse([bashCall("call_kill_1", "echo $$ > bash.pid; sleep 45 & sleep 45")])
      ])
      const { mino } = yield* startReady(box, server.url)
      const group = yield* runApproved(box, mino, 3)
      yield* mino.kill("SIGKILL")
      yield* exitsWith(mino, { code: null, signal: "SIGKILL" }, 10_000)
      // The watcher kills at end of file, at once; the deadline only detects a hang on a loaded machine.
      yield* gone(group, 2_000)
    }), 60_000)

  it.scopedLive("a command that kills mino (`kill -9 $PPID`) is killed with it and never reaches its next step", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const server = yield* scriptedServer([
        ResponsesServer.toolCallResponse([
          bashCall("call_ppid_1", "echo $$ > bash.pid; sleep 0.5; kill -9 $PPID; sleep 40; date > late.txt")
        ])
      ])
      const { mino } = yield* startReady(box, server.url)
      const group = yield* runApproved(box, mino, 2)
      yield* exitsWith(mino, { code: null, signal: "SIGKILL" }, 10_000)
      yield* gone(group, 2_000)
      expect(fs.existsSync(path.join(box.cwd, "late.txt"))).toBe(false)
    }), 60_000)

  it.scopedLive("SIGSTOP mino during a 34 s command: the group is killed at the 30 s deadline, and after SIGCONT the record says it timed out", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const server = yield* scriptedServer([
        ResponsesServer.toolCallResponse([bashCall("call_stop_1", "echo $$ > bash.pid; sleep 34; echo finished")]),
        ResponsesServer.textResponse("It timed out.")
      ])
      const { mino } = yield* startReady(box, server.url)
      const group = yield* runApproved(box, mino, 2)
      yield* mino.kill("SIGSTOP")
      yield* Effect.addFinalizer(() => mino.kill("SIGCONT"))
      // Mino cannot run while stopped: only the lifeline can end the group, at the deadline.
      yield* gone(group, 40_000)
      yield* mino.kill("SIGCONT")
      yield* mino.waitFor("Assistant> It timed out.", 15_000)
      yield* mino.waitFor("You> ")

      const records = sessionRecords(box)
      expect(recordSummary(records)).toEqual([
        "user_input",
        "model_response",
        "tool_start",
        "tool_result:failed",
        "model_response",
        "turn_end:completed"
      ])
      const result = records[3]?.["result"] as Json
      expect(result).toEqual({
        status: "failed",
        output: "[timed out after 30 s; process group killed]",
        timed_out: true,
        signal: "SIGKILL"
      })
      expect((yield* requestsReceived(server, 2)).length).toBe(2)
      yield* mino.write("\x04")
      yield* exitsWith(mino, { code: 0, signal: null })
    }), 90_000)
})
