import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { TextList } from "../../src/TextList.js"

const RUNS = Number(process.env["MINO_PROPERTY_RUNS"] ?? 300)

/** Texts of every shape: empty, ASCII, any code point, lone surrogates, and ones near and over a slab's size. */
const text = fc.oneof(
  { arbitrary: fc.string({ unit: "grapheme", maxLength: 40 }), weight: 6 },
  { arbitrary: fc.string({ unit: "binary", maxLength: 40 }), weight: 2 },
  // Any UTF-16 code unit, so lone surrogates too.
  { arbitrary: fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit)), maxLength: 20 }), weight: 2 },
  { arbitrary: fc.integer({ min: (1 << 18) - 2, max: (1 << 20) + 3 }).chain((size) => fc.constantFrom("x", "é", "字", "😀").map((unit) => unit.repeat(Math.ceil(size / unit.length)))), weight: 1 }
)

describe("TextList", () => {
  it(`gives back every text as pushed, by index from either end (${RUNS} generated lists)`, () => {
    fc.assert(
      fc.property(fc.array(text, { maxLength: 60 }), (texts) => {
        const list = new TextList()
        for (const t of texts) list.push(t)
        expect(list.length).toBe(texts.length)
        texts.forEach((t, i) => {
          expect(list.at(i)).toBe(t)
          expect(list.at(i - texts.length)).toBe(t)
        })
        expect([list.at(texts.length), list.at(-texts.length - 1), list.at(0.5)]).toEqual([undefined, undefined, undefined])
      }),
      { numRuns: RUNS }
    )
  })

  it("holds a long conversation's worth of small texts across many slabs", () => {
    const list = new TextList()
    const count = 200_000
    for (let i = 0; i < count; i++) list.push(`question ${i}: ${"ab".repeat(i % 50)}`)
    expect(list.length).toBe(count)
    for (const i of [0, 1, 4_095, 65_536, 131_071, count - 1]) expect(list.at(i)).toBe(`question ${i}: ${"ab".repeat(i % 50)}`)
  })
})
