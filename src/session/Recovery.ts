/**
 * Closing a turn that a crash left open (chapter 4.2). Nothing is executed and
 * the model is not asked: a call with no start gets `not_executed`, a call with a
 * start but no result gets `unknown`, and the turn ends `interrupted`.
 */
import { callIds } from "../agent/Protocol.js"
import * as ToolResult from "../tools/ToolResult.js"
import type { SessionRecord } from "./Records.js"

export const INTERRUPTED_NOTICE =
  "An interrupted tool turn was retained but excluded from context. Commands it started may already have run; none was retried."

/** The records that close every open turn among `records`, in file order. */
export const closeOpenTurns = (records: ReadonlyArray<SessionRecord>, time: string): ReadonlyArray<SessionRecord> => {
  const open = new Map<string, Array<SessionRecord>>()
  for (const record of records) {
    if (record.type === "turn_end") open.delete(record.turn_id)
    else {
      const turn = open.get(record.turn_id)
      if (turn === undefined) open.set(record.turn_id, [record])
      else turn.push(record)
    }
  }
  return [...open].flatMap(([turnId, turn]) => [...closingResults(turnId, turn, time), {
    type: "turn_end" as const,
    turn_id: turnId,
    time,
    status: "interrupted" as const,
    reason: "Mino stopped before the turn ended"
  }])
}

const closingResults = (turnId: string, turn: ReadonlyArray<SessionRecord>, time: string): Array<SessionRecord> => {
  const started = new Set<string>()
  const finished = new Set<string>()
  const calls: Array<string> = []
  for (const record of turn) {
    if (record.type === "model_response") calls.push(...callIds(record.output))
    else if (record.type === "tool_start") started.add(record.call_id)
    else if (record.type === "tool_result") finished.add(record.call_id)
  }
  return [...new Set(calls)].filter((id) => !finished.has(id)).map((callId) => ({
    type: "tool_result" as const,
    turn_id: turnId,
    time,
    call_id: callId,
    result: started.has(callId)
      ? ToolResult.make("unknown", "Mino stopped while this command may have been running; its outcome is unknown.")
      : ToolResult.make("not_executed", "Mino stopped before this call was executed.")
  }))
}
