/**
 * The result every tool returns, the same object that is saved in a
 * `tool_result` record and, serialized as a JSON string, sent to the model as the
 * `output` of a `function_call_output`. It assumes no process: `exit_code` is
 * present only when a process exited on its own.
 */
import * as Schema from "effect/Schema"

export const ToolStatus = Schema.Literal(
  "completed",
  "failed",
  "denied",
  "invalid_arguments",
  "unknown_tool",
  "not_executed",
  "unknown"
)
export type ToolStatus = typeof ToolStatus.Type

export const ToolResult = Schema.Struct({
  status: ToolStatus,
  output: Schema.String,
  exit_code: Schema.optional(Schema.Number),
  truncated: Schema.optional(Schema.Boolean),
  timed_out: Schema.optional(Schema.Boolean),
  cancelled: Schema.optional(Schema.Boolean)
})
export type ToolResult = typeof ToolResult.Type

export const make = (status: ToolStatus, output: string): ToolResult => ({ status, output })

/** The one-line header shown above a result: `[Tool result: failed; exit code 2]`. */
export const header = (result: ToolResult): string =>
  result.exit_code === undefined
    ? `[Tool result: ${result.status}]`
    : `[Tool result: ${result.status}; exit code ${result.exit_code}]`
