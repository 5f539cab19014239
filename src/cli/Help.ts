/**
 * `mino --help`: what Mino does, how to call it, and everything around it a
 * person needs (environment, files, exit codes, completions), as plain text that
 * reads the same on a terminal, in a pipe, with `NO_COLOR` and with `TERM=dumb`.
 * The options are those the commands declare (`Commands.ts`), in Mino's words.
 */
import type * as Descriptor from "@effect/cli/CommandDescriptor"
import { DEFAULT_MODEL } from "../defaults.js"
import * as Escape from "../security/Escape.js"
import { VERSION } from "../version.js"
import * as Commands from "./Commands.js"
import * as ConfigFile from "./ConfigFile.js"
import * as Endpoint from "./EndpointShown.js"

const column = (rows: ReadonlyArray<readonly [string, string]>): string => {
  const width = Math.max(...rows.map(([left]) => left.length)) + 2
  return rows.map(([left, right]) => `  ${left.padEnd(width)}${right}`).join("\n")
}

const flags = (flag: Commands.Flag): string =>
  `${flag.alias === undefined ? "    " : `-${flag.alias}, `}--${flag.name}${flag.value === undefined ? "" : ` ${flag.value}`}`

/** The options `command` takes, leaving out those `shown` already. */
const options = <A>(command: Descriptor.Command<A>, shown: ReadonlyArray<Commands.Flag> = []) =>
  Commands.FLAGS.filter((flag) => Commands.declaredNames(command).has(`--${flag.name}`) && !shown.includes(flag))

const rows = (list: ReadonlyArray<Commands.Flag>) => column(list.map((flag) => [flags(flag), flag.description]))

/** The settings as this start reads them, and where each comes from (`ConfigFile`); or why the file is refused. */
export type Settings = ConfigFile.Loaded | { readonly refused: string }

const settingsSection = (settings: Settings | undefined): string => {
  if (settings === undefined) return ""
  if ("refused" in settings) return `\nSettings now: ${Escape.forLine(settings.refused)} (a chat will not start until it is fixed).\n`
  const from = (setting: ConfigFile.Setting) => ConfigFile.describe(setting, settings.sources[setting])
  const { endpoint, headers, model = DEFAULT_MODEL } = settings.effective
  return `
Settings now (a variable that is set wins over ${ConfigFile.SHOWN}; --model wins over both):
${
    column([
      ["model", `${Escape.forValue(model)} (${from("model")})`],
      ["endpoint", `${Endpoint.shown(endpoint)} (${from("endpoint")})`],
      ["headers", `${Endpoint.headerNames(headers)} (${from("headers")})`]
    ])
  }
`
}

export const text = (settings?: Settings): string =>
  `Mino ${VERSION}: a terminal coding agent.
Chat with a model that can run bash commands in the directory you start it in; each
command is shown to you first and runs only if you approve it.

Usage:
${
    column([
      ["mino [options]", "start (or continue) this directory's conversation"],
      ["mino [options] QUESTION", "ask QUESTION first, then keep chatting"],
      ["mino log [ID] [--json | --unknown]", "show a conversation (this directory's): turns, commands, approvals, results"],
      ["mino sessions", "list the conversations: id, directory, start, turns, last question"]
    ])
  }

Options:
${rows([...options(Commands.chat), ...Commands.BUILT_INS])}

Options of mino log:
${rows(options(Commands.log, options(Commands.chat)))}

Options of mino sessions: --demo (the demo's conversations).

Environment:
${
    column([
      ["OPENAI_API_KEY", "your API key: required except with --demo (any value for a local server that needs none); never given to commands"],
      ["OPENAI_BASE_URL", "a Responses-compatible endpoint (default: https://api.openai.com/v1)"],
      ["MINO_MODEL", "the model when --model is not given"],
      ["MINO_HEADERS", "headers for a gateway, one `Name: value` a line (e.g. cf-aig-authorization: Bearer TOKEN); never the key; values redacted like it"],
      ["NO_COLOR", "when set (not empty), no colour (the spinner still turns)"],
      ["TERM", "when dumb, plain text: no colour, no styles, no cursor movement (as in a pipe)"],
      ["HOME", "where ~/.mino is (an absolute path); with PATH, USER, LOGNAME, LANG and TMPDIR, passed on to commands"],
      ["XDG_CACHE_HOME", "where the start-up code cache goes (absolute; default ~/.cache); NODE_DISABLE_COMPILE_CACHE=1: none"]
    ])
  }

Files:
${
    column([
      ["~/.mino/sessions/ID.jsonl", "conversations, one record a line; a start continues the newest started in its directory"],
      ["~/.mino/demo/ID.jsonl", "the --demo conversations, kept apart"],
      ["~/.mino/config.json", "settings: {\"model\": …, \"endpoint\": …, \"headers\": {…}}; never the key; a variable wins over it"],
      ["./AGENTS.md", "project instructions, added when present where you start mino"]
    ])
  }
${settingsSection(settings)}
Exit codes:
${
    column([
      ["0", "normal end: Ctrl+D, /exit, or the end of piped input"],
      ["1", "a piped turn failed, or an error stopped the chat (busy session, failed save)"],
      ["2", "bad usage or configuration (an unknown option, no OPENAI_API_KEY)"],
      ["130", "Ctrl+C"],
      ["128+N", "stopped by signal N (SIGHUP 129, SIGQUIT 131, SIGTERM 143)"]
    ])
  }

Examples:
${
    column([
      ["mino \"why is the build failing?\"", "ask a first question, then keep chatting"],
      ["mino --new -m gpt-5.1-mini", "a new conversation, with another model"],
      ["mino --demo", "try it without a key: a scripted model on loopback"],
      ["mino log --unknown", "after a crash: which commands may have run"]
    ])
  }

Completions (Tab completes mino's options and commands once the script is installed):
${
    column([
      ["bash", "mino --completions bash > ~/.local/share/bash-completion/completions/mino"],
      ["zsh", "mino --completions zsh > ~/.zfunc/_mino   (with fpath+=(~/.zfunc) before compinit)"],
      ["fish", "mino --completions fish > ~/.config/fish/completions/mino.fish"]
    ])
  }
`
