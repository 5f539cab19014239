/**
 * Chapter 4: SIGKILL the real `mino` at each save point of a tool turn, then start
 * it again on the same HOME. Every case checks that the file is whole JSON lines,
 * that the open turn is closed on disk as the chapter says (`not_executed` for a
 * call without a start, `unknown` for a start without a result, `interrupted`),
 * that the notice comes once, before the banner, on the start that closes the turn
 * and never again, that nothing reruns (no command, no model request), and that
 * the next question's context holds nothing of the interrupted turn.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import {
  answerPrompt,
  bashCall,
  eventually,
  exitsWith,
  inputOf,
  killGroup,
  lineCount,
  NOTICE,
  packageVersion,
  pidFrom,
  recordSummary,
  requestsReceived,
  sandbox,
  type Sandbox,
  scriptedServer,
  sessionRecords,
  stall,
  startReady,
  TEXT_NOTICE
} from "../support/MinoProcess.js"
import type { Pty } from "../support/Pty.js"

const CALL_ID = "call_crash_1"
const QUESTION = "Append a run marker, then tell me about it."
const FOLLOW_UP = "What happened just now?"
const APPEND = "echo run >> runs.txt"
/** Appends its run, records its process group, then keeps running. */
const APPEND_AND_WAIT = "echo run >> runs.txt; echo $$ > bash.pid; touch started-marker; sleep 30"
const PARTIAL = "The marker was appended and"

const toolCall = (command: string) => ResponsesServer.toolCallResponse([bashCall(CALL_ID, command)])
/** A final answer whose text streams but whose response.completed never comes. */
const unfinishedAnswer: ResponsesServer.Reply = [...ResponsesServer.textResponse(`${PARTIAL} then it stopped.`).slice(0, -1), "stall"]

interface Context {
  readonly box: Sandbox
  readonly mino: Pty
  readonly server: ResponsesServer.ResponsesServer
}

interface CrashCase {
  readonly name: string
  /** The model's replies for the first run; the follow-up's answer is added after them. */
  readonly replies: ReadonlyArray<ResponsesServer.Reply>
  readonly approve: boolean
  /** Returns once mino has reached the save point; it is then SIGKILLed. */
  readonly reached: (context: Context) => Effect.Effect<unknown, unknown>
  /** The records on disk when it died. */
  readonly saved: ReadonlyArray<string>
  /** What the restart adds to close the turn (empty: the turn was complete). */
  readonly closing: ReadonlyArray<string>
  /** How many times the command ran: it must never run again. */
  readonly runs: number
  /** The notice the restart prints: the chapter's for a tool turn, its own for a turn without calls. */
  readonly notice?: string
}

const UNTIL_RESULT = ["user_input", "model_response", "tool_start", "tool_result:completed"]

const cases: ReadonlyArray<CrashCase> = [
  {
    name: "after the input is saved (the model has not answered)",
    replies: [stall],
    approve: false,
    reached: ({ server }) => requestsReceived(server, 1),
    saved: ["user_input"],
    closing: ["turn_end:interrupted"],
    runs: 0,
    notice: TEXT_NOTICE
  },
  {
    name: "after the response is saved (at the approval prompt)",
    replies: [toolCall(APPEND)],
    approve: false,
    reached: ({ mino }) => mino.waitFor("Approve this operation? [y/N] "),
    saved: ["user_input", "model_response"],
    closing: ["tool_result:not_executed", "turn_end:interrupted"],
    runs: 0
  },
  {
    name: "after tool_start, while the command runs",
    replies: [toolCall(APPEND_AND_WAIT)],
    approve: true,
    reached: ({ box }) =>
      eventually("the command to start", 15_000, Effect.sync(() => fs.existsSync(path.join(box.cwd, "started-marker")) || undefined)),
    saved: ["user_input", "model_response", "tool_start"],
    closing: ["tool_result:unknown", "turn_end:interrupted"],
    runs: 1
  },
  {
    name: "after tool_result (the next request has gone out)",
    replies: [toolCall(APPEND), stall],
    approve: true,
    reached: ({ server }) => requestsReceived(server, 2),
    saved: UNTIL_RESULT,
    closing: ["turn_end:interrupted"],
    runs: 1
  },
  {
    name: "while the final answer streams, before response.completed",
    replies: [toolCall(APPEND), unfinishedAnswer],
    approve: true,
    reached: ({ mino }) => mino.waitFor(`Assistant> ${PARTIAL}`),
    saved: UNTIL_RESULT,
    closing: ["turn_end:interrupted"],
    runs: 1
  }
]

/** Starts mino and checks the notice: shown exactly once, before the banner, or not at all. */
const restart = (box: Sandbox, url: string, notice: string | undefined) =>
  Effect.gen(function*() {
    const { mino, opening } = yield* startReady(box, url)
    const banner = opening.indexOf(`Mino ${packageVersion()}`)
    expect(banner).toBeGreaterThanOrEqual(0)
    for (const text of [NOTICE, TEXT_NOTICE]) expect(opening.split(text).length - 1).toBe(text === notice ? 1 : 0)
    if (notice !== undefined) expect(opening.indexOf(notice)).toBeLessThan(banner)
    return { mino, opening }
  })

const quit = (mino: Pty) =>
  Effect.gen(function*() {
    yield* mino.write("\x04")
    yield* exitsWith(mino, { code: 0, signal: null }, 10_000)
  })

