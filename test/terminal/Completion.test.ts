/**
 * Tab at `You> ` (`LineEditor.complete`): the one word being typed at the end of
 * the line is completed as far as the commands agree; anything else (text after
 * the cursor, a second word, a pasted line with a break) is left alone, and a
 * pasted line stays marked pasted.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import type { Typed } from "../../src/terminal/input/KeyDecoder.js"
import * as LineEditor from "../../src/terminal/input/LineEditor.js"

const COMMANDS = ["/clear", "/exit", "/help", "/log", "/model ", "/new", "/sessions", "/status"]
const TAB: Typed = { _tag: "Key", name: "tab", ctrl: false, meta: false }
const LEFT: Typed = { _tag: "Key", name: "left", ctrl: false, meta: false }

const after = (inputs: ReadonlyArray<Typed>, completions: ReadonlyArray<string> = COMMANDS) => {
  let editor = LineEditor.empty([], completions)
  for (const input of inputs) {
    const action = LineEditor.press(editor, input)
    if (action._tag === "Edit") editor = action.editor
  }
  return editor
}

const typed = (text: string): Typed => ({ _tag: "Text", text })

describe("Tab completes a command", () => {
  it("as a table: one match is completed, several to what they share, none or a second word is left as typed", () => {
    const table: ReadonlyArray<readonly [string, string]> = [
      ["/st", "/status"],
      ["/se", "/sessions"],
      ["/s", "/s"],
      ["/m", "/model "],
      ["/", "/"],
      ["/status", "/status"],
      ["/x", "/x"],
      ["st", "st"],
      ["/model gp", "/model gp"],
      ["", ""]
    ]
    for (const [line, completed] of table) expect(LineEditor.text(after([typed(line), TAB]))).toBe(completed)
  })

  it("only at the end of the line; without completions Tab does nothing", () => {
    expect(LineEditor.text(after([typed("/stx"), LEFT, TAB]))).toBe("/stx")
    expect(LineEditor.text(after([typed("/st"), TAB], []))).toBe("/st")
  })

  it("a pasted line: a break in it is never completed, and it stays marked pasted", () => {
    const pasted = after([{ _tag: "Paste", text: "/st\n" }, TAB])
    expect(LineEditor.text(pasted)).toBe("/st\n")
    const word = after([{ _tag: "Paste", text: "/st" }, TAB])
    expect(LineEditor.text(word)).toBe("/status")
    expect(word.pasted).toBe(true)
  })

  it("over 2,000 generated lines: Tab only ever appends, and what it appends makes a command's prefix", () => {
    const unit = fc.constantFrom("/", "s", "t", "a", "m", "o", " ", "\n", "x", "e")
    fc.assert(fc.property(fc.string({ unit, maxLength: 8 }), (line) => {
      const before = LineEditor.text(after([typed(line)]))
      const completed = LineEditor.text(after([typed(line), TAB]))
      expect(completed.startsWith(before)).toBe(true)
      if (completed !== before) expect(COMMANDS.some((command) => command.startsWith(completed))).toBe(true)
    }), { numRuns: 2000 })
  })
})
