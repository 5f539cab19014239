/**
 * The screen tells the truth, compactly: the built `mino` in a pseudo-terminal.
 * A result header names what happened; long output is folded on screen while the
 * model and the file get the whole capture; failures start their own line;
 * message items are separate paragraphs; a refusal is marked; the banner
 * escapes what came from outside; a long command cannot hide its beginning; the
 * spinner runs with NO_COLOR.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import * as Pty from "../support/Pty.js"
import {
  answerPrompt,
  bashCall,
  BIN,
  environment,
  exitsWith,
  inputOf,
  requestsReceived,
  sandbox,
  scriptedServer,
  sessionRecords,
  startReady
} from "../support/MinoProcess.js"

type Step = ResponsesServer.Step
type Event = Readonly<Record<string, unknown>>

const isEvent = (step: Step): step is Step & Event => typeof step === "object" && "type" in step

/** One response holding the message items of several text responses, in order. */
const messages = (...texts: ReadonlyArray<string>): Array<Step> => {
  const parts = texts.map((text, index) => ResponsesServer.textResponse(text, { id: `msg_${index}` }))
  const completions = parts.map((steps) => steps.at(-1)).filter((step): step is Step & Event => step !== undefined && isEvent(step))
  const outputs = completions.flatMap((step) => {
    const response = step["response"]
    return typeof response === "object" && response !== null && "output" in response && Array.isArray(response.output)
      ? response.output
      : []
  })
  const first: Event | undefined = completions[0]
  const response = first?.["response"]
  if (first === undefined || typeof response !== "object" || response === null) throw new Error("no response")
  return [
    ...parts.flatMap((steps) => steps.slice(2, -1)),
    { ...first, type: "response.completed", response: { ...response, output: outputs } }
  ]
}

/** A response whose one message is a refusal, streamed as refusal deltas. */
const refusal = (text: string): Array<Step> => {
  const item = { id: "msg_refusal", type: "message", status: "completed", role: "assistant", content: [{ type: "refusal", refusal: text }] }
  const where = { item_id: "msg_refusal", output_index: 0, content_index: 0 }
  return [
    { type: "response.output_item.added", output_index: 0, item: { ...item, status: "in_progress", content: [] } },
    { type: "response.refusal.delta", ...where, delta: text },
    { type: "response.output_item.done", output_index: 0, item },
    {
      type: "response.completed",
      response: { id: "resp_refusal", object: "response", status: "completed", model: "m", output: [item] }
    }
  ]
}

