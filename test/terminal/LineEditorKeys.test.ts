/**
 * The readline keys of the line editor: word moves and cuts, the kill buffer,
 * line breaks, Ctrl+L and the incremental search, as a table and against a
 * string model over generated lines and key sequences.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import type { Typed } from "../../src/terminal/input/KeyDecoder.js"
import * as LineEditor from "../../src/terminal/input/LineEditor.js"
import { paste, press as run, text } from "../support/Editing.js"

const ctrl = (name: string): Typed => ({ _tag: "Key", name, ctrl: true, meta: false })
const alt = (name: string): Typed => ({ _tag: "Key", name, ctrl: false, meta: true })
const key = (name: string): Typed => ({ _tag: "Key", name, ctrl: false, meta: false })
const ENTER = key("enter")
/** The line with `|` where the cursor is. */
const shown = (editor: LineEditor.Editor) => {
  const whole = LineEditor.text(editor)
  const at = Array.from(whole).slice(0, LineEditor.cursor(editor)).join("").length
  return `${whole.slice(0, at)}|${whole.slice(at)}`
}
/** An editor holding `line`, the cursor where `|` is. */
const at = (line: string, history: ReadonlyArray<string> = []) => {
  const [before = "", after = ""] = line.split("|")
  return run([text(after), ...Array.from(after, () => key("left"))], history, LineEditor.of(before, history)).editor
}

describe("LineEditor's readline keys", () => {
  it.each([
    ["Alt+B moves to the start of the word", "one two| three", [alt("b")], "one |two three"],
    ["Alt+B twice, across punctuation", "one-two.three|", [alt("b"), alt("b")], "one-|two.three"],
    ["Alt+F moves past the next word", "|one two", [alt("f")], "one| two"],
    ["Alt+F from a blank", "one| two three", [alt("f"), alt("f")], "one two three|"],
    ["Alt+D cuts the next word", "a |bc de", [alt("d")], "a | de"],
    ["Alt+Backspace cuts the word behind", "ab cd|", [alt("\u007f")], "ab |"],
    ["Ctrl+W cuts back to a blank (not at punctuation)", "cd a/b.c|", [ctrl("w")], "cd |"],
    ["Ctrl+K, then Ctrl+Y puts it back", "ab|cd", [ctrl("k"), ctrl("e"), ctrl("y")], "abcd|"],
    ["Ctrl+U then Ctrl+Y at the end", "ab|cd", [ctrl("u"), ctrl("e"), ctrl("y")], "cdab|"],
    ["an empty cut keeps the last one", "ab|", [ctrl("u"), ctrl("k"), ctrl("y"), ctrl("y")], "abab|"],
    ["Ctrl+Y with nothing cut does nothing", "ab|", [ctrl("y")], "ab|"],
    ["Ctrl+J inserts a line break", "ab|", [ctrl("j"), text("c")], "ab\nc|"],
    ["Alt+Enter (ESC CR) inserts a line break", "ab|", [{ _tag: "Key", name: "m", ctrl: true, meta: true }, text("c")], "ab\nc|"],
    ["words hold letters of any script and digits", "naïve 東京2026 x|", [alt("b"), alt("b")], "naïve |東京2026 x"]
  ] as const)("%s", (_, line, keys, expected) => {
    expect(shown(run(keys, [], at(line)).editor)).toBe(expected)
  })

  it("Ctrl+J gives a question of two lines; Enter submits it", () => {
    expect(run([text("first"), ctrl("j"), text("second"), ENTER]).last).toEqual({ _tag: "Submit", text: "first\nsecond", pasted: false })
  })

  it("Ctrl+L asks for a clear screen and changes nothing else", () => {
    const before = at("ab|c")
    const after = run([ctrl("l")], [], before).editor
    expect(after.clears).toBe(before.clears + 1)
    expect(shown(after)).toBe("ab|c")
  })

  it("generated lines and cursors: a cut and Ctrl+Y at the same place give the line back (sweep printed)", () => {
    const cases = 2_000
    const chars = fc.constantFrom("a", "b", " ", "-", "é", "東", "😀", "\n", "1")
    fc.assert(
      fc.property(fc.array(chars, { maxLength: 30 }), fc.nat(), fc.constantFrom(ctrl("k"), ctrl("u"), ctrl("w"), alt("d"), alt("\u007f")), (points, cursor, cut) => {
        const split = cursor % (points.length + 1)
        const line = `${points.slice(0, split).join("")}|${points.slice(split).join("")}`
        const start = at(line)
        const cutDone = run([cut], [], start).editor
        const whole = LineEditor.text(start)
        // What was cut is one contiguous piece of the line, at the cursor.
        const left = LineEditor.text(cutDone)
        expect(whole.length - left.length).toBe(cutDone.killed.length)
        const restored = run([ctrl("y")], [], cutDone).editor
        if (cutDone.killed !== "") expect(LineEditor.text(restored)).toBe(whole)
        // Word moves keep the text and move the cursor one way only.
        const back = run([alt("b")], [], start).editor
        const ahead = run([alt("f")], [], start).editor
        expect(LineEditor.text(back)).toBe(whole)
        expect(LineEditor.text(ahead)).toBe(whole)
        expect(LineEditor.cursor(back)).toBeLessThanOrEqual(LineEditor.cursor(start))
        expect(LineEditor.cursor(ahead)).toBeGreaterThanOrEqual(LineEditor.cursor(start))
      }),
      { numRuns: cases }
    )
    console.log(`cuts, yanks and word moves: ${cases} generated lines`)
  })
})

