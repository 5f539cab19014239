/**
 * Closing a turn: the one place that decides what a turn's unfinished calls
 * become when the turn ends early. The Agent uses it when a turn fails or is
 * cancelled while Mino runs, and recovery uses it on restart for a turn a crash
 * left open. A call with a start on disk may have run: its result is `unknown`
 * (or what the caller knows of it); a call without one was never executed.
 */
import * as ToolResult from "../../tools/ToolResult.js"
import type { OpenTurn } from "./ConversationState.js"
import type { SessionRecord, TurnStatus } from "../records/Records.js"

export interface Closing {
  readonly status: TurnStatus
  readonly reason: string
  /** The result of a call whose start is on disk (it may have run). */
  readonly started: ToolResult.ToolResult
  /** The result of a call that never started. */
  readonly unstarted: ToolResult.ToolResult
  /** Call ids whose start may be on an unreadable line: treated as started. */
  readonly maybeStarted?: ReadonlySet<string>
}

/** The records that end `turn`: a result for each unfinished call, in order, then `turn_end`. */
export const closingRecords = (turn: OpenTurn, closing: Closing): ReadonlyArray<SessionRecord> => [
  ...turn.unfinished.map((call): SessionRecord => ({
    type: "tool_result",
    turn_id: turn.turnId,
    call_id: call.callId,
    ...(call.name === undefined || call.name.length === 0 ? {} : { name: call.name }),
    result: call.started || closing.maybeStarted?.has(call.callId) === true ? closing.started : closing.unstarted
  })),
  { type: "turn_end", turn_id: turn.turnId, status: closing.status, reason: closing.reason }
]

/** How recovery closes a turn a crash left open (chapter 4.2). */
export const interrupted: Closing = {
  status: "interrupted",
  reason: "Mino stopped before the turn ended",
  started: ToolResult.make("unknown", "Mino stopped while this command may have been running; its outcome is unknown."),
  unstarted: ToolResult.make("not_executed", "Mino stopped before this call was executed.")
}
