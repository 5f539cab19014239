/**
 * Keys from a terminal in raw mode: the thin impure part around `ReaderState`
 * (what each event does to the reader: `KeyDecoder` turns bytes to inputs,
 * `InputGate` says where each goes, `Sighting` when a screen was seen),
 * `LineEditor` (the line) and `ShownPrompt` with `PromptLayout` (drawing it).
 * This module only listens, times, writes and drains.
 *
 * The input is read for the whole life of the process: typed while no prompt
 * is shown, keys wait in order for the next `You> ` prompt. While Mino is busy
 * in synchronous work (or stopped) they wait in the terminal's input queue;
 * every decision that depends on when a key arrived (the end of an approval
 * guard, the end of a paste) drains that queue first, so they are never taken
 * for later than they were. A chunk holding Ctrl+C or Ctrl+\ is not decoded:
 * the terminal's modes are restored, input is no longer read, and the stop is
 * requested, before anything else in it is looked at.
 *
 * An approval question is guarded, so that nothing typed before it was on the
 * screen can answer it, whatever the timing: the screen is written first (a
 * terminal's writes are synchronous), then every input is discarded until,
 * `guardMs` later, a timer callback drains, in one synchronous run, whatever
 * Node has read and not yet handed over and then whatever the terminal still
 * holds (read through a second, non-blocking descriptor of the same terminal:
 * reads from any descriptor of a terminal take from the same input queue),
 * discarding it too, and only then writes the prompt and takes input. An
 * answer can therefore only be made of bytes that reached the terminal after
 * the screen had been on it for `guardMs`: a busy event loop, a stopped process
 * or a poll phase that runs before timers changes nothing, because the drain
 * reads the terminal itself rather than trusting when a key was read. Input
 * that keeps pouring in (a paste that does not end) keeps the guard up.
 *
 * The guard's time starts once the screen is on the person's display, not
 * once its write returned (on a slow link the bytes may still be on their way,
 * behind a model's forged screen): where the output takes escape sequences,
 * a cursor position request follows the screen, and the guard starts when the
 * terminal's answer is read (`Sighting`). Input before it never answers.
 */
import { randomInt } from "node:crypto"
import * as Fs from "node:fs"
import { performance } from "node:perf_hooks"
import type { Readable, Writable } from "node:stream"
import * as tty from "node:tty"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as FatalSignals from "./FatalSignals.js"
import * as KeyDecoder from "./KeyDecoder.js"
import * as LineEditor from "./LineEditor.js"
import * as ReaderState from "./ReaderState.js"
import * as ShownPrompt from "./ShownPrompt.js"
import * as Sighting from "./Sighting.js"
import * as Terminal from "../../platform/Terminal.js"
import type { Texts } from "../../TextList.js"

/** An answer to the approval question, and whether any of it was pasted. */
export interface Answer {
  readonly text: string
  readonly pasted: boolean
  /** No answer was read: a cursor position report Mino had not asked for arrived while the screen was on its way (`Sighting`). */
  readonly forgedReport?: boolean
  /**
   * No answer was read: Mino was stopped and continued while the question was up
   * (a shell may have used the terminal meanwhile, its output scrolling the screen
   * away): the caller shows the screen again and asks anew, behind a new guard.
   */
  readonly continued?: boolean
}

export interface KeyReaderOptions {
  readonly input: Readable
  readonly output: Writable
  /** Writes now: on a terminal a write has completed when it returns. */
  readonly raw: (text: string) => void
  /** The output takes cursor movement and bracketed paste (a terminal, not TERM=dumb). */
  readonly animated: boolean
  readonly onStopKey: (key: KeyDecoder.StopKey) => void
  /** How long an approval question is guarded after its screen is written. */
  readonly guardMs: number
}

export interface KeyReader {
  readonly readLine: (prompt: string, history: Texts, completions?: ReadonlyArray<string>) => Effect.Effect<Option.Option<string>>
  /** Guards, then shows `prompt` and reads the answer; the screen above it must be written already. */
  readonly ask: (prompt: string) => Effect.Effect<Option.Option<Answer>>
}

