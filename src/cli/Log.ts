/**
 * `mino log`: a session file as a person reads it. Each turn with its time,
 * question and status; each tool call with its command, whether it was approved,
 * and its result (status, exit code, signal, truncated, timed out). Everything
 * that came from the model, a command or the user is escaped, so nothing in the
 * file can move the cursor or hide text. `unknownOnly` lists just the calls whose
 * outcome is unknown: what a crash may have left running.
 *
 * It reads the file without the lock, so it works while a chat runs.
 */
import * as Effect from "effect/Effect"
import { committed, ConversationState } from "../session/conversation/ConversationState.js"
import * as Conversations from "../session/directory/Conversations.js"
import * as Recovery from "../session/conversation/Recovery.js"
import type { SessionRecord, TurnEnd, UserInput } from "../session/records/Records.js"
import * as Escape from "../security/Escape.js"
import type { ToolResult } from "../tools/ToolResult.js"
import * as Time from "./Time.js"
import { acceptedCalls, messageText } from "../protocol/ResponseItem.js"

interface Call {
  readonly callId: string
  name: string
  arguments: string | undefined
  started: boolean
  result: ToolResult | undefined
}

interface Turn {
  readonly turnId: string
  input: UserInput | undefined
  readonly calls: Map<string, Call>
  answer: string
  end: TurnEnd | undefined
}

/**
 * The records grouped by turn, in the order turns begin: a turn runs from its
 * first record to its `turn_end`, so an id met again after its end begins another
 * turn (the same grouping and numbering as ConversationState's).
 */
const turns = (records: ReadonlyArray<SessionRecord>): ReadonlyArray<Turn> => {
  const all: Array<Turn> = []
  const open = new Map<string, Turn>()
  for (const record of records) {
    let turn = open.get(record.turn_id)
    if (turn === undefined) {
      turn = { turnId: record.turn_id, input: undefined, calls: new Map(), answer: "", end: undefined }
      all.push(turn)
      open.set(record.turn_id, turn)
    }
    const call = (callId: string, name?: string): Call => {
      const known = turn.calls.get(callId)
      if (known !== undefined) return known
      const fresh: Call = { callId, name: name ?? "tool", arguments: undefined, started: false, result: undefined }
      turn.calls.set(callId, fresh)
      return fresh
    }
    switch (record.type) {
      case "user_input":
        turn.input = record
        break
      case "model_response": {
        // Only the assistant's words: an invalid response may hold a `system` message, never shown as the answer.
        const text = record.output.filter((item) => item["type"] === "message" && item["role"] === "assistant").map(messageText).join("")
        if (text.length > 0) turn.answer = text
        // The calls of an invalid response never ran and never will: the same rule as replay and recovery.
        for (const accepted of acceptedCalls(record.output, new Set(turn.calls.keys()))) {
          const entry = call(accepted.call_id)
          entry.name = accepted.name
          entry.arguments = accepted.arguments
        }
        break
      }
      case "tool_start":
        call(record.call_id, record.name).started = true
        break
      case "tool_result":
        call(record.call_id, record.name).result = record.result
        break
      case "turn_end":
        turn.end = record
        open.delete(record.turn_id)
        break
    }
  }
  return all
}

/** `2026-12-03 07:40:12 UTC`, or `time unknown` for a record without a readable time. */
const when = (time: string | undefined): string => Time.utc(time, "second") ?? "time unknown"

/**
 * What the call asked for: a bash command as the JSON string the approval screen
 * showed. `redact` takes the key out of the command before it is escaped: arguments
 * can spell it in JSON escapes that only decoding the command reveals (`/log`
 * redacts; `mino log` does not read the key).
 */
const what = (call: Call, redact: (text: string) => string = (text) => text): string => {
  const name = Escape.forLine(call.name)
  if (call.arguments === undefined) return name
  return `${name} ${Escape.jsonString(redact(Recovery.bashCommand(call.name, call.arguments) ?? call.arguments))}`
}

/**
 * What became of a call, each fact said once: whether it was approved and, if it
 * ran, how it ended (`approved · failed, exit code 2, timed out`); if it did not
 * run, why (`denied · you answered "no"`, `not run · Mino stopped before ...`).
 */
