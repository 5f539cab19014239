/**
 * The line being typed at a prompt, edited input by input. Inputs arrive
 * decoded (`KeyDecoder`); this module only decides what each one does, so no
 * escape sequence can ever become text: only typed printable text and pasted
 * text (newlines and tabs included) are inserted.
 *
 * The text on each side of the cursor is a rope (`Rope`, a persistent balanced
 * tree of small chunks), so a key costs O(log n) and at most one chunk's copy
 * whatever the line's length: moving to either end joins the two ropes,
 * recalling a question reuses the rope built the first time it was recalled,
 * and a paste costs its own length. Pure: every press returns a new editor.
 */
import * as Escape from "../../security/Escape.js"
import type { Input } from "./KeyDecoder.js"
import * as Rope from "./Rope.js"
import * as Width from "../display/Width.js"
import type { Texts } from "../../TextList.js"

/** The texts of a rope's chunks in reading order, from the cursor outwards until `limit` code units (from the end back when `fromEnd`). */
const chunkTexts = (rope: Rope.Rope, fromEnd: boolean, limit = Infinity): Array<string> => {
  const texts: Array<string> = []
  let count = 0
  for (const chunk of Rope.chunks(rope, fromEnd)) {
    if (count >= limit) break
    texts.push(chunk)
    count += chunk.length
  }
  return fromEnd ? texts.reverse() : texts
}

/** A rope without its trailing code points that satisfy `test`. */
const dropTrailing = (rope: Rope.Rope, test: (ch: string) => boolean): Rope.Rope => {
  let dropped = 0
  for (const chunk of Rope.chunks(rope, true)) {
    const chars = Array.from(chunk)
    let keep = chars.length
    while (keep > 0 && test(chars[keep - 1] ?? "")) keep--
    dropped += chars.slice(keep).join("").length
    if (keep > 0) break
  }
  return Rope.split(rope, Rope.units(rope) - dropped)[0]
}

/** One line: the text before the cursor and after it. */
export interface Line {
  readonly before: Rope.Rope
  readonly after: Rope.Rope
}

export interface Editor extends Line {
  /** Earlier questions, oldest first; `index === history.length` is the line being written. */
  readonly history: Texts
  readonly index: number
  /** What was being written before ↑ moved into the history. */
  readonly draft: Line
  /** Something was pasted into this line: as an answer it cannot approve. */
  readonly pasted: boolean
}

export type Action =
  | { readonly _tag: "Edit"; readonly editor: Editor }
  | { readonly _tag: "Submit"; readonly text: string; readonly pasted: boolean }
  /** Ctrl+D on an empty line. */
  | { readonly _tag: "EndOfInput" }

export const empty = (history: Texts = []): Editor => ({
  before: undefined,
  after: undefined,
  history,
  index: history.length,
  draft: { before: undefined, after: undefined },
  pasted: false
})

/** The editor holding `text`, the cursor at its end. */
export const of = (text: string, history: Texts = []): Editor => ({ ...empty(history), before: Rope.of(text) })

export const text = (line: Line): string => Rope.text(line.before) + Rope.text(line.after)

/** Code points in the line. */
export const length = (line: Line): number => Rope.points(line.before) + Rope.points(line.after)

/** Code points before the cursor. */
export const cursor = (line: Line): number => Rope.points(line.before)

const edit = (editor: Editor, line: Line): Action => ({ _tag: "Edit", editor: { ...editor, ...line } })
const same = (editor: Editor): Action => ({ _tag: "Edit", editor })

const insert = (editor: Editor, inserted: string): Action => edit(editor, { before: Rope.append(editor.before, inserted), after: editor.after })

