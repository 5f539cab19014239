/**
 * What each event does to the key reader: a chunk read from the terminal, one
 * decoded input, the terminal found quiet, the end of input, a question's
 * screen seen, the guard's end after each of its drains, a prompt opened or
 * interrupted. Pure, over one named record (`Reader`); `KeyReader` holds it,
 * does the reading, writing and timing, and performs the `Act`s each step
 * returns, in order, before the next input is looked at (an act may change
 * the record: a question answered or interrupted).
 *
 * The rules it keeps (see `KeyReader` for why):
 * - a chunk holding a stop key is not decoded: the reader stops, and takes no
 *   more input, not even the rest of a chunk already decoded;
 * - a cursor position report is the question's sighting, never typing: the
 *   answer to its request starts the guard; one matching no request due while
 *   a question waits is `forged`, and the question's input is dropped;
 * - the guard ends only through two complete drains (before the prompt is
 *   written, and again after), input being ignored all along; then the prompt
 *   takes input, with no sequence cut across that moment;
 * - once input has ended, every prompt ends at once.
 */
import * as InputGate from "./InputGate.js"
import * as KeyDecoder from "./KeyDecoder.js"
import * as LineEditor from "./LineEditor.js"
import * as Sighting from "./Sighting.js"
import type { Texts } from "../../TextList.js"

export interface Reader {
  readonly decoder: KeyDecoder.Decoder
  readonly sighting: Sighting.Sighting
  /** Where typed input goes: queued, ignored by a guard, or into the prompt's line. */
  readonly gate: InputGate.Gate
  /** Input has ended (a closed pipe, a hung-up terminal, Ctrl+D on an empty line): every prompt ends at once. */
  readonly ended: boolean
  /** A stop key was read: Mino is on its way out and takes no more input. */
  readonly stopped: boolean
}

export const initial: Reader = {
  decoder: KeyDecoder.initial,
  sighting: Sighting.initial,
  gate: InputGate.idle,
  ended: false,
  stopped: false
}

/** A prompt's end: its line was submitted, or input ended. */
export type Settled = Extract<InputGate.Outcome, { readonly _tag: "Submitted" | "Ended" }>

/** What the reader does after a step, in order. */
export type Act =
  /** Give the terminal back, read no more, and request the stop. */
  | { readonly _tag: "Stop"; readonly key: KeyDecoder.StopKey }
  /** No request is left unanswered: the end stops waiting for answers. */
  | { readonly _tag: "Answered" }
  /** The waiting question's screen is on the display (or a report no request asked for came: `forged`). */
  | { readonly _tag: "Seen"; readonly how: "seen" | "forged" }
  /** The line changed: redraw it (soon). */
  | { readonly _tag: "Redraw" }
  /** The prompt shown is answered or ended. */
  | { readonly _tag: "Settled"; readonly outcome: Settled }

export interface Step {
  readonly reader: Reader
  readonly acts: ReadonlyArray<Act>
}

const none: ReadonlyArray<Act> = []

const stop = (reader: Reader, key: KeyDecoder.StopKey): Step =>
  reader.stopped ? { reader, acts: none } : { reader: { ...reader, stopped: true }, acts: [{ _tag: "Stop", key }] }

/**
 * A chunk read: nothing after a stop key (`Ignored`); a stop key anywhere in
 * it stops before anything in it is decoded (`Stop`); else its inputs, for
 * `input` one at a time (`Decoded`).
 */
export const read = (reader: Reader, chunk: Uint8Array):
  | { readonly _tag: "Ignored" }
  | { readonly _tag: "Stop"; readonly reader: Reader; readonly key: KeyDecoder.StopKey }
  | { readonly _tag: "Decoded"; readonly reader: Reader; readonly inputs: ReadonlyArray<KeyDecoder.Input> } =>
{
  if (reader.stopped) return { _tag: "Ignored" }
  const key = KeyDecoder.stopKey(chunk)
  if (key !== undefined) return { _tag: "Stop", reader: { ...reader, stopped: true }, key }
  const decoded = KeyDecoder.decode(reader.decoder, chunk)
  return { _tag: "Decoded", reader: { ...reader, decoder: decoded.decoder }, inputs: decoded.inputs }
}

