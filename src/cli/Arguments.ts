/**
 * The command line: one declarative table of options, read with Node's own
 * `util.parseArgs`, and the rules it cannot express (which options a command
 * takes, a value that is missing) checked over its tokens. Every mistake is one
 * line naming the flag; nothing here touches the disk or the network.
 *
 * Why not @effect/cli: it cost about 100 KB of the start-up bundle, its help
 * could not carry the sections a person needs (environment, files, exit codes),
 * and it always accepted its own `--wizard`, `--completions` and `--log-level`.
 */
import { parseArgs } from "node:util"
import * as Data from "effect/Data"
import * as Either from "effect/Either"
import { DEFAULT_MODEL } from "../defaults.js"
import type * as Conversations from "../session/Conversations.js"
import * as Escape from "../security/Escape.js"

export type CommandName = "chat" | "log" | "sessions"

export interface OptionSpec {
  /** The long name, `--name`. */
  readonly name: string
  readonly short?: string
  /** What the value is called in the help, for an option that takes one. */
  readonly value?: string
  /** A sample value, for the line that says one is missing. */
  readonly example?: string
  /** The commands it belongs to. */
  readonly commands: ReadonlyArray<CommandName>
  readonly description: string
}

export const OPTIONS: ReadonlyArray<OptionSpec> = [
  {
    name: "model",
    short: "m",
    value: "NAME",
    example: DEFAULT_MODEL,
    commands: ["chat"],
    description: `the model to ask (default: $MINO_MODEL, else ${DEFAULT_MODEL})`
  },
  {
    name: "demo",
    commands: ["chat", "log", "sessions"],
    description: "use a scripted demo model on loopback: no key, no network (with log, sessions: its conversations)"
  },
  {
    name: "new",
    commands: ["chat"],
    description: "start a new conversation; the current one's file stays, to continue later"
  },
  {
    name: "continue",
    value: "ID",
    example: "20261203-074000-0123abcd",
    commands: ["chat"],
    description: "continue conversation ID instead of this directory's newest (ids: `mino sessions`)"
  },
  { name: "json", commands: ["log"], description: "print the raw records, one JSON object a line" },
  { name: "unknown", commands: ["log"], description: "list only the tool calls whose outcome is unknown (what a crash may have run)" },
  { name: "help", short: "h", commands: ["chat", "log", "sessions"], description: "show this help and exit" },
  { name: "version", short: "V", commands: ["chat", "log", "sessions"], description: "print the version and exit" }
]

export type Invocation =
  | { readonly _tag: "Help" }
  | { readonly _tag: "Version" }
  | {
    readonly _tag: "Chat"
    /** From `-m/--model`; the caller falls back to `MINO_MODEL`, then the default. */
    readonly model: string | undefined
    readonly demo: boolean
    /** Which conversation: the newest (the default), a new one, or one by id. */
    readonly conversation: Conversations.Which
    /** The words after the options, joined by spaces: the first question. */
    readonly question: string | undefined
  }
  | {
    readonly _tag: "Log"
    /** The conversation to show: by id, else the newest started in this directory (of the demo's, with `--demo`). */
    readonly id: string | undefined
    readonly demo: boolean
    readonly json: boolean
    readonly unknownOnly: boolean
  }
  | { readonly _tag: "Sessions"; readonly demo: boolean }

/** A command line Mino cannot run: `message` is one line for stderr; the exit code is 2. */
export class UsageError extends Data.TaggedError("UsageError")<{ readonly message: string }> {}

const HINT = "`mino --help` lists the options"

