/**
 * Red-team attack: Mino stopped and brought back by a shell's job control while
 * an approval question is up. A shell takes the terminal back when its job
 * stops, and hands it back on `fg` in the modes it chooses: bash 5.2 restores
 * its saved cooked modes (canonical input, echo, signals; measured in a pty: a
 * raw-mode job is continued with `icanon echo isig`), and both bash's readline
 * and zsh's line editor turn bracketed paste off (`ESC[?2004l`) as they accept
 * the `fg` line, while zsh gives the job its own saved modes back (raw).
 *
 * The built `mino` in a real pseudo-terminal, SIGSTOPped with the approval
 * question up, the terminal left as such a shell leaves it, then SIGCONTinued:
 * - as zsh leaves it (raw, bracketed paste off): a paste of `yes` and a line
 *   break must not approve (docs/usage.md: a line anything was pasted into never
 *   approves), so Mino must have turned bracketed paste on again;
 * - as bash leaves it (cooked, bracketed paste off): `y` Enter typed at the
 *   prompt must approve, with nothing echoed by the terminal, so Mino must have
 *   set raw mode again.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Pty from "../support/Pty.js"
import { askedToMakeAFile, answerPrompt, exitsWith, recordSummary, type Sandbox, sandbox, sessionRecords } from "../support/MinoProcess.js"
import { PROC } from "../support/Proc.js"
import * as VirtualTerminal from "../support/VirtualTerminal.js"

const PROMPT = "Approve this operation? [y/N] "
const PASTE_ON = "\u001b[?2004h"
const PASTE_OFF = "\u001b[?2004l"

/** Mino with its approval prompt up (guard over). */
const atPrompt = (box: Sandbox, rows?: number) =>
  Effect.gen(function*() {
    const mino = yield* askedToMakeAFile(box, {}, rows)
    yield* mino.waitFor(PROMPT, 30_000)
    return mino
  })

/**
 * Stops Mino, leaves the terminal as a shell's `fg` does (bracketed paste off; cooked modes when
 * `cooked`), continues it, and gives it a moment. Returns where Mino's output stood when the shell
 * turned bracketed paste off: the terminal brackets a paste only if Mino turned it on after that.
 */
const stoppedAndBroughtBack = (mino: Pty.Pty, cooked: boolean) =>
  Effect.gen(function*() {
    yield* mino.stop
    yield* mino.flushOutput
    const offAt = (yield* mino.rawOutput).length
    if (cooked) {
      const tty = fs.openSync(`${PROC}/${mino.pid}/fd/0`, "r+")
      try {
        const set = spawnSync("stty", ["icanon", "echo", "isig", "icrnl"], { stdio: [tty, "ignore", "pipe"] })
        expect(set.status).toBe(0)
      } finally {
        fs.closeSync(tty)
      }
    }
    yield* mino.kill("SIGCONT")
    yield* Effect.sleep("500 millis")
    yield* mino.flushOutput
    return offAt
  })

/** Bracketed paste as the terminal has it now: on only when Mino turned it on after the shell turned it off. */
const bracketed = (mino: Pty.Pty, offAt: number) =>
  Effect.gen(function*() {
    const raw = (yield* mino.rawOutput).subarray(offAt)
    return raw.lastIndexOf(PASTE_ON) > raw.lastIndexOf(PASTE_OFF)
  })

const outcome = (box: Sandbox, mino: Pty.Pty) =>
  Effect.gen(function*() {
    yield* mino.waitFor("Assistant> Done.", 30_000)
    yield* mino.write("\x04")
    yield* exitsWith(mino, { code: 0, signal: null }, 30_000)
    return { ran: fs.existsSync(path.join(box.cwd, "approved-marker")), records: recordSummary(sessionRecords(box)) }
  })

describe("attack: stopped and brought back by job control at the approval prompt", () => {
  it.live("as zsh leaves the terminal (raw, bracketed paste off): a paste of `yes` and a line break does not approve", () =>
    Effect.scoped(Effect.gen(function*() {
      const box = yield* sandbox
      const mino = yield* atPrompt(box)
      const offAt = yield* stoppedAndBroughtBack(mino, false)
      const on = yield* bracketed(mino, offAt)
      // The terminal pastes as it must: with the markers only where bracketed paste is on.
      yield* mino.typeAcked(on ? "\u001b[200~yes\r\u001b[201~" : "yes\r")
      yield* Effect.sleep("500 millis")
      yield* mino.flushOutput
      if (!(yield* mino.screen).includes("[Tool result: completed")) yield* mino.write("\r")
      expect({ bracketedPasteOn: on, ...(yield* outcome(box, mino)) }).toEqual({
        bracketedPasteOn: true,
        ran: false,
        records: ["user_input", "model_response", "tool_result:denied", "model_response", "turn_end:completed"]
      })
    })), 60_000)

  it.live("as bash leaves the terminal (cooked, bracketed paste off): Mino takes raw mode back, and y Enter typed at the prompt approves", () =>
    Effect.scoped(Effect.gen(function*() {
      const box = yield* sandbox
      const mino = yield* atPrompt(box)
      yield* stoppedAndBroughtBack(mino, true)
      // Continued with its question up, Mino shows the screen again and asks anew, behind a new guard.
      yield* mino.waitFor(PROMPT, 30_000)
      const modes = yield* mino.termios
      // Only a person's y Enter; in cooked mode Enter is a line feed (Ctrl+J), and the kernel echoes.
      if (!modes.icanon) yield* answerPrompt(mino, "y")
      else yield* mino.write("\x03")
      const status = yield* mino.exitedWithin(30_000).pipe(Effect.timeout("5 seconds"), Effect.option)
      if (status._tag === "None") {
        const result = yield* outcome(box, mino)
        expect({ modes, ...result }).toEqual({
          modes: { echo: false, icanon: false, isig: false },
          ran: true,
          records: ["user_input", "model_response", "tool_start", "tool_result:completed", "model_response", "turn_end:completed"]
        })
      } else {
        expect({ modes }).toEqual({ modes: { echo: false, icanon: false, isig: false } })
      }
    })), 60_000)

  // While Mino is stopped the person uses the shell: its output scrolls the approval screen away.
  // Brought back, the prompt must not take an answer with no command on the screen above it.
  it.live("the shell's output scrolled the approval screen away while Mino was stopped: once continued, the command is on the screen with the prompt", () =>
    Effect.scoped(Effect.gen(function*() {
      const box = yield* sandbox
      const ROWS = 24
      const mino = yield* atPrompt(box, ROWS)
      yield* mino.stop
      // The shell's lines, written to the terminal as the shell writes them.
      const shell = ["", "[1]+  Stopped                 mino", ...Array.from({ length: 40 }, (_, i) => `$ ls\r\nfile-${i}`), "$ fg", "mino", ""]
      fs.writeFileSync(`${PROC}/${mino.pid}/fd/1`, shell.join("\r\n"))
      yield* mino.kill("SIGCONT")
      yield* Effect.sleep("1500 millis")
      yield* mino.flushOutput
      const visible = VirtualTerminal.render((yield* mino.rawOutput).toString("utf8"), 200).split("\n").slice(-ROWS).join("\n")
      const command = visible.lastIndexOf('Command: "touch approved-marker"')
      const prompt = visible.lastIndexOf(PROMPT.trimEnd())
      expect({ commandShown: command !== -1, promptBelowIt: prompt > command }).toEqual({ commandShown: true, promptBelowIt: true })
      yield* mino.write("\x03")
      yield* mino.exitedWithin(30_000)
    })), 60_000)
})
