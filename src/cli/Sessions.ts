/**
 * `mino sessions`: every conversation, newest first, each with its id, when and
 * where it started, how many turns it holds and its last question, so a person
 * can pick one to continue (`mino --continue ID`) or read (`mino log ID`). The
 * demo's are listed apart (`--demo`). Everything read from a file is escaped; no
 * lock is taken, so a conversation in use is listed too.
 */
import * as Effect from "effect/Effect"
import * as Conversations from "../session/directory/Conversations.js"
import * as Escape from "../security/Escape.js"
import type { LogOutput } from "./Log.js"
import * as Time from "./Time.js"

export interface SessionsRequest {
  readonly home: string | undefined
  /** The directory `mino sessions` runs in (a real path): its conversations are marked `(here)`. */
  readonly directory: string | undefined
  /** The demo's conversations instead of the real ones. */
  readonly demo: boolean
}

/** How much of a last question is shown, in characters. */
const QUESTION_CHARS = 60

const plural = (count: number, word: string): string => `${count} ${word}${count === 1 ? "" : "s"}`

/** Where it started, as the second line of its entry. */
const where = (summary: Conversations.Summary, here: string | undefined): string => {
  const origin = summary.origin
  switch (origin._tag) {
    case "Started":
      return `in ${Escape.forValue(origin.cwd)}${origin.cwd === here ? " (here)" : ""}`
    case "NotRecorded":
      return "in a directory not recorded (made before Mino recorded it)"
    case "Unreadable":
      return `not readable: ${Escape.forLine(origin.reason)}`
  }
}

/** A question as one escaped line, cut. */
const excerpt = (text: string): string => {
  const chars = [...text.trim()]
  return Escape.forLine(chars.length > QUESTION_CHARS ? `${chars.slice(0, QUESTION_CHARS).join("").trimEnd()}…` : chars.join(""))
}

/** One conversation: its id, start and turns; where; its last question. */
export const entry = (summary: Conversations.Summary, here: string | undefined): string => {
  const started = Time.utc(summary.startedAt, "minute") ?? "at an unknown time"
  const lines = [`${Escape.forLine(summary.id)}  started ${started}  ${plural(summary.turns, "turn")}`, `  ${where(summary, here)}`]
  if (summary.lastQuestion !== undefined) lines.push(`  last question: ${excerpt(summary.lastQuestion)}`)
  return lines.join("\n") + "\n"
}

export const show = (request: SessionsRequest): Effect.Effect<LogOutput, Conversations.SessionHomeError | Conversations.SessionOpenError> =>
  Effect.gen(function*() {
    const dir = yield* Conversations.readableDirectory(request.home, request.demo)
    const here = request.directory
    const which = request.demo ? "demo conversation" : "conversation"
    const summaries = Conversations.summaries(dir)
    if (summaries.length === 0) return { stdout: `No ${which}s yet in ${Escape.forValue(dir)}.\n`, stderr: "", code: 0 }
    const demo = request.demo ? " --demo" : ""
    const stdout = [
      `${plural(summaries.length, which)} in ${Escape.forValue(dir)}, newest first:\n`,
      ...summaries.map((summary) => entry(summary, here)),
      `\`mino${demo} --continue ID\` takes one up (its commands then run where you start it); \`mino log${demo} ID\` shows it.\n`
    ].join("\n")
    return { stdout, stderr: "", code: 0 }
  })
