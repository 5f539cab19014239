/**
 * What a start does with a session file it finds in any state, before the chat
 * begins. Nothing is executed and the model is not asked.
 *
 * - Unreadable lines are moved to `<session>.jsonl.set-aside-<time>`, and the
 *   user is told whether it was a last write cut short by a crash (a torn tail)
 *   or damage in the middle of the file. A file with no readable line at all is
 *   moved aside whole, and the conversation starts empty.
 * - A turn left open is closed by `TurnClosing` (chapter 4.2): `not_executed`
 *   without a start, `unknown` with one, `interrupted`. The notice is the
 *   chapter's for a tool turn, another for a turn without calls, then each
 *   command whose outcome is unknown, escaped, one a line.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Json from "../../Json.js"
import * as Escape from "../../security/Escape.js"
import type { LeftOut, OpenCall, OpenTurn } from "./ConversationState.js"
import { SET_ASIDE_TYPE } from "../records/Records.js"
import { show, syncDirectory } from "../directory/SessionDirectory.js"
import type { Line } from "../records/SessionReader.js"

export const INTERRUPTED_NOTICE =
  "An interrupted tool turn was retained but excluded from context. Commands it started may already have run; none was retried."

export const INTERRUPTED_TEXT_NOTICE =
  "An interrupted turn was retained but excluded from context. It had requested no command, so nothing ran."

type Unreadable = Extract<Line, { readonly _tag: "Unreadable" }>

/** An unreadable line and its position among the file's lines. */
export interface Rejected {
  readonly line: Unreadable
  readonly position: number
}

export interface SetAside {
  readonly notice: string
  /** The file at the session's path was replaced: reopen it. */
  readonly replaced: boolean
}

const stamp = (now: Date): string => now.toISOString().replace(/[:.]/g, "-")

const setAsideLine = (turnId: string, aside: string): string => JSON.stringify({ type: SET_ASIDE_TYPE, turn_id: turnId, file: aside }) + "\n"

/**
 * Moves the `rejected` lines of the session file (open as `fd`, `size` bytes,
 * `readable` lines kept) aside durably, and leaves the session file holding
 * exactly the readable lines. Throws the system's error if the disk fails.
 */
export const setAside = (
  fd: number,
  path: string,
  size: number,
  rejected: ReadonlyArray<Rejected>,
  /** How many lines are readable, and where the last of them ends. */
  readable: { readonly count: number; readonly end: number },
  now: Date
): SetAside => {
  const aside = `${path}.set-aside-${stamp(now)}`
  const count = rejected.length
  if (readable.count === 0) {
    // Nothing to keep: the whole file goes aside as it is, and the conversation starts empty.
    Fs.renameSync(path, aside)
    syncDirectory(Path.dirname(path))
    return {
      replaced: true,
      notice: `The session file could not be read (${count} unreadable line(s)); its bytes were moved to ${show(aside)} and a new, empty conversation was started.`
    }
  }
  writeSpans(fd, aside, rejected.map(({ line }) => [line.start, line.end] as const))
  const lastKept = readable.end
  const middle = rejected.filter(({ line }) => line.end <= lastKept)
  const torn = rejected.some(({ line }) => !line.terminated)
  if (middle.length === 0) {
    // Everything unreadable is after the last readable record: cut it off in place.
    Fs.ftruncateSync(fd, lastKept)
    Fs.fsyncSync(fd)
    return {
      replaced: false,
      notice: torn && count === 1
        ? `The last record of the session file was cut short by a crash while it was being written; it was set aside in ${show(aside)}. Every complete record was kept.`
        : `Set aside ${count} unreadable line(s) from the end of the session file in ${show(aside)}; every readable record was kept.`
    }
  }
  const temporary = `${path}.rewrite`
  Fs.rmSync(temporary, { force: true })
  writeSpans(fd, temporary, complement(size, rejected, (turnId) => setAsideLine(turnId, aside)))
  Fs.renameSync(temporary, path)
  syncDirectory(Path.dirname(path))
  return {
    replaced: true,
    notice: `Set aside ${count} unreadable line(s) of the session file in ${show(aside)}: ${middle.length} in the middle of the file (damage, not a write cut short by a crash)${
      count > middle.length ? `, ${count - middle.length} at its end` : ""
    }. Every readable record was kept.`
  }
}

/** The file without the `rejected` lines; in place of one that names a turn, `marker(turnId)`. */
const complement = (
  size: number,
  rejected: ReadonlyArray<Rejected>,
  marker: (turnId: string) => string
): ReadonlyArray<readonly [number, number] | string> => {
  const spans: Array<readonly [number, number] | string> = []
  let from = 0
  for (const { line } of rejected) {
    if (line.start > from) spans.push([from, line.start])
    if (line.turnId !== undefined && line.start < size && line.terminated) spans.push(marker(line.turnId))
    from = line.end
  }
  if (size > from) spans.push([from, size])
  return spans
}

