/**
 * The line being typed at a prompt, edited input by input. Inputs arrive
 * decoded (`KeyDecoder`); this module only decides what each one does, so no
 * escape sequence can ever become text: only typed printable text and pasted
 * text (newlines and tabs included) are inserted.
 *
 * The text is kept as two persistent lists of small chunks, the chunks nearest
 * the cursor first, so a key costs at most one chunk's copy whatever the line's
 * length; a paste costs its own length. Pure: every press returns a new editor.
 */
import * as Escape from "../security/Escape.js"
import type { Input } from "./KeyDecoder.js"
import * as Width from "./Width.js"

/** Code units per chunk: a key copies at most this much. */
const CHUNK = 512

/** Text as a persistent list of chunks; `size` counts the code points of this chunk and all after it. */
export interface Chunks {
  readonly text: string
  readonly size: number
  readonly next: Chunks | undefined
}

const isHigh = (unit: number): boolean => unit >= 0xd800 && unit <= 0xdbff
const isLow = (unit: number): boolean => unit >= 0xdc00 && unit <= 0xdfff

const points = (text: string): number => {
  let count = text.length
  for (let i = 0; i + 1 < text.length; i++) {
    if (isHigh(text.charCodeAt(i)) && isLow(text.charCodeAt(i + 1))) {
      count--
      i++
    }
  }
  return count
}

const node = (text: string, next: Chunks | undefined): Chunks => ({ text, size: points(text) + (next?.size ?? 0), next })

/** `text` cut into chunks, never between the halves of a surrogate pair. */
const pieces = (text: string): Array<string> => {
  const out: Array<string> = []
  let from = 0
  while (from < text.length) {
    let to = Math.min(text.length, from + CHUNK)
    if (to < text.length && isLow(text.charCodeAt(to)) && isHigh(text.charCodeAt(to - 1))) to--
    out.push(text.slice(from, to))
    from = to
  }
  return out
}

/** Adds `text` at the end of a before-the-cursor list (its head is its last chunk). */
const append = (list: Chunks | undefined, text: string): Chunks | undefined => {
  if (text.length === 0) return list
  if (list !== undefined && list.text.length + text.length <= CHUNK) return node(list.text + text, list.next)
  return pieces(text).reduce<Chunks | undefined>((acc, piece) => node(piece, acc), list)
}

/** Adds `text` at the start of an after-the-cursor list (its head is its first chunk). */
const prepend = (list: Chunks | undefined, text: string): Chunks | undefined => {
  if (text.length === 0) return list
  if (list !== undefined && list.text.length + text.length <= CHUNK) return node(text + list.text, list.next)
  return pieces(text).reduceRight<Chunks | undefined>((acc, piece) => node(piece, acc), list)
}

/** The last code point of a before list, and the list without it. */
const takeLast = (list: Chunks | undefined): readonly [string, Chunks | undefined] => {
  if (list === undefined) return ["", undefined]
  const { text } = list
  const cut = text.length >= 2 && isLow(text.charCodeAt(text.length - 1)) && isHigh(text.charCodeAt(text.length - 2)) ? 2 : 1
  const rest = text.slice(0, text.length - cut)
  return [text.slice(text.length - cut), rest.length === 0 ? list.next : node(rest, list.next)]
}

/** The first code point of an after list, and the list without it. */
const takeFirst = (list: Chunks | undefined): readonly [string, Chunks | undefined] => {
  if (list === undefined) return ["", undefined]
  const { text } = list
  const cut = text.length >= 2 && isHigh(text.charCodeAt(0)) && isLow(text.charCodeAt(1)) ? 2 : 1
  const rest = text.slice(cut)
  return [text.slice(0, cut), rest.length === 0 ? list.next : node(rest, list.next)]
}

/** Moves every chunk of one list onto the other, reversing their order as the cursor passes them. */
const moveAll = (from: Chunks | undefined, onto: Chunks | undefined): Chunks | undefined => {
  let to = onto
  for (let chunk = from; chunk !== undefined; chunk = chunk.next) to = node(chunk.text, to)
  return to
}

