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
 *
 * The keys are readline's (Emacs mode): Ctrl+A/E/B/F, Alt+B/F move; Ctrl+W
 * (blank-delimited), Alt+Backspace and Alt+D (words of letters and digits),
 * Ctrl+U and Ctrl+K cut into one kill buffer, which Ctrl+Y puts back; Ctrl+J and
 * Alt+Enter insert a line break; Ctrl+L asks for the screen to be cleared; Ctrl+R
 * and Ctrl+S search the earlier questions incrementally (`Search`).
 */
import * as Escape from "../../security/Escape.js"
import type { Typed } from "./KeyDecoder.js"
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
  /** What the last cut took (Ctrl+K, Ctrl+U, Ctrl+W, Alt+D, Alt+Backspace), for Ctrl+Y. */
  readonly killed: string
  /** An incremental search through `history` is under way. */
  readonly search: Search | undefined
  /** How many times Ctrl+L asked for a clear screen: the reader clears it when this changes. */
  readonly clears: number
}

/**
 * Ctrl+R (`back`, older questions) or Ctrl+S (`forward`, newer) and what was
 * typed since: the line shows the question found (`found`, a history index),
 * the cursor where the text was found. Enter asks it; Ctrl+G or Escape puts
 * back the line as it was; any other key keeps the line found and does what it does.
 */
export interface Search {
  readonly query: string
  readonly direction: "back" | "forward"
  readonly found: number | undefined
  /** The query matches nothing (from where the search stands). */
  readonly failed: boolean
  /** The line and history position before the search began. */
  readonly before: Line
  readonly index: number
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
  pasted: false,
  killed: "",
  search: undefined,
  clears: 0
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
      return cut(editor, { before: undefined, after: editor.after }, Rope.text(editor.before))
    case "k":
      return cut(editor, { before: editor.before, after: undefined }, Rope.text(editor.after))
    case "w": {
      // Ctrl+W deletes the word before the cursor: blanks, then non-blanks.
      const before = dropTrailing(dropTrailing(editor.before, isBlank), (ch) => !isBlank(ch))
      return cut(editor, { before, after: editor.after }, Rope.text(Rope.split(editor.before, Rope.units(before))[1]))
    }
    case "y":
      return editor.killed === "" ? same(editor) : insert(editor, editor.killed)
    case "j":
      return insert(editor, "\n")
    case "l":
      return { _tag: "Edit", editor: { ...editor, clears: editor.clears + 1 } }
    case "r":
      return startSearch(editor, "back")
    case "s":
      return startSearch(editor, "forward")
    case "h":
      return backspace(editor)
    case "p":
      return recall(editor, editor.index - 1)
    case "n":
      return recall(editor, editor.index + 1)
  }
  return same(editor)
}

/** A cut: the line as it is left, and what was taken, kept for Ctrl+Y (an empty cut keeps the last one). */
const cut = (editor: Editor, line: Line, taken: string): Action =>
  ({ _tag: "Edit", editor: { ...editor, ...line, killed: taken === "" ? editor.killed : taken } })

/** Letters, marks and digits make a word for Alt+B/F/D and Alt+Backspace, as in readline. */
const isWordChar = (ch: string): boolean => /[\p{L}\p{M}\p{N}]/u.test(ch)
const notWordChar = (ch: string): boolean => !isWordChar(ch)

/** Code units at the start of a rope whose code points satisfy `test`, read chunk by chunk from the cursor. */
const leading = (rope: Rope.Rope, test: (ch: string) => boolean, skip = 0): number => {
  let count = 0
  let skipped = 0
  for (const chunk of Rope.chunks(rope, false)) {
    for (const ch of chunk) {
      if (skipped < skip) {
        skipped += ch.length
        continue
      }
      if (!test(ch)) return count
      count += ch.length
    }
  }
  return count
}

/** The code units of the word after the cursor, with the non-word characters before it. */
const wordAhead = (rope: Rope.Rope): number => {
  const gap = leading(rope, notWordChar)
  return gap + leading(rope, isWordChar, gap)
}

/** The code units of the word before the cursor, with the non-word characters after it. */
const wordBehind = (rope: Rope.Rope): number => Rope.units(rope) - Rope.units(dropTrailing(dropTrailing(rope, notWordChar), isWordChar))

