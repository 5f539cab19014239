/**
 * `mino log`: the conversation as a person reads it, from the built binary.
 * Each turn with its time, question and status; each call with its command,
 * approval and result; everything escaped; `--json` the raw records;
 * `--unknown` only what a crash may have run; and it reads while a chat runs.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import type { SessionRecord } from "../../src/session/records/Records.js"
import { answerPrompt, bashCall, environment, exitsWith, runPlain, sandbox, type Sandbox, scriptedServer, startReady } from "../support/MinoProcess.js"

const ID = "20261203-074000-0123abcd"

const call = (callId: string, command: string) => ({
  type: "function_call",
  id: `fc_${callId}`,
  call_id: callId,
  name: "bash",
  arguments: JSON.stringify({ command })
})

const answer = (text: string) => ({
  type: "message",
  id: "msg_1",
  role: "assistant",
  status: "completed",
  content: [{ type: "output_text", text, annotations: [] }]
})

/** Records as Mino writes them: three turns covering every outcome a call can have. */
const SESSION: ReadonlyArray<SessionRecord> = [
  { type: "user_input", turn_id: "t1", time: "2026-12-03T07:40:00.000Z", text: "check the build" },
  {
    type: "model_response",
    turn_id: "t1",
    time: "2026-12-03T07:40:01.000Z",
    output: [call("c1", "echo ok"), call("c2", "rm -rf build"), call("c3", "make"), call("c4", "sleep 100"), call("c5", "printf '\u001b[2J\u202egotcha'")]
  },
  { type: "tool_start", turn_id: "t1", call_id: "c1", name: "bash" },
  { type: "tool_result", turn_id: "t1", call_id: "c1", name: "bash", result: { status: "completed", output: "ok\n", exit_code: 0 } },
  { type: "tool_result", turn_id: "t1", call_id: "c2", name: "bash", result: { status: "denied", output: "The user did not approve this call." } },
  { type: "tool_start", turn_id: "t1", call_id: "c3", name: "bash" },
  { type: "tool_result", turn_id: "t1", call_id: "c3", name: "bash", result: { status: "failed", output: "make: *** No rule\n", exit_code: 2 } },
  { type: "tool_start", turn_id: "t1", call_id: "c4", name: "bash" },
  {
    type: "tool_result",
    turn_id: "t1",
    call_id: "c4",
    name: "bash",
    result: { status: "failed", output: "Timed out after 30 s; the process group was killed.", signal: "SIGKILL", timed_out: true }
  },
  { type: "tool_start", turn_id: "t1", call_id: "c5", name: "bash" },
  { type: "tool_result", turn_id: "t1", call_id: "c5", name: "bash", result: { status: "completed", output: "\u001b[2J", exit_code: 0, truncated: true } },
  { type: "model_response", turn_id: "t1", output: [answer("The build fails in make.\nDetails follow.")] },
  { type: "turn_end", turn_id: "t1", time: "2026-12-03T07:40:09.000Z", status: "completed" },
  { type: "user_input", turn_id: "t2", time: "2026-12-03T07:41:00.000Z", text: "install it" },
  { type: "model_response", turn_id: "t2", output: [call("c6", "make install"), call("c7", "make test")] },
  { type: "tool_start", turn_id: "t2", call_id: "c6", name: "bash" },
  {
    type: "tool_result",
    turn_id: "t2",
    call_id: "c6",
    result: { status: "unknown", output: "Mino stopped while this command may have been running; its outcome is unknown." }
  },
  { type: "tool_result", turn_id: "t2", call_id: "c7", result: { status: "not_executed", output: "Mino stopped before this call was executed." } },
  { type: "turn_end", turn_id: "t2", time: "2026-12-03T07:45:00.000Z", status: "interrupted", reason: "Mino stopped before the turn ended" }
]

/** The header Mino writes first: this conversation started in `cwd`. */
const header = (cwd: string) => ({ type: "conversation", turn_id: "", cwd, time: "2026-12-03T07:39:59.000Z" })

/** A conversation started in the sandbox's working directory, holding `records`. */
const writeSession = (box: Sandbox, records: ReadonlyArray<unknown>, tail = "", id = ID, cwd = box.cwd) => {
  const dir = path.join(box.home, ".mino", "sessions")
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  const file = path.join(dir, `${id}.jsonl`)
  fs.writeFileSync(file, [header(cwd), ...records].map((record) => JSON.stringify(record) + "\n").join("") + tail, { mode: 0o600 })
  return file
}