describe("the screen tells the truth, compactly", () => {
  it.scopedLive("overflow: the header names truncation and the kill; the screen folds, the model and the file get it all", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const server = yield* scriptedServer([
        ResponsesServer.toolCallResponse([bashCall("c1", "yes")]),
        ResponsesServer.textResponse("That was a lot.")
      ])
      const { mino } = yield* startReady(box, server.url)
      yield* mino.write("flood\r")
      yield* mino.waitFor("Approve this operation? [y/N] ")
      yield* answerPrompt(mino, "y")
      const result = yield* mino.waitFor("Assistant> That was a lot.")
      expect(result).toContain("[Tool result: failed; output truncated at 64 KiB, process group killed")
      // About 32,700 lines of `y` (the capture cut to fit 64 KiB with the runner's note): ten lines, the fold line, the last ten.
      expect(result).toMatch(/\n(y\n){10}… 32,[67]\d\d lines not shown here; the model received the whole capture …\n(y\n){9}/)
      expect(result.slice(result.indexOf("[Tool result")).split("\n").filter((line) => line === "y").length).toBeLessThanOrEqual(20)
      const [, second] = yield* requestsReceived(server, 2)
      const output = inputOf(second!).find((item) => item["type"] === "function_call_output")?.["output"]
      const sent = JSON.parse(String(output)) as { output: string; truncated?: boolean }
      // What is sent is what is capped: 65,536 bytes at most, the note included (issue 17).
      expect(sent.output.startsWith("y\n".repeat(32_600))).toBe(true)
      expect(Buffer.byteLength(sent.output)).toBeLessThanOrEqual(65_536)
      expect(sent.truncated).toBe(true)
      const saved = sessionRecords(box).find((record) => record["type"] === "tool_result")?.["result"] as { output: string }
      expect(saved.output).toBe(sent.output)
      yield* mino.write("\x04")
      yield* exitsWith(mino, { code: 0, signal: null })
    }), 60_000)

  it.scopedLive("a failure after streamed text starts its own line; message items are separate; a refusal is marked", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      // Up to the first delta ("partial "), then the connection drops.
      const partial = ResponsesServer.textResponse("partial answer").slice(0, 5)
      const server = yield* scriptedServer([
        [...partial, "drop"],
        messages("Got it.", "Here are the files."),
        refusal("I can't help with that.")
      ])
      const { mino } = yield* startReady(box, server.url)
      yield* mino.write("one\r")
      expect(yield* mino.waitFor("You> ")).toMatch(/Assistant> partial \nTurn failed: /)
      yield* mino.write("two\r")
      expect(yield* mino.waitFor("You> ")).toContain("Assistant> Got it.\n\nHere are the files.\n")
      yield* mino.write("three\r")
      expect(yield* mino.waitFor("You> ")).toContain("Assistant> [refusal] I can't help with that.\n")
      yield* mino.write("\x04")
      yield* exitsWith(mino, { code: 0, signal: null })
      // Display only: the saved refusal is unchanged.
      expect(JSON.stringify(sessionRecords(box).at(-2))).toContain("\"refusal\":\"I can't help with that.\"")
    }), 60_000)

  it.scopedLive("the banner escapes a hostile directory name and model name", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const server = yield* scriptedServer([])
      const cwd = path.join(box.cwd, "evil\u001b[2J\u001b[Hdir")
      fs.mkdirSync(cwd)
      const model = "gpt\u001b]52;c;cm0gLXJmIH4=\u0007"
      const mino = yield* Pty.spawn({
        argv: [process.execPath, BIN],
        env: { ...environment(box, server.url), MINO_MODEL: model },
        cwd
      })
      const opening = yield* mino.waitFor("You> ")
      expect(opening).not.toContain("\u001b")
      expect(opening).not.toContain("\u0007")
      expect(opening).toContain("model gpt\\e]52;c;cm0gLXJmIH4=\\x07\n")
      expect(opening).toContain("evil\\e[2J\\e[Hdir after you approve them")
      yield* mino.write("\x04")
      yield* exitsWith(mino, { code: 0, signal: null })
    }), 30_000)

  it.scopedLive("a long command shows its size and its beginning beside the prompt; a run of blanks is visible", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const command = `echo start${" ".repeat(40)}; touch hidden\n${"echo filler; ".repeat(200)}`
      const server = yield* scriptedServer([
        ResponsesServer.toolCallResponse([bashCall("c1", command)]),
        ResponsesServer.textResponse("Not run.")
      ])
      const { mino } = yield* startReady(box, server.url)
      yield* mino.write("long\r")
      const approval = yield* mino.waitFor("Approve this operation? [y/N] ")
      const lines = approval.split("\n")
      const commandLine = lines.find((line) => line.startsWith("Command: "))!
      // The blanks are shown as escapes, and the line still reads back as exactly the command.
      expect(commandLine).toContain("echo start" + "\\u0020".repeat(40) + "; touch hidden")
      expect(JSON.parse(commandLine.slice("Command: ".length))).toBe(command)
      expect(lines.at(-2)).toBe(
        `Command above: ${Buffer.byteLength(command).toLocaleString("en-US")} bytes, 2 line(s); it begins "echo start${"\\u0020".repeat(40)}; touch hidden" …`
      )
      yield* answerPrompt(mino, "")
      yield* mino.waitFor("[Tool result: denied]")
      expect(fs.existsSync(path.join(box.cwd, "hidden"))).toBe(false)
    }), 30_000)

  it.scopedLive("with NO_COLOR a spinner still counts the seconds while the model thinks, with no colour", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const gate = yield* Deferred.make<void>()
      const server = yield* scriptedServer([[{ wait: Deferred.await(gate) }, ...ResponsesServer.textResponse("Done.")]])
      const { mino } = yield* startReady(box, server.url)
      yield* mino.write("think\r")
      const waiting = yield* mino.waitFor(/waiting for the model 1s/)
      expect(waiting).not.toMatch(/\u001b\[[0-9;]*m/)
      yield* Deferred.succeed(gate, undefined)
      yield* mino.waitFor("Assistant> Done.")
      yield* mino.write("\x04")
      yield* exitsWith(mino, { code: 0, signal: null })
    }), 30_000)
})