const fate = (call: Call): string => {
  const result = call.result
  if (call.started) return `approved · ${ran(call)}`
  switch (result?.status) {
    case undefined:
      return "not decided yet (waiting for approval, or Mino stopped before a decision)"
    case "denied":
      return because("denied", denialReason(result.output))
    case "invalid_arguments":
    case "unknown_tool":
      return because(`refused before approval (${result.status})`, firstLine(result.output))
    case "not_executed":
      return because("not run", firstLine(result.output))
    default:
      // A result without a start: records Mino does not write, shown as they are.
      return `no start recorded · ${ran(call)}`
  }
}

const because = (what: string, why: string | undefined): string => why === undefined || why.length === 0 ? what : `${what} · ${why}`

/** How a call that started ended: `failed, exit code 2, timed out`; `no result yet` while it may still be running. */
const ran = (call: Call): string => {
  const result = call.result
  if (result === undefined) return "no result yet (running now, or Mino stopped while it ran)"
  const parts: Array<string> = [result.status]
  if (result.exit_code !== undefined) parts.push(`exit code ${result.exit_code}`)
  if (result.signal !== undefined) parts.push(`signal ${Escape.forLine(result.signal)}`)
  if (result.timed_out === true) parts.push("timed out")
  if (result.truncated === true) parts.push("truncated")
  if (result.cancelled === true) parts.push("cancelled")
  return parts.join(", ")
}

/** The first line of a result's text, escaped and cut. */
const firstLine = (text: string): string | undefined => {
  const line = text.trim().split("\n")[0]?.trim() ?? ""
  return line.length === 0 ? undefined : excerpt(line, 160)
}

/**
 * Why a call was denied, from its result's text, without saying "denied" twice:
 * a leading `Denied:` is dropped, and 0.3's generic `The user did not approve this
 * call (...)` gives only what its parentheses add.
 */
const denialReason = (output: string): string | undefined => {
  const text = output.trim().split("\n")[0]?.trim().replace(/^denied\b[:.,]?\s*/i, "") ?? ""
  const generic = /^the user did not approve this call(?: \((.*)\))?\.?$/i.exec(text)
  if (generic === null) return firstLine(text)
  const inner = generic[1]
  return inner === undefined || /^the user did not approve$/i.test(inner) ? undefined : firstLine(inner)
}

/** `reason` is why a completed turn is left out of what the model is sent (ConversationState's rule), if it is. */
const status = (turn: Turn, leftOut: string | undefined): string =>
  turn.end === undefined
    ? "not ended (running now, or Mino stopped before it ended)"
    : leftOut !== undefined
    ? `${turn.end.status}, left out of what the model is sent: ${Escape.forLine(leftOut)}`
    : turn.end.reason === undefined
    ? turn.end.status
    : `${turn.end.status}: ${Escape.forLine(turn.end.reason)}`

/** Why each completed turn the model is not sent again is left out, by its number: the store's own rule. */
const leftOutOf = (state: ConversationState): ReadonlyMap<number, string> => new Map(state.leftOut.map((turn) => [turn.number, turn.reason]))

/** The same, for records alone (no line lost). */
export const leftOutTurns = (records: ReadonlyArray<SessionRecord>): ReadonlyMap<number, string> => {
  const state = new ConversationState()
  for (const record of records) state.apply(committed(record, JSON.stringify(record)))
  return leftOutOf(state)
}

/** One line of text, cut to `max` characters (before escaping) with an ellipsis. */
const excerpt = (text: string, max: number): string => {
  const line = text.trim().split("\n")[0] ?? ""
  const cut = [...line].length > max ? `${[...line].slice(0, max).join("")}…` : line
  return Escape.forLine(cut) + (text.trim().includes("\n") && cut === line ? " …" : "")
}

/** The whole conversation, turn by turn. */
export const render = (
  records: ReadonlyArray<SessionRecord>,
  leftOut: ReadonlyMap<number, string> = leftOutTurns(records),
  redact: (text: string) => string = (text) => text
): string =>
  turns(records).map((turn, index) => {
    const lines = [`Turn ${index + 1} · ${when(turn.input?.time ?? turn.end?.time)} · ${status(turn, leftOut.get(index + 1))}`]
    if (turn.input !== undefined) lines.push(`  You> ${Escape.forLine(turn.input.text)}`)
    for (const call of turn.calls.values()) lines.push(`  [${what(call, redact)}] ${fate(call)}`)
    if (turn.answer.trim().length > 0) lines.push(`  Assistant> ${excerpt(turn.answer, 160)}`)
    return lines.join("\n") + "\n"
  }).join("\n")

