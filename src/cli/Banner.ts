/**
 * The banner's conversation line: whether this start continues a conversation
 * (when it started, how many turns, where its file is) or starts a new one.
 */
import type { ConversationInfo } from "../session/SessionStore.js"
import * as Escape from "../security/Escape.js"
import * as Time from "./Time.js"

export interface BannerOptions {
  /** The demo keeps one conversation of its own: `--new` does not apply to it. */
  readonly demo: boolean
  /** Whether `--new` asked for this conversation. */
  readonly fresh: boolean
}

const when = (time: string): string => Time.utc(time, "minute") ?? "at an unknown time"

export const conversationLine = (info: ConversationInfo, options: BannerOptions): string => {
  const file = Escape.forValue(info.path)
  if (!info.continued) {
    const earlier = options.fresh ? " Earlier conversations stay; `mino --continue ID` takes one up again." : ""
    return `New conversation, saved in ${file}.${earlier}`
  }
  const another = options.demo ? "" : "; `mino --new` starts another"
  return `Continuing the conversation started ${when(info.startedAt)} (${info.turns} turn${info.turns === 1 ? "" : "s"}), saved in ${file}${another}.`
}
