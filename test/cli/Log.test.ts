/**
 * `mino log`'s call lines say each fact once: generated calls of every outcome
 * (approved or not, every status, the result texts Mino has written in 0.3 and
 * since) never repeat a word of their status, and a denial says why when the
 * record tells.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as Log from "../../src/cli/Log.js"
import type { SessionRecord } from "../../src/session/records/Records.js"
import type { ToolResult } from "../../src/tools/ToolResult.js"

const RUNS = 2000

const STATUSES = ["completed", "failed", "denied", "invalid_arguments", "unknown_tool", "not_executed", "unknown"] as const

/** Result texts as Mino writes them for calls that did not run, old and new. */
const OUTPUTS = [
  "",
  "The user did not approve this call.",
  "The user did not approve this call (the user did not approve).",
  "The user did not approve this call (standard input is not a terminal).",
  "Denied: you answered \"yes please\"; only y or yes approves.",
  "Denied: standard input is not a terminal, so no command can be approved.",
  "Mino stopped before this call was executed.",
  "The turn stopped before this call was executed.",
  "invalid arguments: expected a JSON object"
]

const call = (started: boolean, result: ToolResult | undefined): ReadonlyArray<SessionRecord> => [
  { type: "user_input", turn_id: "t1", time: "2026-12-03T07:40:00.000Z", text: "go" },
  {
    type: "model_response",
    turn_id: "t1",
    output: [{ type: "function_call", id: "fc_1", call_id: "c1", name: "bash", arguments: JSON.stringify({ command: "make" }) }]
  },
  ...(started ? [{ type: "tool_start", turn_id: "t1", call_id: "c1", name: "bash" } as const] : []),
  ...(result === undefined ? [] : [{ type: "tool_result", turn_id: "t1", call_id: "c1", name: "bash", result } as const])
]

/** What the log says of the call after its command. */
const fate = (records: ReadonlyArray<SessionRecord>): string => {
  const line = Log.render(records).split("\n").find((row) => row.startsWith("  [bash"))
  if (line === undefined) throw new Error(`no call line in:\n${Log.render(records)}`)
  return line.slice(line.indexOf("] ") + 2)
}

const generatedResult: fc.Arbitrary<ToolResult | undefined> = fc.option(
  fc.record({
    status: fc.constantFrom(...STATUSES),
    output: fc.constantFrom(...OUTPUTS),
    exit_code: fc.option(fc.integer({ min: 0, max: 2 }), { nil: undefined }),
    timed_out: fc.option(fc.constant(true), { nil: undefined })
  }, { requiredKeys: ["status", "output"] }).map(({ exit_code, timed_out, ...rest }): ToolResult => ({
    ...rest,
    ...(exit_code === undefined ? {} : { exit_code }),
    ...(timed_out === undefined ? {} : { timed_out })
  })),
  { nil: undefined }
)

describe(`mino log's call lines (${RUNS} generated calls)`, () => {
  it("never say a status word twice (no `denied · denied`, no `not run · not_executed`)", () => {
    fc.assert(fc.property(fc.boolean(), generatedResult, (started, result) => {
      const said = fate(call(started, result)).toLowerCase()
      for (const word of ["approved", "denied", "completed", "failed", "unknown", "refused", "decided"]) {
        expect(said.split(word).length - 1, said).toBeLessThanOrEqual(1)
      }
      // `not run` and `not_executed` say the same.
      expect(said.includes("not run") && said.includes("not_executed"), said).toBe(false)
    }), { numRuns: RUNS })
  })

  it("a denial says why when the record tells, in the words the user saw", () => {
    const denied = (output: string) => fate(call(false, { status: "denied", output }))
    expect(denied("The user did not approve this call.")).toBe("denied")
    expect(denied("The user did not approve this call (the user did not approve).")).toBe("denied")
    expect(denied("The user did not approve this call (standard input is not a terminal).")).toBe("denied · standard input is not a terminal")
    expect(denied("Denied: you answered \"yes please\"; only y or yes approves.")).toBe("denied · you answered \"yes please\"; only y or yes approves.")
    expect(denied("Denied: \u001b[2Jsneaky")).toBe("denied · \\e[2Jsneaky")
  })

  it("each other fate, once", () => {
    expect(fate(call(true, { status: "completed", output: "ok", exit_code: 0 }))).toBe("approved · completed, exit code 0")
    expect(fate(call(true, undefined))).toBe("approved · no result yet (running now, or Mino stopped while it ran)")
    expect(fate(call(false, undefined))).toBe("not decided yet (waiting for approval, or Mino stopped before a decision)")
    expect(fate(call(false, { status: "not_executed", output: "Mino stopped before this call was executed." }))).toBe(
      "not run · Mino stopped before this call was executed."
    )
    expect(fate(call(false, { status: "invalid_arguments", output: "the command is empty" }))).toBe(
      "refused before approval (invalid_arguments) · the command is empty"
    )
  })
})

