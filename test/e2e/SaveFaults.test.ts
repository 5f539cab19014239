/**
 * The built `mino` when the disk fails a save: each fsync of a turn's records
 * made to fail with EIO by strace's fault injection, in turn. Each stops the
 * chat with one line naming the session file and the errno (never "unexpected
 * error" and a stack), exit 1; a start whose closing of the open turn fails says
 * so in one line too; and the next start closes the turn and goes on.
 */
import { execFile, execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import { MAC_LACKS } from "../support/Proc.js"
import { bashCall, BIN, environment, recordSummary, type Run, runPlain, sandbox, type Sandbox, scriptedServer, sessionFile, sessionRecords } from "../support/MinoProcess.js"

const strace = (() => {
  try {
    execFileSync("strace", ["-V"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
})()

/** mino under strace, one question piped in; `inject`: the fsync (counted in mino's main thread) made to fail. */
const traced = (box: Sandbox, url: string, args: ReadonlyArray<string>) =>
  Effect.async<Run>((resume) => {
    const child = execFile("strace", ["-f", ...args, process.execPath, BIN], { env: environment(box, url), cwd: box.cwd, timeout: 30_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : null
      resume(Effect.succeed({ code, stdout, stderr }))
    })
    child.stdin?.end("run it\n")
  })

/** A tool call (denied: piped input approves nothing), then an answer: five saves, each fsynced. */
const replies = () => [ResponsesServer.toolCallResponse([bashCall("c1", "touch ran-marker")]), ResponsesServer.textResponse("Done.")]
const SAVES = ["user_input", "model_response", "tool_result:denied", "model_response", "turn_end:completed"]

// strace -y names a descriptor's file through /proc: without it (the Mac-lacking pass) the session's fsyncs cannot be told apart.
describe.runIf(strace && !MAC_LACKS)("a failed fsync of the built mino", () => {
  it.scopedLive("each save point's fsync failed in turn (EIO): one line naming the file and errno, exit 1; the next start closes the turn", () =>
    Effect.gen(function*() {
      // Which fsyncs of mino's main thread are the session file's saves: from a traced run.
      const probe = yield* sandbox
      const server = yield* scriptedServer(replies())
      const log = path.join(path.dirname(probe.home), "trace")
      const clean = yield* traced(probe, server.url, ["-y", "-e", "trace=fsync", "-o", log])
      expect(clean.code).toBe(0)
      expect(recordSummary(sessionRecords(probe))).toEqual(SAVES)
      // strace pads the pid column: `812  fsync(...`, `12297 fsync(...`.
      const fsyncs = fs.readFileSync(log, "utf8").split("\n").flatMap((line) => {
        const match = /^(\d+)\s+fsync\(/.exec(line)
        return match === null ? [] : [{ pid: match[1], line }]
      })
      const ours = fsyncs.filter((call) => call.pid === fsyncs[0]?.pid).map((call) => call.line)
      // The session file's fsyncs: its header's first, then one per save.
      const saves = ours.flatMap((line, index) => /\.jsonl>\)/.test(line) ? [index + 1] : []).slice(1)
      expect(saves).toHaveLength(SAVES.length)

      for (const [n, when] of saves.entries()) {
        const what = `fsync of ${SAVES[n]} (save ${n + 1})`
        const box = yield* sandbox
        const model = yield* scriptedServer([...replies(), ResponsesServer.textResponse("Next.")])
        const run = yield* traced(box, model.url, ["-o", "/dev/null", "-e", "trace=fsync", "-e", `inject=fsync:error=EIO:when=${when}`])
        const file = sessionFile(box)
        expect(run.stderr, what).toBe(`mino: cannot save the session to ${file}: EIO (i/o error, fsync); the chat has stopped.\n`)
        expect(run.code, what).toBe(1)
        // The failed save was taken back: the saves before it, whole.
        expect(recordSummary(sessionRecords(box)), what).toEqual(SAVES.slice(0, n))
        expect(fs.existsSync(path.join(box.cwd, "ran-marker")), what).toBe(false)

        // A start whose own save (closing the open turn) fails: one line, the file as it was.
        if (n > 0) {
          const before = fs.readFileSync(file!, "utf8")
          const failed = yield* traced(box, model.url, ["-o", "/dev/null", "-P", file!, "-e", "trace=fsync", "-e", "inject=fsync:error=EIO"])
          expect(failed.stderr, what).toBe(`mino: cannot save the session to ${file}: EIO (i/o error, fsync)\n`)
          expect(failed.code, what).toBe(1)
          expect(fs.readFileSync(file!, "utf8"), what).toBe(before)
        }

        // The next start closes the turn (when one was open) and answers.
        const next = yield* runPlain([], environment(box, model.url), box.cwd, "again\n")
        expect(next.code, what).toBe(0)
        expect(next.stderr, what).toBe("")
        const records = recordSummary(sessionRecords(box))
        expect(records.filter((record) => record === "turn_end:interrupted"), what).toHaveLength(n > 0 ? 1 : 0)
        expect(records.at(-1), what).toBe("turn_end:completed")
      }
      console.log(`built mino: ${saves.length} save points' fsyncs failed in turn, each one line`)
    }), 180_000)
})