const PASTE_ON = "\u001b[?2004h"
const PASTE_OFF = "\u001b[?2004l"

/** How long an answer waits before it is taken, for a continue (SIGCONT) that came with it to be known. */
const SETTLE_MS = 25

/** At most this much is drained at the end of a guard; more means input is still pouring in. */
const DRAIN_LIMIT = 1 << 20

/** How long the end waits for the terminal's answers to requests still due. */
const EXIT_WAIT_MS = 300

/** Redraws of a line being typed or pasted are at most this often. */
const REDRAW_MS = 16

/** Opens a second, non-blocking descriptor of the terminal `input` reads from, when there is one. */
const openDrain = (input: Readable): number | undefined => {
  if (!(input instanceof tty.ReadStream)) return undefined
  return Terminal.openAgain("fd" in input && typeof input.fd === "number" ? input.fd : 0)
}

const errorCode = (error: unknown): unknown =>
  typeof error === "object" && error !== null && "code" in error ? error.code : undefined

type Timer = ReturnType<typeof setTimeout>

/**
 * The reader's I/O around its state (`ReaderState`): the input's listeners,
 * the timers, the writes and the drain. Every decision is `ReaderState`'s; the
 * state is read afresh after anything that may have run a listener (a drain,
 * an act), since each can move it on.
 */
class Keys {
  state: ReaderState.Reader = ReaderState.initial
  /** The question waiting for its screen to be seen: told when it is (or when the wait gives up). */
  sighting: Question | undefined
  /** The approval question up, from its screen written until it is answered or interrupted. */
  question: Question | undefined
  /** The prompt on the screen, and what takes its end. */
  prompt: { shown: ShownPrompt.ShownPrompt; readonly done: (outcome: ReaderState.Settled) => void } | undefined
  /** Told when no request is left unanswered. */
  private onAnswered: (() => void) | undefined
  private modesSet = false
  private redrawTimer: Timer | undefined
  private lastRedraw = 0
  private idleTimer: Timer | undefined
  private drainFd: number | undefined
  private drainable = false
  private readonly drainBuffer = Buffer.alloc(64 * 1024)
  private releaseSignals: (() => void) | undefined
  private readonly ttyInput: tty.ReadStream | undefined
  private readonly ttyOutput: tty.WriteStream | undefined

  constructor(readonly options: KeyReaderOptions) {
    this.ttyInput = options.input instanceof tty.ReadStream ? options.input : undefined
    this.ttyOutput = options.output instanceof tty.WriteStream ? options.output : undefined
  }

  columns(): number {
    return this.ttyOutput !== undefined && this.ttyOutput.columns > 0 ? this.ttyOutput.columns : 80
  }

  screen(): ShownPrompt.Screen {
    const rows = this.ttyOutput !== undefined && this.ttyOutput.rows > 0 ? this.ttyOutput.rows : 24
    return { columns: this.columns(), rows, animated: this.options.animated }
  }

  /** Reads input for the whole life of the reader; the terminal's modes set, and restored whatever the end. */
  start(): void {
    const { input } = this.options
    this.assertModes()
    input.on("data", this.onData)
    input.on("end", this.onEnd)
    input.on("error", this.onEnd)
    input.resume()
    // Whether the terminal answers at all is known before the first question.
    if (this.options.animated) {
      this.state = ReaderState.started(this.state)
      this.options.raw(Sighting.REQUEST)
    }
    process.on("exit", this.restoreModes)
    process.on("SIGCONT", this.onContinue)
    this.releaseSignals = FatalSignals.restoreBeforeDeath(this.restoreModes)
    this.drainFd = openDrain(input)
    this.drainable = this.drainFd !== undefined
  }

