/**
 * Every save point fails typed (chapter 3 §4.1, the design card's session
 * error): a failed write or fsync of any record of a tool turn — `turn_end`
 * and the records that close a turn early included — stops the turn with the
 * `SessionWriteError` (one line naming the file and the errno), never a defect;
 * memory keeps only what the disk committed; and a restart closes the turn and
 * runs nothing twice. The restart's own writes fail typed too.
 */
import * as Fs from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import { SessionStore } from "../../src/session/SessionStore.js"
import * as EchoTool from "../support/EchoTool.js"
import * as FaultyDisk from "../support/FaultyDisk.js"
import { agentLayer, scriptedModel, sessionFile, sessionLines, tempDir, turn, types } from "../support/Harness.js"

const call = (id: string) => ResponsesServer.toolCallResponse([{ call_id: id, name: "echo", arguments: JSON.stringify({ text: id }) }])

/**
 * The second turn's saves, in order, for each way a tool turn goes: answered
 * (six records, each its own write and fsync), or ended by the model's failure
 * after its tool ran (four records, then `turn_end` written by the closing).
 */
const scenarios = [
  {
    name: "a tool turn answered",
    replies: [call("c1"), ResponsesServer.textResponse("first done"), call("c2"), ResponsesServer.textResponse("second done")],
    saves: ["user_input", "model_response", "tool_start", "tool_result", "model_response", "turn_end"]
  },
  {
    name: "a tool turn ended by the model's failure (closed early)",
    replies: [call("c1"), ResponsesServer.textResponse("first done"), call("c2"), ResponsesServer.httpError(400, "bad request")],
    saves: ["user_input", "model_response", "tool_start", "tool_result", "turn_end"]
  }
] as const

/** Every record the first, completed, turn leaves. */
const FIRST_TURN = ["user_input", "model_response", "tool_start", "tool_result", "model_response", "turn_end"]

type Scenario = (typeof scenarios)[number]

