/**
 * The session file's records: one JSON object per line, each with `type` and
 * `turn_id`. Unknown fields are kept on disk; output items are kept verbatim.
 */
import * as Schema from "effect/Schema"
import { ToolResult } from "../tools/ToolResult.js"

const Item = Schema.Record({ key: Schema.String, value: Schema.Unknown })

const fields = {
  turn_id: Schema.String,
  time: Schema.optional(Schema.String)
}

export const UserInput = Schema.Struct({ type: Schema.Literal("user_input"), ...fields, text: Schema.String })
export type UserInput = typeof UserInput.Type

export const ModelResponse = Schema.Struct({
  type: Schema.Literal("model_response"),
  ...fields,
  response_id: Schema.optional(Schema.String),
  output: Schema.Array(Item)
})
export type ModelResponse = typeof ModelResponse.Type

export const ToolStart = Schema.Struct({
  type: Schema.Literal("tool_start"),
  ...fields,
  call_id: Schema.String,
  name: Schema.optional(Schema.String)
})
export type ToolStart = typeof ToolStart.Type

export const ToolResultRecord = Schema.Struct({
  type: Schema.Literal("tool_result"),
  ...fields,
  call_id: Schema.String,
  name: Schema.optional(Schema.String),
  result: ToolResult
})
export type ToolResultRecord = typeof ToolResultRecord.Type

export const TurnStatus = Schema.Literal("completed", "failed", "cancelled", "interrupted")
export type TurnStatus = typeof TurnStatus.Type

export const TurnEnd = Schema.Struct({
  type: Schema.Literal("turn_end"),
  ...fields,
  status: TurnStatus,
  reason: Schema.optional(Schema.String)
})
export type TurnEnd = typeof TurnEnd.Type

export const SessionRecord = Schema.Union(UserInput, ModelResponse, ToolStart, ToolResultRecord, TurnEnd)
export type SessionRecord = typeof SessionRecord.Type

/** Any line Mino can read: one of the five, or another type it keeps but ignores. */
export const KnownLine = Schema.Struct({ type: Schema.String, turn_id: Schema.String })

/** The Responses input item for a user's text. */
export const userMessage = (text: string): Record<string, unknown> => ({
  type: "message",
  role: "user",
  content: [{ type: "input_text", text }]
})

/** The Responses input item that pairs a result with its call. */
export const functionCallOutput = (callId: string, result: ToolResult): Record<string, unknown> => ({
  type: "function_call_output",
  call_id: callId,
  output: JSON.stringify(result)
})

/** The model's input items that a committed record contributes to the context. */
export const contextItems = (record: SessionRecord): ReadonlyArray<Record<string, unknown>> => {
  switch (record.type) {
    case "user_input":
      return [userMessage(record.text)]
    case "model_response":
      return record.output
    case "tool_result":
      return [functionCallOutput(record.call_id, record.result)]
    case "tool_start":
    case "turn_end":
      return []
  }
}
