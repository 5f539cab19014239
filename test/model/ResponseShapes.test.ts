/**
 * The edges of the Responses protocol, played by the loopback server to the real
 * ModelClient and Agent: only a successful `response.completed` is acted on,
 * output Mino cannot handle fails the turn before anything runs, what the API
 * cannot take back is not replayed, and text is shown wherever it arrived.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type { AgentEvent } from "../../src/agent/AgentEvent.js"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import type { ResponseItem } from "../../src/protocol/ResponseItem.js"
import * as EchoTool from "../support/EchoTool.js"
import { inputOf, scriptedModel, sessionLines, tempDir, turn, types, withAgent } from "../support/Harness.js"

type Steps = Array<ResponsesServer.Step>

const echoCall = (callId = "c1") => ({ call_id: callId, name: "echo", arguments: JSON.stringify({ text: "ran" }) })

const isEvent = (step: ResponsesServer.Step): step is ResponsesServer.ServerEvent => typeof step === "object" && "type" in step

/** `steps` with its response.completed's `response` replaced by `edit(response)`. */
const editCompleted = (steps: Steps, edit: (response: ResponseItem) => ResponseItem): Steps =>
  steps.map((step) =>
    isEvent(step) && step.type === "response.completed" ? { ...step, response: edit(step["response"] as ResponseItem) } : step
  )

const outputOf = (response: ResponseItem): Array<ResponseItem> => response["output"] as Array<ResponseItem>

const shownText = (events: ReadonlyArray<AgentEvent>) =>
  events.flatMap((event) => (event._tag === "TextDelta" ? [event.text] : [])).join("")

const userMessage = (text: string) => ({ type: "message", role: "user", content: [{ type: "input_text", text }] })

/**
 * Plays `reply` as the answer to a first turn, with an echo tool that records what
 * runs, then a second turn answered with text. Returns what a test checks.
 */
const twoTurns = (reply: ResponsesServer.Reply) =>
  Effect.gen(function*() {
    const home = tempDir("shapes")
    const ran: Array<string> = []
    const server = yield* scriptedModel([reply, ResponsesServer.textResponse("second answer")])
    const setup = { home, url: server.url, tools: [EchoTool.make((text) => void ran.push(text))] }
    const first = yield* withAgent(setup, turn("first"))
    const lines = sessionLines(home)
    const second = yield* withAgent(setup, turn("second"))
    const requests = yield* server.requests
    return { first, second, ran, lines, nextInput: inputOf(requests.at(-1)!) }
  })

/** The turn failed with one line matching `reason`, nothing ran, and the next request holds nothing of it. */
const expectFailedAndForgotten = (result: Effect.Effect.Success<ReturnType<typeof twoTurns>>, reason: RegExp) => {
  expect(result.first.outcome.status).toBe("failed")
  expect(result.first.outcome.reason).toMatch(reason)
  expect(result.first.outcome.reason).not.toContain("\n")
  expect(result.ran).toEqual([])
  expect(result.lines.some((line) => line["type"] === "tool_start" || line["type"] === "tool_result")).toBe(false)
  expect(result.second.outcome.status).toBe("completed")
  expect(result.nextInput).toEqual([userMessage("second")])
}

