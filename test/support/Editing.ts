import type { Typed } from "../../src/terminal/input/KeyDecoder.js"
import * as LineEditor from "../../src/terminal/input/LineEditor.js"

/** Presses each input in turn, from `start`: the last action, and the editor after the last edit. */
export const press = (inputs: ReadonlyArray<Typed>, history: ReadonlyArray<string> = [], start = LineEditor.empty(history)) => {
  let editor = start
  let last: LineEditor.Action = { _tag: "Edit", editor }
  for (const input of inputs) {
    last = LineEditor.press(editor, input)
    if (last._tag === "Edit") editor = last.editor
  }
  return { last, editor }
}

export const text = (value: string): Typed => ({ _tag: "Text", text: value })
export const paste = (value: string): Typed => ({ _tag: "Paste", text: value })
