/**
 * The terminal's write core (`writeStep` in `terminal/Terminal.ts`): streamed
 * text split anywhere, styled or not, never shows the key, and what is shown in
 * the end is what one write of the whole text would show.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { make } from "../../src/security/Secrets.js"
import { spinnerFrame, writeStep } from "../../src/terminal/Terminal.js"

const KEY = "sk-test-0123456789abcdef"
const secrets = make(KEY)

/** Every write of `pieces` in turn, then a flush: all that was shown. */
const shownAll = (pieces: ReadonlyArray<string>): string => {
  let held = ""
  let shown = ""
  for (const piece of pieces) {
    const step = writeStep(held, piece, false, secrets)
    shown += step.shown
    held = step.held
  }
  return shown + writeStep(held, "", true, secrets).shown
}

/** `text` cut at the given places. */
const cut = (text: string, at: ReadonlyArray<number>): ReadonlyArray<string> => {
  const places = [...new Set(at.map((place) => place % (text.length + 1)))].sort((a, b) => a - b)
  return [...places, text.length].map((end, index) => text.slice(index === 0 ? 0 : places[index - 1], end))
}

describe("the terminal's writes", () => {
  it("a key cut across writes anywhere, between styles or not, never shows, and the whole shows as one write would", () => {
    let cases = 0
    const part = fc.oneof(
      fc.constant(KEY),
      fc.constant(KEY.slice(0, 10)),
      fc.constant("\u001b[1m"),
      fc.constant("\u001b[0m"),
      fc.string({ maxLength: 12 })
    )
    fc.assert(
      fc.property(fc.array(part, { maxLength: 8 }), fc.array(fc.nat(200), { maxLength: 6 }), (parts, at) => {
        cases += 1
        const text = parts.join("")
        const shown = shownAll(cut(text, at))
        expect(shown).not.toContain(KEY)
        expect(shown).toBe(writeStep("", text, true, secrets).shown)
      }),
      { numRuns: 3000 }
    )
    console.log(`writeStep: ${cases} generated texts, each cut at generated places`)
  })

  it("holds back only a tail that could begin the key, and nothing on a flush", () => {
    expect(writeStep("", "hello sk-te", false, secrets)).toEqual({ shown: "hello ", held: "sk-te" })
    expect(writeStep("sk-te", "st-0123456789abcdef!", false, secrets)).toEqual({ shown: "[redacted]!", held: "" })
    expect(writeStep("", "hello sk-te", true, secrets)).toEqual({ shown: "hello sk-te", held: "" })
    expect(writeStep("", "plain text", false, secrets)).toEqual({ shown: "plain text", held: "" })
  })

  it("a spinner frame: its glyph turns, the seconds are whole", () => {
    expect(spinnerFrame(0, "running", 0)).toBe("⠋ running 0s")
    expect(spinnerFrame(10, "running", 1999)).toBe("⠋ running 1s")
    expect(spinnerFrame(11, "waiting for the model", 61_000)).toBe("⠙ waiting for the model 61s")
  })
})
