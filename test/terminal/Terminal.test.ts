import { PassThrough } from "node:stream"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import * as Fold from "../../src/cli/Fold.js"
import * as Escape from "../../src/security/Escape.js"
import { Terminal } from "../../src/terminal/Terminal.js"
import { Secrets } from "../../src/security/Secrets.js"

const terminal = (decorated: boolean, animated = decorated) =>
  Effect.gen(function*() {
    const output = new PassThrough()
    let written = ""
    output.on("data", (chunk: Buffer) => void (written += chunk.toString("utf8")))
    const input = new PassThrough()
    const shape = yield* Terminal.make({ input, output, interactive: true, decorated, animated }).pipe(Effect.provide(Secrets.layerNone))
    return { shape, screen: () => written }
  })

describe("Terminal", () => {
  it.scoped("decorated: a spinner with elapsed seconds while waiting, cleared when done, and colour", () =>
    Effect.gen(function*() {
      const { shape, screen } = yield* terminal(true)
      yield* Effect.scoped(Effect.gen(function*() {
        yield* shape.spinner("waiting for the model")
        yield* TestClock.adjust("2100 millis")
      }))
      expect(screen()).toMatch(/waiting for the model 0s/)
      expect(screen()).toMatch(/waiting for the model 2s/)
      expect(screen().endsWith("\r\u001b[K")).toBe(true)
      expect(shape.style("cyan", "Assistant>")).toBe("\u001b[36mAssistant>\u001b[0m")
    }))

  it.scoped("not decorated (output not a terminal, or NO_COLOR): no spinner and no colour", () =>
    Effect.gen(function*() {
      const { shape, screen } = yield* terminal(false)
      yield* Effect.scoped(Effect.gen(function*() {
        yield* shape.spinner("waiting for the model")
        yield* TestClock.adjust("2100 millis")
      }))
      expect(screen()).toBe("")
      expect(shape.style("cyan", "Assistant>")).toBe("Assistant>")
    }))
})

describe("Terminal on a terminal with NO_COLOR", () => {
  it.scoped("animates a spinner with elapsed seconds, without colour", () =>
    Effect.gen(function*() {
      const { shape, screen } = yield* terminal(false, true)
      yield* Effect.scoped(Effect.gen(function*() {
        yield* shape.spinner("running")
        yield* TestClock.adjust("1100 millis")
      }))
      expect(screen()).toMatch(/running 1s/)
      expect(screen()).not.toMatch(/\u001b\[[0-9;]*m/)
    }))
})

describe("Fold", () => {
  it("shows the first and last lines of long output and says how many were not shown", () => {
    const lines = Array.from({ length: 100 }, (_, i) => `line ${i + 1}`)
    const folded = Fold.fold(lines.join("\n") + "\n").split("\n")
    expect(folded.slice(0, 10)).toEqual(lines.slice(0, 10))
    expect(folded[10]).toBe("… 80 lines not shown here; the model received the whole capture …")
    expect(folded.slice(11, 21)).toEqual(lines.slice(90))
    expect(folded[21]).toBe("")
    const short = lines.slice(0, 23).join("\n")
    expect(Fold.fold(short)).toBe(short)
    expect(Fold.fold("x".repeat(2500))).toBe(`${"x".repeat(2000)}… (500 more characters not shown)`)
  })
})

describe("Escape", () => {
  it("keeps newlines and tabs in text, escapes every other control and format character", () => {
    expect(Escape.forDisplay("a\tb\nc")).toBe("a\tb\nc")
    expect(Escape.forDisplay("\u001b[31mred\r\b\u0000\u007f\u009b\u200b\u202e\u2066\ufeff")).toBe(
      "\\e[31mred\\r\\b\\x00\\x7f\\x9b\\u200b\\u202e\\u2066\\ufeff"
    )
    expect(Escape.forLine("two\nlines\t")).toBe("two\\nlines\\t")
    expect(Escape.forDisplay("lone \ud800 surrogate")).toBe("lone \\ud800 surrogate")
    expect(Escape.forDisplay("emoji 😀 stays")).toBe("emoji 😀 stays")
  })

  it("jsonString is valid JSON that round-trips and shows nothing raw", () => {
    for (const text of ["go version", "echo \"hi\"\n", "\u001b]52;c;ZXZpbA==\u0007", "rm\u202e-rf", "a\u0085b\u2028c", "\ud800x"]) {
      const shown = Escape.jsonString(text)
      expect(shown).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/)
      expect(JSON.parse(shown)).toBe(text)
    }
  })
})
