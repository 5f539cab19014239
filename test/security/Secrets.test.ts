import { describe, expect, it } from "@effect/vitest"
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