describe("SIGKILL at each save point of a tool turn, then restart", () => {
  for (const crash of cases) {
    it.scopedLive(crash.name, () =>
      Effect.gen(function*() {
        const box = yield* sandbox
        const runsFile = path.join(box.cwd, "runs.txt")
        // A command mino was killed under keeps running: stop its group when the test ends.
        yield* Effect.addFinalizer(() =>
          Effect.sync(() => {
            const pidFile = path.join(box.cwd, "bash.pid")
            if (fs.existsSync(pidFile)) killGroup(Number(fs.readFileSync(pidFile, "utf8").trim()))
          })
        )
        const server = yield* scriptedServer([...crash.replies, ResponsesServer.textResponse("Nothing I know of.")])

        // 1. Run the turn up to the save point and kill mino there.
        const { mino } = yield* startReady(box, server.url)
        yield* mino.write(`${QUESTION}\r`)
        if (crash.approve) {
          yield* mino.waitFor("Approve this operation? [y/N] ")
          yield* answerPrompt(mino, "y")
        }
        yield* crash.reached({ box, mino, server })
        yield* mino.kill("SIGKILL")
        yield* exitsWith(mino, { code: null, signal: "SIGKILL" }, 10_000)
        if (crash.runs > 0 && fs.existsSync(path.join(box.cwd, "bash.pid"))) {
          killGroup(yield* pidFrom(path.join(box.cwd, "bash.pid")))
        }
        const requestsBefore = (yield* server.requests).length
        const saved = sessionRecords(box)
        expect(recordSummary(saved)).toEqual(crash.saved)
        const turnId = saved[0]?.["turn_id"]

        // 2. Restart: the turn is closed on disk, the notice shown, nothing rerun or requested.
        const { mino: second, opening } = yield* restart(box, server.url, crash.notice ?? NOTICE)
        // Each command whose outcome is unknown is listed after the notice.
        expect(opening.includes(`Outcome unknown: ${JSON.stringify(APPEND_AND_WAIT)}`)).toBe(crash.closing.includes("tool_result:unknown"))
        const closed = sessionRecords(box)
        expect(closed.slice(0, saved.length)).toEqual(saved)
        expect(recordSummary(closed.slice(saved.length))).toEqual(crash.closing)
        for (const record of closed.slice(saved.length)) {
          expect(record["turn_id"]).toBe(turnId)
          if (record["type"] === "tool_result") expect(record["call_id"]).toBe(CALL_ID)
        }
        expect((yield* server.requests).length).toBe(requestsBefore)

        // 3. The next question's context holds nothing of the interrupted turn.
        yield* second.write(`${FOLLOW_UP}\r`)
        yield* second.waitFor("Assistant> Nothing I know of.\n")
        yield* second.waitFor("You> ")
        const log = yield* server.requests
        expect(log.length).toBe(requestsBefore + 1)
        const last = log.at(-1)
        if (last === undefined) throw new Error("no follow-up request")
        expect(inputOf(last)).toEqual([{ type: "message", role: "user", content: [{ type: "input_text", text: FOLLOW_UP }] }])
        yield* quit(second)

        // 4. A later start has nothing to close and says nothing about it.
        const recordsBefore = sessionRecords(box)
        const { mino: third } = yield* restart(box, server.url, undefined)
        expect(sessionRecords(box)).toEqual(recordsBefore)
        yield* quit(third)

        expect(lineCount(runsFile)).toBe(crash.runs)
        expect((yield* server.requests).length).toBe(requestsBefore + 1)
      }), 90_000)
  }

  it.scopedLive("after turn_end: the completed turn is kept and replayed, with no notice", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const server = yield* scriptedServer([
        toolCall(APPEND),
        ResponsesServer.textResponse("The marker was appended."),
        ResponsesServer.textResponse("You asked me to append a marker.")
      ])
      const { mino } = yield* startReady(box, server.url)
      yield* mino.write(`${QUESTION}\r`)
      yield* mino.waitFor("Approve this operation? [y/N] ")
      yield* answerPrompt(mino, "y")
      yield* mino.waitFor("Assistant> The marker was appended.\n")
      // The prompt comes back only after turn_end is saved.
      yield* mino.waitFor("You> ")
      yield* mino.kill("SIGKILL")
      yield* exitsWith(mino, { code: null, signal: "SIGKILL" }, 10_000)
      const saved = sessionRecords(box)
      expect(recordSummary(saved)).toEqual([...UNTIL_RESULT, "model_response", "turn_end:completed"])

      const { mino: second } = yield* restart(box, server.url, undefined)
      expect(sessionRecords(box)).toEqual(saved)
      expect((yield* server.requests).length).toBe(2)
      yield* second.write(`${FOLLOW_UP}\r`)
      yield* second.waitFor("Assistant> You asked me to append a marker.\n")
      yield* second.waitFor("You> ")
      const last = (yield* requestsReceived(server, 3)).at(-1)
      if (last === undefined) throw new Error("no follow-up request")
      const input = inputOf(last)
      // The whole completed turn, then the new question.
      expect(input[0]).toEqual({ type: "message", role: "user", content: [{ type: "input_text", text: QUESTION }] })
      expect(input.filter((item) => item["call_id"] === CALL_ID).map((item) => item["type"])).toEqual([
        "function_call",
        "function_call_output"
      ])
      expect(input.at(-1)).toEqual({ type: "message", role: "user", content: [{ type: "input_text", text: FOLLOW_UP }] })
      yield* quit(second)
      expect(lineCount(path.join(box.cwd, "runs.txt"))).toBe(1)
    }), 60_000)
})
