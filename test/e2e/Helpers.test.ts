/**
 * What Mino executes for itself — the lock helper (perl), the lifeline watcher, the gate
 * a command starts in — is found by absolute path, never through `PATH`. A
 * repository that puts a relative directory first on `PATH` (`node_modules/.bin`,
 * as under `npx`) with programs of those names gets none of them run, at start,
 * for a command, or at exit. Mino is started here as `node bin/mino.js`: the
 * launcher's own `#!/usr/bin/env node` is a `PATH` lookup made by whoever starts
 * it, before any of Mino runs (docs/safety.md, "What Mino itself runs": a limit).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import * as Pty from "../support/Pty.js"
import { answerPrompt, BIN, bashCall, environment, exitsWith, recordSummary, runPlain, sandbox, scriptedServer, sessionRecords } from "../support/MinoProcess.js"

/** Names a helper could be looked up by; each hostile copy records that it ran, and claims success. */
const NAMES = ["perl", "flock", "bash", "sh", "dash", "node", "env", "kill", "sleep", "setsid", "stty", "tput", "cat", "ls", "true", "uname", "ps", "python3", "git"]

describe("no helper through PATH", () => {
  it.scopedLive(`a relative PATH entry holding hostile ${NAMES.length} programs (perl, flock, bash, sh, node, env, ...): none runs, at start, for a command, or at exit`, () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const ran = path.join(path.dirname(box.home), "hostile-ran.txt")
      const bin = path.join(box.cwd, "node_modules", ".bin")
      fs.mkdirSync(bin, { recursive: true })
      for (const name of NAMES) {
        fs.writeFileSync(path.join(bin, name), `#!/bin/sh\necho "${name} $*" >> '${ran}'\nexit 0\n`, { mode: 0o755 })
      }
      const server = yield* scriptedServer([
        // Builtins only: the approved command itself looks nothing up through PATH either.
        ResponsesServer.toolCallResponse([bashCall("call_builtin", "echo \"PATH=$PATH\"; printf 'done\\n'")]),
        ResponsesServer.textResponse("It printed its PATH.")
      ])
      const env = environment(box, server.url, { PATH: `node_modules/.bin:/usr/local/bin:/usr/bin:/bin` })
      const mino = yield* Pty.spawn({ argv: [process.execPath, BIN], env, cwd: box.cwd })
      yield* mino.waitFor("You> ")
      yield* mino.write("Show the PATH.\r")
      yield* mino.waitFor("Approve this operation? [y/N] ")
      yield* answerPrompt(mino, "y")
      yield* mino.waitFor("Assistant> It printed its PATH.")
      yield* mino.waitFor("You> ")
      yield* mino.write("\x04")
      yield* exitsWith(mino, { code: 0, signal: null })
      // mino log and --version do not run a helper either.
      expect((yield* runPlain(["log"], env, box.cwd)).code).toBe(0)
      expect((yield* runPlain(["--version"], env, box.cwd)).code).toBe(0)

      const records = sessionRecords(box)
      expect(recordSummary(records)).toEqual(["user_input", "model_response", "tool_start", "tool_result:completed", "model_response", "turn_end:completed"])
      // The command ran, with Mino's PATH as documented, through the real bash.
      expect(records[3]?.["result"]).toMatchObject({ output: "PATH=node_modules/.bin:/usr/local/bin:/usr/bin:/bin\ndone\n" })
      expect(fs.existsSync(ran) ? fs.readFileSync(ran, "utf8") : "").toBe("")
    }), 60_000)
})
