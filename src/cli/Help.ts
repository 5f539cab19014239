/**
 * `mino --help`: what Mino does, how to call it, and everything around it a
 * person needs (environment, files, exit codes), as plain text that reads the
 * same on a terminal, in a pipe and with `NO_COLOR`.
 */
import { OPTIONS, type OptionSpec } from "./Arguments.js"
import { VERSION } from "../version.js"

const column = (rows: ReadonlyArray<readonly [string, string]>): string => {
  const width = Math.max(...rows.map(([left]) => left.length)) + 2
  return rows.map(([left, right]) => `  ${left.padEnd(width)}${right}`).join("\n")
}

const flags = (spec: OptionSpec): string =>
  `${spec.short === undefined ? "    " : `-${spec.short}, `}--${spec.name}${spec.value === undefined ? "" : ` ${spec.value}`}`

export const text = (): string =>
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
${column(OPTIONS.filter((spec) => spec.commands.includes("chat")).map((spec) => [flags(spec), spec.description]))}

Options of mino log:
${column(OPTIONS.filter((spec) => !spec.commands.includes("chat")).map((spec) => [flags(spec), spec.description]))}

Environment:
${
    column([
      ["OPENAI_API_KEY", "your API key (required, except with --demo); never given to commands"],
      ["OPENAI_BASE_URL", "a Responses-compatible endpoint (default: https://api.openai.com/v1)"],
      ["MINO_MODEL", "the model when --model is not given"],
      ["NO_COLOR", "when set to anything, no colour (the spinner still turns)"],
      ["HOME", "where ~/.mino is (an absolute path); with PATH, USER, LOGNAME, LANG and TMPDIR, passed on to commands"],
      ["XDG_CACHE_HOME", "where the start-up code cache goes (absolute; default ~/.cache); NODE_DISABLE_COMPILE_CACHE=1: none"]
    ])
  }

Files:
${
    column([
      ["~/.mino/sessions/ID.jsonl", "conversations, one record a line; a start continues the newest started in its directory"],
      ["~/.mino/demo/ID.jsonl", "the --demo conversations, kept apart"],
      ["./AGENTS.md", "project instructions, added when present where you start mino"]
    ])
  }

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
`
