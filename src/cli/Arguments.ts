/**
 * The command line, read against the commands declared in `Commands.ts`: first
 * strictly, token by token, then by @effect/cli's parser (`Descriptor.parse`),
 * whose directive — a command, or its help, version or completions — becomes an
 * `Invocation`. Every mistake is one line naming the flag; nothing here touches
 * the disk or the network.
 *
 * Why the strict first reading: @effect/cli gives each word it does not know to
 * a free-text argument, so `mino --modle x` would ask the model "--modle x" and
 * `mino --model` would ask "--model"; and it takes a subcommand's name wherever
 * it appears, so `mino show the log` would run `mino log`. So Mino reads the
 * tokens first (Node's `util.parseArgs`, with the names and values the commands
 * declare), refuses what no command takes with one line, picks the command by
 * the first word, and gives @effect/cli a command line it cannot misread:
 * `[command, --name [value]..., --, word...]`. Not `Command.run`: it would print
 * @effect/cli's own help and accept its `--wizard` and `--log-level`.
 */
import { parseArgs } from "node:util"
import type * as BuiltInOptions from "@effect/cli/BuiltInOptions"
import * as CliConfig from "@effect/cli/CliConfig"
import * as Descriptor from "@effect/cli/CommandDescriptor"
import type * as HelpDoc from "@effect/cli/HelpDoc"
import type * as Span from "@effect/cli/HelpDoc/Span"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Terminal from "@effect/platform/Terminal"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Escape from "../security/Escape.js"
import * as Commands from "./Commands.js"

export type Invocation =
  | { readonly _tag: "Help" }
  | { readonly _tag: "Version" }
  | { readonly _tag: "Completions"; readonly shell: Commands.Shell }
  | Commands.Chat
  | Commands.Log
  | Commands.Sessions

/** A command line Mino cannot run: `message` is one line for stderr; the exit code is 2. */
export class UsageError extends Data.TaggedError("UsageError")<{ readonly message: string }> {}

const HINT = "`mino --help` lists the options"

type Command = readonly [name: string, descriptor: Descriptor.Command<Commands.Chat | Commands.Log | Commands.Sessions>]

/** The chat: any command line whose first word names no other command. */
const CHAT: Command = ["mino", Commands.chat]

/** Every command by its name. */
const COMMANDS: ReadonlyArray<Command> = [CHAT, ...Commands.SUBCOMMANDS]

/** An option as the strict reading knows it: its flag, and the commands that take it (none: one of @effect/cli's own). */
interface Known {
  readonly flag: Commands.Flag
  readonly commands: ReadonlyArray<string>
}

const KNOWN: ReadonlyArray<Known> = [
  ...Commands.BUILT_INS.map((flag) => ({ flag, commands: [] })),
  ...Commands.FLAGS.map((flag) => ({
    flag,
    commands: COMMANDS.filter(([, descriptor]) => Commands.declaredNames(descriptor).has(`--${flag.name}`)).map(([name]) => name)
  }))
]

interface Given {
  readonly known: Known
  /** As typed: `-m`, `--model`. */
  readonly typed: string
  readonly value: string | undefined
}

/** Reads `args` (without `node` and the script). */
export const parse = (args: ReadonlyArray<string>): Effect.Effect<Invocation, UsageError> =>
  Effect.suspend(() => {
    const read = readTokens(args)
    if (read instanceof UsageError) return Effect.fail(read)
    const { given, words } = read

    // `mino log` is the log; `mino -- log` and `mino show the log` ask. `mino help`
    // alone is `mino --help` (`mino help me fix the build` is a question).
    const first = words[0]
    const named = first === undefined || first.afterTerminator ? undefined : COMMANDS.find(([name]) => name !== CHAT[0] && name === first.text)
    const [command, descriptor] = named ?? CHAT
    const rest = (named === undefined ? words : words.slice(1)).map((word) => word.text)
    const helpWord = words.length === 1 && first?.text === "help" && !first.afterTerminator

    // @effect/cli's own options, whatever else is given, in this order of precedence.
    const completions = given.get(Commands.COMPLETIONS.name)?.value
    const builtIn = helpWord || given.has(Commands.HELP.name)
      ? ["--help"]
      : given.has(Commands.VERSION.name)
      ? ["--version"]
      : completions !== undefined
      ? ["--completions", completions]
      : undefined
    if (builtIn === undefined) {
      for (const { known, typed } of given.values()) {
        if (known.commands.includes(command)) continue
        return fail(
          command === CHAT[0]
            ? `${shown(typed)} applies only to ${known.commands.map((name) => `\`mino ${name}\``).join(" and ")}.`
            : `${shown(typed)} does not apply to \`mino ${command}\`; ${HINT}.`
        )
      }
    }
    const line = builtIn !== undefined ? [command, ...builtIn] : [
      command,
      // A value as an argument of its own: @effect/cli trims `--name=value` and reads no newline in it.
      ...[...given.values()].flatMap(({ known, value }) => value === undefined ? [`--${known.flag.name}`] : [`--${known.flag.name}`, value]),
      "--",
      ...rest
    ]
    return Descriptor.parse(descriptor, line, CONFIG).pipe(
      Effect.mapError((error) => new UsageError({ message: `mino: ${plain(error.error)}` })),
      Effect.flatMap((directive): Effect.Effect<Invocation, UsageError> => {
        if (directive._tag === "BuiltIn") return builtInInvocation(directive.option)
        // @effect/cli read the built-in as a word: the only one with a value, it is not a shell it knows.
        if (builtIn !== undefined) return fail(`--completions takes bash, zsh or fish, not ${quoted(completions ?? "")}.`)
        const [extra] = directive.leftover
        if (extra !== undefined) return fail(`${quoted(extra)} is one argument too many for \`mino ${command}\`; ${HINT}.`)
        return Effect.succeed(directive.value)
      }),
      Effect.provide(NOT_USED)
    )
  })