  release(): void {
    const { input } = this.options
    this.releaseSignals?.()
    input.off("data", this.onData)
    input.off("end", this.onEnd)
    input.off("error", this.onEnd)
    process.off("exit", this.restoreModes)
    process.off("SIGCONT", this.onContinue)
    this.restoreModes()
    input.pause()
    if (this.redrawTimer !== undefined) clearTimeout(this.redrawTimer)
    if (this.idleTimer !== undefined) clearTimeout(this.idleTimer)
    if (this.drainFd !== undefined) Fs.closeSync(this.drainFd)
  }

  /**
   * Before the terminal is given back, the answers still due are read (for at
   * most `EXIT_WAIT_MS`), so none arrives as typing at the shell after Mino.
   */
  readonly awaitAnswers = Effect.async<void>((resume) => {
    if (!ReaderState.answersDue(this.state)) return resume(Effect.void)
    const timer = setTimeout(() => resume(Effect.void), EXIT_WAIT_MS)
    this.onAnswered = () => {
      clearTimeout(timer)
      resume(Effect.void)
    }
  })

  private act(act: ReaderState.Act): void {
    switch (act._tag) {
      case "Stop":
        return this.stop(act.key)
      case "Answered":
        return this.onAnswered?.()
      case "Seen":
        return this.sighting?.seen(act.how)
      case "Redraw":
        return this.redrawSoon()
      case "Settled":
        return this.prompt?.done(act.outcome)
    }
  }

  /** A stop key: the terminal is given back and input left alone before the stop is requested, so nothing waits on it. */
  private stop(key: KeyDecoder.StopKey): void {
    this.restoreModes()
    this.options.input.pause()
    this.options.onStopKey(key)
  }

  private dispatch(inputs: ReadonlyArray<KeyDecoder.Input>): void {
    for (const item of inputs) {
      if (this.state.stopped) return
      const step = ReaderState.input(this.state, item, this.columns())
      this.state = step.reader
      for (const act of step.acts) this.act(act)
    }
  }

  private readonly onData = (chunk: Buffer | string): void => {
    const read = ReaderState.read(this.state, typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk)
    if (read._tag === "Ignored") return
    this.state = read.reader
    if (read._tag === "Stop") return this.stop(read.key)
    this.dispatch(read.inputs)
    if (ReaderState.waiting(this.state)) this.awaitIdle()
  }

  // End of input (a closed pipe in tests; a hung-up terminal): the prompt shown, or the next one, ends.
  private readonly onEnd = (): void => {
    const step = ReaderState.inputEnded(this.state)
    this.state = step.reader
    for (const act of step.acts) this.act(act)
  }

  /**
   * After a paste's end marker, what follows is pasted until the terminal has
   * held nothing for `QUIET_MS` (and a lone ESC waits as long for the rest of
   * its sequence). When the timer fires, the terminal is drained first: bytes
   * that arrived while Mino was busy or stopped are read then, as what they
   * are (pasted text; the rest of the sequence), and the wait starts again.
   * Only an empty queue ends it, so the end never depends on when Mino ran.
   */
  private awaitIdle(): void {
    if (this.idleTimer !== undefined) clearTimeout(this.idleTimer)
    this.idleTimer = setTimeout(this.checkIdle, KeyDecoder.QUIET_MS)
  }

  private readonly checkIdle = (): void => {
    this.idleTimer = undefined
    if (this.drain().read > 0 || this.state.stopped) return
    const settled = ReaderState.quiet(this.state)
    this.state = settled.reader
    this.dispatch(settled.inputs)
  }

  /**
   * Raw mode and bracketed paste. Turning raw mode off first makes libuv restore
   * the modes Mino started with, so turning it on again repairs whatever a
   * command did to the terminal meanwhile (libuv skips a switch to the mode it
   * believes is already set).
   */
  assertModes(): void {
    if (this.state.stopped) return
    if (this.ttyInput !== undefined) {
      this.ttyInput.setRawMode(false)
      this.ttyInput.setRawMode(true)
    }
    if (this.options.animated) this.options.raw(PASTE_ON)
    this.modesSet = true
  }