describe("act only on a successful response.completed", () => {
  it.scopedLive("a response.completed whose status is incomplete fails the turn; its call never runs", () =>
    Effect.gen(function*() {
      const reply = editCompleted(ResponsesServer.toolCallResponse([echoCall()]), (response) => ({
        ...response,
        status: "incomplete",
        incomplete_details: { reason: "max_output_tokens" }
      }))
      const result = yield* twoTurns(reply)
      expectFailedAndForgotten(result, /^model response incomplete: max_output_tokens$/)
      expect(types(result.lines)).toEqual(["user_input", "turn_end"])
    }))

  it.scopedLive("a response.completed carrying an error fails the turn; its call never runs", () =>
    Effect.gen(function*() {
      const reply = editCompleted(ResponsesServer.toolCallResponse([echoCall()]), (response) => ({
        ...response,
        status: "failed",
        error: { code: "server_error", message: "The model crashed" }
      }))
      expectFailedAndForgotten(yield* twoTurns(reply), /^model response failed: The model crashed$/)
    }))

  it.scopedLive("a response.completed with any other status than completed fails the turn", () =>
    Effect.gen(function*() {
      const reply = editCompleted(ResponsesServer.toolCallResponse([echoCall()]), (response) => ({ ...response, status: "in_progress" }))
      expectFailedAndForgotten(yield* twoTurns(reply), /status "in_progress", not completed/)
    }))

  it.scopedLive("a function_call whose status is not completed invalidates the whole response", () =>
    Effect.gen(function*() {
      const reply = editCompleted(ResponsesServer.toolCallResponse([echoCall("c1"), echoCall("c2")]), (response) => ({
        ...response,
        output: outputOf(response).map((item) => (item["call_id"] === "c2" ? { ...item, status: "in_progress" } : item))
      }))
      const result = yield* twoTurns(reply)
      // c1 is valid, but nothing of an invalid response runs.
      expectFailedAndForgotten(result, /^invalid response: tool call "c2" is "in_progress", not completed$/)
      // Refused, so not saved as a model_response (chapter 3 §4.1: validated, then saved).
      expect(types(result.lines)).toEqual(["user_input", "turn_end"])
    }))

  for (const type of ["custom_tool_call", "local_shell_call", "apply_patch_call", "mcp_approval_request", "web_search_call"]) {
    it.scopedLive(`an output item of type ${type} fails the turn naming it; nothing runs; the turn is not replayed`, () =>
      Effect.gen(function*() {
        const unknown = { id: "ct_1", type, status: "completed", call_id: "x1", name: "shell", input: "rm -rf /tmp/x" }
        const reply = editCompleted(ResponsesServer.toolCallResponse([echoCall()]), (response) => ({
          ...response,
          output: [unknown, ...outputOf(response)]
        }))
        const result = yield* twoTurns(reply)
        expectFailedAndForgotten(result, new RegExp(`^invalid response: the model sent an output item of type "${type}", which Mino cannot handle$`))
        // Refused, so not saved as a model_response: the turn_end says why; never sent back.
        expect(types(result.lines)).toEqual(["user_input", "turn_end"])
        expect(JSON.stringify(result.lines)).not.toContain("rm -rf /tmp/x")
        expect(result.lines.at(-1)).toMatchObject({ type: "turn_end", status: "failed", reason: result.first.outcome.reason })
      }))
  }

  it.scopedLive("an output item without a type fails the turn", () =>
    Effect.gen(function*() {
      const reply = editCompleted(ResponsesServer.textResponse("hello"), (response) => ({
        ...response,
        output: [...outputOf(response), { id: "odd", content: [] }]
      }))
      expectFailedAndForgotten(yield* twoTurns(reply), /output item without a type/)
    }))
})

describe("replay what the API can take back", () => {
  it.scopedLive("a reasoning item without encrypted_content stays in the file but is never sent back", () =>
    Effect.gen(function*() {
      const home = tempDir("shapes")
      const plain = { id: "rs_plain", type: "reasoning", summary: [{ type: "summary_text", text: "thinking" }] }
      const emptyBlob = { id: "rs_empty", type: "reasoning", summary: [], encrypted_content: "" }
      const call = editCompleted(
        ResponsesServer.toolCallResponse([echoCall()], { reasoning: { id: "rs_kept", encrypted_content: "gAAAAkept==" } }),
        (response) => ({ ...response, output: [plain, emptyBlob, ...outputOf(response)] })
      )
      const server = yield* scriptedModel([call, ResponsesServer.textResponse("done"), ResponsesServer.textResponse("again")])
      const setup = { home, url: server.url, tools: [EchoTool.make()] }
      expect((yield* withAgent(setup, turn("first"))).outcome.status).toBe("completed")
      expect((yield* withAgent(setup, turn("second"))).outcome.status).toBe("completed")

      const saved = sessionLines(home).find((line) => line["type"] === "model_response")
      expect((saved?.["output"] as Array<ResponseItem>).slice(0, 2)).toEqual([plain, emptyBlob])
      const requests = yield* server.requests
      for (const request of requests.slice(1)) {
        const ids = inputOf(request).map((item) => item["id"])
        expect(ids).not.toContain("rs_plain")
        expect(ids).not.toContain("rs_empty")
        // The reasoning the API can resolve goes back verbatim, in its place before the call.
        const kept = inputOf(request).find((item) => item["id"] === "rs_kept")
        expect(kept).toEqual({ id: "rs_kept", type: "reasoning", encrypted_content: "gAAAAkept==", summary: [] })
        expect(ids.indexOf("rs_kept")).toBeLessThan(inputOf(request).findIndex((item) => item["type"] === "function_call"))
      }
    }))
})

