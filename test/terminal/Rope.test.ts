import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as Rope from "../../src/terminal/input/Rope.js"

type Op =
  | { readonly _tag: "append" | "prepend"; readonly text: string }
  | { readonly _tag: "split"; readonly at: number; readonly keep: "head" | "tail" | "both" }
  | { readonly _tag: "takeLast" | "takeFirst" }

const unit = fc.constantFrom("a", "é", "😀", " ", "\n", "界")
const ops: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ _tag: fc.constantFrom("append" as const, "prepend" as const), text: fc.string({ unit, maxLength: 1500 }) }),
  fc.record({ _tag: fc.constant("split" as const), at: fc.nat(5000), keep: fc.constantFrom("head" as const, "tail" as const, "both" as const) }),
  fc.record({ _tag: fc.constantFrom("takeLast" as const, "takeFirst" as const) })
)

/** A code unit offset at a code point boundary, from any number. */
const boundary = (text: string, at: number): number => {
  const chars = Array.from(text)
  return chars.slice(0, at % (chars.length + 1)).join("").length
}

describe("Rope", () => {
  it("behaves as a string, stays balanced, and keeps chunks small and whole, for 500 generated edit sequences", () => {
    fc.assert(
      fc.property(fc.array(ops, { maxLength: 40 }), (sequence) => {
        let rope: Rope.Rope = undefined
        let model = ""
        for (const op of sequence) {
          switch (op._tag) {
            case "append":
              rope = Rope.append(rope, op.text)
              model += op.text
              break
            case "prepend":
              rope = Rope.prepend(rope, op.text)
              model = op.text + model
              break
            case "split": {
              const at = boundary(model, op.at)
              const [head, tail] = Rope.split(rope, at)
              expect([Rope.text(head), Rope.text(tail)]).toEqual([model.slice(0, at), model.slice(at)])
              rope = op.keep === "head" ? head : op.keep === "tail" ? tail : Rope.concat(tail, head)
              model = op.keep === "head" ? model.slice(0, at) : op.keep === "tail" ? model.slice(at) : model.slice(at) + model.slice(0, at)
              break
            }
            case "takeLast": {
              const [ch, rest] = Rope.takeLast(rope)
              expect(ch).toBe(Array.from(model).at(-1) ?? "")
              rope = rest
              model = model.slice(0, model.length - ch.length)
              break
            }
            case "takeFirst": {
              const [ch, rest] = Rope.takeFirst(rope)
              expect(ch).toBe(Array.from(model)[0] ?? "")
              rope = rest
              model = model.slice(ch.length)
              break
            }
          }
          expect(Rope.text(rope)).toBe(model)
          expect(Rope.units(rope)).toBe(model.length)
          expect(Rope.points(rope)).toBe(Array.from(model).length)
          const chunks = Array.from(Rope.chunks(rope))
          expect(Array.from(Rope.chunks(rope, true)).reverse()).toEqual(chunks)
          for (const chunk of chunks) {
            expect(chunk.length).toBeGreaterThan(0)
            expect(chunk.length).toBeLessThanOrEqual(Rope.CHUNK)
            // No chunk begins with the second half of a surrogate pair.
            expect(/^[\udc00-\udfff]/.test(chunk)).toBe(false)
          }
          expect(Rope.depth(rope)).toBeLessThanOrEqual(Math.ceil(1.45 * Math.log2(chunks.length + 2)))
        }
      }),
      { numRuns: 500 }
    )
  })

  it("a megabyte rope is shallow, and joining and splitting it touch a path, not the text", () => {
    const rope = Rope.of("x".repeat(1 << 20))
    expect(Rope.depth(rope)).toBeLessThanOrEqual(12)
    const [head, tail] = Rope.split(rope, 300_001)
    expect(Rope.depth(Rope.concat(tail, head))).toBeLessThanOrEqual(13)
  })
})