// Each history's questions as ropes, built the first time one is recalled (a cache of a pure function).
const recalled = new WeakMap<Texts, Map<number, Rope.Rope>>()
const historyRope = (history: Texts, index: number): Rope.Rope => {
  const ropes = recalled.get(history) ?? new Map<number, Rope.Rope>()
  recalled.set(history, ropes)
  const rope = ropes.get(index) ?? Rope.of(history.at(index) ?? "")
  ropes.set(index, rope)
  return rope
}

const recall = (editor: Editor, index: number): Action => {
  if (index < 0 || index > editor.history.length || index === editor.index) return same(editor)
  const draft = editor.index === editor.history.length ? { before: editor.before, after: editor.after } : editor.draft
  const line = index === editor.history.length ? draft : { before: historyRope(editor.history, index), after: undefined }
  return { _tag: "Edit", editor: { ...editor, ...line, index, draft } }
}

const isBlank = (ch: string): boolean => /\s/.test(ch)

const left = (editor: Editor): Action => {
  const [ch, before] = Rope.takeLast(editor.before)
  return ch === "" ? same(editor) : edit(editor, { before, after: Rope.prepend(editor.after, ch) })
}

const right = (editor: Editor): Action => {
  const [ch, after] = Rope.takeFirst(editor.after)
  return ch === "" ? same(editor) : edit(editor, { before: Rope.append(editor.before, ch), after })
}

const backspace = (editor: Editor): Action =>
  editor.before === undefined ? same(editor) : edit(editor, { before: Rope.takeLast(editor.before)[1], after: editor.after })

const deleteForward = (editor: Editor): Action =>
  editor.after === undefined ? same(editor) : edit(editor, { before: editor.before, after: Rope.takeFirst(editor.after)[1] })

const control = (editor: Editor, name: string): Action => {
  switch (name) {
    case "d":
      return length(editor) === 0 ? { _tag: "EndOfInput" } : deleteForward(editor)
    case "a":
      return edit(editor, { before: undefined, after: Rope.concat(editor.before, editor.after) })
    case "e":
      return edit(editor, { before: Rope.concat(editor.before, editor.after), after: undefined })
    case "b":
      return left(editor)
    case "f":
      return right(editor)
    case "u":
      return edit(editor, { before: undefined, after: editor.after })
    case "k":
      return edit(editor, { before: editor.before, after: undefined })
    case "w":
      // Ctrl+W deletes the word before the cursor: blanks, then non-blanks.
      return edit(editor, { before: dropTrailing(dropTrailing(editor.before, isBlank), (ch) => !isBlank(ch)), after: editor.after })
    case "h":
      return backspace(editor)
    case "p":
      return recall(editor, editor.index - 1)
    case "n":
      return recall(editor, editor.index + 1)
  }
  return same(editor)
}

export const press = (editor: Editor, input: Exclude<Input, { readonly _tag: "Stop" }>): Action => {
  switch (input._tag) {
    case "Text":
      return insert(editor, input.text)
    case "Paste": {
      const inserted = insert(editor, input.text)
      return inserted._tag === "Edit" ? { _tag: "Edit", editor: { ...inserted.editor, pasted: true } } : inserted
    }
    case "Key":
      break
  }
  if (input.ctrl && input.name.length === 1) return control(editor, input.name)
  if (input.ctrl || input.meta) return same(editor)
  switch (input.name) {
    case "enter":
      return { _tag: "Submit", text: text(editor), pasted: editor.pasted }
    case "backspace":
      return backspace(editor)
    case "delete":
      return deleteForward(editor)
    case "left":
      return left(editor)
    case "right":
      return right(editor)
    case "home":
      return control(editor, "a")
    case "end":
      return control(editor, "e")
    case "up":
      return recall(editor, editor.index - 1)
    case "down":
      return recall(editor, editor.index + 1)
  }
  return same(editor)
}

/** Columns a drawn string takes (kept here too for the modules that measure with it). */
export const width = Width.width

/** One code point as the editor draws it: a newline as `↵`, a tab as `⇥`, anything unsafe escaped. */
export const shown = (ch: string): string => (ch === "\n" ? "↵" : ch === "\t" ? "⇥" : Escape.forDisplay(ch))

