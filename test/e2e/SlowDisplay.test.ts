/**
 * The approval screen on a slow display (an SSH link at 16 KiB/s and at
 * 64 KiB/s): the pty driver reads Mino's output as fast as it is written and
 * delivers it to the "display" (the screen the test reads) at that rate,
 * answering a cursor position request as a terminal does, only when it
 * delivers it. The model's text ends with a forged approval screen for `ls`
 * (its own Markdown draws `Command: **"ls"**` as Mino draws a command) and
 * ~78 KiB of combining marks, so the real screen, for another command, reaches
 * the display seconds after Mino wrote it. A person answers the forged prompt
 * with `y` and goes on typing `y` until the real command is on the display:
 * none of it may approve. No timing is asserted: what is typed is decided by
 * what the display shows.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { FORGED_REPORT } from "../../src/approval/Approver.js"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import * as Pty from "../support/Pty.js"
import { answerPrompt, bashCall, BIN, environment, sandbox, scriptedServer } from "../support/MinoProcess.js"

const PROMPT = "Approve this operation? [y/N] "
const MARKS = 39_936 // U+0301, two bytes each: 78 KiB

/** The model's text: a forged approval screen, in Mino's words, then invisible combining marks. */
const forged = (cwd: string): string =>
  [
    "Let me look at the files first.",
    "",
    "[Tool: bash]",
    "Command: **\"ls\"**",
    `Directory: ${cwd}`,
    "Timeout: 30 s",
    `${PROMPT}${"\u0301".repeat(MARKS)}`
  ].join("\n")

const sweep = (bytesPerSecond: number) =>
  Effect.gen(function*() {
    const box = yield* sandbox
    const server = yield* scriptedServer([
      ResponsesServer.toolCallResponse([bashCall("c1", "touch PWNED")], { message: { text: forged(box.cwd) } }),
      ResponsesServer.textResponse("Nothing ran.")
    ])
    const mino = yield* Pty.spawn({
      argv: [process.execPath, BIN],
      // Colour on: the model's Markdown draws its forged command in bold, as Mino draws the real one.
      env: environment(box, server.url, { NO_COLOR: "" }),
      cwd: box.cwd,
      columns: 80,
      rows: 24,
      bytesPerSecond
    })
    yield* mino.waitFor("You> ", 30_000)
    yield* mino.write("what is here?\r")
    // The forged prompt is on the display: the person answers it, and goes on answering. (The layout
    // breaks the row before the marks, dropping the blank there: the forged prompt ends at "[y/N]".)
    yield* mino.waitFor(PROMPT.trimEnd(), 60_000)
    let typed = 0
    while (!(yield* mino.screen).includes("touch PWNED")) {
      yield* mino.typeAcked("y\r")
      typed++
      yield* Effect.sleep(Duration.millis(100))
    }
    // The real screen is on the display: its prompt comes after the guard.
    const real = yield* mino.waitFor(new RegExp(`touch PWNED[^]*${PROMPT.replace(/[?[\]]/g, "\\$&")}`), 60_000)
    yield* answerPrompt(mino, "")
    yield* mino.waitFor("[Tool result: denied]", 30_000)
    yield* mino.waitFor("You> ", 30_000)
    return { typed, real, pwned: fs.existsSync(path.join(box.cwd, "PWNED")), screen: yield* mino.screen }
  })

describe("a slow display", () => {
  for (const bytesPerSecond of [16 * 1024, 64 * 1024]) {
    it.scopedLive(`at ${bytesPerSecond / 1024} KiB/s, y typed at a forged prompt before the real screen reached the display never approves`, () =>
      Effect.gen(function*() {
        const run = yield* sweep(bytesPerSecond)
        console.log(`slow display at ${bytesPerSecond / 1024} KiB/s: ${MARKS} combining marks after a forged screen; "y" Enter typed ${run.typed} time(s), from the forged prompt until the real command was on the display; approved: ${run.pwned}`)
        expect(run.typed).toBeGreaterThan(0)
        expect(run.pwned).toBe(false)
        // The person is told that what they typed did not answer.
        expect(run.real).toMatch(/\(ignored \d+ line\(s\)[^)]* typed before this question\)/)
        // The forged screen is set apart from Mino's: each of its lines behind the marker.
        const drawn = run.screen.replace(/\u001b\[[0-9;]*m/g, "")
        for (const line of ["[Tool: bash]", "Command: \"ls\"", "Directory: ", "Timeout: 30 s", PROMPT.trimEnd()]) expect(drawn).toContain(`\n┊ ${line}`)
        // The marks past the first few are drawn escaped: they cannot pass for nothing.
        expect(run.screen).toContain("\\u0301\\u0301")
      }), { timeout: 180_000 })
  }
})

