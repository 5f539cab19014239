import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import type { Input } from "../../src/terminal/input/KeyDecoder.js"
import * as LineEditor from "../../src/terminal/input/LineEditor.js"
import { paste, press, text } from "../support/Editing.js"

type Typed = Exclude<Input, { readonly _tag: "Stop" } | { readonly _tag: "Report" }>

/** Presses each input in turn; returns the last action. */
const type = (inputs: ReadonlyArray<Typed>, history: ReadonlyArray<string> = []) => press(inputs, history)
const key = (name: string, extra: { ctrl?: boolean; meta?: boolean } = {}): Typed => ({
  _tag: "Key",
  name,
  ctrl: extra.ctrl ?? false,
  meta: extra.meta ?? false
})

describe("LineEditor", () => {
  it("keeps the cursor on code points, so a surrogate pair is never split", () => {
    const { editor } = type([text("a😀b"), key("left"), key("left"), key("backspace")])
    expect(LineEditor.text(editor)).toBe("😀b")
  })

  it("inserts only text and pastes; keys and modified keys are never text", () => {
    const { editor } = type([text("ok"), key("function"), key("unknown"), key("x", { meta: true }), key("left", { ctrl: true })])
    expect(LineEditor.text(editor)).toBe("ok")
  })

  it("Enter submits, saying whether anything was pasted; a pasted newline is text", () => {
    expect(type([text("hi"), key("enter")]).last).toEqual({ _tag: "Submit", text: "hi", pasted: false })
    const pasted = type([paste("a\n\tb"), key("enter")])
    expect(pasted.last).toEqual({ _tag: "Submit", text: "a\n\tb", pasted: true })
    // An empty paste, then typing: the line was still pasted into.
    expect(type([paste(""), text("y"), key("enter")]).last).toEqual({ _tag: "Submit", text: "y", pasted: true })
  })

  it("↑ and ↓ walk the history and come back to the draft", () => {
    const up = type([text("draft"), key("up"), key("up")], ["one", "two"])
    expect(LineEditor.text(up.editor)).toBe("one")
    const back = type([text("draft"), key("up"), key("down")], ["one", "two"])
    expect(LineEditor.text(back.editor)).toBe("draft")
  })

  it("Ctrl+D ends input only on an empty line, else deletes at the cursor", () => {
    expect(type([key("d", { ctrl: true })]).last).toEqual({ _tag: "EndOfInput" })
    const deleted = type([text("xy"), key("home"), key("d", { ctrl: true })])
    expect(LineEditor.text(deleted.editor)).toBe("y")
  })

  it("Ctrl+U, Ctrl+K and Ctrl+W delete to the start, to the end, and the word before the cursor", () => {
    expect(LineEditor.text(type([text("keep this"), key("left"), key("left"), key("u", { ctrl: true })]).editor)).toBe("is")
    expect(LineEditor.text(type([text("keep this"), key("a", { ctrl: true }), key("k", { ctrl: true })]).editor)).toBe("")
    expect(LineEditor.text(type([text("one two  "), key("w", { ctrl: true })]).editor)).toBe("one ")
  })

  it("draws newlines, tabs and unsafe characters visibly, with the cursor column after them", () => {
    const { editor } = type([paste("a\n"), text("\u202eb"), key("left")])
    expect(LineEditor.draw(editor)).toEqual({ line: "a↵\\u202eb", cursorColumn: 8 })
  })

  it("edits as a plain string model does, for 300 generated key sequences", () => {
    // The model: the text and a cursor in code points.
    const step = (model: { chars: Array<string>; at: number }, input: Typed) => {
      const { chars, at } = model
      if (input._tag !== "Key") {
        const added = Array.from(input.text)
        return { chars: [...chars.slice(0, at), ...added, ...chars.slice(at)], at: at + added.length }
      }
      switch (input.ctrl ? { a: "home", e: "end" }[input.name] ?? input.name : input.name) {
        case "left":
          return { chars, at: Math.max(0, at - 1) }
        case "right":
          return { chars, at: Math.min(chars.length, at + 1) }
        case "home":
          return { chars, at: 0 }
        case "end":
          return { chars, at: chars.length }
        case "backspace":
          return at === 0 ? model : { chars: chars.toSpliced(at - 1, 1), at: at - 1 }
        case "delete":
          return { chars: chars.toSpliced(at, 1), at }
        case "u":
          return { chars: chars.slice(at), at: 0 }
        case "k":
          return { chars: chars.slice(0, at), at }
        case "w": {
          let start = at
          while (start > 0 && /\s/.test(chars[start - 1] ?? "")) start--
          while (start > 0 && !/\s/.test(chars[start - 1] ?? "")) start--
          return { chars: [...chars.slice(0, start), ...chars.slice(at)], at: start }
        }
      }
      return model
    }
    const inputs = fc.oneof(
      fc.string({ unit: fc.constantFrom("a", "é", "😀", " ", "\n", "界"), maxLength: 700 }).map(text),
      fc.string({ unit: fc.constantFrom("b", "😀", "\t"), minLength: 1, maxLength: 1200 }).map(paste),
      fc.constantFrom("left", "right", "home", "end", "backspace", "delete").map((name) => key(name)),
      fc.constantFrom("u", "k", "w", "a", "e").map((name) => key(name, { ctrl: true }))
    )
    fc.assert(
      fc.property(fc.array(inputs, { maxLength: 40 }), (sequence) => {
        let editor = LineEditor.empty()
        let model = { chars: [] as Array<string>, at: 0 }
        for (const input of sequence) {
          const action = LineEditor.press(editor, input)
          if (action._tag === "Edit") editor = action.editor
          model = step(model, input)
          expect(LineEditor.text(editor)).toBe(model.chars.join(""))
          expect(LineEditor.cursor(editor)).toBe(model.at)
          expect(LineEditor.length(editor)).toBe(model.chars.length)
        }
      }),
      { numRuns: 300 }
    )
  })

  it("a view never takes more than its columns, and says how much it leaves out", () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom("a", "界", "\u0007", "\n"), maxLength: 3000 }), fc.nat(3000), fc.integer({ min: 10, max: 300 }), (value, back, columns) => {
        let editor = LineEditor.of(value)
        for (let i = 0; i < Math.min(back, value.length); i++) {
          const action = LineEditor.press(editor, key("left"))
          if (action._tag === "Edit") editor = action.editor
        }
        const view = LineEditor.view(editor, columns)
        const drawnPoints = Array.from(view.before + view.after).length
        expect(view.hiddenBefore + view.hiddenAfter).toBeLessThanOrEqual(LineEditor.length(editor))
        expect([...view.before + view.after].reduce((width, ch) => width + (ch === "界" ? 2 : 1), 0)).toBeLessThanOrEqual(columns)
        // What is shown is the text around the cursor, drawn.
        if (value.length > 0) expect(drawnPoints).toBeGreaterThan(0)
      }),
      { numRuns: 200 }
    )
  })

  it("a key's cost does not grow with the line: Home, End, ↑, ↓ and editing in a 1 MiB line cost about what they cost in 10 KiB", () => {
    const keys: ReadonlyArray<Typed> = [
      key("home"),
      key("end"),
      key("a", { ctrl: true }),
      key("e", { ctrl: true }),
      key("up"),
      key("down"),
      key("left"),
      text("x"),
      key("backspace"),
      key("right")
    ]
    /** Microseconds per key, the best of several rounds, in a line of `size` with the same size of question to recall. */
    const perKey = (size: number): number => {
      let editor = LineEditor.of("y".repeat(size), ["z".repeat(size)])
      let best = Infinity
      for (let round = 0; round < 7; round++) {
        const started = performance.now()
        for (let i = 0; i < 2_000; i++) {
          const action = LineEditor.press(editor, keys[i % keys.length]!)
          if (action._tag === "Edit") editor = action.editor
        }
        best = Math.min(best, (performance.now() - started) * 1000 / 2_000)
      }
      return best
    }
    perKey(10 * 1024) // warm up
    const small = perKey(10 * 1024)
    const large = perKey(1024 * 1024)
    console.log(`a key in a 10 KiB line: ${small.toFixed(2)} µs; in a 1 MiB line: ${large.toFixed(2)} µs (${(large / small).toFixed(2)}×, the line 102× longer)`)
    // A cost that followed the line's length would be about 100 times; the rope's depth grows by a few levels.
    expect(large / small).toBeLessThan(8)
  })

  it("a megabyte line costs a chunk per key, not the line: 10,000 keys in a 1 MiB line finish", () => {
    let editor = LineEditor.of("x".repeat(1 << 20))
    for (let i = 0; i < 10_000; i++) {
      const name = i % 3 === 0 ? "left" : i % 3 === 1 ? "backspace" : "right"
      const action = LineEditor.press(editor, i % 7 === 0 ? text("y") : key(name))
      if (action._tag === "Edit") editor = action.editor
    }
    expect(LineEditor.length(editor)).toBeGreaterThan(1_000_000)
  })
})
