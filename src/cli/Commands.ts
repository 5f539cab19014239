/**
 * Mino's commands, declared with @effect/cli: `mino` (the chat), `mino log` and `mino sessions`,
 * each with its typed options and arguments and the rules between them. What is
 * declared here is what `Arguments.ts` reads, what `Help.ts` lists and what the
 * shell completions offer. A new command is one more entry in `SUBCOMMANDS`.
 *
 * Each option is a `Flag`: its name, alias and value as @effect/cli parses them,
 * with the words Mino's help and error lines use for it.
 */
import * as Args from "@effect/cli/Args"
import type * as BuiltInOptions from "@effect/cli/BuiltInOptions"
import * as Descriptor from "@effect/cli/CommandDescriptor"
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Options from "@effect/cli/Options"
import type * as Usage from "@effect/cli/Usage"
import * as ValidationError from "@effect/cli/ValidationError"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { DEFAULT_MODEL } from "../defaults.js"
import * as Escape from "../security/Escape.js"
import type * as Conversations from "../session/directory/Conversations.js"

export interface Flag {
  /** The long name, `--name`. */
  readonly name: string
  /** The one-letter name, `-m`. */
  readonly alias?: string
  /** What the value is called in the help, for an option that takes one. */
  readonly value?: string
  /** A sample value, for the line that says one is missing. */
  readonly example?: string
  readonly description: string
}

export const MODEL = {
  name: "model",
  alias: "m",
  value: "NAME",
  example: DEFAULT_MODEL,
  description: `the model to ask (default: $MINO_MODEL, else ${DEFAULT_MODEL})`
} as const
export const DEMO = {
  name: "demo",
  description: "use a scripted demo model on loopback: no key, no network (with log, sessions: its conversations)"
} as const
export const NEW = { name: "new", description: "start a new conversation; the current one's file stays, to continue later" } as const
export const CONTINUE = {
  name: "continue",
  value: "ID",
  example: "20261203-074000-0123abcd",
  description: "continue conversation ID instead of this directory's newest (ids: `mino sessions`)"
} as const
export const JSON_RECORDS = { name: "json", description: "print the raw records, one JSON object a line" } as const
export const UNKNOWN = { name: "unknown", description: "list only the tool calls whose outcome is unknown (what a crash may have run)" } as const

/**
 * @effect/cli's own options that Mino keeps, as Mino describes them; `-V` is
 * Mino's name for `--version`. Its `--wizard` and `--log-level` are refused.
 */
export const HELP = { name: "help", alias: "h", description: "show this help and exit" } as const
export const VERSION = { name: "version", alias: "V", description: "print the version and exit" } as const
export const COMPLETIONS = {
  name: "completions",
  value: "SHELL",
  example: "bash",
  description: "print a completion script for SHELL: bash, zsh or fish (see Completions)"
} as const
export const BUILT_INS: ReadonlyArray<Flag> = [HELP, VERSION, COMPLETIONS]

/** Every option of a command, in the order the help lists them. */
export const FLAGS: ReadonlyArray<Flag> = [MODEL, DEMO, NEW, CONTINUE, JSON_RECORDS, UNKNOWN]

const named = <A>(options: Options.Options<A>, flag: Flag): Options.Options<A> =>
  Options.withDescription(flag.alias === undefined ? options : Options.withAlias(options, flag.alias), flag.description)

const switchOf = (flag: Flag): Options.Options<boolean> => named(Options.boolean(flag.name), flag)

const textOf = (flag: Flag & { readonly value: string }): Options.Options<string> =>
  named(Options.withPseudoName(Options.text(flag.name), flag.value), flag)

/** A rule a command line broke: @effect/cli's error, with Mino's sentence. */
export const refusal = (sentence: string) => ValidationError.invalidValue(HelpDoc.p(sentence))

/** A conversation's id: the time it started, then random hex (its file is `<id>.jsonl`). */
export const CONVERSATION_ID = /^\d{8}-\d{6}-[0-9a-f]{8}$/

/** Only an id, never a path: `--continue ../../x` names no file outside the sessions directory. */
const conversationId = (id: string) =>
  CONVERSATION_ID.test(id) ? Effect.succeed(id) : Effect.fail(refusal(
    `--continue takes a conversation id such as ${CONTINUE.example} (the file name in ~/.mino/sessions without .jsonl), not ${
      Escape.jsonString(id)
    }.`
  ))

export interface Chat {
  readonly _tag: "Chat"
  /** From `-m/--model`; the caller falls back to `MINO_MODEL`, then the default. */
  readonly model: string | undefined
  readonly demo: boolean
  /** Which conversation: the newest (the default), a new one, or one by id. */
  readonly conversation: Conversations.Which
  /** The words after the options, joined by spaces: the first question. */
  readonly question: string | undefined
}

