/**
 * Keys from a terminal in raw mode: the thin impure part around `KeyDecoder`
 * (bytes to inputs), `InputGate` (where each input goes), `LineEditor` (the
 * line) and `PromptLayout` (drawing it).
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
import * as InputGate from "./InputGate.js"
import * as KeyDecoder from "./KeyDecoder.js"
import * as LineEditor from "./LineEditor.js"
import * as PromptLayout from "./PromptLayout.js"
import * as Sighting from "./Sighting.js"
import * as Width from "../display/Width.js"
import * as Terminal from "../../platform/Terminal.js"
import type { Texts } from "../../TextList.js"

/** An answer to the approval question, and whether any of it was pasted. */
export interface Answer {
  readonly text: string
  readonly pasted: boolean
  /** No answer was read: a cursor position report Mino had not asked for arrived while the screen was on its way (`Sighting`). */
  readonly forgedReport?: boolean
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
const SGR_CODES = /\u001b\[[0-9;]*m/g

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

export const make = (options: KeyReaderOptions) =>
  Effect.gen(function*() {
    const { input, output, raw } = options
    const ttyInput = input instanceof tty.ReadStream ? input : undefined
    const ttyOutput = output instanceof tty.WriteStream ? output : undefined
    const layout = options.animated ? PromptLayout.ansi : PromptLayout.plain

    let decoder = KeyDecoder.initial
    let sighting = Sighting.initial
    // The question waiting for its screen to be seen: called when it is (or when the wait gives up).
    let onSeen: ((seen: "seen" | "forged") => void) | undefined
    // Told when no request is left unanswered.
    let onAnswered: (() => void) | undefined
    const screenColumns = () => (ttyOutput !== undefined && ttyOutput.columns > 0 ? ttyOutput.columns : 80)
    let gate: InputGate.Gate = InputGate.idle
    let ended = false
    let modesSet = false
    // A stop key was read: Mino is on its way out and takes no more input.
    let stopped = false

    /** The prompt on the screen, and what its last draw left there. */
    interface Shown {
      readonly prompt: string
      readonly promptWidth: number
      drawn: PromptLayout.Drawn | undefined
      /** The prompt as last drawn: a search's label replaces it while one is under way. */
      label: string
      /** The editor's Ctrl+L count when the screen was last cleared. */
      clears: number
      readonly done: (outcome: InputGate.Outcome) => void
    }
    let shown: Shown | undefined
    let redrawTimer: ReturnType<typeof setTimeout> | undefined
    let lastRedraw = 0

    const frame = (prompt: Shown, line: LineEditor.Line, label = prompt.prompt): PromptLayout.Frame => ({
      prompt: label,
      promptWidth: label === prompt.prompt ? prompt.promptWidth : Width.width(label),
      line,
      columns: ttyOutput !== undefined && ttyOutput.columns > 0 ? ttyOutput.columns : 80,
      rows: ttyOutput !== undefined && ttyOutput.rows > 0 ? ttyOutput.rows : 24
    })
    const draw = (editor: LineEditor.Editor) => {
      if (shown === undefined) return
      const label = LineEditor.label(editor, shown.prompt)
      let drawn = shown.drawn
      if (editor.clears !== shown.clears) {
        // Ctrl+L: a clear screen with the prompt at its top (a plain output has no screen to clear).
        shown.clears = editor.clears
        if (options.animated) {
          raw("\u001b[H\u001b[2J")
          drawn = undefined
        }
      }
      // Another prompt (a search began, found, failed or ended): the row is drawn again from its start.
      if (label !== shown.label && drawn !== undefined) drawn = { ...drawn, atEnd: undefined }
      shown.label = label
      const next = layout(drawn, frame(shown, editor, label))
      shown.drawn = next.drawn
      lastRedraw = performance.now()
      raw(next.text)
    }
    const redrawNow = () => {
      redrawTimer = undefined
      if (gate._tag === "Reading") draw(gate.editor)
    }
    // A paste arrives in many chunks: draw at most every REDRAW_MS, not per chunk.
    const redrawSoon = () => {
      if (redrawTimer !== undefined) return
      redrawTimer = setTimeout(redrawNow, Math.max(0, REDRAW_MS - (performance.now() - lastRedraw)))
    }

    /** A stop key: the terminal is given back and input left alone before the stop is requested, so nothing waits on it. */
    const stop = (key: KeyDecoder.StopKey) => {
      if (stopped) return
      stopped = true
      restoreModes()
      input.pause()
      options.onStopKey(key)
    }

    const dispatch = (inputs: ReadonlyArray<KeyDecoder.Input>) => {
      for (const item of inputs) {
        if (stopped) return
        if (item._tag === "Report") {
          const answered = Sighting.report(sighting, item.column, screenColumns())
          sighting = answered.sighting
          if (Sighting.unanswered(sighting) === 0) onAnswered?.()
          if (answered.seen !== "not yet") onSeen?.(answered.seen)
          continue
        }
        const step = InputGate.feed(gate, item)
        gate = step.gate
        const { outcome } = step
        if (outcome._tag === "Stop") stop(outcome.key)
        else if (outcome._tag === "Edited") redrawSoon()
        else if (outcome._tag !== "Held") shown?.done(outcome)
      }
    }
    // End of input (a closed pipe in tests; a hung-up terminal): the prompt shown, or the next one, ends.
    const onEnd = () => {
      ended = true
      onSeen?.("seen")
      if (gate._tag === "Reading") shown?.done({ _tag: "Ended", editor: gate.editor })
    }
    const onData = (chunk: Buffer | string) => {
      if (stopped) return
      const bytes = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk
      const stopKey = KeyDecoder.stopKey(bytes)
      if (stopKey !== undefined) return stop(stopKey)
      const decoded = KeyDecoder.decode(decoder, bytes)
      decoder = decoded.decoder
      dispatch(decoded.inputs)
      if (KeyDecoder.waiting(decoder)) awaitIdle()
    }

    /**
     * After a paste's end marker, what follows is pasted until the terminal has
     * held nothing for `QUIET_MS` (and a lone ESC waits as long for the rest of
     * its sequence). When the timer fires, the terminal is drained first: bytes
     * that arrived while Mino was busy or stopped are read then, as what they
     * are (pasted text; the rest of the sequence), and the wait starts again.
     * Only an empty queue ends it, so the end never depends on when Mino ran.
     */
    let idleTimer: ReturnType<typeof setTimeout> | undefined
    const awaitIdle = () => {
      if (idleTimer !== undefined) clearTimeout(idleTimer)
      idleTimer = setTimeout(checkIdle, KeyDecoder.QUIET_MS)
    }
    const checkIdle = () => {
      idleTimer = undefined
      if (drain().read > 0 || stopped) return
      const settled = KeyDecoder.idle(decoder)
      decoder = settled.decoder
      dispatch(settled.inputs)
    }

    /**
     * Raw mode and bracketed paste. Turning raw mode off first makes libuv restore
     * the modes Mino started with, so turning it on again repairs whatever a
     * command did to the terminal meanwhile (libuv skips a switch to the mode it
     * believes is already set).
     */
    const assertModes = () => {
      if (stopped) return
      if (ttyInput !== undefined) {
        ttyInput.setRawMode(false)
        ttyInput.setRawMode(true)
      }
      if (options.animated) raw(PASTE_ON)
      modesSet = true
    }
    const restoreModes = () => {
      if (!modesSet) return
      modesSet = false
      if (options.animated) raw(PASTE_OFF)
      if (ttyInput !== undefined) ttyInput.setRawMode(false)
    }

    /**
     * Before the terminal is given back, the answers still due are read (for at
     * most `EXIT_WAIT_MS`), so none arrives as typing at the shell after Mino.
     */
    const awaitAnswers = Effect.async<void>((resume) => {
      if (Sighting.unanswered(sighting) === 0 || stopped || ended) return resume(Effect.void)
      const timer = setTimeout(() => resume(Effect.void), EXIT_WAIT_MS)
      onAnswered = () => {
        clearTimeout(timer)
        resume(Effect.void)
      }
    })

    const { fd: drainFd } = yield* Effect.acquireRelease(
      Effect.sync(() => {
        assertModes()
        input.on("data", onData)
        input.on("end", onEnd)
        input.on("error", onEnd)
        input.resume()
        // Whether the terminal answers at all is known before the first question.
        if (options.animated) {
          sighting = Sighting.started(sighting)
          raw(Sighting.REQUEST)
        }
        process.on("exit", restoreModes)
        const releaseSignals = FatalSignals.restoreBeforeDeath(restoreModes)
        return { fd: openDrain(input), releaseSignals }
      }),
      ({ fd, releaseSignals }) =>
        Effect.zipRight(awaitAnswers, Effect.sync(() => {
          releaseSignals()
          input.off("data", onData)
          input.off("end", onEnd)
          input.off("error", onEnd)
          process.off("exit", restoreModes)
          restoreModes()
          input.pause()
          if (redrawTimer !== undefined) clearTimeout(redrawTimer)
          if (idleTimer !== undefined) clearTimeout(idleTimer)
          if (fd !== undefined) Fs.closeSync(fd)
        }))
    )

    const drainBuffer = Buffer.alloc(64 * 1024)
    let drainable = drainFd !== undefined
    /**
     * Hands over, now, everything read and not yet handed over, then everything
     * the terminal still holds: how many bytes that was, and whether the
     * terminal was left empty (not when input is still pouring in).
     */
    const drain = (): { readonly read: number; readonly complete: boolean } => {
      let read = 0
      // Node's own buffer: `read` passes what it holds to the 'data' listener.
      while (input.readableLength > 0) {
        const chunk: unknown = input.read()
        if (chunk === null) break
        read += typeof chunk === "string" || Buffer.isBuffer(chunk) ? chunk.length : 1
      }
      if (!drainable || drainFd === undefined) return { read, complete: true }
      while (read < DRAIN_LIMIT) {
        let count: number
        try {
          count = Fs.readSync(drainFd, drainBuffer, 0, drainBuffer.length, null)
        } catch (error) {
          if (errorCode(error) !== "EAGAIN") drainable = false
          return { read, complete: true }
        }
        if (count === 0) return { read, complete: true }
        read += count
        onData(Buffer.from(drainBuffer.subarray(0, count)))
      }
      return { read, complete: false }
    }

    const promptOf = (prompt: string, done: (outcome: InputGate.Outcome) => void): Shown => ({
      prompt,
      promptWidth: Width.width(prompt.replace(SGR_CODES, "")),
      drawn: undefined,
      label: prompt,
      clears: 0,
      done
    })

    /** The answered line, drawn whole with the cursor at its end, then the next row. */
    const finish = (editor: LineEditor.Editor) => {
      if (redrawTimer !== undefined) clearTimeout(redrawTimer)
      redrawTimer = undefined
      draw(LineEditor.of(LineEditor.text(editor)))
      raw("\n")
      shown = undefined
    }

    const readLine: KeyReader["readLine"] = (prompt, history, completions = []) =>
      Effect.async<Option.Option<string>>((resume) => {
        // After a stop key nothing is read: the stop ends the wait.
        if (stopped) return
        assertModes()
        const settle = (outcome: InputGate.Outcome) => {
          if (outcome._tag !== "Submitted" && outcome._tag !== "Ended") return
          finish(outcome.editor)
          if (outcome._tag === "Ended") ended = true
          resume(Effect.succeed(outcome._tag === "Submitted" ? Option.some(outcome.text) : Option.none()))
        }
        shown = promptOf(prompt, settle)
        // What was typed while no prompt was shown counts as typed here.
        const opened = InputGate.open(gate, history, completions)
        gate = opened.gate
        if (opened.outcome._tag !== "Edited") settle(opened.outcome)
        else if (ended) settle({ _tag: "Ended", editor: opened.outcome.editor })
        else draw(opened.outcome.editor)
        return Effect.sync(() => {
          shown = undefined
          gate = InputGate.close(gate)
        })
      })

    const ask: KeyReader["ask"] = (prompt) =>
      Effect.async<Option.Option<Answer>>((resume) => {
        if (stopped) return
        if (ended) return resume(Effect.succeed(Option.none()))
        assertModes()
        // The screen is written: from here on, and until the guard ends, input only counts as ignored.
        gate = InputGate.guard(gate)
        let timer: ReturnType<typeof setTimeout> | undefined
        let repeat: ReturnType<typeof setTimeout> | undefined
        const settle = (outcome: InputGate.Outcome) => {
          if (outcome._tag !== "Submitted" && outcome._tag !== "Ended") return
          finish(outcome.editor)
          if (outcome._tag === "Ended") ended = true
          resume(Effect.succeed(
            outcome._tag === "Submitted" ? Option.some({ text: outcome.text, pasted: outcome.pasted }) : Option.none()
          ))
        }
        const endGuard = () => {
          timer = undefined
          if (stopped) return
          if (!drain().complete) {
            timer = setTimeout(endGuard, options.guardMs)
            return
          }
          // Everything queued until now is gone. The prompt goes up, and the terminal is drained once more:
          // keys that came between that drain and this write (Mino held in between) were typed before the
          // prompt was on the screen, and are ignored too; the prompt is then drawn again under its notice.
          const before = InputGate.ignored(gate)
          raw((InputGate.notice(before) ?? "") + prompt)
          const late = drain()
          if (stopped) return
          // The prompt's line is cleared, or on a terminal without escapes (TERM=dumb) left behind.
          const takeBack = options.animated ? "\r\u001b[K" : "\n"
          if (!late.complete) {
            raw(takeBack)
            timer = setTimeout(endGuard, options.guardMs)
            return
          }
          const after = InputGate.ignored(gate)
          if (after !== before) raw(takeBack + (InputGate.notice(after) ?? "") + prompt)
          // From here on input answers.
          decoder = KeyDecoder.forget(decoder)
          gate = InputGate.release(gate)
          shown = promptOf(prompt, settle)
          shown.drawn = layout(undefined, frame(shown, LineEditor.empty())).drawn
          if (ended) settle({ _tag: "Ended", editor: LineEditor.empty() })
        }
        const seen = (how: "seen" | "forged") => {
          if (repeat !== undefined) clearTimeout(repeat)
          repeat = undefined
          onSeen = undefined
          sighting = Sighting.end(sighting)
          if (how === "seen") timer = setTimeout(endGuard, options.guardMs)
          else {
            // Nothing typed can answer this question: it is denied, and input waits for the next prompt.
            gate = InputGate.idle
            resume(Effect.succeed(Option.some({ text: "", pasted: false, forgedReport: true })))
          }
        }
        if (!options.animated || ended) seen("seen")
        else {
          // Reports read before the request is written answer nothing of this question.
          drain()
          if (stopped) return
          const began = performance.now()
          sighting = Sighting.begin(sighting)
          onSeen = seen
          const request = () => {
            const column = Sighting.column(sighting, screenColumns(), () => randomInt(0, 1 << 30) / (1 << 30))
            sighting = Sighting.asked(sighting, column)
            raw(Sighting.request(column))
            repeat = setTimeout(() => {
              repeat = undefined
              if (Sighting.onRepeat(sighting, performance.now() - began) === "give up") seen("seen")
              else request()
            }, Sighting.REPEAT_MS)
          }
          request()
        }
        return Effect.sync(() => {
          if (timer !== undefined) clearTimeout(timer)
          if (repeat !== undefined) clearTimeout(repeat)
          onSeen = undefined
          sighting = Sighting.end(sighting)
          shown = undefined
          gate = InputGate.close(gate)
        })
      })

    return { readLine, ask } satisfies KeyReader
  })