/** The terminal held nothing for `KeyDecoder.QUIET_MS` (drained to know): what the decoder waited on is over. */
export const quiet = (reader: Reader): { readonly reader: Reader; readonly inputs: ReadonlyArray<KeyDecoder.Input> } => {
  const settled = KeyDecoder.idle(reader.decoder)
  return { reader: { ...reader, decoder: settled.decoder }, inputs: settled.inputs }
}

/** Whether the decoder waits to hear nothing more: the reader then checks for quiet after `KeyDecoder.QUIET_MS`. */
export const waiting = (reader: Reader): boolean => KeyDecoder.waiting(reader.decoder)

/** The waiting question's screen was seen, or a forged report came (its input is dropped then), or the wait gave up (`seen`). */
export const seen = (reader: Reader, how: "seen" | "forged"): Reader => ({
  ...reader,
  sighting: Sighting.end(reader.sighting),
  gate: how === "forged" ? InputGate.idle : reader.gate
})

/** A cursor position report, on a screen `columns` wide. */
const report = (reader: Reader, column: number, columns: number): Step => {
  const answered = Sighting.report(reader.sighting, column, columns)
  const next = { ...reader, sighting: answered.sighting }
  const acts: Array<Act> = Sighting.unanswered(answered.sighting) === 0 ? [{ _tag: "Answered" }] : []
  if (answered.seen === "not yet") return { reader: next, acts }
  return { reader: seen(next, answered.seen), acts: [...acts, { _tag: "Seen", how: answered.seen }] }
}

/** One decoded input, on a screen `columns` wide. */
export const input = (reader: Reader, item: KeyDecoder.Input, columns: number): Step => {
  if (reader.stopped) return { reader, acts: none }
  if (item._tag === "Report") return report(reader, item.column, columns)
  const step = InputGate.feed(reader.gate, item)
  const next = { ...reader, gate: step.gate }
  const { outcome } = step
  switch (outcome._tag) {
    case "Stop":
      return stop(next, outcome.key)
    case "Edited":
      return { reader: next, acts: [{ _tag: "Redraw" }] }
    case "Held":
      return { reader: next, acts: none }
    case "Submitted":
      return { reader: next, acts: [{ _tag: "Settled", outcome }] }
    case "Ended":
      return { reader: { ...next, ended: true }, acts: [{ _tag: "Settled", outcome }] }
  }
}

/** Input ended: a question waiting for its sighting waits no more, and the prompt being read ends. */
export const inputEnded = (reader: Reader): Step => {
  const waited = reader.sighting.waiting !== undefined
  const next = { ...(waited ? seen(reader, "seen") : reader), ended: true }
  const acts: Array<Act> = waited ? [{ _tag: "Seen", how: "seen" }] : []
  if (next.gate._tag === "Reading") acts.push({ _tag: "Settled", outcome: { _tag: "Ended", editor: next.gate.editor } })
  return { reader: next, acts }
}

/** Whether the end waits for answers to requests still due (none comes after a stop or the end of input). */
export const answersDue = (reader: Reader): boolean => Sighting.unanswered(reader.sighting) > 0 && !reader.stopped && !reader.ended

/**
 * A `You> ` prompt opens: what was typed while none was shown counts as typed
 * at it. The outcome: a typed-ahead line answers it at once (`Submitted`), or
 * it ends (`Ended`: a typed-ahead Ctrl+D, or input ended before), or it shows
 * the line (`Edited`).
 */
export const open = (reader: Reader, history: Texts, completions: ReadonlyArray<string>): {
  readonly reader: Reader
  readonly outcome: InputGate.Outcome
} => {
  const opened = InputGate.open(reader.gate, history, completions)
  const { outcome } = opened
  const next = { ...reader, gate: opened.gate }
  if (outcome._tag === "Edited" && reader.ended) return { reader: next, outcome: { _tag: "Ended", editor: outcome.editor } }
  return { reader: outcome._tag === "Ended" ? { ...next, ended: true } : next, outcome }
}

/** The prompt is gone unanswered (interrupted): input waits again. */
export const lineClosed = (reader: Reader): Reader => ({ ...reader, gate: InputGate.close(reader.gate) })

/**
 * The question is asked anew, after a stop: it waits for no sighting, and stays guarded
 * (`InputGate.askedAgain`; `answered`: a line had answered it, its answer not yet taken).
 */
export const questionContinued = (reader: Reader, answered?: { readonly pasted: boolean }): Reader => ({
  ...reader,
  sighting: Sighting.end(reader.sighting),
  gate: InputGate.askedAgain(reader.gate, answered)
})

