/**
 * Nothing outlives mino: whatever way the built `mino` ends or stalls while an
 * approved command runs, the command's whole process group is killed by the
 * lifeline watcher, which does not need mino to be alive or scheduled.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { PROC } from "../support/Proc.js"
import * as Effect from "effect/Effect"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import {
  answerPrompt,
  approvedGroup,
  bashCall,
  eventually,
  exitsWith,
  groupMembers,
  type Json,
  killGroup,
  recordSummary,
  requestsReceived,
  type Sandbox,
  sandbox,
  scriptedServer,
  sessionRecords,
  startReady
} from "../support/MinoProcess.js"
import type * as Pty from "../support/Pty.js"

/** Mino's pid, as a command can find it: the command's parent is Mino. */
const MINO = "$PPID"

/** Kills Mino's lifeline watcher, as a command can: Mino's child that runs the watcher script (the command's own text names it too). */
const KILL_WATCHER = `for s in ${PROC}/[0-9]*/stat; do read -r p _ _ pp _ < $s 2>/dev/null || continue; [ "$pp" = "$PPID" ] && [ $p != $$ ] && grep -q armed= ${PROC}/$p/cmdline 2>/dev/null && kill -9 $p; done`

/** Asks for the command, approves it, and waits until its group has `members` live processes (armed: it runs only once armed). */
const runApproved = (box: Sandbox, mino: Pty.Pty, members: number) => approvedGroup(box, mino, "Run it.", members)

/** Live processes whose working directory is `dir`: the commands a Mino started there (Mino itself excluded). */
const processesIn = (dir: string, except: number): ReadonlyArray<number> =>
  fs.readdirSync(PROC).filter((name) => /^\d+$/.test(name) && Number(name) !== except).flatMap((name) => {
    try {
      if (fs.readlinkSync(`${PROC}/${name}/cwd`) !== dir) return []
      const stat = fs.readFileSync(`${PROC}/${name}/stat`, "utf8")
      return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z") ? [] : [Number(name)]
    } catch {
      return [] // it exited while we looked, or is not ours to read
    }
  })

/** Whether a process has ended (gone, or a zombie awaiting its parent). */
const ended = (pid: number): boolean => {
  try {
    const stat = fs.readFileSync(`${PROC}/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")
  } catch {
    return true
  }
}

/** The promise: whatever way Mino ends, its command's group is gone within a second of it. */
const BOUND_MS = 1_000

/**
 * One Mino whose approved command's first act is to kill it (`kill -9`): the time from
 * Mino's death to the moment no process of the command is left (0 when they were
 * gone before Mino's death was seen), polled every 5 ms, at most `boundMs` (so that a gap
 * over the bound is measured, not just failed).
 */
const killsItsMino = (boundMs: number) =>
  Effect.gen(function*() {
    const box = yield* sandbox
    const server = yield* scriptedServer([
      ResponsesServer.toolCallResponse([bashCall("call_ppid_first", `kill -9 ${MINO}; sleep 40 & sleep 40; date > late.txt`)])
    ])
    const { mino } = yield* startReady(box, server.url)
    yield* Effect.addFinalizer(() => Effect.sync(() => processesIn(box.cwd, mino.pid).forEach((pid) => killGroup(pid))))
    yield* mino.write("Run it.\r")
    yield* mino.waitFor("Approve this operation? [y/N] ")
    yield* answerPrompt(mino, "y")
    const died = yield* eventually("mino to die", 30_000, Effect.sync(() => ended(mino.pid) ? performance.now() : undefined))
    const gone = yield* eventually(`the command's processes in ${box.cwd} to be gone`, boundMs, Effect.sync(() =>
      processesIn(box.cwd, mino.pid).length === 0 ? performance.now() : undefined))
    yield* exitsWith(mino, { code: null, signal: "SIGKILL" }, 10_000)
    return { gapMs: Math.max(0, gone - died), late: fs.existsSync(path.join(box.cwd, "late.txt")) }
  }).pipe(Effect.scoped)

const gone = (group: number, withinMs: number) =>
  eventually(`process group ${group} to be gone`, withinMs, Effect.sync(() => groupMembers(group).length === 0 || undefined))