const CONFIG = CliConfig.make({ isCaseSensitive: true, autoCorrectLimit: 0 })

const builtInInvocation = (option: BuiltInOptions.BuiltInOptions): Effect.Effect<Invocation, UsageError> => {
  switch (option._tag) {
    case "ShowHelp":
      return Effect.succeed({ _tag: "Help" })
    case "ShowVersion":
      return Effect.succeed({ _tag: "Version" })
    case "ShowCompletions":
      return Effect.succeed({ _tag: "Completions", shell: option.shellType })
    // Never reached: the strict reading does not know them.
    case "ShowWizard":
      return fail(`unknown option --wizard; ${HINT}.`)
    case "SetLogLevel":
      return fail(`unknown option --log-level; ${HINT}.`)
  }
}

const unused = Effect.dieMessage("Mino's commands declare no option that reads a file or the terminal")

/**
 * What @effect/cli's parser may ask for: a file system and paths (for options
 * that name files) and a terminal (for its wizard). Mino's commands declare
 * neither, so none of these is used.
 */
const NOT_USED = Layer.mergeAll(
  FileSystem.layerNoop({}),
  Path.layer,
  Layer.succeed(Terminal.Terminal, {
    columns: unused,
    rows: unused,
    isTTY: unused,
    readInput: unused,
    readLine: unused,
    display: () => unused
  })
)

/** @effect/cli's message as one line of text. */
const plain = (doc: HelpDoc.HelpDoc): string => {
  switch (doc._tag) {
    case "Empty":
      return ""
    case "Header":
    case "Paragraph":
      return spanText(doc.value)
    case "Sequence":
      return `${plain(doc.left)} ${plain(doc.right)}`.trim()
    case "Enumeration":
      return doc.elements.map(plain).join("; ")
    case "DescriptionList":
      return doc.definitions.map(([term, description]) => `${spanText(term)}: ${plain(description)}`).join("; ")
  }
}

const spanText = (span: Span.Span): string => {
  switch (span._tag) {
    case "Text":
    case "URI":
      return span.value
    case "Sequence":
      return spanText(span.left) + spanText(span.right)
    case "Highlight":
    case "Strong":
    case "Weak":
      return spanText(span.value)
  }
}

interface Word {
  readonly text: string
  /** After `--`: a word of the question, never a command's name. */
  readonly afterTerminator: boolean
}

/** The options given (the last of each counts) and the words, or the first mistake. */
const readTokens = (args: ReadonlyArray<string>): { readonly given: ReadonlyMap<string, Given>; readonly words: ReadonlyArray<Word> } | UsageError => {
  const config = Object.fromEntries(KNOWN.map(({ flag }) => [
    flag.name,
    { type: flag.value === undefined ? "boolean" as const : "string" as const, ...(flag.alias === undefined ? {} : { short: flag.alias }) }
  ]))
  // Not strict: unknown options and missing values come back as tokens, so each gets its own line.
  const { tokens } = parseArgs({ args: [...args], options: config, strict: false, allowPositionals: true, tokens: true })
  const given = new Map<string, Given>()
  const words: Array<Word> = []
  let terminated = false
  for (const token of tokens) {
    if (token.kind === "option-terminator") {
      terminated = true
    } else if (token.kind === "positional") {
      words.push({ text: token.value, afterTerminator: terminated })
    } else {
      const typed = token.rawName
      const known = KNOWN.find(({ flag }) => flag.name === token.name)
      if (known === undefined) return usage(`unknown option ${shown(typed)}${suggestion(typed)}; ${HINT}.`)
      const { flag } = known
      // `-m=NAME` reads as `--model=NAME` does.
      const value = token.inlineValue && !typed.startsWith("--") ? token.value?.replace(/^=/, "") : token.value
      if (flag.value !== undefined) {
        // `--model --demo` would otherwise take `--demo` as the model's name; and `--model=--`
        // is `--model --`: @effect/cli, like Node, ends the options at any `--`.
        if (value === undefined || value.length === 0 || value === "--" || (!token.inlineValue && value.startsWith("-"))) {
          return usage(`${typed} needs a value (${flag.value}), as in \`mino ${typed} ${flag.example ?? flag.value}\`.`)
        }
      } else if (value !== undefined) {
        return usage(`${typed} takes no value.`)
      }
      given.set(flag.name, { known, typed, value })
    }
  }
  return { given, words }
}

const usage = (message: string) => new UsageError({ message: `mino: ${message}` })

const fail = (message: string) => Effect.fail(usage(message))

const cut = (text: string): string => text.length > 80 ? `${text.slice(0, 80)}…` : text

/** A flag as typed, in a message: escaped, and cut short if long. */
const shown = (text: string): string => Escape.forValue(cut(text))

/** A value from the command line, in a message: quoted, escaped, and cut short if long. */
const quoted = (text: string): string => Escape.jsonString(cut(text))

/** A near miss: `-v` for `-V`, `--modle` for `--model`. */
const suggestion = (typed: string): string => {
  const name = typed.replace(/^-+/, "").toLowerCase()
  const near = KNOWN.find(({ flag }) =>
    typed.length === 2 ? flag.alias?.toLowerCase() === name : typed.startsWith("--") && distance(flag.name, name.slice(0, 40)) <= 2
  )
  if (near === undefined) return ""
  return ` (did you mean ${typed.length === 2 && near.flag.alias !== undefined ? `-${near.flag.alias}` : `--${near.flag.name}`}?)`
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
