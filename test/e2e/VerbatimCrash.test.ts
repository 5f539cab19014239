/**
 * A call whose output item carries `__proto__` and `constructor` keys: the item
 * is saved verbatim, and a SIGKILL while its command runs is recovered as
 * `unknown`, with the command listed after the chapter's notice.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import { answerPrompt, eventually, exitsWith, killGroup, NOTICE, recordSummary, sandbox, scriptedServer, sessionFile, sessionRecords, startReady } from "../support/MinoProcess.js"

const COMMAND = "echo $$ > bash.pid; touch started-marker; sleep 30"
const ITEM = `{"type":"function_call","id":"fc_p","call_id":"call_p","name":"bash","arguments":${JSON.stringify(JSON.stringify({ command: COMMAND }))},"__proto__":{"admin":true},"constructor":{"prototype":{}}}`

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

const reply: ResponsesServer.Reply = [
  { type: "response.created", response: { id: "resp_p", object: "response", status: "in_progress", output: [] } },
  { raw: `event: response.completed\ndata: {"type":"response.completed","sequence_number":1,"response":{"id":"resp_p","object":"response","status":"completed","output":[${ITEM}]}}\n\n` }
]

describe("__proto__ in an output item, then SIGKILL mid-command", () => {
  it.scopedLive("the item is kept byte for byte and the restart closes the started call `unknown`, naming its command", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          const pidFile = path.join(box.cwd, "bash.pid")
          if (fs.existsSync(pidFile)) killGroup(Number(fs.readFileSync(pidFile, "utf8").trim()))
        })
      )
      const server = yield* scriptedServer([reply])
      const { mino } = yield* startReady(box, server.url)
      yield* mino.write("run it\r")
      yield* mino.waitFor("Approve this operation? [y/N] ")
      yield* answerPrompt(mino, "y")
      yield* eventually("the command to start", 15_000, Effect.sync(() => fs.existsSync(path.join(box.cwd, "started-marker")) || undefined))
      yield* mino.kill("SIGKILL")
      yield* exitsWith(mino, { code: null, signal: "SIGKILL" }, 10_000)
      expect(fs.readFileSync(sessionFile(box), "utf8")).toContain(`"output":[${ITEM}]`)
      expect(recordSummary(sessionRecords(box))).toEqual(["user_input", "model_response", "tool_start"])

      const { mino: second, opening } = yield* startReady(box, server.url)
      expect(opening).toMatch(new RegExp(`^${escape(NOTICE)}\\r?\\nOutcome unknown: ${escape(JSON.stringify(COMMAND))}\\r?\\nMino `))
      expect(recordSummary(sessionRecords(box)).slice(3)).toEqual(["tool_result:unknown", "turn_end:interrupted"])
      expect(fs.readFileSync(sessionFile(box), "utf8")).toContain(`"output":[${ITEM}]`)
      yield* second.write("\x04")
      yield* exitsWith(second, { code: 0, signal: null }, 10_000)
    }), 60_000)
})
