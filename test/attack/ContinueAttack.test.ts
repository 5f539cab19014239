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
import { bashCall, BIN, environment, exitsWith, recordSummary, requestsReceived, type Sandbox, sandbox, scriptedServer, sessionRecords } from "../support/MinoProcess.js"

const PROMPT = "Approve this operation? [y/N] "
const IGNORED = "(ignored 1 line(s) typed before this question)"
const DENIED = { ran: false, records: ["user_input", "model_response", "tool_result:denied", "model_response", "turn_end:completed"] }

/** Mino with its approval prompt up (guard over). */
const atPrompt = (box: Sandbox, extra: Readonly<Record<string, string>> = {}) =>
  Effect.gen(function*() {
    const server = yield* scriptedServer([
      ResponsesServer.toolCallResponse([bashCall("c1", "touch approved-marker")]),
      ResponsesServer.textResponse("Done.")
    ])
    const mino = yield* Pty.spawn({ argv: [process.execPath, BIN], env: environment(box, server.url, extra), cwd: box.cwd })
    yield* mino.waitFor("You> ")
    yield* mino.write("make a file\r")
    yield* requestsReceived(server, 1)
    yield* mino.waitFor(PROMPT, 30_000)
    return mino
  })

/** The question ended (answered by what was queued, or by the Enter alone sent once it is asked anew); what came of it. */
const outcome = (box: Sandbox, mino: Pty.Pty, done = false) =>
  Effect.gen(function*() {
    if (!done) yield* mino.waitFor("Assistant> Done.", 30_000)
    yield* mino.write("\x04")
    yield* exitsWith(mino, { code: 0, signal: null }, 30_000)
    return { ran: fs.existsSync(path.join(box.cwd, "approved-marker")), records: recordSummary(sessionRecords(box)) }
  })

describe("attack: keys queued while Mino is stopped at the approval prompt", () => {
  // The prompt is up; Mino is stopped (kill -STOP from elsewhere: the terminal stays its own, so keys
  // queue for it); `y` Enter is typed; Mino is continued. The question is asked anew, and what was
  // typed while Mino was stopped is ignored (docs/usage.md, "Stopped and continued"). On waking,
  // libuv hands over the terminal's bytes before the SIGCONT (it runs signal watchers after every
  // other ready descriptor of the same poll), so unless Mino defers the answer, the queued y Enter
  // answers the old prompt before the question is asked anew.
  for (const term of ["xterm", "dumb"]) {
    it.live(`TERM=${term}: y Enter typed while Mino is stopped at the prompt never approves`, () =>
      Effect.gen(function*() {
        const runs = 3
        const results: Array<unknown> = []
        for (let run = 0; run < runs; run++) {
          results.push(yield* Effect.scoped(Effect.gen(function*() {
            const box = yield* sandbox
            const mino = yield* atPrompt(box, { TERM: term })
            yield* mino.stop
            yield* mino.typeAcked("y\r")
            yield* mino.kill("SIGCONT")
            // Asked anew: the screen again, then the prompt; the person presses Enter alone.
            const shown = yield* mino.waitFor(/Assistant> Done\.|\[Tool: bash\][^]*Approve this operation\? \[y\/N\] $/, 30_000)
            const done = shown.includes("Assistant> Done.")
            if (!done) {
              yield* Effect.sleep("300 millis")
              yield* mino.write("\r")
            }
            // The screen asked anew says the line was ignored.
            return { ...(yield* outcome(box, mino, done)), ignored: shown.includes(IGNORED) }
          })))
        }
        const approved = results.filter((result) => JSON.stringify(result) !== JSON.stringify({ ...DENIED, ignored: true })).length
        console.log(`TERM=${term}: y Enter queued while Mino was stopped at the prompt, ${runs} runs, ${approved} not denied`)
        for (const result of results) expect(result).toEqual({ ...DENIED, ignored: true })
      }), 180_000)
  }
})
