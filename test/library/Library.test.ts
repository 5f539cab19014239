/**
 * Mino as a library: the example docs/library.md shows, the in-memory session, the
 * `mino-agent/testing` entry, and an entry point that exports nothing internal.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Approver, INTERRUPTED_NOTICE, Mino, Secrets, SessionStore } from "mino-agent"
import { ResponsesServer, scriptedServer } from "mino-agent/testing"
import { askOnce } from "../../examples/library.js"
import * as EchoTool from "../support/EchoTool.js"
import { inputOf, scriptedModel, sessionLines, tempDir, turn, types } from "../support/Harness.js"

const memoryAgent = (url: string) =>
  Mino.layer({
    apiKey: "sk-memory-test-key",
    endpoint: { baseURL: url, maxRetries: 0 },
    model: "test-model",
    instructions: "test",
    session: "memory",
    tools: [EchoTool.make()],
    approver: Approver.layerStatic(() => true)
  })

describe("library entry point", () => {
  it.scopedLive("the documented example runs a turn with its own tool and approver", () =>
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

  it.scopedLive("the documented example, given the key once, against an endpoint that echoes it: the key is in no file and no request, and the call carrying it is refused", () =>
    Effect.gen(function*() {
      const key = "sk-library-echo-0123456789abcdef"
      // The endpoint reads the key from the Authorization header and sends it back, in text and in a call.
      const echoed = (request: ResponsesServer.Request) => String(request.headers["authorization"] ?? "").replace(/^Bearer /, "")
      const server = yield* scriptedModel([
        (request) => Effect.succeed(ResponsesServer.toolCallResponse(
          [{ call_id: "e1", name: "shout", arguments: JSON.stringify({ text: echoed(request) }) }],
          { message: { text: `Your key is ${echoed(request)}.` } }
        )),
        (request) => Effect.succeed(ResponsesServer.textResponse(`Still ${echoed(request)}.`))
      ])
      const home = tempDir("library-echo")
      const result = yield* askOnce("shout my key", { apiKey: key, baseURL: server.url, home })
      expect(result.status).toBe("completed")
      const requests = yield* server.requests
      expect(requests.map((request) => request.headers["authorization"])).toEqual([`Bearer ${key}`, `Bearer ${key}`])
      // The call that carried it never ran: refused before approval, no tool_start.
      const lines = sessionLines(home)
      expect(types(lines)).toEqual(["user_input", "model_response", "tool_result", "model_response", "turn_end"])
      expect(lines.find((line) => line["type"] === "tool_result")?.["result"]).toMatchObject({ status: "invalid_arguments" })
      // No file under the home, and no request body, holds it.
      const files = Fs.readdirSync(home, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile())
      expect(files.length).toBeGreaterThan(0)
      for (const file of files) expect(Fs.readFileSync(Path.join(file.parentPath, file.name), "latin1")).not.toContain(key)
      for (const request of requests) expect(JSON.stringify(request.body)).not.toContain(key)
      expect(JSON.stringify(requests[1]?.body)).toContain("Your key is [redacted].")
    }))

  it.scopedLive("the documented example answers malformed arguments with invalid_arguments, and the turn completes", () =>
    Effect.gen(function*() {
      const server = yield* scriptedModel([
        ResponsesServer.toolCallResponse([{ call_id: "s1", name: "shout", arguments: "{\"text\": 42" }]),
        ResponsesServer.textResponse("The arguments were wrong.")
      ])
      const home = tempDir("library")
      const result = yield* askOnce("shout", { apiKey: "sk-example", baseURL: server.url, home })
      expect(result.status).toBe("completed")
      const saved = sessionLines(home).find((line) => line["type"] === "tool_result")
      expect(saved?.["result"]).toMatchObject({ status: "invalid_arguments" })
      expect(types(sessionLines(home))).not.toContain("tool_start")
    }))

  it.scopedLive("a memory session: turns replay as from a file, with no file, the key redacted and a call carrying it refused", () =>
    Effect.gen(function*() {
      const home = tempDir("memory")
      const server = yield* scriptedServer([
        ResponsesServer.toolCallResponse([{ call_id: "m1", name: "echo", arguments: "{\"text\":\"sk-memory-test-key\"}" }]),
        ResponsesServer.textResponse("Echoed."),
        ResponsesServer.textResponse("Again.")
      ])
      const records = yield* Effect.gen(function*() {
        expect((yield* turn("echo the key")).outcome.status).toBe("completed")
        expect((yield* turn("once more")).outcome.status).toBe("completed")
        return yield* (yield* SessionStore).records
      }).pipe(Effect.provide(memoryAgent(server.url)))
      // The key given once to Mino.layer reaches the registry: the call that carries it never runs.
      expect(records.map((record) => record.type)).toEqual([
        "user_input", "model_response", "tool_result", "model_response", "turn_end", "user_input", "model_response", "turn_end"
      ])
      expect(records.find((record) => record.type === "tool_result")).toMatchObject({ result: { status: "invalid_arguments" } })
      expect(records.every((record) => typeof record.time === "string")).toBe(true)
      expect(JSON.stringify(records)).not.toContain("sk-memory-test-key")
      // The second turn's request replays the first, completed turn.
      const third = inputOf((yield* server.requests)[2]!)
      expect(third.at(0)).toEqual({ type: "message", role: "user", content: [{ type: "input_text", text: "echo the key" }] })
      expect(third.map((item) => item["type"])).toEqual(["message", "function_call", "function_call_output", "message", "message"])
      expect(third.at(-1)).toEqual({ type: "message", role: "user", content: [{ type: "input_text", text: "once more" }] })
      expect(Fs.existsSync(Path.join(home, ".mino"))).toBe(false)
    }))

  it.scopedLive("SessionStore.layerMemory closes a turn left open in the records it starts from, as a restart does", () =>
    Effect.gen(function*() {
      const open = [
        { type: "user_input" as const, turn_id: "t1", text: "run it" },
        { type: "model_response" as const, turn_id: "t1", output: [{ type: "function_call", call_id: "c1", name: "echo", arguments: "{}" }] },
        { type: "tool_start" as const, turn_id: "t1", call_id: "c1" }
      ]
      const store = yield* Effect.provide(SessionStore, SessionStore.layerMemory({ records: open }).pipe(Layer.provide(Secrets.layerNone)))
      // The chapter's notice, then the command whose outcome is unknown.
      expect(store.notices).toEqual([INTERRUPTED_NOTICE, "Outcome unknown: echo \"{}\""])
      const records = yield* store.records
      expect(records.slice(3).map((record) => record.type === "tool_result" ? record.result.status : record.type)).toEqual(["unknown", "turn_end"])
      expect(yield* store.context).toEqual([])
    }))

  it("the main entry holds no test server; mino-agent/testing does", async () => {
    const main: Record<string, unknown> = await import("mino-agent")
    expect(Object.keys(main)).not.toContain("ResponsesServer")
    expect(Object.keys(main)).not.toContain("Terminal")
    const testing: Record<string, unknown> = await import("mino-agent/testing")
    expect(Object.keys(testing).sort()).toEqual(["ResponsesServer", "scriptedServer"])
  })

  it("docs/library.md shows the example verbatim", () => {
    const page = Fs.readFileSync(new URL("../../docs/library.md", import.meta.url), "utf8")
    const example = Fs.readFileSync(new URL("../../examples/library.ts", import.meta.url), "utf8")
    expect(page).toContain(example.trim())
  })

  it("the package's version is the one the CLI reports", async () => {
    const { VERSION } = await import("mino-agent")
    const pkg = JSON.parse(Fs.readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
    expect(VERSION).toBe(pkg.version)
  })
})