/** Only the calls whose outcome is unknown, one line each; a line saying so when there are none. */
export const renderUnknown = (records: ReadonlyArray<SessionRecord>): string => {
  const lines = turns(records).flatMap((turn, index) =>
    [...turn.calls.values()]
      .filter((call) => call.result?.status === "unknown" || (call.started && call.result === undefined))
      .map((call) =>
        `${when(turn.input?.time)} · turn ${index + 1} · [${what(call)}] · ${
          call.result === undefined ? ran(call) : `unknown: ${excerpt(call.result.output, 200)}`
        }`
      )
  )
  return lines.length === 0 ? "No tool call has an unknown outcome.\n" : lines.join("\n") + "\n"
}

// ---------------------------------------------------------------------------
// Reading: the file as it is now, through the session reader and without the
// lock (a running chat holds it and keeps appending); a line it cannot read,
// such as one being written, is counted and not shown.

export interface LogRequest {
  readonly home: string | undefined
  /** The directory `mino log` runs in (a real path): without an id, the newest conversation started there is shown. */
  readonly directory: string | undefined
  readonly id: string | undefined
  /** The demo's conversations instead of the real ones. */
  readonly demo: boolean
  readonly json: boolean
  readonly unknownOnly: boolean
}

/** What a command that prints prints, and its exit code. */
export interface LogOutput {
  readonly stdout: string
  readonly stderr: string
  readonly code: number
}

/** The error's code (`ELOOP`), never its message: that could hold a path not yet escaped. */
const errno = (error: unknown): string =>
  typeof error === "object" && error !== null && "code" in error ? Escape.forLine(String(error.code)) : "an error"

export const show = (request: LogRequest): Effect.Effect<LogOutput, Conversations.SessionHomeError | Conversations.SessionOpenError | Conversations.ConversationNotFound> =>
  Effect.gen(function*() {
    const dir = yield* Conversations.readableDirectory(request.home, request.demo)
    const here = request.directory
    const conversation = request.id !== undefined
      ? yield* Conversations.find(dir, request.id)
      : here === undefined
      ? undefined
      : Conversations.newestStartedIn(dir, here)
    if (conversation === undefined) return { stdout: noneHere(dir, here, request.demo), stderr: "", code: 0 }
    const { id, path } = conversation
    const records: Array<SessionRecord> = []
    // Every line, read as a start reads it, for the rule of what is left out.
    const state = new ConversationState()
    // For --json: every object with a `type`, record types Mino does not know included.
    const raw: Array<string> = []
    let unreadable = 0
    try {
      for (const line of Conversations.read(path)) {
        state.read(line)
        if (line._tag === "Unreadable") unreadable++
        else {
          raw.push(line.text)
          if (line._tag === "Record") records.push(line.record)
        }
      }
    } catch (error) {
      return { stdout: "", stderr: `mino: cannot read ${Escape.forValue(path)}: ${errno(error)}.\n`, code: 1 }
    }
    const note = unreadable === 0 ? "" : `mino: ${unreadable} line(s) of ${Escape.forValue(path)} could not be read and are not shown.\n`
    const stdout = request.json
      ? // Each line as written: JSON, with format characters escaped so it is safe on a terminal.
      raw.map((text) => Escape.jsonText(text) + "\n").join("")
      : request.unknownOnly
      ? renderUnknown(records)
      : `Conversation ${Escape.forLine(id)}, ${startedIn(Conversations.origin(path))}\nFile: ${Escape.forValue(path)}\n\n${
        records.length === 0 ? "No turns yet.\n" : render(records, leftOutOf(state))
      }`
    return { stdout, stderr: note, code: 0 }
  })

/** Where a conversation started. */
const startedIn = (origin: Conversations.Origin): string =>
  origin._tag === "Started" ? `started in ${Escape.forValue(origin.cwd)}` : "started in a directory not recorded"

/** What `mino log` without an id says when no conversation was started here. */
const noneHere = (dir: string, here: string | undefined, demo: boolean): string => {
  const others = Conversations.ids(dir).length
  const list = others === 0 ? "" : ` ${others} started elsewhere: \`mino sessions${demo ? " --demo" : ""}\` lists them, \`mino log${demo ? " --demo" : ""} ID\` shows one.`
  const where = here === undefined ? "this directory (it cannot be read)" : Escape.forValue(here)
  return `No ${demo ? "demo " : ""}conversation started in ${where} yet.${list}\n`
}
