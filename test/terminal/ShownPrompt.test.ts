/**
 * What drawing a prompt's line writes (`ShownPrompt`, pure): a clear screen
 * first after Ctrl+L only where there is a screen, the row drawn again from
 * its start when a search's label replaces the prompt, the prompt's colours
 * taking no columns.
 */
import { describe, expect, it } from "@effect/vitest"
import type { Typed } from "../../src/terminal/input/KeyDecoder.js"
import * as LineEditor from "../../src/terminal/input/LineEditor.js"
import * as PromptLayout from "../../src/terminal/input/PromptLayout.js"
import * as ShownPrompt from "../../src/terminal/input/ShownPrompt.js"
import { press, text } from "../support/Editing.js"

const ctrl = (name: string): Typed => ({ _tag: "Key", name, ctrl: true, meta: false })
const ansi: ShownPrompt.Screen = { columns: 80, rows: 24, animated: true }
const plain: ShownPrompt.Screen = { ...ansi, animated: false }

const frame = (prompt: string, promptWidth: number, line: LineEditor.Line): PromptLayout.Frame => ({ prompt, promptWidth, line, columns: 80, rows: 24 })

describe("ShownPrompt", () => {
  it("a table of draws: what each writes, whether the screen is cleared first, and what it leaves", () => {
    const prompt = "\u001b[1mYou>\u001b[0m "
    const fresh = ShownPrompt.of(prompt)
    expect(fresh).toEqual({ prompt, promptWidth: 5, drawn: undefined, label: prompt, clears: 0 })
    const typed = press([text("ab")]).editor
    const first = ShownPrompt.draw(fresh, typed, ansi)
    const layout = PromptLayout.ansi(undefined, frame(prompt, 5, typed))
    expect(first).toEqual({ shown: { ...fresh, drawn: layout.drawn }, clear: false, text: layout.text })
    const cleared = press([ctrl("l")], [], typed).editor
    const rows: ReadonlyArray<readonly [string, ShownPrompt.Screen, LineEditor.Editor, boolean, PromptLayout.Drawn | undefined, string]> = [
      // name, screen, editor, cleared first, what the layout starts from, label
      ["typing on", ansi, press([text("c")], [], typed).editor, false, first.shown.drawn, prompt],
      ["Ctrl+L on a screen: cleared, drawn whole", ansi, cleared, true, undefined, prompt],
      ["Ctrl+L on plain output: nothing to clear", plain, cleared, false, first.shown.drawn, prompt]
    ]
    for (const [name, screen, editor, clear, from, label] of rows) {
      const next = ShownPrompt.draw(first.shown, editor, screen)
      const expected = (screen.animated ? PromptLayout.ansi : PromptLayout.plain)(from, frame(label, 5, editor))
      expect(next, name).toEqual({ shown: { ...first.shown, drawn: expected.drawn, clears: editor.clears }, clear, text: expected.text })
    }
    // A search's label replaces the prompt: the row is drawn again from its start, the label measured as it is.
    const searching = press([ctrl("r")], ["earlier"], typed).editor
    const label = LineEditor.label(searching, prompt)
    expect(label).not.toBe(prompt)
    const search = ShownPrompt.draw(first.shown, searching, ansi)
    const fromStart = first.shown.drawn === undefined ? undefined : { ...first.shown.drawn, atEnd: undefined }
    const expected = PromptLayout.ansi(fromStart, { ...frame(label, label.length, searching) })
    expect(search).toEqual({ shown: { ...first.shown, drawn: expected.drawn, label }, clear: false, text: expected.text })
    // The prompt written as it is, with an empty line: drawn as the layout would have drawn it.
    expect(ShownPrompt.written(fresh, ansi).drawn).toEqual(PromptLayout.ansi(undefined, frame(prompt, 5, LineEditor.empty())).drawn)
    console.log(`prompt draws: ${rows.length + 2} rows`)
  })
})
