import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as Secrets from "../../src/security/Secrets.js"

describe("Secrets", () => {
  it("redacts every occurrence of a real-length key", () => {
    expect(Secrets.redact("a sk-live-123456 b sk-live-123456", ["sk-live-123456"])).toBe("a [redacted] b [redacted]")
  })

  it("leaves text alone for strings too short to be a key, which would otherwise mangle it", () => {
    expect(Secrets.redact("Ctrl+D exits", ["x"])).toBe("Ctrl+D exits")
    expect(Secrets.effective(["", "x", "1234567", "12345678"])).toEqual(["12345678"])
  })
})

describe("the key split between held-back text and the line after it", () => {
  it("no piece of 4 characters or more of the key's rest is left, wherever it was split (generated keys, splits and lines)", () => {
    let checked = 0
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom(..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"), minLength: 20, maxLength: 60 }),
        fc.nat(),
        fc.string({ maxLength: 30 }),
        fc.string({ maxLength: 30 }),
        (body, at, before, after) => {
          const key = `sk-${body}`
          const secrets = Secrets.make(key)
          const split = Secrets.MIN_PREFIX + (at % (key.length - 2 * Secrets.MIN_PREFIX))
          const line = `model stream error: ${before}${key.slice(split)}${after}`
          const shown = Secrets.afterHeld(secrets, key.slice(0, split), line)
          expect(shown).not.toContain(key.slice(split, split + Secrets.MIN_PREFIX))
          expect(shown.startsWith("model stream error: ")).toBe(true)
          checked++
        }
      ),
      { numRuns: 2_000 }
    )
    console.log(`key split between held text and a line: ${checked} generated splits`)
  })

  it("leaves a line alone when what was held is no beginning of the key", () => {
    const secrets = Secrets.make("sk-abcdefghijklmnop")
    expect(Secrets.afterHeld(secrets, "sk-x", "model stream error: ghijklmnop")).toBe("model stream error: ghijklmnop")
    expect(Secrets.afterHeld(secrets, "", "model stream error: ghijklmnop")).toBe("model stream error: ghijklmnop")
  })
})
