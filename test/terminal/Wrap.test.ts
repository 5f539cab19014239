/**
 * Word-boundary wrapping of the banner and notices: properties over generated
 * text (words of ASCII, wide characters and escapes; indentation; several lines)
 * and widths, then the cases a person reads.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as Wrap from "../../src/terminal/display/Wrap.js"
import { width } from "../../src/terminal/input/LineEditor.js"

const RUNS = 2000

const word = fc.array(fc.constantFrom("a", "b", "z", "0", "/", ";", ".", "`", "\\e", "界", "😀", "é", "-"), { minLength: 1, maxLength: 30 })
  .map((chars) => chars.join(""))
const line = fc.tuple(fc.constantFrom("", "  ", "    "), fc.array(word, { maxLength: 25 }), fc.constantFrom(" ", "  "))
  .map(([indent, words, gap]) => indent + words.join(gap))
const text = fc.array(line, { minLength: 1, maxLength: 4 }).map((lines) => lines.join("\n"))
const columns = fc.integer({ min: 12, max: 200 })

const words = (s: string) => s.split(/\s+/).filter((w) => w.length > 0)

describe(`Wrap.wrap (${RUNS} generated texts and widths per property)`, () => {
  it("no line is wider than the terminal", () => {
    fc.assert(fc.property(text, columns, (t, c) => {
      for (const row of Wrap.wrap(t, c).split("\n")) expect(width(row)).toBeLessThanOrEqual(c)
    }), { numRuns: RUNS })
  })

  it("only blanks between words change: the characters, in order, are the same", () => {
    fc.assert(fc.property(text, columns, (t, c) => {
      expect(Wrap.wrap(t, c).replace(/\s+/g, "")).toBe(t.replace(/\s+/g, ""))
    }), { numRuns: RUNS })
  })

  it("a word that fits on a line is never cut", () => {
    fc.assert(fc.property(text, columns, (t, c) => {
      const fitting = words(t).filter((w) => width(w) <= c / 2)
      const out = words(Wrap.wrap(t, c))
      for (const w of fitting) expect(out).toContain(w)
    }), { numRuns: RUNS })
  })

  it("text that fits, or no terminal width, comes back unchanged; wrapping twice is wrapping once", () => {
    fc.assert(fc.property(text, columns, (t, c) => {
      expect(Wrap.wrap(t, undefined)).toBe(t)
      expect(Wrap.wrap(t, 100_000)).toBe(t)
      const once = Wrap.wrap(t, c)
      expect(Wrap.wrap(once, c)).toBe(once)
    }), { numRuns: RUNS })
  })

  it("breaks where a person would: at the last space that fits, a continued line keeps the indentation", () => {
    const banner = "Continuing the conversation started 2026-12-03 07:40 (3 turns), saved in /home/you/.mino/sessions/20261203-074000-0123abcd.jsonl; `mino --new` starts another."
    expect(Wrap.wrap(banner, 80)).toBe(
      "Continuing the conversation started 2026-12-03 07:40 (3 turns), saved in\n" +
        "/home/you/.mino/sessions/20261203-074000-0123abcd.jsonl; `mino --new` starts\n" +
        "another."
    )
    expect(Wrap.wrap("  Outcome unknown: one two three", 20)).toBe("  Outcome unknown:\n  one two three")
    // A word wider than the line is cut at the line's end, and only then.
    expect(Wrap.wrap("see /a/very/long/path/name here", 10)).toBe("see\n/a/very/lo\nng/path/na\nme here")
    // Spaces inside a row stay as they were (a quoted answer reads as typed); only a break drops them.
    expect(Wrap.wrap("Denied: the answer was \"y  es\"; only y or yes approves.", 32)).toBe("Denied: the answer was \"y  es\";\nonly y or yes approves.")
  })
})
