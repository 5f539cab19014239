/**
 * Red-team attacks on the approval prompt's promise: only `y` or `yes` typed at
 * the prompt approves; Enter alone, anything else, and an answer holding pasted
 * text deny; nothing typed before the prompt line was on the screen can answer.
 * The built `mino` in a real pseudo-terminal, asked by a scripted model to run
 * `touch approved-marker`; each attack ends with the marker absent and the call
 * saved `denied`.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type * as Pty from "../support/Pty.js"
import { answerPrompt, askedToMakeAFile, exitsWith, recordSummary, type Sandbox, sandbox, sessionRecords } from "../support/MinoProcess.js"

const PROMPT = "Approve this operation? [y/N] "
const PASTE_START = "\u001b[200~"
const PASTE_END = "\u001b[201~"
const REQUEST = "\u001b[6n"

/** Mino at its first prompt, asked to make a file; returns once the approval screen is being shown (its prompt not yet). */
const askedToApprove = (box: Sandbox, extra: Readonly<Record<string, string>> = {}) =>
  Effect.gen(function*() {
    const mino = yield* askedToMakeAFile(box, extra)
    yield* mino.waitFor("[Tool: bash]", 30_000)
    // TERM=dumb: no request is written (the guard runs from the screen's write).
    if (extra["TERM"] === "dumb") return mino
    // The screen's cursor position request relayed, so its answer is in the terminal's input before
    // anything the test types (a terminal answers as it draws; its answer never cuts a paste).
    for (;;) {
      const raw = yield* mino.rawOutput
      if (raw.indexOf(REQUEST, raw.indexOf("[Tool: bash]")) !== -1) break
      yield* Effect.sleep("10 millis")
    }
    return mino
  })

/**
 * Holds Mino (SIGSTOP), checks that the prompt is not up yet, queues `text` in
 * the terminal, and lets Mino go: `text` certainly reached the terminal before
 * the prompt. Returns false when the prompt was already up (the run proves nothing then).
 */
const queueBeforePrompt = (mino: Pty.Pty, text: string) =>
  Effect.gen(function*() {
    yield* mino.stop
    yield* mino.flushOutput
    const screen = yield* mino.screen
    const before = !screen.includes(PROMPT)
    if (before) yield* mino.typeAcked(text)
    yield* mino.kill("SIGCONT")
    return before
  })

/** The call ended denied, nothing ran, and Mino ends at Ctrl+D. */
const deniedAndNothingRan = (box: Sandbox, mino: Pty.Pty) =>
  Effect.gen(function*() {
    yield* mino.waitFor("Assistant> Done.", 30_000)
    yield* mino.write("\x04")
    yield* exitsWith(mino, { code: 0, signal: null }, 30_000)
    return {
      ran: fs.existsSync(path.join(box.cwd, "approved-marker")),
      records: recordSummary(sessionRecords(box))
    }
  })

/**
 * A paste was sent at the prompt: a moment later, unless its CR already answered (the command ran),
 * someone who did not mean to approve presses Enter; then the outcome.
 */
const answeredByPaste = (box: Sandbox, mino: Pty.Pty) =>
  Effect.gen(function*() {
    yield* Effect.sleep("500 millis")
    yield* mino.flushOutput
    if (!(yield* mino.screen).includes("[Tool result: completed")) yield* mino.write("\r")
    return yield* deniedAndNothingRan(box, mino)
  })

const DENIED = { ran: false, records: ["user_input", "model_response", "tool_result:denied", "model_response", "turn_end:completed"] }

/**
 * How many cursor position requests Mino wrote since the approval screen, beyond one for each time the
 * screen was shown again (continued after a stop with its question up, Mino shows it again and asks
 * anew, with a request of its own): one, unless a request went unanswered for a second.
 */
const requestsSinceScreen = (mino: Pty.Pty) =>
  Effect.map(mino.rawOutput, (raw) => {
    const count = (needle: string) => {
      let found = 0
      for (let at = raw.indexOf(needle, raw.indexOf("[Tool: bash]")); at !== -1; at = raw.indexOf(needle, at + 1)) found++
      return found
    }
    return count(REQUEST) - (count("[Tool: bash]") - 1)
  })

interface Run {
  readonly requests: number
  readonly outcome: { readonly ran: boolean; readonly records: ReadonlyArray<string> }
}

/**
 * Runs `attack` (in a sandbox of its own) until it is conclusive, at most three times. A run is
 * not when Mino, held before it read the terminal's answer, asked again: the second answer then
 * reaches it between the two halves of the cut marker, which no terminal does (it writes a paste
 * whole, and answers before or after it).
 */