/** Alt with a key: word moves and cuts, and Alt+Enter (ESC CR: `m` with Ctrl) for a line break. */
const alt = (editor: Editor, name: string, ctrl: boolean): Action => {
  if (ctrl) return name === "m" ? insert(editor, "\n") : same(editor)
  switch (name) {
    case "b": {
      const [before, moved] = Rope.split(editor.before, Rope.units(editor.before) - wordBehind(editor.before))
      return edit(editor, { before, after: Rope.concat(moved, editor.after) })
    }
    case "f": {
      const [moved, after] = Rope.split(editor.after, wordAhead(editor.after))
      return edit(editor, { before: Rope.concat(editor.before, moved), after })
    }
    case "d": {
      const [taken, after] = Rope.split(editor.after, wordAhead(editor.after))
      return cut(editor, { before: editor.before, after }, Rope.text(taken))
    }
    case "\u007f":
    case "backspace": {
      const [before, taken] = Rope.split(editor.before, Rope.units(editor.before) - wordBehind(editor.before))
      return cut(editor, { before, after: editor.after }, Rope.text(taken))
    }
  }
  return same(editor)
}

/** Where `query` is found in history entry `index`, in code units, if it is. */
const foundAt = (editor: Editor, index: number, query: string): number | undefined => {
  const entry = editor.history.at(index)
  if (entry === undefined) return undefined
  const at = entry.lastIndexOf(query)
  return at < 0 ? undefined : at
}

/** The nearest history entry from `from` (included) in `direction` that holds `query`. */
const seek = (editor: Editor, query: string, direction: Search["direction"], from: number): number | undefined => {
  const step = direction === "back" ? -1 : 1
  for (let index = from; index >= 0 && index < editor.history.length; index += step) {
    if (foundAt(editor, index, query) !== undefined) return index
  }
  return undefined
}

const startSearch = (editor: Editor, direction: Search["direction"]): Action =>
  ({
    _tag: "Edit",
    editor: {
      ...editor,
      search: { query: "", direction, found: undefined, failed: false, before: { before: editor.before, after: editor.after }, index: editor.index }
    }
  })

/** The search with `query`, looking from `from`: the line shows what it found, or stays as it was. */
const searched = (editor: Editor, search: Search, query: string, direction: Search["direction"], from: number): Action => {
  const found = query === "" ? undefined : seek(editor, query, direction, from)
  if (found === undefined) {
    return { _tag: "Edit", editor: { ...editor, search: { ...search, query, direction, failed: query !== "" } } }
  }
  const entry = editor.history.at(found) ?? ""
  const at = foundAt(editor, found, query) ?? 0
  return {
    _tag: "Edit",
    editor: {
      ...editor,
      before: Rope.of(entry.slice(0, at)),
      after: Rope.of(entry.slice(at)),
      index: found,
      search: { ...search, query, direction, found, failed: false }
    }
  }
}

/** The search ends, keeping the line found (`keep`) or putting back the line it began with. */
const endSearch = (editor: Editor, search: Search, keep: boolean): Editor =>
  keep
    ? { ...editor, search: undefined }
    : { ...editor, ...search.before, index: search.index, search: undefined }

const Search = {
  press: (editor: Editor, search: Search, input: Typed): Action => {
    const from = search.found ?? (search.direction === "back" ? editor.history.length - 1 : 0)
    if (input._tag === "Text") return searched(editor, search, search.query + input.text, search.direction, from)
    if (input._tag === "Key" && !input.meta) {
      if (input.ctrl && (input.name === "r" || input.name === "s")) {
        const direction = input.name === "r" ? "back" : "forward"
        // Again: the next match past the one shown (or, with nothing typed yet, the last query is not kept: the first match).
        const next = search.found === undefined ? from : search.found + (direction === "back" ? -1 : 1)
        return searched(editor, search, search.query, direction, next)
      }
      if (input.ctrl && input.name === "g") return { _tag: "Edit", editor: endSearch(editor, search, false) }
      if (!input.ctrl && input.name === "escape") return { _tag: "Edit", editor: endSearch(editor, search, false) }
      if (!input.ctrl && input.name === "backspace") {
        const query = Array.from(search.query).slice(0, -1).join("")
        return searched(editor, search, query, search.direction, search.direction === "back" ? editor.history.length - 1 : 0)
      }
    }
    // Anything else (Enter, a move, a paste) takes the line found and is done to it.
    return press(endSearch(editor, search, true), input)
  }
}

/** The prompt while a search is under way, readline's; otherwise `prompt`. The query is escaped like the line. */
export const label = (editor: Editor, prompt: string): string => {
  const search = editor.search
  if (search === undefined) return prompt
  const name = search.direction === "back" ? "reverse-i-search" : "i-search"
  return `(${search.failed ? "failed " : ""}${name})'${Array.from(search.query, shown).join("")}': `
}

export const press = (editor: Editor, input: Typed): Action => {
  if (editor.search !== undefined) return Search.press(editor, editor.search, input)
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
  if (input.meta) return alt(editor, input.name, input.ctrl)
  if (input.ctrl && input.name.length === 1) return control(editor, input.name)
  if (input.ctrl) return same(editor)
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