  /**
   * Continued after a stop: a shell that took the terminal back while Mino was
   * stopped hands it back on `fg` in modes of its choosing (bash: cooked, with
   * echo; bash's readline and zsh's line editor turn bracketed paste off as they
   * accept `fg`). Set while Mino holds the terminal, the modes are set again at
   * once, or a paste would be typed (and could answer an approval) and Enter
   * would be a line feed.
   */
  private readonly onContinue = (): void => {
    if (this.modesSet) this.assertModes()
    // An approval question up is asked anew under its screen, shown again: what the person
    // sees when they answer is the command, not what a shell wrote over it meanwhile.
    this.question?.continued()
  }

  private readonly restoreModes = (): void => {
    if (!this.modesSet) return
    this.modesSet = false
    if (this.options.animated) this.options.raw(PASTE_OFF)
    if (this.ttyInput !== undefined) this.ttyInput.setRawMode(false)
  }

  /**
   * Hands over, now, everything read and not yet handed over, then everything
   * the terminal still holds: how many bytes that was, and whether the
   * terminal was left empty (not when input is still pouring in).
   */
  drain(): { readonly read: number; readonly complete: boolean } {
    const { input } = this.options
    let read = 0
    // Node's own buffer: `read` passes what it holds to the 'data' listener.
    while (input.readableLength > 0) {
      const chunk: unknown = input.read()
      if (chunk === null) break
      read += typeof chunk === "string" || Buffer.isBuffer(chunk) ? chunk.length : 1
    }
    if (!this.drainable || this.drainFd === undefined) return { read, complete: true }
    while (read < DRAIN_LIMIT) {
      let count: number
      try {
        count = Fs.readSync(this.drainFd, this.drainBuffer, 0, this.drainBuffer.length, null)
      } catch (error) {
        if (errorCode(error) !== "EAGAIN") this.drainable = false
        return { read, complete: true }
      }
      if (count === 0) return { read, complete: true }
      read += count
      this.onData(Buffer.from(this.drainBuffer.subarray(0, count)))
    }
    return { read, complete: false }
  }

  private draw(editor: LineEditor.Editor): void {
    if (this.prompt === undefined) return
    const next = ShownPrompt.draw(this.prompt.shown, editor, this.screen())
    this.prompt.shown = next.shown
    if (next.clear) this.options.raw(ShownPrompt.CLEAR_SCREEN)
    this.lastRedraw = performance.now()
    this.options.raw(next.text)
  }

  private readonly redrawNow = (): void => {
    this.redrawTimer = undefined
    if (this.state.gate._tag === "Reading") this.draw(this.state.gate.editor)
  }

  // A paste arrives in many chunks: draw at most every REDRAW_MS, not per chunk.
  private redrawSoon(): void {
    if (this.redrawTimer !== undefined) return
    this.redrawTimer = setTimeout(this.redrawNow, Math.max(0, REDRAW_MS - (performance.now() - this.lastRedraw)))
  }

  /** The answered line, drawn whole with the cursor at its end, then the next row. */
  finish(editor: LineEditor.Editor): void {
    if (this.redrawTimer !== undefined) clearTimeout(this.redrawTimer)
    this.redrawTimer = undefined
    this.draw(LineEditor.of(LineEditor.text(editor)))
    this.options.raw("\n")
    this.prompt = undefined
  }

  readLine(prompt: string, history: Texts, completions: ReadonlyArray<string>): Effect.Effect<Option.Option<string>> {
    return Effect.async((resume) => {
      // After a stop key nothing is read: the stop ends the wait.
      if (this.state.stopped) return
      this.assertModes()
      const settle = (outcome: ReaderState.Settled) => {
        this.finish(outcome.editor)
        resume(Effect.succeed(outcome._tag === "Submitted" ? Option.some(outcome.text) : Option.none()))
      }
      this.prompt = { shown: ShownPrompt.of(prompt), done: settle }
      // What was typed while no prompt was shown counts as typed here.
      const opened = ReaderState.open(this.state, history, completions)
      this.state = opened.reader
      const { outcome } = opened
      if (outcome._tag === "Edited") this.draw(outcome.editor)
      else if (outcome._tag === "Submitted" || outcome._tag === "Ended") settle(outcome)
      return Effect.sync(() => {
        this.prompt = undefined
        this.state = ReaderState.lineClosed(this.state)
      })
    })
  }

