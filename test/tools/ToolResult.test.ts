/**
 * What is sent is what is capped: a result's `output`, note included, is at most
 * 65,536 UTF-8 bytes, never ends in a broken character or a U+FFFD a cut made,
 * says what was dropped, and what a cut leaves of the key is redacted.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as Secrets from "../../src/security/Secrets.js"
import * as ToolResult from "../../src/tools/ToolResult.js"

const KEY = "sk-cap-test-0123456789abcdef"
const secrets = Secrets.make(KEY)
const bytes = (text: string) => Buffer.byteLength(text, "utf8")
const replacements = (text: string) => [...text].filter((c) => c === "\ufffd").length
const isWellFormed = (text: string) => Buffer.from(text, "utf8").toString("utf8") === text

/** Text of up to ~140 KB in UTF-8, from pieces of 1- to 4-byte characters, U+FFFD, newlines and the key. */
const bigText = fc.array(
  fc.oneof(
    fc.constantFrom("a", "é", "€", "😀", "\ufffd", "\n", " ", KEY),
    fc.string({ unit: "grapheme", maxLength: 8 })
  ),
  { maxLength: 200 }
).chain((pieces) => fc.nat(800).map((repeat) => pieces.join("").repeat(repeat + 1).slice(0, 140_000)))

describe("ToolResult.finish", () => {
  it("holds every output to 65,536 bytes with its note, cuts on a character boundary and says what was dropped (1,000 texts)", () => {
    let cuts = 0
    fc.assert(
      fc.property(bigText, fc.boolean(), fc.array(fc.constantFrom("timed out after 30 s; process group killed", "terminated by signal SIGTERM"), { maxLength: 2 }), (raw, cut, notes) => {
        const text = secrets.redact(raw)
        const output = ToolResult.finish(text, { notes, cut }, secrets.redactCut)
        expect(bytes(output)).toBeLessThanOrEqual(ToolResult.MAX_OUTPUT_BYTES)
        expect(isWellFormed(output)).toBe(true)
        // A cut makes no U+FFFD of its own.
        expect(replacements(output)).toBeLessThanOrEqual(replacements(text))
        expect(output).not.toContain(KEY.slice(0, Secrets.MIN_PREFIX))
        const fits = !cut && bytes(text) + bytes(notes.join("; ")) + 4 <= ToolResult.MAX_OUTPUT_BYTES
        if (fits) {
          expect(output.startsWith(text)).toBe(true)
          return
        }
        cuts++
        // The note says how much is shown; that much of the text is there, and nothing after it.
        const shown = /the first ([\d,]+) (?:of its ([\d,]+) )?bytes(?: of the output)? are shown, the rest was dropped/.exec(output)
        expect(shown).not.toBeNull()
        const kept = Number(shown?.[1]?.replaceAll(",", ""))
        expect(kept).toBeLessThanOrEqual(bytes(text))
        // What precedes the note is the start of the text (its end redacted if it was the key's beginning).
        const body = output.slice(0, output.lastIndexOf(`[${notes[0] ?? "the first"}`))
        const candidates = [body, ...(body.endsWith("\n") ? [body.slice(0, -1)] : [])].map((b) => b.replace(/\[redacted\]$/, ""))
        expect(candidates.some((b) => text.startsWith(b) && bytes(b) <= kept)).toBe(true)
        if (shown?.[2] !== undefined) expect(Number(shown[2].replaceAll(",", ""))).toBe(bytes(text))
        for (const note of notes) expect(output).toContain(note)
      }),
      { numRuns: 1_000 }
    )
    console.log(`ToolResult.finish: 1,000 texts, ${cuts} cut to fit`)
    expect(cuts).toBeGreaterThan(100)
  })

  it("a cut inside a multi-byte character drops the whole character, at every byte offset", () => {
    for (const char of ["é", "€", "😀"]) {
      for (let pad = 0; pad < 4; pad++) {
        const text = "a".repeat(pad) + char.repeat(40_000)
        const output = ToolResult.finish(text, { notes: ["output limit of 64 KiB reached; process group killed"], cut: true }, secrets.redactCut)
        const body = output.slice(0, output.lastIndexOf("\n["))
        expect(bytes(output)).toBeLessThanOrEqual(ToolResult.MAX_OUTPUT_BYTES)
        expect(isWellFormed(body)).toBe(true)
        expect(body).not.toContain("\ufffd")
        expect(text.startsWith(body)).toBe(true)
        expect(output).toMatch(new RegExp(`\\[output limit of 64 KiB reached; process group killed; the first ${bytes(body).toLocaleString("en-US")} bytes of the output are shown, the rest was dropped\\]$`))
      }
    }
  })

  it("a cut that ends in the first part of the key redacts it, for every prefix of 4 characters or more", () => {
    for (let n = 1; n < KEY.length; n++) {
      const output = ToolResult.finish(`log line ${KEY.slice(0, n)}`, { notes: [], cut: true }, secrets.redactCut)
      if (n >= Secrets.MIN_PREFIX) expect(output).toMatch(/^log line \[redacted\]\n\[the first/)
      else expect(output.startsWith(`log line ${KEY.slice(0, n)}\n`)).toBe(true)
    }
  })

  it("a library tool's result over the cap is cut with the same note (ToolResult.capped)", () => {
    const result = ToolResult.capped(ToolResult.make("completed", "€".repeat(30_000)), secrets.redactCut)
    expect(bytes(result.output)).toBeLessThanOrEqual(ToolResult.MAX_OUTPUT_BYTES)
    expect(result.output).toMatch(/\n\[the first [\d,]+ of its 90,000 bytes are shown, the rest was dropped to fit 65,536 bytes\]$/)
    const small = ToolResult.make("completed", "fits")
    expect(ToolResult.capped(small, secrets.redactCut)).toBe(small)
  })
})
