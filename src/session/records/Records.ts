/**
 * The session file's records: one JSON object per line, each with `type` and
 * `turn_id`. Unknown fields are kept on disk; output items are kept verbatim.
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { redactStrings } from "../../security/Secrets.js"
import { ToolResult, ToolStatus } from "../../tools/ToolResult.js"
import * as Defaults from "../../defaults.js"

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
  output: Schema.Array(Item),
  /** The tokens the endpoint reported for this response (added in 0.4; older files have none). */
  usage: Schema.optional(Schema.Struct({ input_tokens: Schema.NonNegativeInt, output_tokens: Schema.NonNegativeInt }))
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

/** The five record types Mino acts on; a line of another type is kept and tolerated. */
export const KNOWN_TYPES: ReadonlySet<string> = new Set(["user_input", "model_response", "tool_start", "tool_result", "turn_end"])

// The schemas above define the records. Restore checks every line of a session,
// and `Schema.is` costs about 6 µs a line (0.6 s for a 100k-record file), so the
// same shapes are checked here by hand; `test/session/Records.test.ts` holds the
// two to agreement, and fails when the tool result gains a field this check does not know.
type Json = Readonly<Record<string, unknown>>
const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)
const optional = (value: Json, key: string, type: "string" | "number" | "boolean") => !(key in value) || typeof value[key] === type
const optionalString = (value: Json, key: string) => optional(value, key, "string")
const TURN_STATUSES: ReadonlySet<unknown> = new Set(TurnStatus.literals)
const TOOL_STATUSES: ReadonlySet<unknown> = new Set(ToolStatus.literals)

/** The fields of a tool result the check below knows (the test compares them with the schema's). */
export const TOOL_RESULT_FIELDS = ["status", "output", "exit_code", "signal", "truncated", "timed_out", "cancelled"] as const

/** `Schema.is(ToolResult)`, by hand (the schema's check was a tenth of a tool result's restore). */
export const isToolResult = (value: unknown): boolean =>
  isObject(value) && TOOL_STATUSES.has(value["status"]) && typeof value["output"] === "string" &&
  optional(value, "exit_code", "number") && optionalString(value, "signal") &&
  optional(value, "truncated", "boolean") && optional(value, "timed_out", "boolean") && optional(value, "cancelled", "boolean")

const count = (value: unknown) => typeof value === "number" && Number.isSafeInteger(value) && value >= 0
const optionalUsage = (value: Json) => {
  if (!("usage" in value)) return true
  const usage = value["usage"]
  return isObject(usage) && count(usage["input_tokens"]) && count(usage["output_tokens"])
}

const checks: Readonly<Record<string, (value: Json) => boolean>> = {
  user_input: (value) => typeof value["text"] === "string",
  model_response: (value) => {
    const output = value["output"]
    return optionalString(value, "response_id") && Array.isArray(output) && output.every(isObject) && optionalUsage(value)
  },
  tool_start: (value) => typeof value["call_id"] === "string" && optionalString(value, "name"),
  tool_result: (value) => typeof value["call_id"] === "string" && optionalString(value, "name") && isToolResult(value["result"]),
  turn_end: (value) => TURN_STATUSES.has(value["status"]) && optionalString(value, "reason")
}

/** Whether `value`, a parsed line whose `type` is one of the five, has that type's fields. */
export const isRecord = (value: { readonly type: string }): value is SessionRecord => {
  const json = value as Json
  return typeof json["turn_id"] === "string" && optionalString(json, "time") && checks[value.type]?.(json) === true
}

/** The largest line a record may take on disk (one value for the store and the stream's bounds). */
export const MAX_RECORD_BYTES = Defaults.MAX_RECORD_BYTES

/** The deepest nesting of objects and arrays a record may hold (real output items nest a few levels). */
export const MAX_DEPTH = 1000

/**
 * The record as its line on disk, `\n` included: serialized once, with the key
 * replaced (`redact`, from the `Secrets` service), so what is kept in memory (read
 * back from this line) is what the file holds. The key is replaced in every string
 * of the record before it is encoded (`redactStrings`), so a key holding `"`, `\`
 * or a tab is found as itself, not as its JSON escape; then the encoded line is
 * searched once more, for a key that only its encoding spells (one holding `\"`,
 * or spanning two strings), and a line that this leaves unreadable is refused. A
 * record too deep or too large to save is refused with one line.
 */
export const encode = (record: SessionRecord, redact: (text: string) => string): Either.Either<string, string> => {
  if (deeperThan(record, MAX_DEPTH)) return Either.left(`it is nested more than ${MAX_DEPTH} levels deep`)
  let text: string
  try {
    text = JSON.stringify(redactStrings(record, redact))
  } catch {
    return Either.left("it cannot be written as JSON")
  }
  const redacted = redact(text)
  if (redacted !== text && !parses(redacted)) return Either.left("it holds the API key in a form that cannot be taken out of it")
  const line = redacted + "\n"
  if (Buffer.byteLength(line) > MAX_RECORD_BYTES) return Either.left(`it is larger than ${MAX_RECORD_BYTES / 1024 / 1024} MiB`)
  return Either.right(line)
}

const parses = (text: string): boolean => {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

/** Whether objects and arrays nest deeper than `limit`, without recursion (no stack to overflow). */
export const deeperThan = (value: unknown, limit: number): boolean => {
  const stack: Array<readonly [unknown, number]> = [[value, 1]]
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!
    if (typeof current !== "object" || current === null) continue
    if (depth > limit) return true
    for (const child of Object.values(current)) if (typeof child === "object" && child !== null) stack.push([child, depth + 1])
  }
  return false
}

/**
 * The record left where a line that named a turn was set aside from the middle of
 * the file: the turn's loss stays on record, so the turn is left out of what the
 * model is sent at every later start (and `mino log` says so), not only at the
 * start that found the damage.
 */
export const SET_ASIDE_TYPE = "set_aside"
