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
import type { SecretsShape } from "../security/Secrets.js"
import type { LogOutput } from "./Log.js"
import * as Time from "./Time.js"

export interface SessionsRequest {
  readonly home: string | undefined
  /** The directory `mino sessions` runs in (a real path): its conversations are marked `(here)`. */
  readonly directory: string | undefined
  /** The demo's conversations instead of the real ones. */
  readonly demo: boolean
  /**
   * The key in use, from the chat's `/sessions` (`mino sessions` does not read it):
   * taken out of each directory and last question before they are cut and escaped.
   */
  readonly secrets?: Pick<SecretsShape, "redact" | "redactCut">
}

const AS_IS: Pick<SecretsShape, "redact" | "redactCut"> = { redact: (text) => text, redactCut: (text) => text }

/** How much of a last question is shown, in characters. */
const QUESTION_CHARS = 60

const plural = (count: number, word: string): string => `${count} ${word}${count === 1 ? "" : "s"}`

/** Where it started, as the second line of its entry. */
const where = (summary: Conversations.Summary, here: string | undefined, secrets: Pick<SecretsShape, "redact">): string => {
  const origin = summary.origin
  switch (origin._tag) {
    case "Started":
      return `in ${Escape.forValue(secrets.redact(origin.cwd))}${origin.cwd === here ? " (here)" : ""}`
    case "NotRecorded":
      return "in a directory not recorded (made before Mino recorded it)"
    case "Unreadable":
      return `not readable: ${Escape.forLine(origin.reason)}`
  }
}

/** A question as one escaped line, cut: redacted, then cut, then a start of the key left at the cut redacted too. */
const excerpt = (text: string, secrets: Pick<SecretsShape, "redact" | "redactCut">): string => {
  const chars = [...secrets.redact(text.trim())]
  return Escape.forLine(chars.length > QUESTION_CHARS ? `${secrets.redactCut(chars.slice(0, QUESTION_CHARS).join("")).trimEnd()}…` : chars.join(""))
}

/** One conversation: its id, start and turns; where; its last question. */
export const entry = (summary: Conversations.Summary, here: string | undefined, secrets: Pick<SecretsShape, "redact" | "redactCut"> = AS_IS): string => {
  const started = Time.utc(summary.startedAt, "minute") ?? "at an unknown time"
  const lines = [`${Escape.forLine(summary.id)}  started ${started}  ${plural(summary.turns, "turn")}`, `  ${where(summary, here, secrets)}`]
  if (summary.lastQuestion !== undefined) lines.push(`  last question: ${excerpt(summary.lastQuestion, secrets)}`)
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
      ...summaries.map((summary) => entry(summary, here, request.secrets)),
      `\`mino${demo} --continue ID\` takes one up (its commands then run where you start it); \`mino log${demo} ID\` shows it.\n`
    ].join("\n")
    return { stdout, stderr: "", code: 0 }
  })
