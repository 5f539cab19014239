/**
 * The result every tool returns, the same object that is saved in a
 * `tool_result` record and, serialized as a JSON string, sent to the model as the
 * `output` of a `function_call_output`. It assumes no process; for one that ran,
 * the optional fields say what happened:
 *
 * - `exit_code`: it exited on its own with this code (never together with `timed_out`);
 * - `signal`: it was ended by this signal (`SIGKILL` when Mino or its lifeline killed it);
 * - `timed_out`: its group was killed at the deadline;
 * - `truncated`: the output reached the limit and its group was killed;
 * - `cancelled`: Mino was stopped (Ctrl+C, a signal) while it ran; its group was killed.
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
  signal: Schema.optional(Schema.String),
  truncated: Schema.optional(Schema.Boolean),
  timed_out: Schema.optional(Schema.Boolean),
  cancelled: Schema.optional(Schema.Boolean)
})
export type ToolResult = typeof ToolResult.Type

export const make = (status: ToolStatus, output: string): ToolResult => ({ status, output })

/** The result with the key in its text replaced (`redact`, from `Secrets`): done once, where the result is made. */
export const redact = (result: ToolResult, redact: (text: string) => string): ToolResult => {
  const output = redact(result.output)
  return output === result.output ? result : { ...result, output }
}

/** The bounds a result ran under, as the approval screen showed them (`64 KiB`, `30 s`). */
export interface Bounds {
  readonly outputLimit?: string
  readonly timeout?: string
}

/**
 * The one-line header shown above a result, naming what happened:
 * `[Tool result: failed; exit code 2]`,
 * `[Tool result: failed; output truncated at 64 KiB, process group killed]`.
 */
export const header = (result: ToolResult, bounds: Bounds = {}): string => {
  const killed = "process group killed"
  const what = [
    ...(result.exit_code === undefined ? [] : [`exit code ${result.exit_code}`]),
    ...(result.truncated === true ? [`output truncated at ${bounds.outputLimit ?? "the limit"}, ${killed}`] : []),
    ...(result.timed_out === true ? [`timed out after ${bounds.timeout ?? "the time limit"}, ${killed}`] : []),
    ...(result.cancelled === true ? [`cancelled while running, ${killed}`] : []),
    // A signal Mino sent for one of the reasons above is already said; any other is news.
    ...(result.signal !== undefined && result.truncated !== true && result.timed_out !== true && result.cancelled !== true
      ? [`ended by signal ${result.signal}`]
      : [])
  ]
  return `[Tool result: ${[result.status, ...what].join("; ")}]`
}
