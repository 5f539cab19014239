import * as Fs from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ResponsesServer from "../../src/model/ResponsesServer.js"
import { askOnce } from "../../examples/library.js"
import { inputOf, scriptedModel, sessionLines, tempDir, types } from "../support/Harness.js"

describe("library entry point", () => {
  it.scopedLive("the README's example runs a turn with its own tool and approver", () =>
    Effect.gen(function*() {
      const server = yield* scriptedModel([
        ResponsesServer.toolCallResponse([{ call_id: "s1", name: "shout", arguments: "{\"text\":\"hello\"}" }]),
        ResponsesServer.textResponse("It says HELLO.")
      ])
      const home = tempDir("library")
      const result = yield* askOnce("shout hello", { apiKey: "sk-example", baseURL: server.url, home })
      expect(result).toEqual({ status: "completed", answer: "It says HELLO." })
      const second = inputOf((yield* server.requests)[1]!)
      expect(second.at(-1)).toEqual({ type: "function_call_output", call_id: "s1", output: "{\"status\":\"completed\",\"output\":\"HELLO\"}" })
      expect(types(sessionLines(home))).toEqual(["user_input", "model_response", "tool_start", "tool_result", "model_response", "turn_end"])
    }))

  it("the README shows the example verbatim", () => {
    const readme = Fs.readFileSync(new URL("../../README.md", import.meta.url), "utf8")
    const example = Fs.readFileSync(new URL("../../examples/library.ts", import.meta.url), "utf8")
    expect(readme).toContain(example.trim())
  })

  it("the package's version is the one the CLI reports", async () => {
    const { VERSION } = await import("mino")
    const pkg = JSON.parse(Fs.readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
    expect(VERSION).toBe(pkg.version)
  })
})