/** An approval question is gone unanswered (interrupted): it waits for no sighting, and input waits again. */
export const questionClosed = (reader: Reader): Reader => ({
  ...reader,
  sighting: Sighting.end(reader.sighting),
  gate: InputGate.close(reader.gate)
})

/**
 * An approval question's screen is written: `Never` after a stop key (the
 * stop ends the wait), `Ended` once input has; else it is asked (`guarded`),
 * and waits for its screen to be seen (`sight`, where the output is
 * `animated`) or goes straight to the guard.
 */
export const ask = (reader: Reader, animated: boolean): { readonly _tag: "Never" } | { readonly _tag: "Ended" } | {
  readonly _tag: "Ask"
  readonly sight: boolean
} => {
  if (reader.stopped) return { _tag: "Never" }
  if (reader.ended) return { _tag: "Ended" }
  return { _tag: "Ask", sight: animated }
}

/** The question is asked: input is ignored from now on (what waited too), until `released`. */
export const guarded = (reader: Reader): Reader => ({ ...reader, gate: InputGate.guard(reader.gate) })

/**
 * The question starts waiting for its screen to be seen. A sequence cut before
 * now is forgotten (a paste's start marker set aside, `KeyDecoder.forget`), so
 * the report asked for next is never read as the rest of what came before it.
 */
export const sightingBegun = (reader: Reader): Reader => ({
  ...reader,
  decoder: KeyDecoder.forget(reader.decoder),
  sighting: Sighting.begin(reader.sighting)
})

/** The question wrote a request for `column` (`Sighting.request`). */
export const requested = (reader: Reader, column: number): Reader => ({ ...reader, sighting: Sighting.asked(reader.sighting, column) })

/** The request Mino writes at start, to learn whether the terminal answers at all. */
export const started = (reader: Reader): Reader => ({ ...reader, sighting: Sighting.started(reader.sighting) })

/** Erases the row the prompt was written on. */
export const ERASE_ROW = "\r\u001b[K"

/** Takes back the prompt's row: erased, or on a terminal without escapes (TERM=dumb) left behind for a new line. */
const takeBack = (animated: boolean): string => (animated ? ERASE_ROW : "\n")

/**
 * The guard's time is up and the terminal was drained: while input still
 * pours in (`complete` false) the guard stays up; else the notice of what was
 * ignored until now and the prompt are written (`text`), and the terminal is
 * drained once more (`promptDrained`, with `before`).
 */
export const guardDrained = (reader: Reader, complete: boolean, prompt: string):
  | { readonly _tag: "Again" }
  | { readonly _tag: "Show"; readonly before: InputGate.Ignored; readonly text: string } =>
{
  if (!complete) return { _tag: "Again" }
  const before = InputGate.ignored(reader.gate)
  return { _tag: "Show", before, text: (InputGate.notice(before) ?? "") + prompt }
}

/**
 * The prompt is written and the terminal drained once more. Keys that came
 * between the last drain and the write were typed before the prompt was on
 * the screen: they were ignored too, and the prompt is drawn again under its
 * notice (`text`, when anything more was ignored); then the question is
 * `released`. Input still pouring in: the prompt is taken back and the guard
 * stays up (`Again`). After a stop key: nothing more (`Stopped`).
 */
export const promptDrained = (reader: Reader, before: InputGate.Ignored, complete: boolean, prompt: string, animated: boolean):
  | { readonly _tag: "Stopped" }
  | { readonly _tag: "Again"; readonly text: string }
  | { readonly _tag: "Release"; readonly text: string | undefined } =>
{
  if (reader.stopped) return { _tag: "Stopped" }
  if (!complete) return { _tag: "Again", text: takeBack(animated) }
  const after = InputGate.ignored(reader.gate)
  // The tally is a new record once anything more was ignored.
  return { _tag: "Release", text: after !== before ? takeBack(animated) + (InputGate.notice(after) ?? "") + prompt : undefined }
}

/**
 * The guard is over: the question takes input, in an empty line, with no
 * sequence cut across this moment; it ends at once (`settled`) when input has.
 */
export const released = (reader: Reader): { readonly reader: Reader; readonly settled: Settled | undefined } => ({
  reader: { ...reader, decoder: KeyDecoder.forget(reader.decoder), gate: InputGate.release(reader.gate) },
  settled: reader.ended ? { _tag: "Ended", editor: LineEditor.empty() } : undefined
})
