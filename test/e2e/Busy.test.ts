/**
 * One conversation, one process: a second `mino` on the same HOME is refused at
 * start as busy, before it writes anything (and before the first has asked
 * anything, so before any file exists), and the first one carries on.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import { environment, exitsWith, runPlain, sandbox, scriptedServer, sessionFile, start, startReady } from "../support/MinoProcess.js"

describe("a second mino on the same session", () => {
  it.scopedLive("is refused as busy with a non-zero exit, and the first still answers", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const server = yield* scriptedServer([ResponsesServer.textResponse("Still here.")])
      const { mino: first } = yield* startReady(box, server.url)
      // Nothing asked yet: the first holds its directory, but no file exists.
      const files = () => fs.readdirSync(path.join(box.home, ".mino", "sessions")).filter((name) => name.endsWith(".jsonl"))
      expect(files()).toEqual([])

      const second = yield* start(box, server.url)
      const status = yield* second.exitedWithin(15_000)
      expect(status.signal).toBeNull()
      expect(status.code).not.toBe(0)
      const refused = yield* second.screen
      expect(refused).toMatch(/busy/i)
      expect(refused).not.toContain("You> ")
      // Without a terminal too: one line on stderr, exit code 1.
      const plain = yield* runPlain([], environment(box, server.url), box.cwd)
      expect(plain.code).toBe(1)
      expect(plain.stderr).toMatch(/^mino: .*busy.*\n$/)
      expect(files()).toEqual([])

      yield* first.write("Are you still there?\r")
      yield* first.waitFor("Assistant> Still here.\n")
      yield* first.waitFor("You> ")
      expect((yield* server.requests).length).toBe(1)
      expect(fs.readFileSync(sessionFile(box), "utf8")).toContain("Are you still there?")
      yield* first.write("\x04")
      yield* exitsWith(first, { code: 0, signal: null }, 10_000)
    }), 60_000)
})
