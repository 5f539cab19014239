import { describe, expect, it } from "@effect/vitest"
import * as LineEditor from "../../src/terminal/LineEditor.js"

/** Presses each key in turn; returns the last action. */
const type = (keys: ReadonlyArray<LineEditor.Key>, history: ReadonlyArray<string> = []) => {
  let editor = LineEditor.empty(history)
  let last: LineEditor.Action = { _tag: "Edit", editor }
  for (const key of keys) {
    last = LineEditor.press(editor, key)
    if (last._tag === "Edit") editor = last.editor
  }
  return { last, editor }
}
const chars = (text: string): ReadonlyArray<LineEditor.Key> => Array.from(text, (ch) => ({ name: ch, sequence: ch }))
const key = (name: string, extra: Partial<LineEditor.Key> = {}): LineEditor.Key => ({ name, sequence: "", ...extra })

describe("LineEditor", () => {
  it("keeps the cursor on code points, so a surrogate pair is never split", () => {
    const { editor } = type([...chars("a😀b"), key("left"), key("left"), key("backspace")])
    expect(LineEditor.text(editor)).toBe("😀b")
  })

  it("never inserts a control character or an undecoded escape sequence", () => {
    const { editor } = type([...chars("ok"), { sequence: "\u001b[99~" }, { sequence: "\u0007" }, key("x", { meta: true, sequence: "\u001bx" })])
    expect(LineEditor.text(editor)).toBe("ok")
  })

  it("Enter submits; inside a paste Enter and Tab are text", () => {
    expect(type([...chars("hi"), key("return")]).last).toEqual({ _tag: "Submit", text: "hi" })
    const pasted = type([key("a", { sequence: "a", pasted: true }), key("enter", { pasted: true }), key("tab", { pasted: true })])
    expect(LineEditor.text(pasted.editor)).toBe("a\n\t")
  })

  it("↑ and ↓ walk the history and come back to the draft", () => {
    const up = type([...chars("draft"), key("up"), key("up")], ["one", "two"])
    expect(LineEditor.text(up.editor)).toBe("one")
    const back = type([...chars("draft"), key("up"), key("down")], ["one", "two"])
    expect(LineEditor.text(back.editor)).toBe("draft")
  })

  it("Ctrl+D ends input only on an empty line; Ctrl+C and Ctrl+\\ are stop keys", () => {
    expect(type([key("d", { ctrl: true })]).last).toEqual({ _tag: "EndOfInput" })
    expect(type([...chars("x"), key("home"), key("d", { ctrl: true })]).last._tag).toBe("Edit")
    expect(type([key("c", { ctrl: true })]).last).toEqual({ _tag: "Interrupt" })
    expect(type([{ sequence: "\u001c" }]).last).toEqual({ _tag: "Quit" })
  })

  it("draws newlines, tabs and unsafe characters visibly, with the cursor column after them", () => {
    const { editor } = type([key("a", { sequence: "a", pasted: true }), key("enter", { pasted: true }), ...chars("\u202eb"), key("left")])
    expect(LineEditor.draw(editor)).toEqual({ line: "a↵\\u202eb", cursorColumn: 8 })
  })
})
