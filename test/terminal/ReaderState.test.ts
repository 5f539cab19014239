/**
 * What each event does to the key reader (`ReaderState`, pure): a table of
 * single events and what they do, and generated runs of a question played as
 * `KeyReader` plays it (chunks read, the guard's two drains with input
 * arriving at every step, the release) against a plain model: nothing typed
 * before the prompt is up answers it, and the notice counts it all; a stop key
 * stops at once and nothing after it acts; a forged report denies; after the
 * end of input every prompt ends.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as InputGate from "../../src/terminal/input/InputGate.js"
import type * as KeyDecoder from "../../src/terminal/input/KeyDecoder.js"
import * as LineEditor from "../../src/terminal/input/LineEditor.js"
import * as ReaderState from "../../src/terminal/input/ReaderState.js"
import * as Sighting from "../../src/terminal/input/Sighting.js"

type Reader = ReaderState.Reader
type Act = ReaderState.Act

const COLUMNS = 80
const PROMPT = "Approve? "

/** The shell's part, played by hand: the reader and every act it was told to perform, in order. */
interface Run {
  readonly reader: Reader
  readonly acts: ReadonlyArray<Act>
}

/** A chunk read, and its inputs dispatched one at a time, as `KeyReader` does (acts here change nothing). */
const chunk = (run: Run, text: string): Run => {
  const read = ReaderState.read(run.reader, Buffer.from(text, "utf8"))
  if (read._tag === "Ignored") return run
  if (read._tag === "Stop") return { reader: read.reader, acts: [...run.acts, { _tag: "Stop", key: read.key }] }
  let reader = read.reader
  const acts = [...run.acts]
  for (const item of read.inputs) {
    if (reader.stopped) break
    const step = ReaderState.input(reader, item, COLUMNS)
    reader = step.reader
    acts.push(...step.acts)
  }
  return { reader, acts }
}

const chunks = (run: Run, texts: ReadonlyArray<string>): Run => texts.reduce(chunk, run)

const at = (reader: Reader): Run => ({ reader, acts: [] })

/** A reader asked an approval question (the output takes no sighting): guarded, what waited discarded. */
const guarded = (reader: Reader): Reader => {
  const asked = ReaderState.ask(reader, false)
  if (asked._tag !== "Ask" || asked.sight) throw new Error(`not asked: ${asked._tag}`)
  return ReaderState.seen(ReaderState.guarded(reader), "seen")
}

/** A reader whose question waits for the answer to its request for `column`. */
const sighting = (column: number): Reader => {
  const asked = ReaderState.ask(ReaderState.started(ReaderState.initial), true)
  if (asked._tag !== "Ask" || !asked.sight) throw new Error("no sighting")
  const answered = chunk(at(ReaderState.guarded(ReaderState.started(ReaderState.initial))), "\u001b[1;1R").reader
  return ReaderState.requested(ReaderState.sightingBegun(answered), column)
}

const released = (reader: Reader): Reader => {
  const shown = ReaderState.guardDrained(reader, true, PROMPT)
  if (shown._tag !== "Show") throw new Error("not shown")
  const end = ReaderState.promptDrained(reader, shown.before, true, PROMPT, true)
  if (end._tag !== "Release") throw new Error(`not released: ${end._tag}`)
  return ReaderState.released(reader).reader
}

const tags = (acts: ReadonlyArray<Act>) => acts.map((act) => (act._tag === "Seen" ? `Seen ${act.how}` : act._tag))

