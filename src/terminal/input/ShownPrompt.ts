/**
 * The prompt on the screen, and what drawing its line again writes: a clear
 * screen first after Ctrl+L (where there is a screen to clear), the row drawn
 * again from its start when the prompt's label changed (a search began,
 * found, failed or ended), else `PromptLayout`'s redraw. Pure; `KeyReader`
 * writes the text and keeps the record.
 */
import * as LineEditor from "./LineEditor.js"
import * as PromptLayout from "./PromptLayout.js"
import * as Width from "../display/Width.js"

export interface ShownPrompt {
  readonly prompt: string
  /** Columns the prompt takes (its colours take none). */
  readonly promptWidth: number
  /** What the last draw left on the screen. */
  readonly drawn: PromptLayout.Drawn | undefined
  /** The prompt as last drawn: a search's label replaces it while one is under way. */
  readonly label: string
  /** The editor's Ctrl+L count when the screen was last cleared. */
  readonly clears: number
}

/** How the prompt is drawn: on what screen, and with which layout (`animated`: cursor movement, a screen to clear). */
export interface Screen {
  readonly columns: number
  readonly rows: number
  readonly animated: boolean
}

export const CLEAR_SCREEN = "\u001b[H\u001b[2J"

const SGR_CODES = /\u001b\[[0-9;]*m/g

/** A prompt about to be written: nothing of it drawn yet. */
export const of = (prompt: string): ShownPrompt => ({
  prompt,
  promptWidth: Width.width(prompt.replace(SGR_CODES, "")),
  drawn: undefined,
  label: prompt,
  clears: 0
})

const layout = (screen: Screen) => (screen.animated ? PromptLayout.ansi : PromptLayout.plain)

const frame = (shown: ShownPrompt, line: LineEditor.Line, label: string, screen: Screen): PromptLayout.Frame => ({
  prompt: label,
  promptWidth: label === shown.prompt ? shown.promptWidth : Width.width(label),
  line,
  columns: screen.columns,
  rows: screen.rows
})

/**
 * Draws `editor` on the prompt: whether the screen is cleared first (`clear`,
 * written before `text`), the text that updates the screen, and the prompt as
 * shown then.
 */
export const draw = (shown: ShownPrompt, editor: LineEditor.Editor, screen: Screen): {
  readonly shown: ShownPrompt
  readonly clear: boolean
  readonly text: string
} => {
  const label = LineEditor.label(editor, shown.prompt)
  // Ctrl+L: a clear screen with the prompt at its top (a plain output has no screen to clear).
  const clear = editor.clears !== shown.clears && screen.animated
  let drawn = clear ? undefined : shown.drawn
  // Another prompt (a search began, found, failed or ended): the row is drawn again from its start.
  if (label !== shown.label && drawn !== undefined) drawn = { ...drawn, atEnd: undefined }
  const next = layout(screen)(drawn, frame(shown, editor, label, screen))
  return { shown: { ...shown, drawn: next.drawn, label, clears: editor.clears }, clear, text: next.text }
}

/** The prompt was written as it is, with an empty line after it: what that left on the screen. */
export const written = (shown: ShownPrompt, screen: Screen): ShownPrompt => ({
  ...shown,
  drawn: layout(screen)(undefined, frame(shown, LineEditor.empty(), shown.prompt, screen)).drawn
})