describe("LineEditor's incremental search (Ctrl+R, Ctrl+S)", () => {
  const history = ["make build", "git status", "npm test", "git log --oneline", "ls"]

  it("Ctrl+R finds the newest question holding what is typed; Enter asks it", () => {
    const found = run([ctrl("r"), text("git")], history)
    expect(LineEditor.text(found.editor)).toBe("git log --oneline")
    expect(LineEditor.label(found.editor, "You> ")).toBe("(reverse-i-search)'git': ")
    expect(run([ENTER], history, found.editor).last).toEqual({ _tag: "Submit", text: "git log --oneline", pasted: false })
  })

  it("Ctrl+R again goes to the next older match, Ctrl+S back to a newer one", () => {
    const older = run([ctrl("r"), text("git"), ctrl("r")], history)
    expect(LineEditor.text(older.editor)).toBe("git status")
    const failed = run([ctrl("r")], history, older.editor)
    expect(LineEditor.text(failed.editor)).toBe("git status")
    expect(LineEditor.label(failed.editor, "You> ")).toBe("(failed reverse-i-search)'git': ")
    const newer = run([ctrl("s")], history, older.editor)
    expect(LineEditor.text(newer.editor)).toBe("git log --oneline")
    expect(LineEditor.label(newer.editor, "You> ")).toBe("(i-search)'git': ")
    const none = run([text("x")], history, newer.editor)
    expect(LineEditor.text(none.editor)).toBe("git log --oneline")
    expect(LineEditor.label(none.editor, "You> ")).toBe("(failed i-search)'gitx': ")
  })

  it("Ctrl+G and Escape put back the line the search began with", () => {
    for (const cancel of [ctrl("g"), key("escape")]) {
      const { editor } = run([text("draft"), ctrl("r"), text("npm"), cancel], history)
      expect(shown(editor)).toBe("draft|")
      expect(editor.search).toBeUndefined()
      expect(LineEditor.label(editor, "You> ")).toBe("You> ")
    }
  })

  it("Backspace shortens the query and searches again from the newest", () => {
    const { editor } = run([ctrl("r"), text("gix"), key("backspace")], history)
    expect(LineEditor.text(editor)).toBe("git log --oneline")
  })

  it("any other key keeps the line found and does what it does; a paste is still a paste", () => {
    expect(shown(run([ctrl("r"), text("stat"), ctrl("e")], history).editor)).toBe("git status|")
    // The cursor stands where the query was found, as in readline.
    expect(shown(run([ctrl("r"), text("log")], history).editor)).toBe("git |log --oneline")
    expect(run([ctrl("r"), text("ls"), paste("x "), ENTER], history).last).toEqual({ _tag: "Submit", text: "x ls", pasted: true })
  })

  it("the query is escaped as the line is", () => {
    const { editor } = run([ctrl("r"), text("\u202e")], ["x"])
    expect(LineEditor.label(editor, "You> ")).not.toContain("\u202e")
  })

  it("with no history (as at the approval prompt) a search finds nothing and Enter submits what was typed", () => {
    expect(run([text("y"), ctrl("r"), text("y"), ENTER]).last).toEqual({ _tag: "Submit", text: "y", pasted: false })
  })

  it("generated histories: what a search shows always holds the query, and is a question of the history (sweep printed)", () => {
    const cases = 1_000
    const word = fc.stringMatching(/^[a-c ]{0,6}$/)
    fc.assert(
      fc.property(fc.array(word, { maxLength: 8 }), fc.array(fc.oneof(word.map(text), fc.constantFrom(ctrl("r"), ctrl("s"), key("backspace"))), { maxLength: 10 }), (entries, keys) => {
        const { editor } = run([ctrl("r"), ...keys], entries)
        const search = editor.search
        if (search === undefined || search.found === undefined || search.failed) return
        expect(entries[search.found]).toBe(LineEditor.text(editor))
        expect(LineEditor.text(editor)).toContain(search.query)
      }),
      { numRuns: cases }
    )
    console.log(`searches: ${cases} generated histories and key sequences`)
  })
})
