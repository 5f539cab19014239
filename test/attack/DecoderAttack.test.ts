/**
 * A paste cut anywhere in its start marker at the moment an approval's guard
 * ends (`ReaderState.released` forgets what the decoder holds) is still a
 * paste: its CR is never Enter, its controls never keys. Generated pastes, every
 * cut of the marker, with and without a quiet spell (`idle`) before the guard's end.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as KeyDecoder from "../../src/terminal/input/KeyDecoder.js"

const START = "\u001b[200~"
const END = "\u001b[201~"

const decodeAll = (decoder: KeyDecoder.Decoder, text: string) => KeyDecoder.decode(decoder, Buffer.from(text, "utf8"))

describe("attack: a paste's start marker cut as the guard ends", () => {
  it("no cut of the marker across forget (and idle) lets the paste type: 3,000 generated pastes × 5 cuts × 2", () => {
    let runs = 0
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom("y", "e", "s", "\r", "\n", "\u0015", "\u007f", "\u0017", "a", " ") }), (body) => {
        for (let cut = 1; cut < START.length; cut++) {
          for (const quiet of [false, true]) {
            runs++
            let decoder = decodeAll(KeyDecoder.initial, START.slice(0, cut)).decoder
            if (quiet) decoder = KeyDecoder.idle(decoder).decoder
            decoder = KeyDecoder.forget(decoder)
            const { inputs } = decodeAll(decoder, `${START.slice(cut)}${body}${END}`)
            // Nothing typed: no text, no key; the paste is reported (even empty: a line it touched is pasted).
            expect(inputs.filter((input) => input._tag !== "Paste")).toEqual([])
            expect(inputs.length).toBeGreaterThan(0)
          }
        }
      }),
      { numRuns: 3000 }
    )
    console.log(`cut start markers across the guard's end: ${runs} decodes`)
    expect(runs).toBe(3000 * 5 * 2)
  })

  it("a cut that is no paste marker is still forgotten: no key is made of bytes from before and after the guard's end", () => {
    // ESC then `[A` would be ↑, ESC then `y` Alt+y, `ESC[2` then `4~` F12: none of them after forget.
    for (const [before, after] of [["\u001b", "[A"], ["\u001b", "y"], ["\u001b[2", "4~"], ["\u001b[", "B"]] as const) {
      const decoder = KeyDecoder.forget(decodeAll(KeyDecoder.initial, before).decoder)
      const { inputs } = decodeAll(decoder, after)
      expect(inputs.some((input) => input._tag === "Key")).toBe(false)
    }
  })
})
