/**
 * Chapter 03 section 5: the bash integration case and the interrupted-turn test.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import { INTERRUPTED_NOTICE } from "../../src/session/conversation/Recovery.js"
import { SessionStore } from "../../src/session/SessionStore.js"
import * as EchoTool from "../support/EchoTool.js"
import { inputOf, scriptedModel, sessionFile, sessionLines, tempDir, turn, withAgent } from "../support/Harness.js"

describe("bash integration", () => {
  it.scopedLive("writes and reads a marker, sends the paired result, and a follow-up after reopening runs nothing old", () =>
    Effect.gen(function*() {
      const home = tempDir("home")
      const work = tempDir("work")
      const command = "echo marker-7b1 >> marker.txt && cat marker.txt"
      const server = yield* scriptedModel([
        ResponsesServer.toolCallResponse([{ call_id: "b1", name: "bash", arguments: JSON.stringify({ command }) }]),
        ResponsesServer.textResponse("The marker is there."),
        ResponsesServer.textResponse("Nothing to run this time.")
      ])
      const bash = { cwd: work, parentEnv: process.env }
      const first = yield* withAgent({ home, url: server.url, tools: [], bash }, turn("write the marker"))
      expect(first.outcome.status).toBe("completed")
      expect(Fs.readFileSync(Path.join(work, "marker.txt"), "utf8")).toBe("marker-7b1\n")
      const sent = inputOf((yield* server.requests)[1]!).at(-1)
      expect(sent).toEqual({
        type: "function_call_output",
        call_id: "b1",
        output: JSON.stringify({ status: "completed", output: "marker-7b1\n", exit_code: 0 })
      })

      const second = yield* withAgent({ home, url: server.url, tools: [], bash }, turn("anything else?"))
      expect(second.outcome.status).toBe("completed")
      // The old command did not run again; the completed turn is replayed as context.
      expect(Fs.readFileSync(Path.join(work, "marker.txt"), "utf8")).toBe("marker-7b1\n")
      const replayed = inputOf((yield* server.requests)[2]!)
      expect(replayed.filter((item) => item["type"] === "function_call_output")).toHaveLength(1)
      expect(replayed.at(-1)).toEqual({ type: "message", role: "user", content: [{ type: "input_text", text: "anything else?" }] })
      expect(sessionLines(home).filter((l) => l["type"] === "tool_start")).toHaveLength(1)
    }))
})

describe("interrupted turn", () => {
  // Run a whole tool turn, then cut the file back to where a crash would have left it.
  const stops = [
    ["after the response", 2, [["c1", "not_executed"]]],
    ["after a tool start", 3, [["c1", "unknown"]]],
    ["after a saved result", 4, []]
  ] as const

  for (const [where, keep, closed] of stops) {
    it.scopedLive(`stopped ${where}: reopening closes it on disk, reruns nothing and replays none of it`, () =>
      Effect.gen(function*() {
        const home = tempDir("home")
        const ran: Array<string> = []
        const tools = [EchoTool.make((text) => void ran.push(text))]
        const server = yield* scriptedModel([
          ResponsesServer.toolCallResponse([{ call_id: "c1", name: "echo", arguments: "{\"text\":\"once\"}" }]),
          ResponsesServer.textResponse("done"),
          ResponsesServer.textResponse("fresh start")
        ])
        yield* withAgent({ home, url: server.url, tools }, turn("do it once"))
        const file = sessionFile(home)!
        const lines = Fs.readFileSync(file, "utf8").split("\n").filter(Boolean)
        // The conversation's header, then `keep` records.
        Fs.writeFileSync(file, lines.slice(0, keep + 1).join("\n") + "\n")
        const requestsBefore = (yield* server.requests).length

        const reopened = yield* withAgent({ home, url: server.url, tools }, Effect.gen(function*() {
          const store = yield* SessionStore
          return { notices: store.notices, context: yield* store.context }
        }))
        // The chapter's notice word for word, then each command whose outcome is unknown.
        const unknown = closed.filter(([, status]) => status === "unknown").map(() => "Outcome unknown: echo \"{\\\"text\\\":\\\"once\\\"}\"")
        expect(reopened.notices).toEqual([INTERRUPTED_NOTICE, ...unknown])
        expect(reopened.context).toEqual([])
        expect((yield* server.requests).length).toBe(requestsBefore)
        expect(ran).toEqual(["once"])

        const after = sessionLines(home).slice(keep)
        // not_executed without a start, unknown only for a start without its result, neither after a result.
        expect(after.filter((l) => l["type"] === "tool_result").map((l) => [l["call_id"], (l["result"] as { status: string }).status]))
          .toEqual(closed)
        expect(after.at(-1)).toMatchObject({ type: "turn_end", status: "interrupted" })

        // The next turn's context holds nothing of the interrupted one.
        yield* withAgent({ home, url: server.url, tools }, turn("new question"))
        expect(inputOf((yield* server.requests).at(-1)!)).toEqual([
          { type: "message", role: "user", content: [{ type: "input_text", text: "new question" }] }
        ])
        expect(ran).toEqual(["once"])
      }))
  }
})
