/**
 * What a line typed at `You> ` asks for. A line that starts with `/` is a
 * command to Mino and never a question: `/exit`, `/help`, or one line saying it
 * names no command. `//` at the start sends the rest with one `/` removed, so a
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
  /** A `/word` that is no command: `word` as typed (escape it before showing it). */
  | { readonly _tag: "Unknown"; readonly word: string }

export const EXIT = "/exit"
export const HELP = "/help"

export const read = (line: string): Typed => {
  const text = line.trim()
  if (text.length === 0) return { _tag: "Blank" }
  if (text.startsWith("//")) return { _tag: "Ask", question: line.trimStart().slice(1) }
  if (!text.startsWith("/")) return { _tag: "Ask", question: line }
  if (text === EXIT) return { _tag: "Exit" }
  if (text === HELP) return { _tag: "Help" }
  return { _tag: "Unknown", word: text.split(/\s/, 1)[0] ?? text }
}

/** The one line for a `/word` that names no command. */
export const unknown = (word: string): string => {
  const chars = [...word]
  const shown = Escape.forLine(chars.length > 40 ? `${chars.slice(0, 40).join("")}…` : word)
  return `${shown} is not a command, so nothing was sent (${HELP} lists the commands). To ask something that begins with /, start the line with //.`
}

/** What `/help` shows: the commands, then the keys (at `You> ` and at the approval prompt). */
export const HELP_TEXT = `Commands (a line that starts with / is never sent to the model):
  /help     this list
  /exit     exit (as Ctrl+D at an empty line does)
  //...     send the line with one / removed: //etc/hosts asks about /etc/hosts

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
