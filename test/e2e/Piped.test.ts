/**
 * Mino without a terminal: questions piped in are each read and asked, an
 * approval prompt reads nothing and denies, the exit code says whether a turn
 * failed; and output piped to a reader that goes away (`mino | head`) ends the
 * chat quietly with the turn closed on disk.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import {
  bashCall,
  BIN,
  environment,
  eventually,
  inputOf,
  type Json,
  recordSummary,
  requestsReceived,
  runPlain,
  sandbox,
  scriptedServer,
  sessionRecords
} from "../support/MinoProcess.js"

const questions = (records: ReadonlyArray<Json>): ReadonlyArray<unknown> =>
  records.filter((record) => record["type"] === "user_input").map((record) => record["text"])

describe("piped input", () => {
  it.scopedLive("every question is asked; an approval prompt consumes no input and saves denied; exit 0", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const server = yield* scriptedServer([
        ResponsesServer.toolCallResponse([bashCall("c1", "touch q1-marker")]),
        ResponsesServer.textResponse("Answer one."),
        ResponsesServer.textResponse("Answer two."),
        ResponsesServer.textResponse("Answer three.")
      ])
      const run = yield* runPlain([], environment(box, server.url), box.cwd, "q1\nq2\nq3\n")
      expect(run.code).toBe(0)
      expect(questions(sessionRecords(box))).toEqual(["q1", "q2", "q3"])
      expect(recordSummary(sessionRecords(box)).filter((type) => type.startsWith("tool_result"))).toEqual(["tool_result:denied"])
      // The screen, then one line saying why: nothing was read as the answer.
      expect(run.stdout).toContain(
        "Approve this operation? [y/N] \nDenied: standard input is not a terminal, so no command can be approved.\n"
      )
      for (const answer of ["Answer one.", "Answer two.", "Answer three."]) expect(run.stdout).toContain(`Assistant> ${answer}`)
      expect(fs.existsSync(path.join(box.cwd, "q1-marker"))).toBe(false)
      const requests = yield* server.requests
      expect(requests.length).toBe(4)
      // The denial went back to the model with q1, and q2 was asked as a question.
      expect(JSON.stringify(inputOf(requests[1]!))).toContain("denied")
      expect(JSON.stringify(inputOf(requests[2]!).at(-1))).toContain("q2")
    }), 30_000)

  it.scopedLive("a turn that failed makes the exit code 1, after every question was still asked", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const server = yield* scriptedServer([
        ResponsesServer.httpError(400, "the request was refused"),
        ResponsesServer.textResponse("Answer two.")
      ])
      const run = yield* runPlain([], environment(box, server.url), box.cwd, "q1\nq2\n")
      expect(run.code).toBe(1)
      expect(run.stdout).toContain("Assistant> Answer two.")
      expect(recordSummary(sessionRecords(box)).filter((type) => type.startsWith("turn_end"))).toEqual([
        "turn_end:failed",
        "turn_end:completed"
      ])
    }), 30_000)
})

describe("standard output closed by its reader (`mino | head`)", () => {
  it.scopedLive("ends quietly, with no stack trace, and the turn closed on disk", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const gate = yield* Deferred.make<void>()
      const server = yield* scriptedServer([
        [{ wait: Deferred.await(gate) }, ...ResponsesServer.textResponse("a long answer ".repeat(2000))]
      ])
      const child = spawn(process.execPath, [BIN], { env: environment(box, server.url), cwd: box.cwd, stdio: ["pipe", "pipe", "pipe"] })
      yield* Effect.addFinalizer(() => Effect.sync(() => child.kill("SIGKILL")))
      let stderr = ""
      child.stderr.on("data", (chunk: Buffer) => void (stderr += chunk.toString("utf8")))
      const exited = Effect.async<number | null>((resume) => {
        if (child.exitCode !== null) return resume(Effect.succeed(child.exitCode))
        child.on("exit", (code) => resume(Effect.succeed(code)))
      })
      let stdout = ""
      child.stdout.on("data", (chunk: Buffer) => void (stdout += chunk.toString("utf8")))
      child.stdin.write("tell me a lot\n")
      yield* requestsReceived(server, 1)
      yield* eventually("the question to be echoed", 10_000, Effect.sync(() => stdout.includes("tell me a lot") || undefined))
      // The reader goes away, like `head` after its lines; then the answer streams.
      child.stdout.destroy()
      yield* Deferred.succeed(gate, undefined)
      const code = yield* exited.pipe(Effect.timeout("10 seconds"))
      expect(stderr).toBe("")
      expect(code).toBe(0)
      expect(recordSummary(sessionRecords(box))).toEqual(["user_input", "turn_end:cancelled"])
      expect(sessionRecords(box).at(-1)?.["reason"]).toMatch(/standard output was closed/)
    }), 30_000)
})