export interface Log {
  readonly _tag: "Log"
  /** The conversation to show: by id, else the newest started in this directory (of the demo's, with `--demo`). */
  readonly id: string | undefined
  readonly demo: boolean
  readonly json: boolean
  readonly unknownOnly: boolean
}

/** `mino [options] [QUESTION...]`: the chat. */
export const chat: Descriptor.Command<Chat> = Descriptor.make(
  "mino",
  Options.all({
    model: Options.optional(textOf(MODEL)),
    demo: switchOf(DEMO),
    fresh: switchOf(NEW),
    continued: Options.optional(Options.mapEffect(textOf(CONTINUE), conversationId))
  }),
  Args.repeated(Args.withDescription(Args.text({ name: "QUESTION" }), "the first question"))
).pipe(
  Descriptor.withDescription("start (or continue) the conversation"),
  Descriptor.mapEffect(({ args, options }) => {
    const continued = Option.getOrUndefined(options.continued)
    if (options.fresh && continued !== undefined) return Effect.fail(refusal("--new and --continue cannot be combined: choose one conversation."))
    const question = args.join(" ")
    return Effect.succeed<Chat>({
      _tag: "Chat",
      model: Option.getOrUndefined(options.model),
      demo: options.demo,
      conversation: options.fresh ? "new" : continued !== undefined ? { id: continued } : "newest",
      question: question.trim().length > 0 ? question : undefined
    })
  })
)

/** `mino log [ID]`: a conversation as a record of what happened. */
export const log: Descriptor.Command<Log> = Descriptor.make(
  "log",
  Options.all({ demo: switchOf(DEMO), json: switchOf(JSON_RECORDS), unknown: switchOf(UNKNOWN) }),
  Args.optional(Args.withDescription(Args.text({ name: "ID" }), "the conversation (default: the newest started in this directory)"))
).pipe(
  Descriptor.withDescription("show a conversation: turns, commands, approvals, results"),
  Descriptor.mapEffect(({ args, options }) =>
    options.json && options.unknown
      ? Effect.fail(refusal("--json and --unknown cannot be combined."))
      : Effect.succeed<Log>({ _tag: "Log", id: Option.getOrUndefined(args), demo: options.demo, json: options.json, unknownOnly: options.unknown })
  )
)

export interface Sessions {
  readonly _tag: "Sessions"
  /** The demo's conversations instead of the real ones. */
  readonly demo: boolean
}

/** `mino sessions`: every conversation, newest first. */
export const sessions: Descriptor.Command<Sessions> = Descriptor.make("sessions", Options.all({ demo: switchOf(DEMO) })).pipe(
  Descriptor.withDescription("list the conversations: id, directory, start, turns, last question"),
  Descriptor.map(({ options }): Sessions => ({ _tag: "Sessions", demo: options.demo }))
)

/** The commands named by a first word; any other command line is a chat. */
export const SUBCOMMANDS = [["log", log], ["sessions", sessions]] as const

/** The whole command line, for the shell completions. */
const mino = Descriptor.withSubcommands(chat, [...SUBCOMMANDS])

/** The names (`-m`, `--model`) of the options `descriptor` parses. */
export const declaredNames = <A>(descriptor: Descriptor.Command<A>): ReadonlySet<string> => {
  const walk = (usage: Usage.Usage): ReadonlyArray<string> => {
    switch (usage._tag) {
      case "Named":
        // The command's own name and its arguments (`<ID>`) are named too, without a dash.
        return usage.names.filter((name) => name.startsWith("-"))
      case "Optional":
      case "Repeated":
        return walk(usage.usage)
      case "Alternation":
      case "Concat":
        return [...walk(usage.left), ...walk(usage.right)]
      case "Empty":
      case "Mixed":
        return []
    }
  }
  return new Set(walk(Descriptor.getUsage(descriptor)))
}

export type Shell = BuiltInOptions.BuiltInOptions.ShellType

/** @effect/cli's completion script for `shell`, without the options Mino refuses. */
export const completions = (shell: Shell): Effect.Effect<string> =>
  Effect.map(
    shell === "bash"
      ? Descriptor.getBashCompletions(mino, "mino")
      : shell === "zsh"
      ? Descriptor.getZshCompletions(mino, "mino")
      : Descriptor.getFishCompletions(mino, "mino"),
    (lines) =>
      lines
        // zsh and fish name each option on a line of its own; bash lists them in `opts="..."`.
        .filter((line) => !/(?:'--|-l )(?:wizard|log-level)\b/.test(line))
        .map((line) => line.replace(/ --(?:wizard|log-level)(?=[ "])/g, ""))
        .join("\n") + "\n"
  )
