/**
 * The line being typed at a prompt, edited key by key. Keys arrive already
 * decoded by Node's `readline.emitKeypressEvents`; this module only decides what
 * each one does, so no escape sequence can ever become text: a key is inserted
 * only when it is a printable character (or, inside a bracketed paste, a newline
 * or a tab).
 */
import * as Escape from "../security/Escape.js"

/** A key as `emitKeypressEvents` reports it, and whether it arrived inside a bracketed paste. */
export interface Key {
  readonly name?: string | undefined
  readonly sequence?: string | undefined
  readonly ctrl?: boolean | undefined
  readonly meta?: boolean | undefined
  readonly pasted?: boolean | undefined
}

export interface Editor {
  /** The text, one code point per element, so the cursor never splits a surrogate pair. */
  readonly chars: ReadonlyArray<string>
  readonly cursor: number
  /** Earlier questions, oldest first; `index === history.length` is the line being written. */
  readonly history: ReadonlyArray<string>
  readonly index: number
  /** What was typed before ↑ moved into the history. */
  readonly draft: ReadonlyArray<string>
}

export type Action =
  | { readonly _tag: "Edit"; readonly editor: Editor }
  | { readonly _tag: "Submit"; readonly text: string }
  /** Ctrl+D on an empty line. */
  | { readonly _tag: "EndOfInput" }
  /** Ctrl+C. */
  | { readonly _tag: "Interrupt" }
  /** Ctrl+\. */
  | { readonly _tag: "Quit" }

export const empty = (history: ReadonlyArray<string> = []): Editor => ({
  chars: [],
  cursor: 0,
  history,
  index: history.length,
  draft: []
})

export const text = (editor: Editor): string => editor.chars.join("")

// Any C0/C1 control or DEL: never inserted as typed text.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/

const edit = (editor: Editor, chars: ReadonlyArray<string>, cursor: number): Action => ({
  _tag: "Edit",
  editor: { ...editor, chars, cursor: Math.max(0, Math.min(cursor, chars.length)) }
})

const insert = (editor: Editor, inserted: string): Action => {
  const add = Array.from(inserted)
  return edit(editor, [...editor.chars.slice(0, editor.cursor), ...add, ...editor.chars.slice(editor.cursor)], editor.cursor + add.length)
}

const recall = (editor: Editor, index: number): Action => {
  if (index < 0 || index > editor.history.length || index === editor.index) return { _tag: "Edit", editor }
  const draft = editor.index === editor.history.length ? editor.chars : editor.draft
  const chars = index === editor.history.length ? draft : Array.from(editor.history[index] ?? "")
  return { _tag: "Edit", editor: { ...editor, chars, cursor: chars.length, index, draft } }
}

/** The start of the word before the cursor, as Ctrl+W deletes it (blanks, then non-blanks). */
const wordStart = (chars: ReadonlyArray<string>, cursor: number): number => {
  let at = cursor
  while (at > 0 && /\s/.test(chars[at - 1] ?? "")) at--
  while (at > 0 && !/\s/.test(chars[at - 1] ?? "")) at--
  return at
}

export const press = (editor: Editor, key: Key): Action => {
  const { chars, cursor } = editor
  const name = key.name ?? ""
  if (key.pasted === true) {
    if (name === "return" || name === "enter") return insert(editor, "\n")
    if (name === "tab") return insert(editor, "\t")
  }
  if (key.ctrl === true) {
    switch (name) {
      case "c":
        return { _tag: "Interrupt" }
      case "d":
        return chars.length === 0 ? { _tag: "EndOfInput" } : edit(editor, chars.toSpliced(cursor, 1), cursor)
      case "a":
        return edit(editor, chars, 0)
      case "e":
        return edit(editor, chars, chars.length)
      case "b":
        return edit(editor, chars, cursor - 1)
      case "f":
        return edit(editor, chars, cursor + 1)
      case "u":
        return edit(editor, chars.slice(cursor), 0)
      case "k":
        return edit(editor, chars.slice(0, cursor), cursor)
      case "w": {
        const start = wordStart(chars, cursor)
        return edit(editor, [...chars.slice(0, start), ...chars.slice(cursor)], start)
      }
      case "h":
        return cursor === 0 ? { _tag: "Edit", editor } : edit(editor, chars.toSpliced(cursor - 1, 1), cursor - 1)
      case "p":
        return recall(editor, editor.index - 1)
      case "n":
        return recall(editor, editor.index + 1)
    }
    return { _tag: "Edit", editor }
  }
  if (key.sequence === "\u001c") return { _tag: "Quit" }
  if (key.meta === true) return { _tag: "Edit", editor }
  switch (name) {
    case "return":
    case "enter":
      return { _tag: "Submit", text: text(editor) }
    case "backspace":
      return cursor === 0 ? { _tag: "Edit", editor } : edit(editor, chars.toSpliced(cursor - 1, 1), cursor - 1)
    case "delete":
      return edit(editor, chars.toSpliced(cursor, 1), cursor)
    case "left":
      return edit(editor, chars, cursor - 1)
    case "right":
      return edit(editor, chars, cursor + 1)
    case "home":
      return edit(editor, chars, 0)
    case "end":
      return edit(editor, chars, chars.length)
    case "up":
      return recall(editor, editor.index - 1)
    case "down":
      return recall(editor, editor.index + 1)
  }
  const sequence = key.sequence ?? ""
  // Escape sequences (a decoded key with a name like `f5`, or one the decoder did not know) are never text.
  if (sequence.length === 0 || CONTROL.test(sequence)) return { _tag: "Edit", editor }
  return insert(editor, sequence)
}

// East Asian wide and emoji code points take two columns.
const WIDE = /[\u1100-\u115f\u2e80-\u303e\u3041-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6\u{1f300}-\u{1f64f}\u{1f900}-\u{1f9ff}\u{20000}-\u{3fffd}]/u

/** One code point as the editor draws it: a newline as `↵`, a tab as `⇥`, anything unsafe escaped. */
const shown = (ch: string): string => (ch === "\n" ? "↵" : ch === "\t" ? "⇥" : Escape.forDisplay(ch))

/** Columns a drawn string takes (escapes are ASCII; wide characters take two). */
export const width = (drawn: string): number => {
  let columns = 0
  for (const ch of drawn) columns += WIDE.test(ch) ? 2 : 1
  return columns
}

/** The line as drawn, and the column of the cursor within it. */
export const draw = (editor: Editor): { readonly line: string; readonly cursorColumn: number } => {
  const before = editor.chars.slice(0, editor.cursor).map(shown).join("")
  const after = editor.chars.slice(editor.cursor).map(shown).join("")
  return { line: before + after, cursorColumn: width(before) }
}