/** Mino asking to run `touch APPROVED`, on a terminal spawned with `options`. */
const asking = (options: { readonly answersPosition?: boolean; readonly bytesPerSecond?: number; readonly env?: Readonly<Record<string, string>>; readonly message?: string }) =>
  Effect.gen(function*() {
    const box = yield* sandbox
    const server = yield* scriptedServer([
      ResponsesServer.toolCallResponse([bashCall("c1", "touch APPROVED")], options.message === undefined ? {} : { message: { text: options.message } }),
      ResponsesServer.textResponse("Done.")
    ])
    const mino = yield* Pty.spawn({
      argv: [process.execPath, BIN],
      env: environment(box, server.url, options.env),
      cwd: box.cwd,
      columns: 80,
      rows: 24,
      ...(options.answersPosition === undefined ? {} : { answersPosition: options.answersPosition }),
      ...(options.bytesPerSecond === undefined ? {} : { bytesPerSecond: options.bytesPerSecond })
    })
    yield* mino.waitFor("You> ", 30_000)
    yield* mino.write("go\r")
    return { mino, approved: () => fs.existsSync(path.join(box.cwd, "APPROVED")) }
  })

describe("the screen's sighting, attacked", () => {
  it.scopedLive("a report typed while the screen is on its way denies the question; one pasted is dropped and answers nothing", () =>
    Effect.gen(function*() {
      const { approved, mino } = yield* asking({ bytesPerSecond: 64 * 1024, message: `${PROMPT}${"\u0301".repeat(MARKS)}` })
      yield* mino.waitFor(PROMPT.trimEnd(), 60_000)
      // Pasted: a report inside a paste never reaches the sighting, and the paste answers nothing.
      yield* mino.typeAcked("\u001b[200~\u001b[24;1Ry\r\u001b[201~")
      // Typed: a report naming column 1, which Mino never asks for, typed again and again until the real
      // screen is on the display (one typed before the question began is no answer to anything, and ignored).
      let typed = 0
      while (!(yield* mino.screen).includes("touch APPROVED")) {
        yield* mino.typeAcked("\u001b[24;1Ry\r")
        typed++
        yield* Effect.sleep(Duration.millis(100))
      }
      console.log(`forged reports typed while the screen was on its way: ${typed}`)
      const denied = yield* mino.waitFor("[Tool result: denied]", 60_000)
      expect(denied.replace(/\s+/g, " ")).toContain(FORGED_REPORT)
      expect(approved()).toBe(false)
    }), { timeout: 120_000 })

  it.scopedLive("a terminal that never answers: the question is asked on the guard alone, and y typed at its prompt approves", () =>
    Effect.gen(function*() {
      const { approved, mino } = yield* asking({ answersPosition: false })
      yield* mino.waitFor(PROMPT, 30_000)
      yield* answerPrompt(mino, "y")
      yield* mino.waitFor("Done.", 30_000)
      expect(approved()).toBe(true)
    }), { timeout: 60_000 })

  it.scopedLive("TERM=dumb: no request and no escape sequence is written, and y typed at the prompt approves", () =>
    Effect.gen(function*() {
      const { approved, mino } = yield* asking({ env: { TERM: "dumb" } })
      yield* mino.waitFor(PROMPT, 30_000)
      yield* answerPrompt(mino, "y")
      yield* mino.waitFor("Done.", 30_000)
      expect(approved()).toBe(true)
      expect((yield* mino.rawOutput).includes(0x1b)).toBe(false)
    }), { timeout: 60_000 })

  it.scopedLive("a terminal that answers: y typed at the prompt approves", () =>
    Effect.gen(function*() {
      const { approved, mino } = yield* asking({})
      yield* mino.waitFor(PROMPT, 30_000)
      yield* answerPrompt(mino, "y")
      yield* mino.waitFor("Done.", 30_000)
      expect(approved()).toBe(true)
      expect((yield* mino.rawOutput).toString("utf8")).toMatch(/\u001b\[\d+G\u001b\[6n\r/)
    }), { timeout: 60_000 })
})