/** A before list without its trailing code points that satisfy `test`. */
const dropTrailing = (list: Chunks | undefined, test: (ch: string) => boolean): Chunks | undefined => {
  let rest = list
  while (rest !== undefined) {
    const chars = Array.from(rest.text)
    let keep = chars.length
    while (keep > 0 && test(chars[keep - 1] ?? "")) keep--
    if (keep > 0) return keep === chars.length ? rest : node(chars.slice(0, keep).join(""), rest.next)
    rest = rest.next
  }
  return undefined
}

/** The texts of a list's chunks in reading order (before lists are stored last chunk first). */
const chunkTexts = (list: Chunks | undefined, reversed: boolean, limit = Infinity): Array<string> => {
  const texts: Array<string> = []
  let count = 0
  for (let chunk = list; chunk !== undefined && count < limit; chunk = chunk.next) {
    texts.push(chunk.text)
    count += chunk.text.length
  }
  return reversed ? texts.reverse() : texts
}

/** One line: the text before the cursor and after it. */
export interface Line {
  readonly before: Chunks | undefined
  readonly after: Chunks | undefined
}

export interface Editor extends Line {
  /** Earlier questions, oldest first; `index === history.length` is the line being written. */
  readonly history: ReadonlyArray<string>
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

export const empty = (history: ReadonlyArray<string> = []): Editor => ({
  before: undefined,
  after: undefined,
  history,
  index: history.length,
  draft: { before: undefined, after: undefined },
  pasted: false
})

/** The editor holding `text`, the cursor at its end. */
export const of = (text: string, history: ReadonlyArray<string> = []): Editor => ({ ...empty(history), before: append(undefined, text) })

export const text = (line: Line): string => [...chunkTexts(line.before, true), ...chunkTexts(line.after, false)].join("")

/** Code points in the line. */
export const length = (line: Line): number => (line.before?.size ?? 0) + (line.after?.size ?? 0)

/** Code points before the cursor. */
export const cursor = (line: Line): number => line.before?.size ?? 0

const edit = (editor: Editor, line: Line): Action => ({ _tag: "Edit", editor: { ...editor, ...line } })
const same = (editor: Editor): Action => ({ _tag: "Edit", editor })

const insert = (editor: Editor, inserted: string): Action => edit(editor, { before: append(editor.before, inserted), after: editor.after })

const recall = (editor: Editor, index: number): Action => {
  if (index < 0 || index > editor.history.length || index === editor.index) return same(editor)
  const draft = editor.index === editor.history.length ? { before: editor.before, after: editor.after } : editor.draft
  const line = index === editor.history.length ? draft : { before: append(undefined, editor.history[index] ?? ""), after: undefined }
  return { _tag: "Edit", editor: { ...editor, ...line, index, draft } }
}

const isBlank = (ch: string): boolean => /\s/.test(ch)

const left = (editor: Editor): Action => {
  const [ch, before] = takeLast(editor.before)
  return ch === "" ? same(editor) : edit(editor, { before, after: prepend(editor.after, ch) })
}

const right = (editor: Editor): Action => {
  const [ch, after] = takeFirst(editor.after)
  return ch === "" ? same(editor) : edit(editor, { before: append(editor.before, ch), after })
}

const backspace = (editor: Editor): Action =>
  editor.before === undefined ? same(editor) : edit(editor, { before: takeLast(editor.before)[1], after: editor.after })

const deleteForward = (editor: Editor): Action =>
  editor.after === undefined ? same(editor) : edit(editor, { before: editor.before, after: takeFirst(editor.after)[1] })

const control = (editor: Editor, name: string): Action => {
  switch (name) {
    case "d":
      return length(editor) === 0 ? { _tag: "EndOfInput" } : deleteForward(editor)
    case "a":
      return edit(editor, { before: undefined, after: moveAll(editor.before, editor.after) })
    case "e":
      return edit(editor, { before: moveAll(editor.after, editor.before), after: undefined })
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
const drawnSide = (list: Chunks | undefined, fromEnd: boolean, columns: number): { drawn: Array<string>; width: number } => {
  // Every code point takes at least one column: `columns` of them are enough to fill the space.
  const collected = chunkTexts(list, fromEnd, columns + CHUNK).join("")
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
  const beforeSize = line.before?.size ?? 0
  const afterSize = line.after?.size ?? 0
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
