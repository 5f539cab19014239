/**
 * Where each decoded input goes: to the prompt being edited, to the queue of
 * input typed while no prompt is shown, or, while an approval question is
 * guarded, nowhere but the tally the screen reports. Pure; `KeyReader` holds
 * the state and does the I/O.
 *
 * - `Idle`: no prompt is shown. Input waits, in order, and counts as typed at
 *   the next `You> ` prompt; an approval question discards it.
 * - `Guarded`: an approval screen is up but cannot be answered yet. Everything
 *   is discarded and counted. Only `release` ends it, and the caller releases
 *   only after draining the terminal (see `KeyReader`).
 * - `Reading`: a prompt takes input into its editor.
 *
 * Stop keys are never queued or discarded: they act at once, in every state.
 * The queue is persistent and costs O(1) per input (amortized), so a flood of
 * type-ahead is linear, not quadratic.
 */
import type { Input, StopKey, Typed as KeyDecoderTyped } from "./KeyDecoder.js"
import * as LineEditor from "./LineEditor.js"
import type { Texts } from "../../TextList.js"

export type Typed = KeyDecoderTyped

/** What was discarded: complete lines, the partial line after them, and whether anything was pasted. */
export interface Ignored {
  readonly lines: number
  readonly partial: LineEditor.Editor
  readonly pasted: boolean
}

/** Inputs in arrival order: `front` oldest first, `back` newest first (reversed onto `front` when it runs out). */
export interface Queue {
  readonly front: List
  readonly back: List
}
type List = { readonly head: Typed; readonly tail: List } | undefined

const emptyQueue: Queue = { front: undefined, back: undefined }

const enqueue = (queue: Queue, input: Typed): Queue => ({ front: queue.front, back: { head: input, tail: queue.back } })

/** The oldest input and the rest, or `undefined` when the queue is empty. */
const dequeue = (queue: Queue): readonly [Typed, Queue] | undefined => {
  let { back, front } = queue
  if (front === undefined) {
    for (; back !== undefined; back = back.tail) front = { head: back.head, tail: front }
  }
  return front === undefined ? undefined : [front.head, { front: front.tail, back }]
}

/** The queue's inputs, oldest first. */
export const queued = (queue: Queue): Array<Typed> => {
  const inputs: Array<Typed> = []
  for (let list = queue.front; list !== undefined; list = list.tail) inputs.push(list.head)
  const newest: Array<Typed> = []
  for (let list = queue.back; list !== undefined; list = list.tail) newest.push(list.head)
  return [...inputs, ...newest.reverse()]
}

export type Gate =
  | { readonly _tag: "Idle"; readonly pending: Queue }
  | { readonly _tag: "Guarded"; readonly ignored: Ignored }
  | { readonly _tag: "Reading"; readonly editor: LineEditor.Editor }

export type Outcome =
  /** Nothing to show: queued or discarded. */
  | { readonly _tag: "Held" }
  /** The line changed: redraw `editor`. */
  | { readonly _tag: "Edited"; readonly editor: LineEditor.Editor }
  /** Enter: the prompt is answered; `editor` is the line as it was. */
  | { readonly _tag: "Submitted"; readonly text: string; readonly pasted: boolean; readonly editor: LineEditor.Editor }
  /** Ctrl+D on an empty line. */
  | { readonly _tag: "Ended"; readonly editor: LineEditor.Editor }
  | { readonly _tag: "Stop"; readonly key: StopKey }

export interface Step {
  readonly gate: Gate
  readonly outcome: Outcome
}

export const idle: Gate = { _tag: "Idle", pending: emptyQueue }

const noneIgnored: Ignored = { lines: 0, partial: LineEditor.empty(), pasted: false }

/** Counts one discarded input. */
const ignore = (ignored: Ignored, input: Typed): Ignored => {
  if (input._tag === "Paste") return ignored.pasted ? ignored : { ...ignored, pasted: true }
  const action = LineEditor.press(ignored.partial, input)
  switch (action._tag) {
    case "Edit":
      return { ...ignored, partial: action.editor }
    case "Submit":
      return { ...ignored, lines: ignored.lines + 1, partial: LineEditor.empty() }
    case "EndOfInput":
      return ignored
  }
}

