/**
 * The Agent loop's contract (chapter 03 sections 2, 4.1 and 5): every save point
 * is on disk before the next step, results pair with their calls, items are
 * replayed in order, and an invalid or incomplete response executes nothing.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import { Agent } from "../../src/agent/Agent.js"
import { Approver } from "../../src/approval/Approver.js"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import { SessionStore } from "../../src/session/SessionStore.js"
import * as EchoTool from "../support/EchoTool.js"
import * as FaultyDisk from "../support/FaultyDisk.js"
import { inputOf, scriptedModel, sessionLines, tempDir, turn, types, withAgent } from "../support/Harness.js"

const echo = (id: string, text = id) => ({ call_id: id, name: "echo", arguments: JSON.stringify({ text }) })

describe("Agent loop", () => {
  it.scopedLive("writes each save point to disk before the step that depends on it", () =>
    Effect.gen(function*() {
      const home = tempDir("agent")
      const seen: Record<string, Array<unknown>> = {}
      const server = yield* scriptedModel([
        () => Effect.sync(() => {
          seen["first request"] = types(sessionLines(home))
          return ResponsesServer.toolCallResponse([echo("c1", "hi")])
        }),
        () => Effect.sync(() => {
          seen["second request"] = types(sessionLines(home))
          return ResponsesServer.textResponse("done")
        })
      ])
      const approver = Layer.succeed(Approver, Approver.of({
        decide: () => Effect.sync(() => {
          seen["approval"] = types(sessionLines(home))
          return { approved: true }
        })
      }))
      const tool = EchoTool.make(() => void (seen["execution"] = types(sessionLines(home))))
      const { outcome, events } = yield* withAgent({ home, url: server.url, tools: [tool], approver }, turn("say hi"))

      expect(seen).toEqual({
        "first request": ["user_input"],
        "approval": ["user_input", "model_response"],
        "execution": ["user_input", "model_response", "tool_start"],
        "second request": ["user_input", "model_response", "tool_start", "tool_result"]
      })
      expect(outcome.status).toBe("completed")
      const lines = sessionLines(home)
      expect(types(lines)).toEqual(["user_input", "model_response", "tool_start", "tool_result", "model_response", "turn_end"])
      expect(new Set(lines.map((l) => l["turn_id"])).size).toBe(1)
      expect(lines[2]).toMatchObject({ call_id: "c1" })
      // The echo tool runs no process: its result has no exit code.
      expect(lines[3]).toMatchObject({ call_id: "c1", result: { status: "completed", output: "hi" } })
      expect((lines[3]!["result"] as Record<string, unknown>)["exit_code"]).toBeUndefined()
      expect(events.map((e) => e._tag)).toEqual([
        "ModelWaiting", "ModelResponded", "ToolRunning", "ToolFinished",
        "ModelWaiting", "TextDelta", "ModelResponded", "TurnEnded"
      ])
    }))

  it.scopedLive("sends earlier input, the complete output items in order, then the paired results", () =>
    Effect.gen(function*() {
      const home = tempDir("agent")
      const server = yield* scriptedModel([
        ResponsesServer.toolCallResponse([echo("c1", "one"), echo("c2", "two")], {
          reasoning: { encrypted_content: "gAAAA-opaque" },
          message: { text: "Let me check.", phase: "commentary", extra: { unknown_field: [1, 2] } }
        }),
        ResponsesServer.textResponse("both echoed")
      ])
      yield* withAgent({ home, url: server.url, tools: [EchoTool.make()] }, turn("echo two things"))
      const requests = yield* server.requests
      expect(requests).toHaveLength(2)
      const first = requests[0]!.body as Record<string, unknown>
      expect(first).toMatchObject({ store: false, parallel_tool_calls: false, stream: true, include: ["reasoning.encrypted_content"] })
      const saved = sessionLines(home)[1]!["output"] as Array<Record<string, unknown>>
      const second = inputOf(requests[1]!)
      expect(second).toEqual([
        { type: "message", role: "user", content: [{ type: "input_text", text: "echo two things" }] },
        ...saved,
        { type: "function_call_output", call_id: "c1", output: JSON.stringify({ status: "completed", output: "one" }) },
        { type: "function_call_output", call_id: "c2", output: JSON.stringify({ status: "completed", output: "two" }) }
      ])
      expect(saved.map((item) => item["type"])).toEqual(["reasoning", "message", "function_call", "function_call"])
      expect(saved[0]).toMatchObject({ encrypted_content: "gAAAA-opaque" })
      expect(saved[1]).toMatchObject({ phase: "commentary", unknown_field: [1, 2] })
    }))

  const invalid: ReadonlyArray<readonly [string, ReadonlyArray<ResponsesServer.Reply>, RegExp]> = [
    ["a call without call_id", [ResponsesServer.toolCallResponse([echo("c1"), echo("")])], /no call_id/],
    ["two calls with the same call_id", [ResponsesServer.toolCallResponse([echo("c1"), echo("c1")])], /share call_id/],
    ["a call_id reused from earlier in the turn", [
      ResponsesServer.toolCallResponse([echo("c1")]),
      ResponsesServer.toolCallResponse([echo("c2"), echo("c1")])
    ], /already used earlier/]
  ]
  for (const [name, replies, reason] of invalid) {
    it.scopedLive(`${name} invalidates the response: none of its calls runs and the turn fails`, () =>
      Effect.gen(function*() {
        const home = tempDir("agent")
        const ran: Array<string> = []
        const server = yield* scriptedModel(replies)
        const { outcome } = yield* withAgent({ home, url: server.url, tools: [EchoTool.make((text) => void ran.push(text))] }, turn("go"))
        expect(outcome.status).toBe("failed")
        expect(outcome.reason).toMatch(reason)
        // Only the first, valid response of the reuse case ran its call.
        expect(ran).toEqual(replies.length === 2 ? ["c1"] : [])
        const lines = sessionLines(home)
        expect(lines.at(-1)).toMatchObject({ type: "turn_end", status: "failed" })
        expect(types(lines).filter((t) => t === "tool_start")).toHaveLength(ran.length)
      }))
  }

  const incomplete: ReadonlyArray<readonly [string, (steps: Array<ResponsesServer.Step>) => Array<ResponsesServer.Step>]> = [
    ["ends without response.completed", (steps) => steps.slice(0, -1)],
    ["drops mid-stream after the call's item is done", (steps) => [...steps.slice(0, -1), "drop"]],
    ["reports response.failed", (steps) => [...steps.slice(0, -1), { type: "response.failed", response: { id: "r", status: "failed", error: { code: "server_error", message: "boom" }, output: [] } }]],
    ["reports an error event", (steps) => [...steps.slice(0, -1), { type: "error", code: "server_error", message: "boom", param: null }]]
  ]
  for (const [name, cut] of incomplete) {
    it.scopedLive(`a stream that ${name} saves no response and starts no tool`, () =>
      Effect.gen(function*() {
        const home = tempDir("agent")
        const ran: Array<string> = []
        const server = yield* scriptedModel([cut(ResponsesServer.toolCallResponse([echo("c1")])), ResponsesServer.textResponse("fine now")])
        const tools = [EchoTool.make((text) => void ran.push(text))]
        const first = yield* withAgent({ home, url: server.url, tools }, turn("go"))
        expect(first.outcome.status).toBe("failed")
        expect(ran).toEqual([])
        expect(types(sessionLines(home))).toEqual(["user_input", "turn_end"])
        // The chat goes on, and the failed turn is left out of the next request.
        const second = yield* withAgent({ home, url: server.url, tools }, turn("again"))
        expect(second.outcome.status).toBe("completed")
        const requests = yield* server.requests
        expect(inputOf(requests.at(-1)!)).toEqual([{ type: "message", role: "user", content: [{ type: "input_text", text: "again" }] }])
      }))
  }

  it.scopedLive("an unknown tool or invalid arguments is answered without asking; a denial without a start", () =>
    Effect.gen(function*() {
      const home = tempDir("agent")
      const asked: Array<string> = []
      const server = yield* scriptedModel([
        ResponsesServer.toolCallResponse([
          { call_id: "c1", name: "rm_rf", arguments: "{}" },
          { call_id: "c2", name: "echo", arguments: "{\"nope\":1}" },
          echo("c3", "please"),
          echo("c4", "and this")
        ]),
        ResponsesServer.textResponse("ok")
      ])
      const approver = Layer.succeed(Approver, Approver.of({
        decide: (display) => Effect.sync(() => {
          const field = display.fields[0]
          const text = field?.kind === "value" ? field.value : ""
          asked.push(text)
          return text === "please" ? { approved: false, reason: "the user did not approve" } : { approved: true }
        })
      }))
      const { outcome } = yield* withAgent({ home, url: server.url, tools: [EchoTool.make()], approver }, turn("go"))
      expect(outcome.status).toBe("completed")
      expect(asked).toEqual(["please", "and this"])
      const lines = sessionLines(home)
      const results = lines.filter((l) => l["type"] === "tool_result").map((l) => [l["call_id"], (l["result"] as { status: string }).status])
      expect(results).toEqual([["c1", "unknown_tool"], ["c2", "invalid_arguments"], ["c3", "denied"], ["c4", "completed"]])
      expect(lines.filter((l) => l["type"] === "tool_start").map((l) => l["call_id"])).toEqual(["c4"])
    }))

  it.scopedLive("stops after 8 requests: the 8th response's calls are not executed and the turn fails", () =>
    Effect.gen(function*() {
      const home = tempDir("agent")
      const ran: Array<string> = []
      let n = 0
      const server = yield* scriptedModel([() => Effect.sync(() => ResponsesServer.toolCallResponse([echo(`c${++n}`)]))])
      const { outcome } = yield* withAgent({ home, url: server.url, tools: [EchoTool.make((t) => void ran.push(t))] }, turn("loop"))
      expect(outcome.status).toBe("failed")
      expect(outcome.reason).toMatch(/8 requests/)
      expect(yield* server.requests).toHaveLength(8)
      expect(ran).toEqual(["c1", "c2", "c3", "c4", "c5", "c6", "c7"])
      const lines = sessionLines(home)
      expect(lines.slice(-2)).toMatchObject([
        { type: "tool_result", call_id: "c8", result: { status: "not_executed" } },
        { type: "turn_end", status: "failed" }
      ])
    }))

  it.scopedLive("a batch that would exceed 16 calls runs none of its calls; exactly 16 is allowed", () =>
    Effect.gen(function*() {
      const batch = (prefix: string, size: number) => Array.from({ length: size }, (_, i) => echo(`${prefix}${i}`))
      const home = tempDir("agent")
      const ran: Array<string> = []
      const tools = [EchoTool.make((t) => void ran.push(t))]
      const over = yield* scriptedModel([ResponsesServer.toolCallResponse(batch("a", 10)), ResponsesServer.toolCallResponse(batch("b", 7))])
      const { outcome } = yield* withAgent({ home, url: over.url, tools }, turn("many"))
      expect(outcome.status).toBe("failed")
      expect(ran).toHaveLength(10)
      const notExecuted = sessionLines(home).filter((l) => (l["result"] as { status?: string } | undefined)?.status === "not_executed")
      expect(notExecuted.map((l) => l["call_id"])).toEqual(batch("b", 7).map((c) => c.call_id))

      const exact = yield* scriptedModel([
        ResponsesServer.toolCallResponse(batch("x", 10)),
        ResponsesServer.toolCallResponse(batch("y", 6)),
        ResponsesServer.textResponse("sixteen")
      ])
      const second = yield* withAgent({ home: tempDir("agent"), url: exact.url, tools }, turn("sixteen"))
      expect(second.outcome.status).toBe("completed")
      expect(ran).toHaveLength(26)
    }))

  it.scopedLive("denied calls count toward the 16-call limit too", () =>
    Effect.gen(function*() {
      const batch = (prefix: string, size: number) => Array.from({ length: size }, (_, i) => echo(`${prefix}${i}`))
      const home = tempDir("agent")
      const server = yield* scriptedModel([ResponsesServer.toolCallResponse(batch("d", 10)), ResponsesServer.toolCallResponse(batch("e", 7))])
      const { outcome } = yield* withAgent({ home, url: server.url, tools: [EchoTool.make()], approve: () => false }, turn("deny all"))
      expect(outcome.status).toBe("failed")
      expect(outcome.reason).toMatch(/limit of 16/)
      const statuses = sessionLines(home).filter((l) => l["type"] === "tool_result").map((l) => (l["result"] as { status: string }).status)
      expect(statuses).toEqual([...Array(10).fill("denied"), ...Array(7).fill("not_executed")])
    }))

  it.scopedLive("a second turn while one runs is rejected as busy before its input is written", () =>
    Effect.gen(function*() {
      const home = tempDir("agent")
      const requested = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const server = yield* scriptedModel([() =>
        Effect.as(Deferred.succeed(requested, undefined), [{ wait: Deferred.await(release) }, ...ResponsesServer.textResponse("slow")])
      ])
      yield* withAgent({ home, url: server.url, tools: [] }, Effect.gen(function*() {
        const agent = yield* Agent
        const first = yield* Effect.fork(turn("first"))
        yield* Deferred.await(requested)
        const second = yield* Effect.exit(agent.turn("second", () => Effect.void))
        expect(Exit.isFailure(second) && String(second.cause).includes("AgentBusy")).toBe(true)
        expect(sessionLines(home).filter((l) => l["type"] === "user_input").map((l) => l["text"])).toEqual(["first"])
        yield* Deferred.succeed(release, undefined)
        expect((yield* Fiber.join(first)).outcome.status).toBe("completed")
      }))
    }))

  it.scopedLive("a failed sync stops the turn with a typed error; the state does not advance and nothing runs", () =>
    Effect.gen(function*() {
      const home = tempDir("agent")
      const ran: Array<string> = []
      const server = yield* scriptedModel([ResponsesServer.toolCallResponse([echo("c1")])])
      const disk = FaultyDisk.layer({ sync: { code: "ENOSPC", after: 1 } })
      const result = yield* withAgent({ home, url: server.url, tools: [EchoTool.make((t) => void ran.push(t))], disk }, Effect.gen(function*() {
        const store = yield* SessionStore
        const exit = yield* Effect.exit(turn("go"))
        return { exit, context: yield* store.context }
      }))
      expect(Exit.isFailure(result.exit)).toBe(true)
      expect(String(Exit.isFailure(result.exit) ? result.exit.cause : "")).toMatch(/SessionWriteError[\s\S]*ENOSPC/)
      expect(types(sessionLines(home))).toEqual(["user_input"])
      expect(result.context).toEqual([])
      expect(ran).toEqual([])
    }))

  it.scopedLive("Ctrl+C (interruption) during a call ends the turn cancelled and closes open calls", () =>
    Effect.gen(function*() {
      const home = tempDir("agent")
      const asking = yield* Deferred.make<void>()
      const server = yield* scriptedModel([ResponsesServer.toolCallResponse([echo("c1"), echo("c2")])])
      const approver = Layer.succeed(Approver, Approver.of({ decide: () => Effect.zipRight(Deferred.succeed(asking, undefined), Effect.never) }))
      yield* withAgent({ home, url: server.url, tools: [EchoTool.make()], approver }, Effect.gen(function*() {
        const running = yield* Effect.fork(turn("go"))
        yield* Deferred.await(asking)
        yield* Fiber.interrupt(running)
      }))
      expect(sessionLines(home).slice(2)).toMatchObject([
        { type: "tool_result", call_id: "c1", result: { status: "not_executed" } },
        { type: "tool_result", call_id: "c2", result: { status: "not_executed" } },
        { type: "turn_end", status: "cancelled" }
      ])
    }))
})