/** Copies byte spans of `fd` (and the given lines, as they come) into a new file at `path`, durably, in bounded chunks. */
const writeSpans = (fd: number, path: string, spans: ReadonlyArray<readonly [number, number] | string>): void => {
  const out = Fs.openSync(path, Fs.constants.O_WRONLY | Fs.constants.O_CREAT | Fs.constants.O_EXCL | Fs.constants.O_NOFOLLOW, 0o600)
  try {
    const buffer = Buffer.allocUnsafe(1 << 20)
    for (const span of spans) {
      if (typeof span === "string") {
        const bytes = Buffer.from(span)
        let written = 0
        while (written < bytes.length) written += Fs.writeSync(out, bytes, written, bytes.length - written)
        continue
      }
      const [start, end] = span
      for (let at = start; at < end;) {
        const read = Fs.readSync(fd, buffer, 0, Math.min(buffer.length, end - at), at)
        if (read === 0) break
        let written = 0
        while (written < read) written += Fs.writeSync(out, buffer, written, read - written)
        at += read
      }
    }
    Fs.fsyncSync(out)
  } finally {
    Fs.closeSync(out)
  }
  syncDirectory(Path.dirname(path))
}

/**
 * Call ids of `turn` whose start may be on an unreadable line: every unstarted
 * call, when an unreadable line names the turn or names none and comes after
 * the turn began. A missing start is then not proof the call never ran.
 */
export const maybeStarted = (turn: OpenTurn, rejected: ReadonlyArray<Rejected>): ReadonlySet<string> => {
  const doubtful = rejected.some(({ line, position }) =>
    line.turnId === turn.turnId || (line.turnId === undefined && position > turn.firstLine)
  )
  return new Set(doubtful ? turn.unfinished.filter((call) => !call.started).map((call) => call.callId) : [])
}

/** How many commands of unknown outcome the notice lists by name; the rest are counted. */
const LISTED = 20

/**
 * The notice lines for the turns recovery closed, and the calls it marked
 * `unknown`. A turn that asked for a tool or started a call is a tool turn,
 * whatever else of it could be read: it gets the chapter's notice.
 */
export const notices = (
  closed: ReadonlyArray<OpenTurn>,
  unknown: ReadonlyArray<OpenCall>,
  redact: (text: string) => string = (text) => text
): ReadonlyArray<string> => {
  if (closed.length === 0) return []
  const lines = [closed.some((turn) => turn.toolTurn) ? INTERRUPTED_NOTICE : INTERRUPTED_TEXT_NOTICE]
  for (const call of unknown.slice(0, LISTED)) lines.push(`Outcome unknown: ${describeCall(call, redact)}`)
  if (unknown.length > LISTED) lines.push(`Outcome unknown: ${unknown.length - LISTED} more call(s); \`mino log --unknown\` lists them all.`)
  return lines
}

/** The command of a bash call, when its arguments hold one. */
export const bashCommand = (name: string, args: string): string | undefined => {
  if (name !== "bash") return undefined
  const parsed = Json.parse(args)
  const command = typeof parsed === "object" && parsed !== null && "command" in parsed ? parsed.command : undefined
  return typeof command === "string" ? command : undefined
}

/**
 * A call as one escaped line: a bash command as its JSON string, another tool by
 * name and arguments, and a call whose request could not be read said plainly.
 * `redact` takes the key out of the command before it is escaped: arguments
 * can spell it in JSON escapes that only decoding the command reveals.
 */
const describeCall = (call: OpenCall, redact: (text: string) => string): string => {
  if (call.arguments === undefined) {
    const tool = call.name === undefined || call.name.length === 0 ? "a call" : `a ${Escape.forValue(call.name)} call`
    return `${tool} (call_id ${Escape.jsonString(call.callId)}) whose command is not known: the response that asked for it could not be read`
  }
  const name = call.name ?? ""
  const command = bashCommand(name, call.arguments)
  if (command !== undefined) return Escape.jsonString(redact(command))
  return `${Escape.forValue(name.length > 0 ? name : "a tool")} ${Escape.jsonString(redact(call.arguments))}`
}

/** How many left-out turns a notice names; the rest are counted. */
const NAMED = 3

/** A question as a notice quotes it: its start only, as an escaped JSON string. */
const quote = (question: string): string => {
  const start = Array.from(question.slice(0, 96)).slice(0, 48)
  return Escape.jsonString(start.join("") + (start.join("").length < question.length ? "…" : ""))
}

/**
 * The notice for completed turns that are kept in the file but not sent to the
 * model because they are not whole (`WholeTurns.ts`): each named once, with why.
 */
export const leftOut = (turns: ReadonlyArray<LeftOut>): ReadonlyArray<string> => {
  if (turns.length === 0) return []
  const named = turns.slice(0, NAMED).map((turn) =>
    `turn ${turn.number}${turn.question === undefined ? "" : ` (${quote(turn.question)})`}: ${turn.reason}`
  )
  const more = turns.length > NAMED ? `; and ${turns.length - NAMED} more` : ""
  const count = turns.length === 1 ? "A completed turn is" : `${turns.length} completed turns are`
  const them = turns.length === 1 ? "it" : "them"
  return [`${count} kept in the file but left out of what the model is sent, because the file no longer holds ${them} whole: ${named.join("; ")}${more}. \`mino log\` shows ${them}.`]
}
