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
import { StringDecoder } from "node:string_decoder"
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

/** The most `output` holds, in UTF-8 bytes, any note included: what is saved and sent is never more. */
export const MAX_OUTPUT_BYTES = 65_536

/** Room kept at a cut for `[redacted]` replacing a trailing prefix of the key (10 bytes, less the prefix). */
const REDACTION_ROOM = 10

const utf8Bytes = (text: string): number => Buffer.byteLength(text, "utf8")

/** The longest start of `text` of at most `bytes` UTF-8 bytes that ends on a character boundary. */
export const cutToBytes = (text: string, bytes: number): string => {
  const encoded = Buffer.from(text, "utf8")
  // StringDecoder keeps an incomplete last character back instead of making it U+FFFD.
  return encoded.length <= bytes ? text : new StringDecoder("utf8").write(encoded.subarray(0, Math.max(0, bytes)))
}

const count = (n: number): string => n.toLocaleString("en-US")

/** What an output ends with: the notes on what happened, and whether its text was already cut (the capture limit). */
export interface Ending {
  /** Said in one note after the text, in order: "timed out after 30 s; process group killed". */
  readonly notes: ReadonlyArray<string>
  /** The text is the start of something longer (the capture stopped at its limit). */
  readonly cut: boolean
}

/**
 * The `output` of a result: `text`, then the notes in brackets on a line of
 * their own, in at most `MAX_OUTPUT_BYTES` UTF-8 bytes. When the text was cut
 * (`ending.cut`) or does not fit beside the note, the note says how much is shown
 * and that the rest was dropped; a cut never leaves a broken character, and
 * `redactCut` (from `Secrets`) redacts what a cut leaves at the end (a prefix of
 * the key). Bytes are counted as sent: an undecodable byte shown as U+FFFD counts 3.
 */
export const finish = (text: string, ending: Ending, redactCut: (text: string) => string, limit = MAX_OUTPUT_BYTES): string => {
  const note = (clauses: ReadonlyArray<string>) => (clauses.length === 0 ? "" : `[${clauses.join("; ")}]`)
  const join = (body: string, tail: string) => (tail === "" ? body : body === "" || body.endsWith("\n") ? `${body}${tail}` : `${body}\n${tail}`)
  const whole = utf8Bytes(text)
  if (!ending.cut) {
    const complete = join(text, note(ending.notes))
    if (utf8Bytes(complete) <= limit) return complete
  }
  const shown = (bytes: number) =>
    ending.cut
      ? `the first ${count(bytes)} bytes of the output are shown, the rest was dropped`
      : `the first ${count(bytes)} of its ${count(whole)} bytes are shown, the rest was dropped to fit ${count(limit)} bytes`
  // The note with the longest count it can hold, a line break, and room for a redaction at the cut.
  const reserved = utf8Bytes(join("x", note([...ending.notes, shown(whole)]))) - 1 + REDACTION_ROOM
  const kept = cutToBytes(text, limit - reserved)
  return join(redactCut(kept), note([...ending.notes, shown(utf8Bytes(kept))]))
}

/** A result whose `output` is over `MAX_OUTPUT_BYTES`, cut to fit with a note saying so (any tool's). */
export const capped = (result: ToolResult, redactCut: (text: string) => string): ToolResult =>
  utf8Bytes(result.output) <= MAX_OUTPUT_BYTES ? result : { ...result, output: finish(result.output, { notes: [], cut: false }, redactCut) }

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
