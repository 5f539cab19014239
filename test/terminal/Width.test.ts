/**
 * Mino's column count against Unicode's data as another program holds it
 * (Python's `unicodedata`, through test/support/VirtualTerminal): every Wide
 * and Fullwidth code point, and every emoji drawn as emoji by default, takes two
 * columns; and the rows a line takes are the rows a terminal draws it on.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as Width from "../../src/terminal/display/Width.js"
import * as VirtualTerminal from "../support/VirtualTerminal.js"

const codePoints = function*(): Generator<string> {
  for (let cp = 0; cp <= 0x10ffff; cp++) if (cp < 0xd800 || cp > 0xdfff) yield String.fromCodePoint(cp)
}

describe("Width", () => {
  it("counts two columns for every Wide and Fullwidth code point, and every emoji with emoji presentation", () => {
    const narrowed: Array<string> = []
    let wide = 0
    for (const ch of codePoints()) {
      if (VirtualTerminal.cellsOf(ch) !== 2 && !/\p{Emoji_Presentation}/u.test(ch)) continue
    // Escaped before it is measured (U+3164 HANGUL FILLER), so never drawn.
    if (/\p{Default_Ignorable_Code_Point}/u.test(ch)) continue
      wide += 1
      if (Width.ofChar(ch) !== 2) narrowed.push(`U+${(ch.codePointAt(0) ?? 0).toString(16)}`)
    }
    console.log(`wide code points checked: ${wide}`)
    expect(wide).toBeGreaterThan(100_000)
    expect(narrowed).toEqual([])
    // The ones a red team found counted as one column.
    for (const ch of ["☕", "⌚", "⚡", "✅", "⭐", "〈", "〉", "🚀", "🛑", "🩵"]) expect(Width.ofChar(ch)).toBe(2)
    for (const ch of ["a", "é", "─", "→", "☺"]) expect(Width.ofChar(ch)).toBe(1)
  })

  it("a combining mark takes no column; a spacing mark and a Hangul syllable's parts as wcwidth counts them", () => {
    expect(Width.width("e\u0301")).toBe(1)
    expect(Width.width("a\u0301\u0302\u0303b")).toBe(2)
    expect(Width.width("\u20dd")).toBe(0)
    expect(Width.width("\u1100\u1161\u11a8")).toBe(2)
    expect(Width.width("界\u0301")).toBe(2)
    // Unicode 17's Tangut components supplement, which the hand-kept table lacked.
    expect(Width.ofChar("\u{18cd6}")).toBe(2)
  })

  it("a line takes the rows a terminal draws it on, a wide character never straddling the margin", () => {
    const line = fc.array(fc.constantFrom("a", "-", "é", "☕", "界", "🚀", "〉", "ｘ"), { maxLength: 300 }).map((chars) => chars.join(""))
    fc.assert(
      fc.property(line, fc.integer({ min: 2, max: 90 }), (text, columns) => {
        const drawn = VirtualTerminal.render(text, columns).replace(/\n$/, "").split("\n").length
        expect(Width.rows(text, columns)).toBe(drawn)
      })
    )
  })
})