  ask(prompt: string): Effect.Effect<Option.Option<Answer>> {
    return Effect.async((resume) => {
      const question = new Question(this, prompt, (answer) => {
        if (this.question === question) this.question = undefined
        resume(answer)
      })
      if (!question.start()) return undefined
      this.question = question
      return Effect.sync(() => {
        if (this.question === question) this.question = undefined
        question.cancel()
      })
    })
  }
}

/**
 * One approval question, from its screen written to its answer: the requests
 * that learn when the screen was seen, the guard's timer, the guard's end.
 */
class Question {
  private timer: Timer | undefined
  private repeat: Timer | undefined
  private began = 0
  /** The prompt's answer, until it is taken (`settle`): `submitted` when a line answered it. */
  private answer: { readonly timer: Timer; readonly submitted: { readonly pasted: boolean } | undefined } | undefined

  constructor(
    private readonly keys: Keys,
    private readonly prompt: string,
    private readonly resume: (answer: Effect.Effect<Option.Option<Answer>>) => void
  ) {}

  /** The screen is written: from here on, and until the guard ends, input only counts as ignored. Whether the question waits (it can be cancelled then). */
  start(): boolean {
    const { keys } = this
    const asked = ReaderState.ask(keys.state, keys.options.animated)
    if (asked._tag === "Never") return false
    if (asked._tag === "Ended") {
      this.resume(Effect.succeed(Option.none()))
      return false
    }
    keys.assertModes()
    keys.state = ReaderState.guarded(keys.state)
    if (!asked.sight) return this.sightless()
    // Reports read before the request is written answer nothing of this question.
    keys.drain()
    if (keys.state.stopped) return false
    this.began = performance.now()
    keys.state = ReaderState.sightingBegun(keys.state)
    keys.sighting = this
    this.request()
    return true
  }

  private request(): void {
    const { keys } = this
    const column = Sighting.column(keys.state.sighting, keys.columns(), () => randomInt(0, 1 << 30) / (1 << 30))
    keys.state = ReaderState.requested(keys.state, column)
    keys.options.raw(Sighting.request(column))
    this.repeat = setTimeout(this.onRepeat, Sighting.REPEAT_MS)
  }

  private readonly onRepeat = (): void => {
    this.repeat = undefined
    // What the terminal has sent is read before anything is asked again: woken after a stop, this
    // timer runs before the read of an answer already waiting, which would otherwise find a request
    // made again (and a second answer following the first) for one the terminal had answered.
    this.keys.drain()
    if (this.keys.sighting !== this || this.keys.state.stopped) return
    if (Sighting.onRepeat(this.keys.state.sighting, performance.now() - this.began) === "give up") this.sightless()
    else this.request()
  }

  /** No sighting (the output takes no requests, or the terminal never answered): the guard alone. */
  private sightless(): true {
    this.keys.state = ReaderState.seen(this.keys.state, "seen")
    this.seen("seen")
    return true
  }

  /** The screen was seen (`ReaderState` has moved on): the guard's time starts; or a forged report denies the question. */
  seen(how: "seen" | "forged"): void {
    if (this.repeat !== undefined) clearTimeout(this.repeat)
    this.repeat = undefined
    this.keys.sighting = undefined
    if (how === "seen") this.timer = setTimeout(this.endGuard, this.keys.options.guardMs)
    // Nothing typed can answer this question: it is denied, and input waits for the next prompt.
    else this.resume(Effect.succeed(Option.some({ text: "", pasted: false, forgedReport: true })))
  }