export const feed = (gate: Gate, input: Input): Step => {
  if (input._tag === "Stop") return { gate, outcome: { _tag: "Stop", key: input.key } }
  // A terminal's report is the reader's to use (`KeyReader`): it is neither queued, nor typed, nor counted as ignored.
  if (input._tag === "Report") return { gate, outcome: { _tag: "Held" } }
  switch (gate._tag) {
    case "Idle":
      return { gate: { _tag: "Idle", pending: enqueue(gate.pending, input) }, outcome: { _tag: "Held" } }
    case "Guarded":
      return { gate: { _tag: "Guarded", ignored: ignore(gate.ignored, input) }, outcome: { _tag: "Held" } }
    case "Reading": {
      const action = LineEditor.press(gate.editor, input)
      switch (action._tag) {
        case "Edit":
          return { gate: { _tag: "Reading", editor: action.editor }, outcome: { _tag: "Edited", editor: action.editor } }
        case "Submit":
          return { gate: idle, outcome: { _tag: "Submitted", text: action.text, pasted: action.pasted, editor: gate.editor } }
        case "EndOfInput":
          return { gate: idle, outcome: { _tag: "Ended", editor: gate.editor } }
      }
    }
  }
}

/**
 * Shows a `You> ` prompt: what was typed while no prompt was shown counts as
 * typed at it, up to the first Enter (what follows waits for the next prompt).
 */
export const open = (gate: Gate, history: Texts, completions: ReadonlyArray<string> = []): Step => {
  let pending = gate._tag === "Idle" ? gate.pending : emptyQueue
  let current: Gate = { _tag: "Reading", editor: LineEditor.empty(history, completions) }
  for (let next = dequeue(pending); next !== undefined; next = dequeue(pending)) {
    pending = next[1]
    const step = feed(current, next[0])
    if (step.outcome._tag === "Submitted" || step.outcome._tag === "Ended") return { gate: { _tag: "Idle", pending }, outcome: step.outcome }
    current = step.gate
  }
  return { gate: current, outcome: { _tag: "Edited", editor: current._tag === "Reading" ? current.editor : LineEditor.empty(history, completions) } }
}

/**
 * An approval screen is up: what waits is discarded, and so is everything until `release`.
 * Already guarded (a question asked anew, `askedAgain`), what it discarded so far is kept.
 */
export const guard = (gate: Gate): Gate =>
  gate._tag === "Guarded" ? gate : {
    _tag: "Guarded",
    ignored: (gate._tag === "Idle" ? queued(gate.pending) : []).reduce(ignore, noneIgnored)
  }

/**
 * A question is asked anew (Mino was stopped and continued while it was up): it stays
 * guarded, and a line typed at its prompt so far counts as ignored, for the notice; so
 * does a line that answered it but whose answer was not taken yet (`answered`: whether
 * it held pasted text).
 */
export const askedAgain = (gate: Gate, answered?: { readonly pasted: boolean }): Gate => {
  const again: Gate = gate._tag === "Reading"
    ? { _tag: "Guarded", ignored: { ...noneIgnored, partial: LineEditor.of(LineEditor.text(gate.editor)) } }
    : guard(gate)
  if (answered === undefined || again._tag !== "Guarded") return again
  const { ignored } = again
  return { _tag: "Guarded", ignored: { ...ignored, lines: ignored.lines + 1, pasted: ignored.pasted || answered.pasted } }
}

/** What the guard discarded so far (nothing when not guarded). */
export const ignored = (gate: Gate): Ignored => (gate._tag === "Guarded" ? gate.ignored : noneIgnored)

/** Ends the guard: the question takes answers from now on, in an empty line. */
export const release = (gate: Gate): Gate => (gate._tag === "Guarded" ? { _tag: "Reading", editor: LineEditor.empty() } : gate)

/** The prompt is gone unanswered (interrupted): input waits again. */
export const close = (gate: Gate): Gate => (gate._tag === "Idle" ? gate : idle)

/** The line that says what was discarded, or `undefined` when nothing was. */
export const notice = (discarded: Ignored): string | undefined => {
  const parts = [
    ...(discarded.lines > 0 ? [`${discarded.lines} line(s)`] : []),
    ...(LineEditor.length(discarded.partial) > 0 ? ["a partial line"] : []),
    ...(discarded.pasted ? ["pasted text"] : [])
  ]
  if (parts.length === 0) return undefined
  const list = parts.length === 1 ? parts[0] : `${parts.slice(0, -1).join(", ")} and ${parts.at(-1)}`
  return `(ignored ${list} typed before this question)\n`
}
