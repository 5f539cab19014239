/**
 * What a line typed at `You> ` asks for. A line that starts with `/` is a
 * command to Mino and never a question: `/exit`, `/help`, `/status`, `/new`,
 * `/sessions`, `/log`, `/model NAME`, `/clear`, or one line saying it names no
 * command or is not how the command is used. `//` at the start sends the rest with one `/` removed, so a
 * question can still begin with a path. Pure and total, like `terminal/input/LineEditor`.
 */
import * as Escape from "../security/Escape.js"

export type Typed =
  /** Sent to the model as the next question. */
  | { readonly _tag: "Ask"; readonly question: string }
  /** Nothing but blanks: the prompt is shown again. */
  | { readonly _tag: "Blank" }
  | { readonly _tag: "Exit" }
  | { readonly _tag: "Help" }
  /** Where you are: model, endpoint, conversation, AGENTS.md, tokens. */
  | { readonly _tag: "Status" }
  /** A new conversation here, without quitting. */
  | { readonly _tag: "New" }
  | { readonly _tag: "Sessions" }
  /** This conversation, as `mino log` shows it. */
  | { readonly _tag: "Log" }
  /** Ask `name` from the next question on (checked: a model's name, nothing else). */
  | { readonly _tag: "Model"; readonly name: string }
  | { readonly _tag: "Clear" }
  /** A command used wrongly: one line, Mino's own words (nothing typed in it is raw). */
  | { readonly _tag: "Misused"; readonly message: string }
  /** A `/word` that is no command: `word` as typed (escape it before showing it). */
  | { readonly _tag: "Unknown"; readonly word: string }

export const EXIT = "/exit"
export const HELP = "/help"

/** The commands that take no argument, by name. */
const PLAIN: Readonly<Record<string, Typed>> = {
  [EXIT]: { _tag: "Exit" },
  [HELP]: { _tag: "Help" },
  "/status": { _tag: "Status" },
  "/new": { _tag: "New" },
  "/sessions": { _tag: "Sessions" },
  "/log": { _tag: "Log" },
  "/clear": { _tag: "Clear" }
}

export const MODEL = "/model"

/** What Tab completes at `You> `: every command (one that takes an argument with its space). */
export const COMPLETIONS: ReadonlyArray<string> = [...Object.keys(PLAIN), `${MODEL} `].sort()

/** A model's name: what endpoints use (`gpt-5.1`, `openai/gpt-oss-120b`, `qwen3:8b`, `org/model@v2`), nothing that can draw. */
export const MODEL_NAME = /^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}$/

export const read = (line: string): Typed => {
  const text = line.trim()
  if (text.length === 0) return { _tag: "Blank" }
  if (text.startsWith("//")) return { _tag: "Ask", question: line.trimStart().slice(1) }
  if (!text.startsWith("/")) return { _tag: "Ask", question: line }
  const [word = text, ...rest] = text.split(/\s+/)
  const plain = PLAIN[word]
  if (plain !== undefined) return rest.length === 0 ? plain : { _tag: "Misused", message: `${word} takes nothing after it, so nothing was done.` }
  if (word === MODEL) return model(rest)
  return { _tag: "Unknown", word }
}

const model = (words: ReadonlyArray<string>): Typed => {
  const [name] = words
  if (name === undefined || words.length > 1) return { _tag: "Misused", message: `${MODEL} takes one model's name, as in ${MODEL} gpt-5.1-mini (/status shows the one in use).` }
  if (!MODEL_NAME.test(name)) {
    return { _tag: "Misused", message: `that is not a model's name (letters, digits and . _ : / @ + -, at most 200), so the model is unchanged.` }
  }
  return { _tag: "Model", name }
}

/** The one line for a `/word` that names no command. */
export const unknown = (word: string): string => {
  const chars = [...word]
  const shown = Escape.forLine(chars.length > 40 ? `${chars.slice(0, 40).join("")}…` : word)
  return `${shown} is not a command, so nothing was sent (${HELP} lists the commands). To ask something that begins with /, start the line with //.`
}

/** What `/help` shows: the commands, then the keys (at `You> ` and at the approval prompt). */
export const HELP_TEXT = `Commands (a line that starts with / is never sent to the model):
  /help          this list
  /status        model, endpoint, conversation, AGENTS.md, tokens, context
  /new           start a new conversation here (this one is kept)
  /sessions      list the conversations (as mino sessions does)
  /log           show this conversation (as mino log does)
  /model NAME    ask NAME from the next question on
  /clear         clear the screen
  /exit          exit (as Ctrl+D at an empty line does)
  Tab            complete a command: /st then Tab gives /status
  //...          send the rest as typed: //etc/hosts asks about /etc/hosts

Keys at You>:
  Enter                  send the question
  a paste                text, newlines kept (shown as ↵); Enter sends it
  Ctrl+J  Alt+Enter      a line break in the question
  ← → Home End           move (also Ctrl+B Ctrl+F Ctrl+A Ctrl+E)
  Alt+B Alt+F            move by words
  Backspace Delete       delete before / at the cursor
  Ctrl+U Ctrl+K Ctrl+W   cut to the start, to the end, the word before
  Alt+Backspace Alt+D    cut the word before / after the cursor
  Ctrl+Y                 put back what was cut
  ↑ ↓ (Ctrl+P Ctrl+N)    earlier questions of this conversation
  Ctrl+R Ctrl+S          search earlier questions (Enter asks, Ctrl+G leaves)
  Ctrl+L                 clear the screen
  Ctrl+D                 at an empty line: exit
  Ctrl+C                 cancel the turn (a running command is stopped), exit

At "Approve this operation? [y/N]": only y or yes approves, typed once the
prompt shows (what was typed before it is ignored); anything else, Enter alone,
or a pasted answer denies; Ctrl+D ends the turn without asking the model again.

Outside the chat: "mino log" shows this conversation, "mino sessions" lists
them all, "mino --help" the options (after mino --demo: "mino log --demo",
"mino sessions --demo").
`
