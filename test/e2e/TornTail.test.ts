/**
 * A session file whose last line a crash cut short: the next start sets the
 * fragment aside, says so before the banner, keeps every committed record, and
 * the chat carries on with the earlier turn in context.
 */
import * as fs from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import * as Pty from "../support/Pty.js"
import { BIN, environment, exitsWith, inputOf, sandbox, scriptedServer, sessionFile, startReady } from "../support/MinoProcess.js"

describe("torn session file", () => {
  it.scopedLive("a torn last line is set aside with a notice; committed turns stay and the chat continues", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const server = yield* scriptedServer([ResponsesServer.textResponse("First answer."), ResponsesServer.textResponse("Second answer.")])
      const { mino: first } = yield* startReady(box, server.url)
      yield* first.write("first question\r")
      yield* first.waitFor("Assistant> First answer.\n")
      yield* first.waitFor("You> ")
      yield* first.write("\x04")
      yield* exitsWith(first, { code: 0, signal: null })

      const file = sessionFile(box)
      const committed = fs.readFileSync(file, "utf8")
      fs.appendFileSync(file, "{\"type\":\"user_input\",\"turn_id\":\"torn\",\"text\":\"half a rec")

      const { mino: second, opening } = yield* startReady(box, server.url)
      // The notice is broken at word boundaries to the terminal's width: read it as one line.
      expect(opening.replace(/\s+/g, " ")).toMatch(/^The last record of the session file was cut short by a crash while it was being written; it was set aside in \S+\.set-aside-\S+\. Every complete record was kept\. .*Mino /)
      expect(fs.readFileSync(file, "utf8")).toBe(committed)
      yield* second.write("second question\r")
      yield* second.waitFor("Assistant> Second answer.\n")
      const context = inputOf((yield* server.requests)[1]!)
      expect(context.map((item) => item["type"])).toEqual(["message", "message", "message"])
      expect(JSON.stringify(context)).toContain("first question")
      expect(JSON.stringify(context)).not.toContain("half a rec")
      yield* second.waitFor("You> ")
      yield* second.write("\x04")
      yield* exitsWith(second, { code: 0, signal: null })
    }), 60_000)
})

describe("colour", () => {
  for (const [name, noColor, coloured] of [["on a terminal", undefined, true], ["with NO_COLOR set", "1", false]] as const) {
    it.scopedLive(`${name}: ${coloured ? "the prompt is styled" : "no colour sequences at all"}`, () =>
      Effect.gen(function*() {
        const box = yield* sandbox
        const server = yield* scriptedServer([ResponsesServer.textResponse("ok")])
        const { NO_COLOR: _, ...env } = environment(box, server.url)
        const mino = yield* Pty.spawn({ argv: [process.execPath, BIN], env: noColor === undefined ? env : { ...env, NO_COLOR: noColor }, cwd: box.cwd })
        const opening = yield* mino.waitFor("You> ")
        expect(/\u001b\[[0-9;]*m/.test(opening)).toBe(coloured)
        yield* mino.write("\x04")
        yield* exitsWith(mino, { code: 0, signal: null })
      }), 30_000)
  }
})