/** One case: the `index`th save of the second turn fails on its `where` with `code`. */
const failAt = (scenario: Scenario, where: "write" | "sync", code: FaultyDisk.Errno, index: number) =>
  Effect.gen(function*() {
    const what = `${scenario.name}: ${code} on ${where} of ${scenario.saves[index]} (save ${index + 1})`
    const home = tempDir("savepoints")
    const ran: Array<string> = []
    const server = yield* scriptedModel(scenario.replies)
    const faults: FaultyDisk.Faults = {}
    const echo = EchoTool.make((text) => void ran.push(text))
    const layer = agentLayer({ home, url: server.url, tools: [echo], disk: FaultyDisk.layer(faults) })

    const { exit, context, fileAtFailure } = yield* Effect.scoped(Effect.gen(function*() {
      const first = yield* turn("one")
      expect(first.outcome.status, what).toBe("completed")
      const store = yield* SessionStore
      const contextBefore = (yield* store.context).length
      faults[where] = { code, after: index }
      const exit = yield* Effect.exit(turn("two"))
      // Memory holds what the disk committed, no more: the second turn never reached the context.
      expect((yield* store.context).length, what).toBe(contextBefore)
      return { exit, context: contextBefore, fileAtFailure: Fs.readFileSync(sessionFile(home)!, "utf8") }
    }).pipe(Effect.provide(layer)))

    // Typed, not a defect: one line naming the file and the errno.
    expect(Exit.isFailure(exit), what).toBe(true)
    const cause = Exit.isFailure(exit) ? exit.cause : Cause.empty
    expect(Option.isNone(Cause.dieOption(cause)), `${what}: ${Cause.pretty(cause)}`).toBe(true)
    const error = Cause.failureOption(cause)
    expect(Option.isSome(error) && error.value._tag, what).toBe("SessionWriteError")
    const message = Option.isSome(error) ? error.value.message : ""
    const file = sessionFile(home)!
    expect(message, what).toMatch(new RegExp(`^cannot save the session to ${file.replace(/[.]/g, "\\.")}: ${code} \\(`))
    expect(message, what).not.toContain("\n")
    expect(context, what).toBeGreaterThan(0)

    // The file: the first turn whole, then the second turn's saves before the failed one, whole.
    const lines = sessionLines(home)
    expect(types(lines), what).toEqual([...FIRST_TURN, ...scenario.saves.slice(0, index)])
    // The tool ran only if its start was saved.
    expect(ran, what).toEqual(index > 2 ? ["c1", "c2"] : ["c1"])

    // The restart's own save (closing the open turn) fails typed too, and leaves the file as it was.
    // (When the turn's first save failed, no turn is open: the restart has nothing to write.)
    const failedRestart = yield* Effect.exit(Effect.scoped(Layer.build(
      agentLayer({ home, url: server.url, tools: [echo], disk: FaultyDisk.layer({ [where]: { code, after: 0 } }) })
    )))
    expect(Exit.isFailure(failedRestart), what).toBe(index > 0)
    if (index > 0) {
      const restartCause = Exit.isFailure(failedRestart) ? failedRestart.cause : Cause.empty
      expect(Option.isNone(Cause.dieOption(restartCause)), `${what}: ${Cause.pretty(restartCause)}`).toBe(true)
      const restartError = Cause.failureOption(restartCause)
      expect(Option.isSome(restartError) && restartError.value._tag, what).toBe("SessionOpenError")
      expect(Option.isSome(restartError) ? restartError.value.message : "", what).toMatch(new RegExp(`^cannot save the session to \\S+\\.jsonl: ${code} \\(`))
    }
    expect(Fs.readFileSync(file, "utf8"), what).toBe(fileAtFailure)

    // A good restart closes the turn and runs nothing again; the next turn (a text answer) goes on.
    const answers = yield* scriptedModel([ResponsesServer.textResponse("third done")])
    const restarted = yield* Effect.scoped(Effect.gen(function*() {
      const store = yield* SessionStore
      const notices = store.notices
      const next = yield* turn("three")
      return { notices, next: next.outcome.status, context: (yield* store.context).length }
    }).pipe(Effect.provide(agentLayer({ home, url: answers.url, tools: [echo] }))))
    expect(restarted.next, what).toBe("completed")
    expect(restarted.notices.some((notice) => notice.includes("interrupted")), what).toBe(index > 0)
    if (index > 2) expect(restarted.notices.join("\n"), what).toContain("none was retried")
    expect(ran, what).toEqual(index > 2 ? ["c1", "c2"] : ["c1"])
    const after = sessionLines(home)
    const second = after.slice(FIRST_TURN.length)
    expect(second.filter((line) => line["type"] === "tool_start"), what).toHaveLength(index > 2 ? 1 : 0)
    // Closed on disk: a result for the call whose start was saved (unknown, never re-run), then turn_end.
    const closing = second.slice(index)
    if (index === 3) expect(closing[0], what).toMatchObject({ type: "tool_result", call_id: "c2", result: { status: "unknown" } })
    if (index > 0) expect(closing.find((line) => line["type"] === "turn_end"), what).toMatchObject({ status: "interrupted" })
    expect(restarted.context, what).toBeGreaterThanOrEqual(context)
  })

describe("every save point of a tool turn fails typed", () => {
  for (const scenario of scenarios) {
    it.scopedLive(`${scenario.name}: each write and each fsync failed in turn (EIO, ENOSPC)`, () =>
      Effect.gen(function*() {
        let cases = 0
        for (let index = 0; index < scenario.saves.length; index++) {
          for (const [where, code] of [["write", "EIO"], ["sync", "EIO"], ["sync", "ENOSPC"]] as const) {
            yield* failAt(scenario, where, code, index)
            cases++
          }
        }
        console.log(`${scenario.name}: ${cases} save-point failures, each typed, one line, nothing run twice`)
      }), 120_000)
  }
})