const conclusively = (attack: (box: Sandbox) => Effect.Effect<Run, Pty.PtyTimeout, Scope.Scope>) =>
  Effect.gen(function*() {
    let run: Run | undefined
    let attempts = 0
    for (; attempts < 3 && run?.requests !== 1; attempts++) {
      run = yield* Effect.scoped(Effect.flatMap(sandbox, attack))
    }
    console.log(`cut marker attack: ${attempts} run(s), the last conclusive: ${run?.requests === 1}`)
    return run
  })

/** The rest of the paste: Ctrl+U erases whatever the cut marker left typed, then `y` and CR; then what came of it. */
const restOfPaste = (box: Sandbox, mino: Pty.Pty, cut: string) =>
  Effect.gen(function*() {
    yield* mino.waitFor(PROMPT, 30_000)
    yield* mino.flushOutput
    yield* mino.typeAcked(`${PASTE_START.slice(cut.length)}\u0015y\r${PASTE_END}`)
    const requests = yield* requestsSinceScreen(mino)
    return { requests, outcome: yield* answeredByPaste(box, mino) }
  })

describe("attack: a paste's start marker cut across the guard's end", () => {
  // The terminal sent a paste (start marker, `Ctrl+U y CR`, end marker) and the link cut it after
  // `ESC[2`: the first piece reached Mino before the prompt, the rest after. Cut once, a start
  // marker is still a paste (docs/usage.md, "Pastes"): its CR is a newline and the line pasted.
  for (const cut of ["\u001b", "\u001b[", "\u001b[2", "\u001b[20", "\u001b[200"]) {
    it.live(`a start marker cut after ${JSON.stringify(cut)} as the guard ends: its rest is still pasted, the paste's CR never approves`, () =>
      Effect.gen(function*() {
        const run = yield* conclusively((box) =>
          Effect.gen(function*() {
            const mino = yield* askedToApprove(box)
            expect(yield* queueBeforePrompt(mino, cut)).toBe(true)
            return yield* restOfPaste(box, mino, cut)
          })
        )
        expect(run).toEqual({ requests: 1, outcome: DENIED })
      }), 120_000)
  }

  // A lone ESC is the Escape key once the terminal has been quiet for 100 ms, and the rest of the
  // marker, read next, still starts a paste. Mino held (SIGSTOP) from before the ESC to past the
  // guard's end: the ESC and the guard's end are handled in one waking, with no quiet spell between.
  it.live("a lone ESC queued while Mino is stopped through the guard's end: the rest of the marker still starts a paste", () =>
    Effect.gen(function*() {
      const run = yield* conclusively((box) =>
        Effect.gen(function*() {
          const mino = yield* askedToApprove(box)
          yield* mino.stop
          yield* mino.flushOutput
          expect((yield* mino.screen).includes(PROMPT)).toBe(false)
          yield* mino.typeAcked("\u001b")
          // Past the guard (500 ms after the screen was seen) while stopped.
          yield* Effect.sleep("1500 millis")
          yield* mino.kill("SIGCONT")
          return yield* restOfPaste(box, mino, "\u001b")
        })
      )
      expect(run).toEqual({ requests: 1, outcome: DENIED })
    }), 120_000)
})

describe("attack: stray input queued while the screen is up and the prompt is not", () => {
  // Each queued while Mino is held (SIGSTOP) with the screen shown and the prompt not yet, then the
  // person presses Enter at the prompt: Enter alone denies. TERM=dumb has no sighting and no
  // bracketed paste: the guard runs from the screen's write, and the drain alone discards these.
  const STRAY: ReadonlyArray<readonly [string, string]> = [
    ["y Enter", "y\r"],
    ["yes Enter twice", "yes\ryes\r"],
    ["Ctrl+D, then y Enter", "\u0004y\r"],
    ["a pasted y Enter", `${PASTE_START}y\r${PASTE_END}`],
    ["an end marker, then y Enter", `${PASTE_END}y\r`],
    ["a forged cursor report, then y Enter", "\u001b[1;2Ry\r"]
  ]
  for (const term of ["xterm", "dumb"]) {
    for (const [name, text] of STRAY) {
      it.live(`TERM=${term}: ${name} queued before the prompt never approves`, () =>
        Effect.scoped(Effect.gen(function*() {
          const box = yield* sandbox
          const mino = yield* askedToApprove(box, { TERM: term })
          expect(yield* queueBeforePrompt(mino, text)).toBe(true)
          // A forged report denies the question outright; else the prompt comes and Enter alone denies.
          const shown = yield* mino.waitFor(new RegExp(`${PROMPT.replace(/[?[\]]/g, "\\$&")}|Denied: the terminal's input`), 30_000)
          if (shown.endsWith(PROMPT)) {
            yield* mino.flushOutput
            yield* Effect.sleep("300 millis")
            yield* answerPrompt(mino, "")
          }
          expect(yield* deniedAndNothingRan(box, mino)).toEqual(DENIED)
        })), 60_000)
    }
  }
})