describe("ReaderState: one event at a time", () => {
  it("a table of events and what they do", () => {
    const reading = released(guarded(ReaderState.initial))
    const rows: ReadonlyArray<{ readonly name: string; readonly run: Run; readonly acts: ReadonlyArray<string>; readonly check?: (reader: Reader) => void }> = [
      { name: "typed while no prompt is shown: queued", run: chunk(at(ReaderState.initial), "yes\r"), acts: [], check: (r) => expect(r.gate._tag === "Idle" && InputGate.queued(r.gate.pending)).toHaveLength(2) },
      { name: "typed at a prompt: redrawn", run: chunk(at(reading), "y"), acts: ["Redraw"] },
      { name: "Enter at a prompt: settled", run: chunk(at(reading), "y\r"), acts: ["Redraw", "Settled"], check: (r) => expect(r.gate._tag).toBe("Idle") },
      { name: "Ctrl+D on an empty line: settled, and input has ended", run: chunk(at(reading), "\u0004"), acts: ["Settled"], check: (r) => expect(r.ended).toBe(true) },
      { name: "typed while guarded: ignored, counted", run: chunk(at(guarded(ReaderState.initial)), "y\r"), acts: [], check: (r) => expect(InputGate.ignored(r.gate).lines).toBe(1) },
      { name: "Ctrl+C in a chunk: stop, nothing of the chunk decoded", run: chunk(at(reading), "y\r\u0003"), acts: ["Stop"], check: (r) => expect(r).toEqual({ ...reading, stopped: true }) },
      { name: "Ctrl+\\ pasted: stop", run: chunk(at(reading), "\u001b[200~a\u001cb\u001b[201~"), acts: ["Stop"] },
      { name: "after a stop: nothing", run: chunk(chunk(at(reading), "\u0003"), "y\r\u0003"), acts: ["Stop"] },
      { name: "the answer to the question's request: seen, the guard stays", run: chunk(at(sighting(40)), "\u001b[24;40R"), acts: ["Answered", "Seen seen"], check: (r) => expect([r.gate._tag, r.sighting.waiting]).toEqual(["Guarded", undefined]) },
      { name: "a report no request asked for: forged, what was ignored dropped", run: chunk(at(sighting(40)), "y\u001b[24;41R"), acts: ["Seen forged"], check: (r) => expect(r.gate).toEqual(InputGate.idle) },
      { name: "a report while no question waits: no sighting (and no request is due)", run: chunk(at(ReaderState.initial), "\u001b[3;3R"), acts: ["Answered"] },
      { name: "a report pasted: no report", run: chunk(at(sighting(40)), "\u001b[200~\u001b[24;40R\u001b[201~"), acts: [] },
      { name: "input ends at a prompt: settled, ended", run: ReaderState.inputEnded(reading), acts: ["Settled"], check: (r) => expect(r.ended).toBe(true) },
      { name: "input ends while a question waits for its sighting: seen, ended", run: ReaderState.inputEnded(sighting(40)), acts: ["Seen seen"], check: (r) => expect([r.ended, r.sighting.waiting]).toEqual([true, undefined]) }
    ]
    for (const row of rows) {
      expect(tags(row.run.acts), row.name).toEqual(row.acts)
      row.check?.(row.run.reader)
    }
    console.log(`reader events: ${rows.length} rows`)
  })

  it("the guard's end: guard again while input pours in; the notice and prompt go up; drawn again only when more was ignored; then an empty line", () => {
    const before = chunk(at(guarded(ReaderState.initial)), "yes\r").reader
    expect(ReaderState.guardDrained(before, false, PROMPT)).toEqual({ _tag: "Again" })
    const shown = ReaderState.guardDrained(before, true, PROMPT)
    expect(shown).toMatchObject({ _tag: "Show", text: `(ignored 1 line(s) typed before this question)\n${PROMPT}` })
    if (shown._tag !== "Show") return
    expect(ReaderState.promptDrained(before, shown.before, false, PROMPT, true)).toEqual({ _tag: "Again", text: ReaderState.ERASE_ROW })
    // A terminal without escapes (TERM=dumb): the prompt's row is left behind, a new line taken.
    expect(ReaderState.promptDrained(before, shown.before, false, PROMPT, false)).toEqual({ _tag: "Again", text: "\n" })
    expect(ReaderState.promptDrained(before, shown.before, true, PROMPT, true)).toEqual({ _tag: "Release", text: undefined })
    const late = chunk(at(before), "y\r").reader
    expect(ReaderState.promptDrained(late, shown.before, true, PROMPT, true)).toEqual({
      _tag: "Release",
      text: `${ReaderState.ERASE_ROW}(ignored 2 line(s) typed before this question)\n${PROMPT}`
    })
    const release = ReaderState.released(late)
    expect(release.settled).toBeUndefined()
    expect(release.reader.gate._tag === "Reading" && LineEditor.length(release.reader.gate.editor)).toBe(0)
    // A sequence cut across the release is forgotten: its rest is typed, never a key made of both sides.
    const cut = chunk(at(before), "\u001b[").reader
    const after = released(cut)
    expect(chunk(at(after), "A").acts).toEqual([{ _tag: "Redraw" }])
    expect(after.gate._tag === "Reading" && LineEditor.length(after.gate.editor)).toBe(0)
    // Stopped while the prompt went up: nothing more. Input ended meanwhile: the question ends.
    expect(ReaderState.promptDrained({ ...late, stopped: true }, shown.before, true, PROMPT, true)).toEqual({ _tag: "Stopped" })
    expect(ReaderState.released({ ...late, ended: true }).settled?._tag).toBe("Ended")
  })

  it("after a stop no question is asked; after the end of input every prompt ends at once", () => {
    expect(ReaderState.ask({ ...ReaderState.initial, stopped: true }, true)).toEqual({ _tag: "Never" })
    expect(ReaderState.ask({ ...ReaderState.initial, ended: true }, true)).toEqual({ _tag: "Ended" })
    const typedAhead = chunk(at(ReaderState.initial), "first\r").reader
    expect(ReaderState.open(typedAhead, [], []).outcome).toMatchObject({ _tag: "Submitted", text: "first" })
    expect(ReaderState.open({ ...ReaderState.initial, ended: true }, [], []).outcome._tag).toBe("Ended")
    const endedByKey = ReaderState.open(chunk(at(ReaderState.initial), "\u0004").reader, [], [])
    expect([endedByKey.outcome._tag, endedByKey.reader.ended]).toEqual(["Ended", true])
    expect(ReaderState.answersDue(ReaderState.started(ReaderState.initial))).toBe(true)
    expect(ReaderState.answersDue({ ...ReaderState.started(ReaderState.initial), stopped: true })).toBe(false)
  })
})