/** Reads `args` (without `node` and the script). */
export const parse = (args: ReadonlyArray<string>): Either.Either<Invocation, UsageError> => {
  const config = Object.fromEntries(OPTIONS.map((spec) => [
    spec.name,
    { type: spec.value === undefined ? "boolean" as const : "string" as const, ...(spec.short === undefined ? {} : { short: spec.short }) }
  ]))
  // Not strict: unknown options and missing values come back as tokens, so each gets its own line.
  const { tokens } = parseArgs({ args: [...args], options: config, strict: false, allowPositionals: true, tokens: true })

  const given = new Map<string, { readonly flag: string; readonly value: string | undefined }>()
  const positionals: Array<{ readonly text: string; readonly afterTerminator: boolean }> = []
  let terminated = false
  for (const token of tokens) {
    if (token.kind === "option-terminator") {
      terminated = true
    } else if (token.kind === "positional") {
      positionals.push({ text: token.value, afterTerminator: terminated })
    } else {
      const spec = OPTIONS.find((option) => option.name === token.name)
      if (spec === undefined) return fail(`unknown option ${token.rawName}${suggestion(token.rawName)}; ${HINT}.`)
      const flag = token.rawName
      // `-m=NAME` reads as `--model=NAME` does.
      const value = token.inlineValue && !flag.startsWith("--") ? token.value?.replace(/^=/, "") : token.value
      if (spec.value !== undefined) {
        // `--model --demo` would otherwise take `--demo` as the model's name.
        const missing = value === undefined || value.length === 0 || (!token.inlineValue && value.startsWith("-"))
        if (missing) return fail(`${flag} needs a value (${spec.value}), as in \`mino ${flag} ${spec.example ?? spec.value}\`.`)
      } else if (value !== undefined) {
        return fail(`${flag} takes no value.`)
      }
      given.set(spec.name, { flag, value })
    }
  }

  // `mino log` is the log; `mino -- log` asks the question "log". `mino help` alone is `mino --help`
  // (`mino help me fix the build` is a question).
  const word = positionals[0]?.afterTerminator === false ? positionals[0].text : undefined
  const command: CommandName = word === "log" || word === "sessions" ? word : "chat"
  const helpWord = positionals.length === 1 && positionals[0]?.text === "help" && !positionals[0].afterTerminator
  if (given.has("help") || helpWord) return Either.right({ _tag: "Help" })
  if (given.has("version")) return Either.right({ _tag: "Version" })
  for (const [name, { flag }] of given) {
    if (!OPTIONS.some((spec) => spec.name === name && spec.commands.includes(command))) {
      return fail(command !== "chat" ? `${flag} does not apply to \`mino ${command}\`; ${HINT}.` : `${flag} applies only to \`mino log\`.`)
    }
  }
  if (command === "log") {
    if (positionals.length > 2) return fail(`\`mino log\` takes at most one conversation id; ${HINT}.`)
    if (given.has("json") && given.has("unknown")) return fail("--json and --unknown cannot be combined.")
    return Either.right({
      _tag: "Log",
      id: positionals[1]?.text,
      demo: given.has("demo"),
      json: given.has("json"),
      unknownOnly: given.has("unknown")
    })
  }
  if (command === "sessions") {
    if (positionals.length > 1) return fail(`\`mino sessions\` takes no arguments; ${HINT}.`)
    return Either.right({ _tag: "Sessions", demo: given.has("demo") })
  }
  const continued = given.get("continue")?.value
  if (given.has("new") && continued !== undefined) return fail("--new and --continue cannot be combined: choose one conversation.")
  if (continued !== undefined && !CONVERSATION_ID.test(continued)) {
    return fail(`--continue takes a conversation id such as 20261203-074000-0123abcd (the file name in ~/.mino/sessions without .jsonl), not ${Escape.jsonString(continued)}.`)
  }
  const conversation: Conversations.Which = given.has("new") ? "new" : continued !== undefined ? { id: continued } : "newest"
  const question = positionals.map((word) => word.text).join(" ")
  return Either.right({
    _tag: "Chat",
    model: given.get("model")?.value,
    demo: given.has("demo"),
    conversation,
    question: question.trim().length > 0 ? question : undefined
  })
}

/** A conversation's id: the time it started, then random hex (its file is `<id>.jsonl`). */
export const CONVERSATION_ID = /^\d{8}-\d{6}-[0-9a-f]{8}$/

const fail = (message: string) => Either.left(new UsageError({ message: `mino: ${message}` }))

/** A near miss: `-v` for `-V`, `--modle` for `--model`. */
const suggestion = (raw: string): string => {
  const name = raw.replace(/^-+/, "")
  const near = OPTIONS.find((spec) =>
    (raw.length === 2 && spec.short !== undefined && spec.short.toLowerCase() === name.toLowerCase()) ||
    (raw.startsWith("--") && distance(spec.name, name.toLowerCase()) <= 2)
  )
  return near === undefined ? "" : ` (did you mean ${near.short !== undefined && raw.length === 2 ? `-${near.short}` : `--${near.name}`}?)`
}

/** Edit distance, for suggestions. */
const distance = (a: string, b: string): number => {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1)))
    }
    previous = current
  }
  return previous[b.length] ?? 0
}
