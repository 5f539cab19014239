/**
 * The blank rule (`Escape.visibleBlanks`), over the whole class it names: every
 * code point that renders as blank or as nothing, generated from the regex, in
 * a run long enough to hide what follows, is shown visibly on the approval
 * screen, and the shown text still reads back to exactly the original.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { commandLiteral, valueText } from "../../src/approval/ApprovalScreen.js"
import * as Escape from "../../src/security/Escape.js"

/** Every code point of the blank class, from the regex itself. */
const BLANKS: ReadonlyArray<string> = (() => {
  const found: Array<string> = []
  for (let cp = 0; cp <= 0x10ffff; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue
    const ch = String.fromCodePoint(cp)
    if (Escape.BLANK.test(ch)) found.push(ch)
  }
  return found
})()

/** Raw blank-looking characters left in shown text, but single spaces, as U+ names. */
const rawBlanks = (shown: string): Array<string> =>
  Array.from(shown).filter((ch) => ch !== " " && Escape.BLANK.test(ch)).map((ch) => `U+${(ch.codePointAt(0) ?? 0).toString(16)}`)

const longestSpaceRun = (shown: string): number => Math.max(0, ...(shown.match(/ +/g) ?? []).map((run) => run.length))

const unescapeValue = (shown: string): string =>
  shown.split("\\\\").map((part) =>
    part.replace(/\\(e|r|n|t|b|f|v|x[0-9a-f]{2}|u\{[0-9a-f]+\}|u[0-9a-f]{4})/g, (_, escape: string) => {
      const named: Record<string, string> = { e: "\u001b", r: "\r", n: "\n", t: "\t", b: "\b", f: "\f", v: "\v" }
      if (named[escape] !== undefined) return named[escape]
      return String.fromCodePoint(parseInt(escape.startsWith("u{") ? escape.slice(2, -1) : escape.slice(1), 16))
    })
  ).join("\\")

describe("the blank rule", () => {
  it(`covers the whole class: ${BLANKS.length.toLocaleString("en-US")} code points`, () => {
    console.log(`blank-looking code points: ${BLANKS.length}`)
    expect(BLANKS.length).toBeGreaterThan(4000)
    // The spaces, the fillers and the blank glyph the issue names are in it.
    for (const ch of ["\u00a0", "\u1680", "\u2000", "\u200a", "\u202f", "\u205f", "\u3000", "\u2800", "\u3164", "\u115f", "\u1160", "\uffa0", "\u200b", "\ufeff", "\u{e0041}", "\u{16fe4}"]) {
      expect(Escape.BLANK.test(ch)).toBe(true)
    }
    for (const ch of ["a", "-", "_", "\u2423", "界"]) expect(Escape.BLANK.test(ch)).toBe(false)
  })

  it("every one of them, in a run of eight inside a command, is shown escaped and the literal reads back exactly", () => {
    for (const ch of BLANKS) {
      const command = `echo hello${ch.repeat(Escape.BLANK_RUN)}; touch PWNED; echo done`
      const shown = commandLiteral(command)
      expect({ ch: ch.codePointAt(0), raw: rawBlanks(shown) }).toEqual({ ch: ch.codePointAt(0), raw: [] })
      expect(longestSpaceRun(shown)).toBeLessThan(Escape.BLANK_RUN)
      expect(JSON.parse(shown)).toBe(command)
    }
  })

  it("every one of them, in a run inside a value (a directory), is shown escaped and reads back exactly", () => {
    for (const ch of BLANKS) {
      const value = `/home/u/a${ch.repeat(Escape.BLANK_RUN)}b`
      const shown = valueText(value)
      expect({ ch: ch.codePointAt(0), raw: rawBlanks(shown) }).toEqual({ ch: ch.codePointAt(0), raw: [] })
      expect(longestSpaceRun(shown)).toBeLessThan(Escape.BLANK_RUN)
      expect(unescapeValue(shown)).toBe(value)
    }
  })

  it("plain spaces stay plain below a run of eight; from eight on they are \\u0020", () => {
    expect(commandLiteral("a       b")).toBe("\"a       b\"")
    expect(commandLiteral("a        b")).toBe(`"a${"\\u0020".repeat(8)}b"`)
    expect(commandLiteral("a\u00a0b")).toBe("\"a\\u00a0b\"")
  })

  it("holds for 2,000 generated mixes of blanks and text", () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.constantFrom(...BLANKS), fc.constantFrom(" ", "a", "b", ";", "\"", "\\")), { maxLength: 80 }), (parts) => {
        const command = parts.join("")
        const shown = commandLiteral(command)
        expect(rawBlanks(shown)).toEqual([])
        expect(longestSpaceRun(shown)).toBeLessThan(Escape.BLANK_RUN)
        expect(JSON.parse(shown)).toBe(command)
      }),
      { numRuns: 2_000 }
    )
  })
})