describe("mino log and the turns the model is not sent", () => {
  const answer = (turnId: string, text: string): SessionRecord => ({
    type: "model_response",
    turn_id: turnId,
    output: [{ type: "message", id: `msg_${turnId}`, role: "assistant", content: [{ type: "output_text", text }] }]
  })
  const end = (turnId: string): SessionRecord => ({ type: "turn_end", turn_id: turnId, status: "completed" })

  it("a completed turn that is not whole is marked left out, with the store's reason; a whole one is not", () => {
    const records: ReadonlyArray<SessionRecord> = [
      { type: "user_input", turn_id: "t1", text: "first" },
      answer("t1", "one"),
      end("t1"),
      // The question of t2 was lost: the file no longer holds the turn whole.
      answer("t2", "two"),
      end("t2"),
      // A call without its result, then an answer.
      ...call(true, undefined).map((record) => ({ ...record, turn_id: "t3" })),
      answer("t3", "three"),
      end("t3")
    ]
    const heads = Log.render(records).split("\n").filter((line) => line.startsWith("Turn "))
    expect(heads.map((line) => line.split(" · ")[2])).toEqual([
      "completed",
      "completed, left out of what the model is sent: its question is missing",
      "completed, left out of what the model is sent: call \"c1\" has no result"
    ])
  })
})

describe("mino log numbers turns as the store does", () => {
  const q = (turnId: string, text: string): SessionRecord => ({ type: "user_input", turn_id: turnId, text })
  const a = (turnId: string): SessionRecord => ({ type: "model_response", turn_id: turnId, output: [{ type: "message", role: "assistant", content: [{ type: "output_text", text: "ok" }] }] })
  const e = (turnId: string): SessionRecord => ({ type: "turn_end", turn_id: turnId, status: "completed" })

  it("a turn id met again after its end begins another turn, shown with its own question", () => {
    const log = Log.render([q("t1", "first"), a("t1"), e("t1"), q("t1", "second"), a("t1"), e("t1")])
    expect(log.split("\n").filter((line) => line.startsWith("Turn ") || line.startsWith("  You> "))).toEqual([
      "Turn 1 · time unknown · completed",
      "  You> first",
      "Turn 2 · time unknown · completed",
      "  You> second"
    ])
  })

  it("a left-out turn has the number the start-up notice gives it, in the order turns begin", () => {
    // t2's answer comes before its question (reordered lines): t2 begins second, ends second.
    const records = [q("t1", "one"), a("t1"), e("t1"), a("t2"), q("t2", "two"), e("t2"), q("t3", "three"), a("t3"), e("t3")]
    expect([...Log.leftOutTurns(records).keys()]).toEqual([2])
    expect(Log.render(records).split("\n").filter((line) => line.includes("left out"))).toEqual([
      "Turn 2 · time unknown · completed, left out of what the model is sent: its question is missing"
    ])
  })
})