const NO_SERVER = "http://127.0.0.1:9/v1"

describe("mino log", () => {
  it.scopedLive("shows each turn and each call: command, approval, result; everything escaped", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const file = writeSession(box, SESSION)
      const before = fs.readFileSync(file)
      const run = yield* runPlain(["log"], environment(box, NO_SERVER), box.cwd)
      expect(run.stderr).toBe("")
      expect(run.code).toBe(0)
      expect(run.stdout).toBe(
        `Conversation ${ID}, started in ${box.cwd}\nFile: ${file}\n\n` +
          "Turn 1 · 2026-12-03 07:40:00 UTC · completed\n" +
          "  You> check the build\n" +
          "  [bash \"echo ok\"] approved · completed, exit code 0\n" +
          "  [bash \"rm -rf build\"] denied\n" +
          "  [bash \"make\"] approved · failed, exit code 2\n" +
          "  [bash \"sleep 100\"] approved · failed, signal SIGKILL, timed out\n" +
          "  [bash \"printf '\\u001b[2J\\u202egotcha'\"] approved · completed, exit code 0, truncated\n" +
          "  Assistant> The build fails in make. …\n" +
          "\n" +
          "Turn 2 · 2026-12-03 07:41:00 UTC · interrupted: Mino stopped before the turn ended\n" +
          "  You> install it\n" +
          "  [bash \"make install\"] approved · unknown\n" +
          "  [bash \"make test\"] not run · Mino stopped before this call was executed.\n"
      )
      expect(run.stdout).not.toMatch(/[\u001b\u202e]/)
      // Read only: the file is as it was.
      expect(fs.readFileSync(file)).toEqual(before)
    }))

  it.scopedLive("--unknown lists only the calls whose outcome is unknown", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      writeSession(box, SESSION)
      const run = yield* runPlain(["log", "--unknown"], environment(box, NO_SERVER), box.cwd)
      expect(run.code).toBe(0)
      expect(run.stdout).toBe(
        "2026-12-03 07:41:00 UTC · turn 2 · [bash \"make install\"] · unknown: Mino stopped while this command may have been running; its outcome is unknown.\n"
      )
      writeSession(box, SESSION.slice(0, 13))
      const none = yield* runPlain(["log", "--unknown"], environment(box, NO_SERVER), box.cwd)
      expect(none.stdout).toBe("No tool call has an unknown outcome.\n")
    }))

  it.scopedLive("--json prints the raw records, one a line, terminal-safe and equal in value", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const other = { type: "header", turn_id: "-", version: 1 }
      writeSession(box, [other, ...SESSION], "{\"type\":\"user_input\",\"turn_")
      const run = yield* runPlain(["log", "--json"], environment(box, NO_SERVER), box.cwd)
      expect(run.code).toBe(0)
      const lines = run.stdout.trimEnd().split("\n")
      expect(lines.map((line) => JSON.parse(line))).toEqual([header(box.cwd), other, ...SESSION])
      expect(run.stdout).not.toMatch(/[\u001b\u202e]/)
      expect(run.stdout).toContain("\\u202e")
      // The torn last line is not shown; stderr says so.
      expect(run.stderr).toMatch(/^mino: 1 line\(s\) of .* could not be read and are not shown\.\n$/)
    }))

  it.scopedLive("an unknown conversation id, or bad options, is one line and exit 2", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      writeSession(box, SESSION)
      const missing = yield* runPlain(["log", "20990101-000000-deadbeef"], environment(box, NO_SERVER), box.cwd)
      expect(missing.code).toBe(2)
      expect(missing.stderr).toMatch(/^mino: no conversation "20990101-000000-deadbeef" in .*\n$/)
      const both = yield* runPlain(["log", "--json", "--unknown"], environment(box, NO_SERVER), box.cwd)
      expect(both.code).toBe(2)
      const model = yield* runPlain(["log", "-m", "x"], environment(box, NO_SERVER), box.cwd)
      expect(model.stderr).toBe("mino: -m does not apply to `mino log`; `mino --help` lists the options.\n")
      const byId = yield* runPlain(["log", ID], environment(box, NO_SERVER), box.cwd)
      expect(byId.code).toBe(0)
      expect(byId.stdout).toContain("Turn 2 ·")
    }))

  it.scopedLive("without an id, the newest conversation started in this directory; by id, any, saying where it started", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const other = path.join(path.dirname(box.cwd), "other\u001b[2J")
      fs.mkdirSync(other)
      writeSession(box, SESSION.slice(0, 3), "", "20261203-074000-0000000a")
      writeSession(box, SESSION.slice(13), "", "20261203-074500-0000000b", other)
      writeSession(box, [{ type: "user_input", turn_id: "t9", text: "newest here" }], "", "20261203-073000-0000000c")
      // Here: the newer of the two started here (ids sort by start time), not the other directory's, newer still.
      const here = yield* runPlain(["log"], environment(box, NO_SERVER), box.cwd)
      expect(here.stdout).toMatch(/^Conversation 20261203-074000-0000000a, /)
      expect(here.stdout).toContain("You> check the build")
      const there = yield* runPlain(["log"], environment(box, NO_SERVER), other)
      expect(there.stdout).toMatch(/^Conversation 20261203-074500-0000000b, started in .*other\\e\[2J\nFile: /)
      expect(there.stdout).not.toContain("\u001b")
      const byId = yield* runPlain(["log", "20261203-074500-0000000b"], environment(box, NO_SERVER), box.cwd)
      expect(byId.stdout).toContain("started in ")
      expect(byId.stdout).toContain("You> install it")
      const elsewhere = path.join(path.dirname(box.cwd), "empty")
      fs.mkdirSync(elsewhere)
      const none = yield* runPlain(["log"], environment(box, NO_SERVER), elsewhere)
      expect(none.code).toBe(0)
      expect(none.stdout).toBe(`No conversation started in ${elsewhere} yet. 3 started elsewhere: \`mino sessions\` lists them, \`mino log ID\` shows one.\n`)
      const demo = yield* runPlain(["log", "--demo"], environment(box, NO_SERVER), box.cwd)
      expect(demo.stdout).toBe(`No demo conversation started in ${box.cwd} yet.\n`)
    }))

  it.scopedLive("a conversation file that is a FIFO or a symlink is refused in one line, never read or waited on", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const file = writeSession(box, SESSION)
      const elsewhere = path.join(box.cwd, "elsewhere.jsonl")
      fs.renameSync(file, elsewhere)
      fs.symlinkSync(elsewhere, file)
      const linked = yield* runPlain(["log", ID], environment(box, NO_SERVER), box.cwd)
      expect(linked.code).toBe(1)
      expect(linked.stdout).toBe("")
      expect(linked.stderr).toMatch(/^mino: cannot read .*: ELOOP\.\n$/)
      fs.unlinkSync(file)
      execFileSync("mkfifo", [file])
      // A reader that opened the FIFO would wait for a writer until runPlain's 15 s timeout.
      const fifo = yield* runPlain(["log", ID], environment(box, NO_SERVER), box.cwd)
      expect(fifo.code).toBe(1)
      expect(fifo.stderr).toMatch(/^mino: cannot read .*: EINVAL\.\n$/)
    }))

  it.scopedLive("reads without the lock: it works while a chat runs, showing that chat's turns", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const server = yield* scriptedServer([
        ResponsesServer.toolCallResponse([bashCall("live1", "echo live-marker")]),
        ResponsesServer.textResponse("Done.")
      ])
      const { mino } = yield* startReady(box, server.url)
      yield* mino.write("run the marker\r")
      yield* mino.waitFor("Approve this operation? [y/N] ")
      // Mid-turn: the call is waiting for approval.
      const waiting = yield* runPlain(["log"], environment(box, server.url), box.cwd)
      expect(waiting.code).toBe(0)
      expect(waiting.stdout).toMatch(/Turn 1 · .* UTC · not ended/)
      expect(waiting.stdout).toContain("[bash \"echo live-marker\"] not decided yet (waiting for approval, or Mino stopped before a decision)\n")
      yield* answerPrompt(mino, "y")
      yield* mino.waitFor("Assistant> Done.\n")
      yield* mino.waitFor("You> ")
      const done = yield* runPlain(["log"], environment(box, server.url), box.cwd)
      expect(done.stdout).toMatch(/Turn 1 · .* UTC · completed\n {2}You> run the marker\n {2}\[bash "echo live-marker"\] approved · completed, exit code 0\n {2}Assistant> Done\.\n/)
      yield* mino.write("\u0004")
      yield* exitsWith(mino, { code: 0, signal: null })
    }))
})
