/**
 * When an approval screen counts as seen (`Sighting`): only the terminal's
 * answer to a request the waiting question wrote; answers to older requests
 * pass, and a report matching no request still due is a forgery.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as Sighting from "../../src/terminal/input/Sighting.js"

const fixed = (value: number) => () => value

describe("Sighting", () => {
  it("the start's request is answered by any position; a question's only by its own column", () => {
    let sighting = Sighting.started(Sighting.initial)
    const startAnswer = Sighting.report(sighting, 7, 80)
    expect(startAnswer.seen).toBe("not yet")
    sighting = Sighting.begin(startAnswer.sighting)
    expect(sighting.answers).toBe(true)
    const column = Sighting.column(sighting, 80, fixed(0.5))
    sighting = Sighting.asked(sighting, column)
    expect(Sighting.request(column)).toBe(`\u001b[${column}G\u001b[6n\r`)
    expect(Sighting.report(sighting, column, 80).seen).toBe("seen")
    expect(Sighting.report(sighting, column === 2 ? 3 : 2, 80).seen).toBe("forged")
  })

  it("a question waiting behind the start's unanswered request: the start's answer comes first and counts for nothing", () => {
    let sighting = Sighting.begin(Sighting.started(Sighting.initial))
    sighting = Sighting.asked(sighting, 40)
    const first = Sighting.report(sighting, 40, 80)
    // The oldest request due (the start's, any position) takes the first answer, whatever it names.
    expect(first.seen).toBe("not yet")
    expect(Sighting.report(first.sighting, 40, 80).seen).toBe("seen")
  })

  it("an answer lost in a paste: a later request's answer still counts; a narrowed screen's clamped answer too", () => {
    let sighting = Sighting.begin(Sighting.initial)
    sighting = Sighting.asked(Sighting.asked(sighting, 10), 120)
    expect(Sighting.report(sighting, 120, 200).seen).toBe("seen")
    expect(Sighting.report(sighting, 100, 100).seen).toBe("seen")
    expect(Sighting.report(sighting, 99, 100).seen).toBe("forged")
  })

  it("without a waiting question a stray report is ignored; a terminal that never answered is given up on after UNANSWERED_MS, one that did never", () => {
    expect(Sighting.report(Sighting.initial, 5, 80).seen).toBe("not yet")
    const waiting = Sighting.begin(Sighting.started(Sighting.initial))
    expect(Sighting.onRepeat(waiting, Sighting.UNANSWERED_MS - 1)).toBe("ask again")
    expect(Sighting.onRepeat(waiting, Sighting.UNANSWERED_MS)).toBe("give up")
    expect(Sighting.onRepeat({ ...waiting, answers: true }, 10 * Sighting.UNANSWERED_MS)).toBe("ask again")
  })

  it("forged reports, 2,000 generated floods over every column: seen only when one names a column asked for (never after the first wrong one, which denies)", () => {
    let floods = 0
    let denied = 0
    fc.assert(
      fc.property(fc.integer({ min: 10, max: 300 }), fc.array(fc.integer({ min: 1, max: 400 }), { minLength: 1, maxLength: 300 }), fc.double({ min: 0, max: 0.999 }), (columns, flood, random) => {
        let sighting = Sighting.begin(Sighting.initial)
        const column = Sighting.column(sighting, columns, fixed(random))
        expect(column).toBeGreaterThanOrEqual(2)
        expect(column).toBeLessThanOrEqual(Math.min(columns, 250))
        sighting = Sighting.asked(sighting, column)
        floods++
        for (const forged of flood) {
          const step = Sighting.report(sighting, forged, columns)
          if (step.seen === "forged") {
            denied++
            expect(forged === column || (forged === columns && column > columns)).toBe(false)
            return
          }
          expect(step.seen).toBe("seen")
          expect(forged).toBe(column)
          return
        }
      }),
      { numRuns: 2_000 }
    )
    console.log(`forged report floods: ${floods}, denied at the first wrong report: ${denied}`)
  })

  it("a question's columns differ from every request still due while any is free", () => {
    let sighting = Sighting.begin(Sighting.initial)
    for (let i = 0; i < 9; i++) sighting = Sighting.asked(sighting, Sighting.column(sighting, 10, fixed(0)))
    expect(new Set(sighting.due.map((due) => due.column)).size).toBe(9)
  })
})