/** The line as drawn, whole, and the column of the cursor within it. */
export const draw = (line: Line): { readonly line: string; readonly cursorColumn: number } => {
  const before = Array.from(chunkTexts(line.before, true).join(""), shown).join("")
  const after = Array.from(chunkTexts(line.after, false).join(""), shown).join("")
  return { line: before + after, cursorColumn: Width.width(before) }
}

// What is not drawn as itself: line breaks, tabs, and whatever Escape escapes.
const SPECIAL = new RegExp(`[\\n\\t]|${Escape.UNSAFE_SOURCE}`, "gu")

/** What is drawn of a line around its cursor, in at most `columns` columns, and how much is not. */
export interface View {
  readonly before: string
  readonly after: string
  /** Code points not drawn before and after what is. */
  readonly hiddenBefore: number
  readonly hiddenAfter: number
}

/** Drawn code points from one side of the cursor, nearest first, while they fit in `columns`. */
const drawnSide = (rope: Rope.Rope, fromEnd: boolean, columns: number): { drawn: Array<string>; width: number } => {
  // Every code point takes at least one column: `columns` of them are enough to fill the space.
  const collected = chunkTexts(rope, fromEnd, columns + Rope.CHUNK).join("")
  // One piece per code point, with its width: most are drawn as themselves; only the few that need it are escaped.
  const pieces: Array<readonly [string, number]> = []
  let from = 0
  for (const match of collected.matchAll(SPECIAL)) {
    for (const ch of collected.slice(from, match.index)) pieces.push([ch, Width.ofChar(ch)])
    const piece = shown(match[0])
    pieces.push([piece, Width.width(piece)])
    from = match.index + match[0].length
  }
  for (const ch of collected.slice(from)) pieces.push([ch, Width.ofChar(ch)])
  if (fromEnd) pieces.reverse()
  const drawn: Array<string> = []
  let width = 0
  for (const [piece, taken] of pieces) {
    if (width + taken > columns) break
    drawn.push(piece)
    width += taken
  }
  return { drawn, width }
}

/**
 * The line around its cursor in `columns` columns: whole when it fits, else a
 * window (a third of it after the cursor, when there is that much) with the
 * number of code points left out on each side. The cost is bounded by `columns`,
 * not by the line's length.
 */
export const view = (line: Line, columns: number): View => {
  const space = Math.max(2, columns)
  const beforeSize = Rope.points(line.before)
  const afterSize = Rope.points(line.after)
  const behind = drawnSide(line.before, true, space)
  const ahead = drawnSide(line.after, false, space)
  const fits = behind.drawn.length === beforeSize && ahead.drawn.length === afterSize && behind.width + ahead.width <= space
  if (fits) return { before: behind.drawn.reverse().join(""), after: ahead.drawn.join(""), hiddenBefore: 0, hiddenAfter: 0 }
  // Columns for after the cursor: what it needs, at most a third, and what the text before leaves.
  const afterColumns = Math.max(Math.min(ahead.width, Math.floor(space / 3)), space - behind.width)
  const afterTaken = take(ahead.drawn, afterColumns)
  const beforeTaken = take(behind.drawn, space - afterTaken.width)
  return {
    before: beforeTaken.drawn.reverse().join(""),
    after: afterTaken.drawn.join(""),
    hiddenBefore: beforeSize - beforeTaken.drawn.length,
    hiddenAfter: afterSize - afterTaken.drawn.length
  }
}

const take = (drawn: ReadonlyArray<string>, columns: number): { drawn: Array<string>; width: number } => {
  const out: Array<string> = []
  let width = 0
  for (const piece of drawn) {
    const taken = Width.width(piece)
    if (width + taken > columns) break
    out.push(piece)
    width += taken
  }
  return { drawn: out, width }
}
