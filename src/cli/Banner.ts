/**
 * The banner's conversation line: whether this start continues a conversation
 * (where and when it started, how many turns, where its file is) or starts a new
 * one, and, when none was started in this directory yet, that others exist
 * elsewhere and how to list them.
 */
import type { AgentsFile } from "../agent/Instructions.js"
import type { Which } from "../session/directory/Conversations.js"
import type { ConversationInfo } from "../session/SessionStore.js"
import * as Escape from "../security/Escape.js"
import * as Time from "./Time.js"

export interface BannerOptions {
  /** The demo's conversations: the commands it names carry `--demo`. */
  readonly demo: boolean
  /** How the conversation was asked for: the default, `--new`, or `--continue ID`. */
  readonly which: Which
  /** The directory Mino was started in (a real path). */
  readonly cwd: string
}

const when = (time: string): string => {
  const utc = Time.utc(time, "minute")
  return utc === undefined ? "at an unknown time" : `on ${utc}`
}

const plural = (count: number, word: string): string => `${count} ${word}${count === 1 ? "" : "s"}`

export const conversationLine = (info: ConversationInfo, options: BannerOptions): string => {
  const file = Escape.forValue(info.path)
  const demo = options.demo ? " --demo" : ""
  const list = `\`mino sessions${demo}\``
  if (options.which === "new") {
    return `New conversation, saved in ${file}. Earlier conversations stay: ${list} lists them, \`mino${demo} --continue ID\` takes one up again.`
  }
  if (options.which === "newest" && !info.continued) {
    const elsewhere = info.startedElsewhere ?? 0
    const others = elsewhere === 0 ? "" : ` ${plural(elsewhere, "conversation")} started elsewhere: ${list} lists ${elsewhere === 1 ? "it" : "them"}.`
    return `New conversation, saved in ${file}.${others}`
  }
  const where = info.directory === options.cwd ? " here" : info.directory === undefined ? "" : ` in ${Escape.forValue(info.directory)}`
  const unrecorded = info.directory === undefined ? "; where is not recorded" : ""
  const another = options.which === "newest" ? `; \`mino${demo} --new\` starts another` : ""
  return `Continuing the conversation started${where} ${when(info.startedAt)} (${plural(info.turns, "turn")}${unrecorded}), saved in ${file}${another}.`
}

/** What the banner says of where the chat is: the endpoint when it is not OpenAI's (host and port), and AGENTS.md. */
export interface Where {
  /** `host:port` of an endpoint that is not OpenAI's (escaped already); undefined for OpenAI's. */
  readonly elsewhere: string | undefined
  readonly endpointFrom: string
  readonly agents: AgentsFile
}

const agentsLine = (agents: AgentsFile): string => {
  switch (agents._tag) {
    case "Used":
      return "AGENTS.md is used."
    case "None":
      return "No AGENTS.md here."
    case "Empty":
      return "AGENTS.md is empty."
    case "Ignored":
      return "AGENTS.md is ignored (see above)."
  }
}

/** The banner's line on where the chat is: `Endpoint 127.0.0.1:8080 (from OPENAI_BASE_URL). AGENTS.md is used.` */
export const whereLine = (where: Where): string =>
  `${where.elsewhere === undefined ? "" : `Endpoint ${where.elsewhere} (${where.endpointFrom}). `}${agentsLine(where.agents)} /status says more.`
