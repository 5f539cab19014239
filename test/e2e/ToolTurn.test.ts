/**
 * The chapter's opening interaction, end to end: the built `mino` in a real
 * terminal, a scripted model on loopback, a real bash. The model asks for a
 * command, the user approves (or not) at the prompt, and the paired result goes
 * back to the model before the answer.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import {
  answerPrompt,
  API_KEY,
  bashCall,
  bodyOf,
  exitsWith,
  inputOf,
  type Json,
  recordSummary,
  requestsReceived,
  sandbox,
  scriptedServer,
  sessionFile,
  sessionRecords,
  startReady
} from "../support/MinoProcess.js"

const QUESTION = "Run go version and tell me which Go version is installed."

/** The output items a scripted reply completes with, as the server sends them. */
const completedOutput = (steps: ReadonlyArray<ResponsesServer.Step>): ReadonlyArray<unknown> => {
  const last = steps.at(-1)
  if (typeof last !== "object" || !("type" in last) || last.type !== "response.completed") throw new Error("no response.completed")
  const response = last["response"]
  if (typeof response !== "object" || response === null || !("output" in response) || !Array.isArray(response.output)) {
    throw new Error("response.completed has no output")
  }
  return response.output
}

const userMessage = (text: string) => ({ type: "message", role: "user", content: [{ type: "input_text", text }] })

/** The result object a function_call_output carries as its JSON `output`. */
const resultOf = (item: Json | undefined): unknown => {
  expect(item?.["type"]).toBe("function_call_output")
  const output = item?.["output"]
  if (typeof output !== "string") throw new Error(`function_call_output.output is not a string: ${String(output)}`)
  return JSON.parse(output)
}

describe("a bash tool turn in a terminal", () => {
  it.scopedLive("an approved call runs once, its paired result goes back to the model, then the answer streams", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const toolCall = ResponsesServer.toolCallResponse([bashCall("call_go_1", "echo go1.27.1-marker")], {
        reasoning: { encrypted_content: "gAAAA-opaque-reasoning" }
      })
      const server = yield* scriptedServer([toolCall, ResponsesServer.textResponse("This computer has Go 1.27.1.")])
      const { mino } = yield* startReady(box, server.url)

      yield* mino.write(`${QUESTION}\r`)
      const approval = yield* mino.waitFor("Approve this operation? [y/N] ")
      // An empty `Assistant>` (the response was only a tool call), then the approval screen.
      expect(approval).toContain("Assistant>\n[Tool: bash]\nCommand: \"echo go1.27.1-marker\"\n")
      expect(approval).toContain(`\nDirectory: ${box.cwd}\n`)
      expect(approval).toContain(`\nEnvironment: PATH=/usr/local/bin:/usr/bin:/bin  HOME=${box.home}  `)
      expect(approval).toContain(`  PWD=${box.cwd}\n`)
      expect(approval).toMatch(/^Timeout: 30 s$/m)
      expect(approval).toMatch(/^Output limit: 64 KiB\b/m)
      expect(approval).toMatch(/^Permissions: .*account's permissions/m)
      expect(approval).not.toContain("OPENAI")
      // Waiting for the decision: nothing has gone back to the model.
      expect((yield* server.requests).length).toBe(1)

      yield* answerPrompt(mino, "y")
      yield* mino.waitFor("[Tool result: completed; exit code 0]\ngo1.27.1-marker\n")
      yield* mino.waitFor("Assistant> This computer has Go 1.27.1.\n")
      yield* mino.waitFor("You> ")

      const [first, second, extra] = yield* requestsReceived(server, 2)
      expect(extra).toBeUndefined()
      if (first === undefined || second === undefined) throw new Error("two requests expected")
      const request = bodyOf(first)
      expect(request).toMatchObject({ store: false, parallel_tool_calls: false, include: ["reasoning.encrypted_content"] })
      expect(request["previous_response_id"]).toBeUndefined()
      expect(request["tools"]).toMatchObject([
        { type: "function", name: "bash", parameters: { required: ["command"], additionalProperties: false } }
      ])
      expect(inputOf(first)).toEqual([userMessage(QUESTION)])
      // The second request repeats the input, then the model's items verbatim and in order
      // (opaque reasoning included), then the result paired by the same call_id.
      const input = inputOf(second)
      expect(input.slice(0, -1)).toEqual([userMessage(QUESTION), ...completedOutput(toolCall)])
      expect(input.at(-1)?.["call_id"]).toBe("call_go_1")
      expect(resultOf(input.at(-1))).toEqual({ status: "completed", output: "go1.27.1-marker\n", exit_code: 0 })

      const records = sessionRecords(box)
      expect(recordSummary(records)).toEqual([
        "user_input",
        "model_response",
        "tool_start",
        "tool_result:completed",
        "model_response",
        "turn_end:completed"
      ])
      expect(new Set(records.map((record) => record["turn_id"])).size).toBe(1)
      expect(records.filter((record) => record["call_id"] !== undefined).map((record) => record["call_id"])).toEqual([
        "call_go_1",
        "call_go_1"
      ])

      yield* mino.write("\x04")
      yield* exitsWith(mino, { code: 0, signal: null }, 10_000)
      const screen = yield* mino.screen
      expect(screen).not.toContain(API_KEY)
      expect(fs.readFileSync(sessionFile(box), "utf8")).not.toContain(API_KEY)
    }), 60_000)

  for (const [label, answer] of [["n", "n"], ["just Enter", ""]] as const) {
    it.scopedLive(`answering ${label} denies: nothing runs and the model gets a denied result`, () =>
      Effect.gen(function*() {
        const box = yield* sandbox
        const marker = path.join(box.cwd, "denied-marker")
        const server = yield* scriptedServer([
          ResponsesServer.toolCallResponse([bashCall("call_deny_1", "touch denied-marker")]),
          ResponsesServer.textResponse("I could not check, because the command was not approved.")
        ])
        const { mino } = yield* startReady(box, server.url)

        yield* mino.write(`${QUESTION}\r`)
        yield* mino.waitFor("Command: \"touch denied-marker\"\n")
        yield* mino.waitFor("Approve this operation? [y/N] ")
        yield* mino.write(`${answer}\r`)
        const shown = yield* mino.waitFor("Assistant> I could not check, because the command was not approved.\n")
        expect(shown).toMatch(/\n\[Tool result: denied\]\n/)
        yield* mino.waitFor("You> ")

        expect(fs.existsSync(marker)).toBe(false)
        const [, second] = yield* requestsReceived(server, 2)
        if (second === undefined) throw new Error("a second request expected")
        const input = inputOf(second)
        expect(input.at(-1)?.["call_id"]).toBe("call_deny_1")
        expect(resultOf(input.at(-1))).toMatchObject({ status: "denied" })
        // A denied call is saved as its result, without a start.
        expect(recordSummary(sessionRecords(box))).toEqual([
          "user_input",
          "model_response",
          "tool_result:denied",
          "model_response",
          "turn_end:completed"
        ])

        yield* mino.write("\x04")
        yield* exitsWith(mino, { code: 0, signal: null }, 10_000)
        expect(fs.existsSync(marker)).toBe(false)
      }), 60_000)
  }
})
