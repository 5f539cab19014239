/**
 * Tools cannot take Mino down: two tools with one name are refused when the
 * registry is built, and a tool that throws in Prepare or Execute gets that
 * call's result (`invalid_arguments` / `failed`, with the message) while the
 * turn closes normally and the chat goes on.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import { erase, type Tool } from "../../src/tools/Tool.js"
import { DuplicateToolName, ToolRegistry } from "../../src/tools/ToolRegistry.js"
import * as ToolResult from "../../src/tools/ToolResult.js"
import * as EchoTool from "../support/EchoTool.js"
import { inputOf, scriptedModel, sessionLines, tempDir, turn, withAgent } from "../support/Harness.js"
import { Secrets } from "../../src/security/Secrets.js"

const definition = (name: string) => ({
  type: "function" as const,
  name,
  description: `The ${name} tool.`,
  parameters: { type: "object", properties: {}, additionalProperties: true },
  strict: false
})

/** Like the README's first example did: JSON.parse on the model's text, which throws on malformed JSON. */
const parsesBlindly = erase<string>({
  definition: definition("parse"),
  prepare: (raw) => {
    const text = String(JSON.parse(raw).text)
    return Effect.succeed({ display: { tool: "parse", fields: [{ kind: "value", label: "Text", value: text }] }, operation: text })
  },
  execute: (text) => Effect.succeed(ToolResult.make("completed", text))
} satisfies Tool<string>)

const diesInPrepare = erase<void>({
  definition: definition("dies"),
  prepare: () => Effect.die("prepare gave up"),
  execute: () => Effect.succeed(ToolResult.make("completed", "never"))
})

const throwsInExecute = erase<string>({
  definition: definition("explodes"),
  prepare: () => Effect.succeed({ display: { tool: "explodes", fields: [] }, operation: "x" }),
  execute: () =>
    Effect.sync(() => {
      throw new TypeError("cannot read properties of undefined (reading 'size')")
    })
})

const call = (id: string, name: string, args: string) => ({ call_id: id, name, arguments: args })

/** The `result` of each tool_result record in the session under `home`. */
const results = (home: string) =>
  sessionLines(home).filter((line) => line["type"] === "tool_result").map((line) => line["result"])

describe("ToolRegistry", () => {
  it.effect("refuses two tools with the same name when it is built", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(ToolRegistry.make([EchoTool.make(), parsesBlindly, EchoTool.make()]).pipe(Effect.provide(Secrets.layerNone)))
      expect(exit).toEqual(Exit.fail(new DuplicateToolName({ name: "echo" })))
      if (Exit.isFailure(exit)) expect(String(exit.cause)).toContain("two tools are named \"echo\"")
      const layer = yield* Effect.exit(Layer.build(ToolRegistry.layer([parsesBlindly, parsesBlindly]).pipe(Layer.provide(Secrets.layerNone))).pipe(Effect.scoped))
      expect(Exit.isFailure(exit) && Exit.isFailure(layer)).toBe(true)
      const distinct = yield* ToolRegistry.make([EchoTool.make(), parsesBlindly]).pipe(Effect.provide(Secrets.layerNone))
      expect(distinct.definitions.map((tool) => tool.name)).toEqual(["echo", "parse"])
    }))

  it.scopedLive("a throw in Prepare is that call's invalid_arguments result; the turn completes and the chat goes on", () =>
    Effect.gen(function*() {
      const home = tempDir("registry")
      const server = yield* scriptedModel([
        ResponsesServer.toolCallResponse([call("p1", "parse", "{not json"), call("p2", "dies", "{}"), call("p3", "parse", "{\"text\":\"ok\"}")]),
        ResponsesServer.textResponse("Two of them broke."),
        ResponsesServer.textResponse("Still here.")
      ])
      const [first, second] = yield* withAgent(
        { home, url: server.url, tools: [parsesBlindly, diesInPrepare] },
        Effect.all([turn("try them"), turn("are you there?")])
      )
      expect(first.outcome.status).toBe("completed")
      expect(second.outcome.status).toBe("completed")
      const [parse, dies, ok] = results(home)
      expect(parse).toMatchObject({ status: "invalid_arguments" })
      expect(String((parse as { output: string }).output)).toMatch(/^The parse tool failed to prepare this call: .*JSON/)
      expect(dies).toEqual(ToolResult.make("invalid_arguments", "The dies tool failed to prepare this call: prepare gave up"))
      expect(ok).toEqual(ToolResult.make("completed", "ok"))
      // The model received the results, paired.
      const sent = inputOf((yield* server.requests)[1]!).filter((item) => item["type"] === "function_call_output")
      expect(sent.map((item) => item["call_id"])).toEqual(["p1", "p2", "p3"])
      // No tool_start for a call that never prepared.
      const starts = sessionLines(home).filter((line) => line["type"] === "tool_start").map((line) => line["call_id"])
      expect(starts).toEqual(["p3"])
    }))

  it.scopedLive("a throw in Execute is that call's failed result with the message; the turn completes", () =>
    Effect.gen(function*() {
      const home = tempDir("registry")
      const server = yield* scriptedModel([
        ResponsesServer.toolCallResponse([call("e1", "explodes", "{}")]),
        ResponsesServer.textResponse("It failed.")
      ])
      const { outcome, events } = yield* withAgent({ home, url: server.url, tools: [throwsInExecute] }, turn("go"))
      expect(outcome.status).toBe("completed")
      expect(results(home)).toEqual([
        ToolResult.make("failed", "The explodes tool failed while running: cannot read properties of undefined (reading 'size')")
      ])
      expect(events.some((event) => event._tag === "ToolFinished" && event.result.status === "failed")).toBe(true)
      expect(sessionLines(home).at(-1)).toMatchObject({ type: "turn_end", status: "completed" })
    }))
})
