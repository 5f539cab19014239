/**
 * The Gateway's pure core for the model's text (`speak`) and a finished call's
 * output (`resultBody`): what a text delta opens, and what is shown under a
 * result's header. The drawing itself is tested through a real terminal (e2e).
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { resultBody, SILENT, speak, type Speech } from "../../src/cli/Gateway.js"
import * as ToolResult from "../../src/tools/ToolResult.js"

describe("Gateway's speech", () => {
  it("a table of deltas: the answer opens once, another item opens a paragraph, a refusal's first text is marked", () => {
    const steps: ReadonlyArray<readonly [{ item?: string; refusal?: boolean }, string, boolean]> = [
      [{}, "answer", false],
      [{}, "nothing", false],
      [{ item: "m1" }, "paragraph", false],
      [{ item: "m1" }, "nothing", false],
      [{}, "nothing", false],
      [{ item: "m2", refusal: true }, "paragraph", true],
      [{ item: "m2", refusal: true }, "nothing", false]
    ]
    let speech: Speech = SILENT
    for (const [delta, opens, marksRefusal] of steps) {
      const step = speak(speech, delta)
      expect({ delta, opens: step.opens, marksRefusal: step.marksRefusal }).toEqual({ delta, opens, marksRefusal })
      speech = step.speech
    }
    expect(speak(SILENT, { item: "r", refusal: true })).toEqual({ speech: { speaking: true, item: "r" }, opens: "answer", marksRefusal: true })
  })

  it("for any deltas: one answer, then a paragraph exactly where the item changes (a delta without one stays in the current)", () => {
    let cases = 0
    fc.assert(
      fc.property(fc.array(fc.option(fc.constantFrom("a", "b", "c"), { nil: undefined }), { minLength: 1, maxLength: 40 }), (items) => {
        cases += 1
        let speech: Speech = SILENT
        let current: string | undefined
        const opened: Array<string> = []
        const expected: Array<string> = []
        items.forEach((item, index) => {
          const next = item ?? current
          expected.push(index === 0 ? "answer" : next !== current ? "paragraph" : "nothing")
          current = next
          const step = speak(speech, item === undefined ? {} : { item })
          opened.push(step.opens)
          speech = step.speech
        })
        expect(opened).toEqual(expected)
        expect(speech).toEqual({ speaking: true, item: current })
      }),
      { numRuns: 1000 }
    )
    console.log(`speak: ${cases} generated delta sequences`)
  })

  it("resultBody: a denial shows nothing more; output is escaped and ends in one newline", () => {
    expect(resultBody(ToolResult.make("denied", "You denied it."))).toBe("")
    expect(resultBody(ToolResult.make("completed", "a\nb"))).toBe("a\nb\n")
    expect(resultBody(ToolResult.make("completed", "done\n"))).toBe("done\n")
    expect(resultBody(ToolResult.make("completed", "\u001b[2Jx"))).not.toContain("\u001b")
    expect(resultBody(ToolResult.make("completed", ""))).toBe("")
  })
})