describe("show what the model said", () => {
  it.scopedLive("text that arrived only in output_item.done is shown, once", () =>
    Effect.gen(function*() {
      const reply = ResponsesServer.textResponse("Only in the done event.").filter((step) =>
        !(isEvent(step) && step.type === "response.output_text.delta")
      )
      const result = yield* twoTurns(reply)
      expect(result.first.outcome.status).toBe("completed")
      expect(shownText(result.first.events)).toBe("Only in the done event.")
    }))

  it.scopedLive("text that arrived only in response.completed is shown", () =>
    Effect.gen(function*() {
      const reply = ResponsesServer.textResponse("Only in the completed event.").filter((step) =>
        isEvent(step) && (step.type === "response.created" || step.type === "response.completed")
      )
      const result = yield* twoTurns(reply)
      expect(result.first.outcome.status).toBe("completed")
      expect(shownText(result.first.events)).toBe("Only in the completed event.")
    }))

  it.scopedLive("streamed text is not shown a second time from the done or completed events", () =>
    Effect.gen(function*() {
      const result = yield* twoTurns(
        ResponsesServer.toolCallResponse([echoCall()], { message: { text: "Let me check." } })
      )
      expect(shownText(result.first.events)).toBe("Let me check.second answer")
    }))

  for (
    const [name, output] of [
      ["an empty output", []],
      ["only a reasoning item", [{ id: "rs_1", type: "reasoning", encrypted_content: "gAAAA", summary: [] }]],
      ["a message with empty text", [{ id: "m", type: "message", role: "assistant", content: [{ type: "output_text", text: "" }] }]]
    ] as const
  ) {
    it.scopedLive(`a response with ${name} fails: the model returned no text or tool calls`, () =>
      Effect.gen(function*() {
        const reply = editCompleted(ResponsesServer.textResponse("x").filter((step) =>
          isEvent(step) && (step.type === "response.created" || step.type === "response.completed")
        ), (response) => ({ ...response, output }))
        expectFailedAndForgotten(yield* twoTurns(reply), /the model returned no text or tool calls$/)
      }))
  }

  it.scopedLive("a non-streaming JSON reply is named as such", () =>
    Effect.gen(function*() {
      const body = {
        id: "resp_json",
        object: "response",
        status: "completed",
        output: [{ id: "msg_1", type: "message", role: "assistant", content: [{ type: "output_text", text: "hi" }] }]
      }
      const result = yield* twoTurns({ status: 200, body })
      expectFailedAndForgotten(
        result,
        /^the model endpoint did not answer with a Responses event stream: it sent a non-streaming reply \(application\/json\)$/
      )
    }))

  it.scopedLive("a context-window error says so and points to `mino --new`", () =>
    Effect.gen(function*() {
      const result = yield* twoTurns({
        status: 400,
        body: {
          error: {
            message: "Your input exceeds the context window of this model. Please adjust your input and try again.",
            type: "invalid_request_error",
            param: "input",
            code: "context_length_exceeded"
          }
        }
      })
      expectFailedAndForgotten(
        result,
        /^model request failed: HTTP 400: the conversation no longer fits in the model's context window; start a new conversation with `mino --new`$/
      )
    }))

  it.scopedLive("a context-window failure reported in the stream says so too", () =>
    Effect.gen(function*() {
      const created = ResponsesServer.textResponse("x")[0]!
      const result = yield* twoTurns([created, {
        type: "response.failed",
        response: { id: "resp_x", status: "failed", output: [], error: { code: "context_length_exceeded", message: "Too long." } }
      }])
      expectFailedAndForgotten(result, /^model response failed: .*context window; start a new conversation with `mino --new`$/)
    }))
})