  /**
   * The guard's end, in one synchronous run: drain, write the notice and the
   * prompt, drain again, and only then take input. Keys that came between the
   * first drain and the write (Mino held in between) were typed before the
   * prompt was on the screen: they are ignored too, and the prompt is drawn
   * again under its notice. Input still pouring in keeps the guard up.
   */
  private readonly endGuard = (): void => {
    this.timer = undefined
    const { keys } = this
    if (keys.state.stopped) return
    const first = keys.drain()
    const shown = ReaderState.guardDrained(keys.state, first.complete, this.prompt)
    if (shown._tag === "Again") return this.guardAgain()
    keys.options.raw(shown.text)
    const late = keys.drain()
    const drained = ReaderState.promptDrained(keys.state, shown.before, late.complete, this.prompt, keys.options.animated)
    if (drained._tag === "Stopped") return
    if (drained._tag === "Again") {
      keys.options.raw(drained.text)
      return this.guardAgain()
    }
    if (drained.text !== undefined) keys.options.raw(drained.text)
    // From here on input answers.
    const release = ReaderState.released(keys.state)
    keys.state = release.reader
    keys.prompt = { shown: ShownPrompt.written(ShownPrompt.of(this.prompt), keys.screen()), done: this.settle }
    if (release.settled !== undefined) this.settle(release.settled)
  }

  private guardAgain(): void {
    this.timer = setTimeout(this.endGuard, this.keys.options.guardMs)
  }

  /**
   * The prompt is answered: the answer is taken `SETTLE_MS` later. Keys typed
   * while Mino was stopped are read, on waking, with the SIGCONT or before it
   * (libuv runs signal watchers after every other ready descriptor, and the
   * signal may be caught on another of Node's threads, reaching the loop a
   * moment later): a line they submitted is not yet taken when the continue
   * comes, and `continued` drops it, so it counts as ignored.
   */
  private readonly settle = (outcome: ReaderState.Settled): void => {
    this.keys.finish(outcome.editor)
    const answer = outcome._tag === "Submitted" ? Option.some({ text: outcome.text, pasted: outcome.pasted }) : Option.none()
    const timer = setTimeout(() => {
      this.answer = undefined
      this.resume(Effect.succeed(answer))
    }, SETTLE_MS)
    this.answer = { timer, submitted: outcome._tag === "Submitted" ? { pasted: outcome.pasted } : undefined }
  }

  /** Continued after a stop: it ends unanswered (an answer not yet taken is dropped), and is asked again. */
  continued(): void {
    if (this.keys.state.stopped) return
    const answered = this.answer?.submitted
    // Input that ended (Ctrl+D, a closed terminal) while stopped still ends the question.
    if (this.answer !== undefined && answered === undefined) return
    if (this.answer !== undefined) clearTimeout(this.answer.timer)
    this.answer = undefined
    const reading = this.keys.prompt !== undefined
    this.clearTimers()
    this.keys.sighting = undefined
    this.keys.prompt = undefined
    this.keys.state = ReaderState.questionContinued(this.keys.state, answered)
    // The screen starts on a line of its own (without a prompt, the cursor is already at a line's start).
    if (reading) this.keys.options.raw("\n")
    this.resume(Effect.succeed(Option.some({ text: "", pasted: false, continued: true })))
  }

  private clearTimers(): void {
    if (this.timer !== undefined) clearTimeout(this.timer)
    if (this.repeat !== undefined) clearTimeout(this.repeat)
    if (this.answer !== undefined) clearTimeout(this.answer.timer)
    this.answer = undefined
  }

  /** Interrupted unanswered: its timers go, it waits for no sighting, and input waits again. */
  cancel(): void {
    this.clearTimers()
    this.keys.sighting = undefined
    this.keys.prompt = undefined
    this.keys.state = ReaderState.questionClosed(this.keys.state)
  }
}

export const make = (options: KeyReaderOptions) =>
  Effect.gen(function*() {
    const keys = new Keys(options)
    yield* Effect.acquireRelease(
      Effect.sync(() => keys.start()),
      () => Effect.zipRight(keys.awaitAnswers, Effect.sync(() => keys.release()))
    )
    return {
      readLine: (prompt, history, completions = []) => keys.readLine(prompt, history, completions),
      ask: (prompt) => keys.ask(prompt)
    } satisfies KeyReader
  })
