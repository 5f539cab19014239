/**
 * `/status`: where you are — the model, the endpoint, the conversation, the
 * project's `AGENTS.md`, the tokens the endpoint reported (the last turn's and the
 * conversation's, read back from its session file) and, where the model's context
 * window is known, a meter of how full it is. Pure: the chat gathers a `Facts`,
 * this makes the text.
 *
 * The window is known from a small table of well-known models (`WINDOWS`, from
 * their makers' published limits): endpoints do not report it, and a wrong guess
 * would be worse than none, so an unknown model gets no meter.
 */
import type { AgentsFile } from "../agent/Instructions.js"
import type { Usage } from "../protocol/ModelEvent.js"
import * as Escape from "../security/Escape.js"
import type { SessionRecord } from "../session/records/Records.js"

/** Context windows, in tokens, of well-known models (a dated snapshot, `-2025-08-07`, counts as its model). */
export const WINDOWS: ReadonlyArray<readonly [RegExp, number]> = [
  [/^gpt-5(\.\d+)?(-codex(-mini|-max)?|-mini|-nano|-pro)?$/, 400_000],
  [/^gpt-4\.1(-mini|-nano)?$/, 1_047_576],
  [/^gpt-4o(-mini)?$/, 128_000],
  [/^o(1|3|4-mini|3-mini|3-pro)$/, 200_000],
  [/^(openai\/)?gpt-oss-(20b|120b)$/, 131_072]
]

/** The context window of `model`, when the table knows it. */
export const windowOf = (model: string): number | undefined => {
  const name = model.replace(/-\d{4}-\d{2}-\d{2}$/, "")
  return WINDOWS.find(([pattern]) => pattern.test(name))?.[1]
}

export interface Tokens {
  /** The responses of the last turn that reported usage, summed. */
  readonly lastTurn: Usage | undefined
  /** Every response of the conversation, summed. */
  readonly conversation: Usage
  /** The last response's input and output: what the context holds now. */
  readonly context: number | undefined
  /** Responses that reported no usage (an endpoint that does not, or a file from before 0.4). */
  readonly unreported: number
}

const add = (a: Usage, b: Usage): Usage => ({ input_tokens: a.input_tokens + b.input_tokens, output_tokens: a.output_tokens + b.output_tokens })
const NONE: Usage = { input_tokens: 0, output_tokens: 0 }

/** The tokens `records` report (files with and without `usage` alike). */
export const tokens = (records: ReadonlyArray<SessionRecord>): Tokens => {
  let conversation = NONE
  let lastTurn: Usage | undefined
  let lastTurnId: string | undefined
  let context: number | undefined
  let unreported = 0
  for (const record of records) {
    if (record.type !== "model_response") continue
    const usage = record.usage
    if (usage === undefined) {
      unreported++
      continue
    }
    conversation = add(conversation, usage)
    lastTurn = record.turn_id === lastTurnId && lastTurn !== undefined ? add(lastTurn, usage) : usage
    lastTurnId = record.turn_id
    context = usage.input_tokens + usage.output_tokens
  }
  return { lastTurn, conversation, context, unreported }
}

export interface Facts {
  readonly model: string
  /** Where the model's name came from: `from --model`, `from MINO_MODEL`, `set by /model`... */
  readonly modelFrom: string
  /** The endpoint as shown (`EndpointShown.shown`) and where it came from. */
  readonly endpoint: string
  readonly endpointFrom: string
  readonly conversation: {
    readonly id: string
    readonly path: string
    /** False until its first question is saved: a new conversation has no file before. */
    readonly saved: boolean
    readonly turns: number
  }
  readonly agents: AgentsFile
  readonly tokens: Tokens
}

const number = (n: number): string => n.toLocaleString("en-US")

const usageText = (usage: Usage): string => `${number(usage.input_tokens)} in, ${number(usage.output_tokens)} out`

/** A bar of `cells` cells for `fraction` (0 to 1, clamped). */
export const meter = (fraction: number, cells = 20): string => {
  const full = Number.isFinite(fraction) ? Math.round(Math.min(1, Math.max(0, fraction)) * cells) : 0
  return `[${"#".repeat(full)}${"-".repeat(cells - full)}]`
}

export const agentsText = (agents: AgentsFile): string => {
  switch (agents._tag) {
    case "Used":
      return `used (${number(agents.bytes)} bytes, sent with every request)`
    case "None":
      return "none in this directory"
    case "Empty":
      return "empty, so nothing is sent"
    case "Ignored":
      return `ignored: it ${Escape.forLine(agents.why)}`
  }
}

const contextText = (facts: Facts): string => {
  const window = windowOf(facts.model)
  if (window === undefined) return "window unknown for this model (Mino knows the windows of OpenAI's models and gpt-oss)"
  const used = facts.tokens.context
  if (used === undefined) return `${number(window)} tokens; nothing used yet`
  const fraction = used / window
  return `${meter(fraction)} ${Math.round(fraction * 100)}% of ${number(window)} tokens used (${number(used)})`
}

/** What `/status` shows. */
export const text = (facts: Facts): string => {
  const { conversation, tokens } = facts
  const saved = conversation.saved
    ? `${conversation.id}, ${conversation.turns} turn${conversation.turns === 1 ? "" : "s"}, in ${Escape.forValue(conversation.path)}`
    : `${conversation.id}, new: its file ${Escape.forValue(conversation.path)} is made with the first question`
  const unreported = tokens.unreported === 0 ? "" : ` (${tokens.unreported} response${tokens.unreported === 1 ? "" : "s"} reported none)`
  const rows: ReadonlyArray<readonly [string, string]> = [
    ["Model", `${Escape.forValue(facts.model)} (${facts.modelFrom})`],
    ["Endpoint", `${facts.endpoint} (${facts.endpointFrom})`],
    ["Conversation", saved],
    ["AGENTS.md", agentsText(facts.agents)],
    ["Tokens", `last turn ${tokens.lastTurn === undefined ? "none reported" : usageText(tokens.lastTurn)}; conversation so far ${usageText(tokens.conversation)}${unreported}`],
    ["Context", contextText(facts)]
  ]
  return rows.map(([label, value]) => `${`${label}:`.padEnd(14)}${value}`).join("\n")
}
