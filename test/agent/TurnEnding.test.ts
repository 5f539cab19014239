/**
 * How a turn's steps ended, as the pure `howItEnded` in `agent/AgentLoop.ts`
 * decides it: each way the steps' fiber can exit, and the status, reason and
 * results of unfinished calls the turn is closed with.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import { howItEnded, TurnEndsEarly } from "../../src/agent/AgentLoop.js"
import { ModelError } from "../../src/model/ModelClient.js"

class Other extends Error {
  readonly _tag = "Other"
}

/** What a reader checks of an ending: its kind, and a closing's status, reason and call results. */
const summary = (ending: ReturnType<typeof howItEnded>) => {
  switch (ending._tag) {
    case "Closed":
      return {
        closed: ending.closing.status,
        reason: ending.closing.reason,
        started: ending.closing.started.status,
        unstarted: ending.closing.unstarted.status,
        cancelledMark: ending.closing.started.cancelled === true
      }
    case "Failed":
      return { failed: ending.error instanceof Other }
    case "Defect":
      return { defect: String(ending.defect) }
    case "Completed":
      return { completed: true }
  }
}

describe("how a turn ended", () => {
  const interrupted = Exit.failCause(Cause.interrupt(FiberId.none))
  const table: ReadonlyArray<readonly [string, Exit.Exit<void, unknown>, string | undefined, ReturnType<typeof summary>]> = [
    ["the steps completed", Exit.void, undefined, { completed: true }],
    ["the steps completed after a stop was asked", Exit.void, "Cancelled by Ctrl+C", { completed: true }],
    [
      "an invalid response",
      Exit.fail(new TurnEndsEarly({ status: "failed", reason: "invalid response: x" })),
      undefined,
      { closed: "failed", reason: "invalid response: x", started: "unknown", unstarted: "not_executed", cancelledMark: false }
    ],
    [
      "end of input at the approval prompt",
      Exit.fail(new TurnEndsEarly({ status: "cancelled", reason: "end of input" })),
      undefined,
      { closed: "cancelled", reason: "end of input", started: "unknown", unstarted: "not_executed", cancelledMark: false }
    ],
    [
      "the model failed",
      Exit.fail(new ModelError({ reason: "http", status: 500, message: "HTTP 500 from the model endpoint" })),
      undefined,
      { closed: "failed", reason: "HTTP 500 from the model endpoint", started: "unknown", unstarted: "not_executed", cancelledMark: false }
    ],
    [
      "interrupted by a stop",
      interrupted,
      "Cancelled by SIGTERM",
      { closed: "cancelled", reason: "Cancelled by SIGTERM", started: "unknown", unstarted: "not_executed", cancelledMark: true }
    ],
    [
      "interrupted with no stop asked",
      interrupted,
      undefined,
      { closed: "cancelled", reason: "the turn was interrupted", started: "unknown", unstarted: "not_executed", cancelledMark: true }
    ],
    ["a failed save (not the turn's to close)", Exit.fail(new Other("disk full")), undefined, { failed: true }],
    ["a defect", Exit.die(new Error("boom")), undefined, { defect: "Error: boom" }]
  ]
  it("each way the steps can exit, and what the turn is closed with", () => {
    for (const [what, exit, cause, expected] of table) {
      expect({ what, ended: summary(howItEnded(exit, cause)) }).toEqual({ what, ended: expected })
    }
  })
})