/** Typed keys with no paste: every CR is an Enter. */
const typedChunk = fc.array(fc.constantFrom("y", "e", "s", "n", " ", "\r", "\u007f", "\u0004", "\u001b[A", "\u001b[D", "\u0001"), { minLength: 1, maxLength: 6 })
  .map((units) => units.join(""))

/** The line a fresh editor makes of typed letters, Backspace and Enter, up to the first Enter (`undefined`: none). */
const answerOf = (texts: ReadonlyArray<string>): string | undefined => {
  let line = ""
  for (const ch of texts.join("")) {
    if (ch === "\r") return line
    line = ch === "\u007f" ? line.slice(0, -1) : line + ch
  }
  return undefined
}

describe("ReaderState: generated questions played as KeyReader plays them", () => {
  it("nothing typed before the prompt is up answers it, and the notice counts every line of it: 2,000 generated runs", () => {
    // One round of the guard's end: what is read in its first drain, whether that left the terminal empty,
    // what is read in the drain after the prompt's write, and whether that did.
    const round = fc.record({ first: fc.array(typedChunk, { maxLength: 3 }), firstComplete: fc.boolean(), late: fc.array(typedChunk, { maxLength: 2 }), lateComplete: fc.boolean() })
    const answer = fc.array(fc.constantFrom("y", "n", "o", "\u007f", "\r"), { maxLength: 8 }).map((units) => units.join(""))
    let runs = 0
    let redrawn = 0
    fc.assert(
      fc.property(fc.array(typedChunk, { maxLength: 4 }), fc.array(typedChunk, { maxLength: 4 }), fc.array(round, { minLength: 1, maxLength: 4 }), fc.array(answer, { maxLength: 3 }), (ahead, during, rounds, after) => {
        runs++
        let run = chunks(at(ReaderState.initial), ahead)
        run = chunks({ reader: guarded(run.reader), acts: run.acts }, during)
        let typedBefore = [...ahead, ...during]
        let notice = ""
        let releasedAt: Reader | undefined
        for (const [index, step] of [...rounds, { first: [], firstComplete: true, late: [], lateComplete: true }].entries()) {
          run = chunks(run, step.first)
          typedBefore = [...typedBefore, ...step.first]
          // The last round always ends the guard: a terminal stops pouring in at some point.
          const last = index === rounds.length
          const shown = ReaderState.guardDrained(run.reader, step.firstComplete || last, PROMPT)
          if (shown._tag === "Again") continue
          notice = shown.text
          run = chunks(run, step.late)
          typedBefore = [...typedBefore, ...step.late]
          const end = ReaderState.promptDrained(run.reader, shown.before, step.lateComplete || last, PROMPT, true)
          if (end._tag === "Stopped") throw new Error("no stop key was typed")
          if (end._tag === "Again") continue
          if (end.text !== undefined) {
            redrawn++
            notice = end.text.slice(ReaderState.ERASE_ROW.length)
          }
          releasedAt = ReaderState.released(run.reader).reader
          break
        }
        // Until the release, nothing settled: no answer was taken.
        expect(run.acts.filter((act) => act._tag === "Settled")).toEqual([])
        if (releasedAt === undefined) throw new Error("never released")
        // Every line typed before is counted, and the notice last written over the prompt says all that was ignored.
        const lines = typedBefore.join("").split("\r").length - 1
        const ignored = InputGate.ignored(run.reader.gate)
        expect(ignored.lines).toBe(lines)
        expect(notice).toBe((InputGate.notice(ignored) ?? "") + PROMPT)
        if (typedBefore.join("") === "") expect(notice).toBe(PROMPT)
        // From the release on, the answer is made of what was typed after it, alone.
        const answered = chunks(at(releasedAt), after).acts.find((act) => act._tag === "Settled")
        const expected = answerOf(after)
        expect(answered === undefined ? undefined : answered._tag === "Settled" && answered.outcome._tag === "Submitted" ? answered.outcome.text : "(ended)").toBe(expected)
      }),
      { numRuns: 2_000 }
    )
    console.log(`guarded questions: ${runs} generated runs, the prompt drawn again under its notice in ${redrawn}`)
  })

  it("a stop key stops at once, wherever it is in a chunk, typed or pasted, and nothing after it acts: 2,000 generated runs", () => {
    const unit = fc.constantFrom("y", "\r", "\u001b[A", "\u001b[200~", "\u001b[201~", "\u001b[24;40R", "\u001b", "\u0004", "é")
    const piece = fc.array(unit, { maxLength: 5 }).map((units) => units.join(""))
    const stop = fc.constantFrom<[string, KeyDecoder.StopKey]>(["\u0003", "interrupt"], ["\u001c", "quit"])
    const start = fc.constantFrom<Reader>(ReaderState.initial, guarded(ReaderState.initial), released(guarded(ReaderState.initial)), sighting(40))
    let runs = 0
    fc.assert(
      fc.property(start, fc.array(piece, { maxLength: 4 }), piece, stop, piece, fc.array(fc.oneof(piece, stop.map(([key]) => key)), { maxLength: 4 }), (reader, before, head, [key, name], tail, later) => {
        runs++
        const up = chunks(at(reader), before)
        const stopped = chunk({ reader: up.reader, acts: [] }, head + key + tail)
        // Nothing of the chunk is decoded: the stop is its one act, and the reader is as it was but stopped.
        expect(stopped.acts).toEqual([{ _tag: "Stop", key: name }])
        expect(stopped.reader).toEqual({ ...up.reader, stopped: true })
        const after = chunks(stopped, later)
        expect(after).toEqual(stopped)
        expect(ReaderState.ask(after.reader, true)._tag).toBe("Never")
      }),
      { numRuns: 2_000 }
    )
    console.log(`stop keys: ${runs} generated runs`)
  })

  it("while a question waits for its sighting, only the answer naming its column lets it on; any other report denies it: 2,000 generated runs", () => {
    const noise = fc.array(fc.constantFrom("y", "\r", "n", "\u001b[A"), { maxLength: 4 }).map((units) => units.join(""))
    let denied = 0
    fc.assert(
      fc.property(fc.integer({ min: 2, max: COLUMNS }), fc.array(fc.tuple(noise, fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 300 }))), { minLength: 1, maxLength: 5 }), (column, reports) => {
        // 0: the column asked for.
        const [[typed, named], ...later] = reports as [[string, number], ...Array<[string, number]>]
        const reported = named === 0 ? column : named
        const run = chunk(at(sighting(column)), `${typed}\u001b[24;${reported}R`)
        if (reported === column) {
          expect(tags(run.acts)).toEqual(["Answered", "Seen seen"])
          expect(run.reader.gate._tag).toBe("Guarded")
          expect(Sighting.unanswered(run.reader.sighting)).toBe(0)
        } else {
          expect(tags(run.acts)).toEqual(["Seen forged"])
          expect(run.reader.gate).toEqual(InputGate.idle)
          denied++
        }
        // The question waits no more: later reports, right or wrong, are seen by nothing.
        expect(run.reader.sighting.waiting).toBeUndefined()
        const rest = chunks({ reader: run.reader, acts: [] }, later.map(([text, other]) => `${text}\u001b[24;${other === 0 ? column : other}R`))
        expect(rest.acts.filter((act) => act._tag === "Seen")).toEqual([])
      }),
      { numRuns: 2_000 }
    )
    console.log(`sightings: 2,000 generated, ${denied} denied by a report naming another column`)
  })
})