/** Programs that keep the CPU busy (`count`, one per core here) for as long as the scope is open. */
const busyLoops = (count: number) =>
  Effect.acquireRelease(
    Effect.sync(() => Array.from({ length: count }, () => spawn("/bin/sh", ["-c", "while :; do :; done"], { stdio: "ignore" }))),
    (loops) => Effect.sync(() => loops.forEach((loop) => loop.kill("SIGKILL")))
  )

describe("the lifeline", () => {
  it.live("killing its Mino as a command's first act, in 5 Minos at once, 3 times, beside 2 busy loops: every group is gone within 1 s of its Mino", () =>
    Effect.gen(function*() {
      const [parallel, rounds, busy] = [5, 3, 2]
      yield* busyLoops(busy)
      const gaps: Array<number> = []
      for (let round = 0; round < rounds; round++) {
        // An unarmed group would live 40 s; an armed one is killed the moment Mino's pipe closes.
        const outcomes = yield* Effect.all(Array.from({ length: parallel }, () => killsItsMino(10_000)), { concurrency: "unbounded" })
        for (const outcome of outcomes) {
          expect(outcome.late).toBe(false)
          gaps.push(outcome.gapMs)
        }
      }
      const sorted = [...gaps].sort((a, b) => a - b)
      console.log(
        `kill -9 <Mino>: ${gaps.length} runs (${parallel} Minos at once, ${rounds} rounds, ${busy} busy loops); group gone after Mino's death: ` +
          `median ${sorted[Math.floor(sorted.length / 2)]?.toFixed(1)} ms, max ${sorted.at(-1)?.toFixed(1)} ms (the bound: ${BOUND_MS} ms)`
      )
      expect(gaps).toHaveLength(parallel * rounds)
      expect(gaps.filter((gap) => gap >= BOUND_MS)).toEqual([])
    }).pipe(Effect.scoped), 300_000)


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

  it.scopedLive("a command that kills mino (`kill -9`) is killed with it and never reaches its next step", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const server = yield* scriptedServer([
        ResponsesServer.toolCallResponse([
          bashCall("call_ppid_1", `echo $$ > bash.pid; sleep 0.5; kill -9 ${MINO}; sleep 40; date > late.txt`)
        ])
      ])
      const { mino } = yield* startReady(box, server.url)
      const group = yield* runApproved(box, mino, 2)
      yield* exitsWith(mino, { code: null, signal: "SIGKILL" }, 10_000)
      yield* gone(group, 2_000)
      expect(fs.existsSync(path.join(box.cwd, "late.txt"))).toBe(false)
    }), 60_000)
})

describe("the lifeline: Mino stopped, its watcher killed", () => {
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

  it.scopedLive("a command that kills Mino's lifeline watcher is killed at once; Mino goes on, and the next command gets a new watcher", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const server = yield* scriptedServer([
        ResponsesServer.toolCallResponse([bashCall("call_watcher_1", `echo $$ > bash.pid; sleep 0.5; ${KILL_WATCHER}; sleep 40; date > late.txt`)]),
        ResponsesServer.textResponse("It was stopped."),
        ResponsesServer.toolCallResponse([bashCall("call_watcher_2", "echo next")]),
        ResponsesServer.textResponse("Next ran.")
      ])
      const { mino } = yield* startReady(box, server.url)
      const group = yield* runApproved(box, mino, 2)
      // Mino sees its watcher end and kills the group itself, well before the 30 s deadline.
      yield* gone(group, 5_000)
      yield* mino.waitFor("Assistant> It was stopped.", 15_000)
      yield* mino.waitFor("You> ")
      expect(fs.existsSync(path.join(box.cwd, "late.txt"))).toBe(false)
      const result = sessionRecords(box)[3]?.["result"] as Json
      expect(result).toMatchObject({ status: "failed", signal: "SIGKILL" })
      expect(result["output"]).toMatch(/Mino's lifeline watcher ended while it ran; process group killed\]$/)
      // The next command gets a new watcher.
      yield* mino.write("Once more.\r")
      yield* mino.waitFor("Approve this operation? [y/N] ")
      yield* answerPrompt(mino, "y")
      yield* mino.waitFor("Assistant> Next ran.", 15_000)
      yield* mino.write("\x04")
      yield* exitsWith(mino, { code: 0, signal: null })
    }), 60_000)
})
