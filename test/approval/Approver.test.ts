import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { LONG_COMMAND, reminder } from "../../src/approval/ApprovalScreen.js"
import { Approver, isApproval, judge, PROMPT } from "../../src/approval/Approver.js"
import { Terminal } from "../../src/terminal/Terminal.js"
import type { ToolDisplay } from "../../src/tools/Tool.js"
import * as Screen from "../support/Screen.js"

const display: ToolDisplay = {
  tool: "bash",
  fields: [
    { kind: "command", label: "Command", value: "go version" },
    { kind: "entries", label: "Environment", entries: [{ name: "HOME", value: "/home/u" }, { name: "PATH", value: "/usr/bin" }] }
  ]
}

/** Asks `count` decisions, then reads the next line as a chat question would. */
const decideThenRead = (typed: ReadonlyArray<string>, count: number, options: { interactive?: boolean; ahead?: string } = {}) =>
  Effect.gen(function*() {
    const screen = Screen.make(typed, { interactive: options.interactive ?? true, ...(options.ahead === undefined ? {} : { ahead: options.ahead }) })
    const result = yield* Effect.gen(function*() {
      const approver = yield* Approver
      const terminal = yield* Terminal
      // Let the input stream deliver what was typed ahead, as it has long before a real prompt.
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
      const decisions = yield* Effect.forEach(Array.from({ length: count }), () => approver.decide(display))
      const next = yield* terminal.readLine("You> ")
      return { decisions: decisions.map((d) => d.approved), next: Option.getOrNull(next) }
    }).pipe(Effect.provide(Approver.layer.pipe(Layer.provideMerge(screen.layer))))
    return { ...result, screen: screen.screen() }
  })

describe("Approver", () => {

  it("a screen taller than the terminal repeats the command's beginning beside the prompt, however short the command", () => {
    const command = `echo first; ${"echo filler; ".repeat(30)}`
    expect(command.length).toBeLessThan(LONG_COMMAND)
    const long: ToolDisplay = { ...display, fields: [{ kind: "command", label: "Command", value: command }, display.fields[1]!] }
    // 40 columns, 12 rows: the command alone wraps to 11 rows, so [Tool: bash] and its start scroll away.
    const small = reminder(long, Option.some({ columns: 40, rows: 12 }))
    expect(small).toBe(`Command above: ${command.length} bytes, 1 line(s); it begins "${command.slice(0, 120)}" …\n`)
    // The same screen fits a 200 × 50 terminal, and with no terminal only the length counts.
    expect(reminder(long, Option.some({ columns: 200, rows: 50 }))).toBeUndefined()
    expect(reminder(long)).toBeUndefined()
    expect(reminder(display, Option.some({ columns: 40, rows: 12 }))).toBeUndefined()
  })
  it("only y or yes approves, in any case, ignoring surrounding spaces", () => {
    for (const yes of ["y", "Y", "yes", "YES", "  Yes ", "\ty\t"]) expect(isApproval(yes)).toBe(true)
    for (const no of ["", "n", "no", "yep", "ye", "y es", "yes!", "sure", "1", "true", "oui", "yess", "y\u0000"]) {
      expect(isApproval(no)).toBe(false)
    }
  })

  it("says why each answer denies, in one sentence for the screen and the model", () => {
    expect(judge({ text: "yes please", pasted: false })).toEqual({
      approved: false,
      reason: "Denied: the answer was \"yes please\"; only y or yes approves."
    })
    expect(judge({ text: "  ", pasted: false })).toEqual({
      approved: false,
      reason: "Denied: no answer was typed (Enter alone); only y or yes approves."
    })
    // A pasted answer never approves, not even a pasted `y`.
    expect(judge({ text: "y", pasted: true })).toEqual({
      approved: false,
      reason: "Denied: the answer held pasted text; only y or yes typed at the prompt approves."
    })
    expect(judge({ text: " Yes ", pasted: false })).toEqual({ approved: true })
    // A long or hostile answer is quoted escaped and cut.
    const hostile = judge({ text: `\u001b[2J${"x".repeat(100)}`, pasted: false })
    expect(hostile).toEqual({ approved: false, reason: `Denied: the answer was "\\u001b[2J${"x".repeat(36)}" …; only y or yes approves.` })
  })

  it.scopedLive("shows the display fields and the prompt, and approves on yes", () =>
    Effect.gen(function*() {
      const { decisions, screen } = yield* decideThenRead(["yes"], 1)
      expect(decisions).toEqual([true])
      expect(screen).toContain("[Tool: bash]\nCommand: \"go version\"\nEnvironment: HOME=/home/u  PATH=/usr/bin\n" + PROMPT)
    }))

  it.scopedLive("a denial says why under the prompt", () =>
    Effect.gen(function*() {
      const { decisions, screen } = yield* decideThenRead(["yes please"], 1)
      expect(decisions).toEqual([false])
      expect(screen).toContain(PROMPT + "Denied: the answer was \"yes please\"; only y or yes approves.\n")
    }))

  it.scopedLive("Enter, anything else and end of input refuse", () =>
    Effect.gen(function*() {
      expect((yield* decideThenRead([""], 1)).decisions).toEqual([false])
      expect((yield* decideThenRead(["sure"], 1)).decisions).toEqual([false])
      const ended = yield* decideThenRead([], 1)
      expect(ended.decisions).toEqual([false])
      expect(ended.next).toBeNull()
    }))

  it.scopedLive("each call gets its own decision, read from the same input as the next question", () =>
    Effect.gen(function*() {
      const { decisions, next } = yield* decideThenRead(["y", "n", "what next?"], 2)
      expect(decisions).toEqual([true, false])
      // The answers were consumed as decisions; the next question is the next line.
      expect(next).toBe("what next?")
    }))

  it.scopedLive("with piped (non-terminal) input nothing can be approved, and the prompt consumes no input", () =>
    Effect.gen(function*() {
      const { decisions, next, screen } = yield* decideThenRead([], 1, { interactive: false, ahead: "yes\nnext question\n" })
      expect(decisions).toEqual([false])
      // The line after the question is the next question, not an answer.
      expect(next).toBe("yes")
      expect(screen).toContain(PROMPT + "\nDenied: standard input is not a terminal")
    }))

  it.scopedLive("end of input at the prompt ends the turn rather than only denying", () =>
    Effect.gen(function*() {
      const screen = Screen.make([], { interactive: true })
      const decision = yield* Effect.provide(
        Effect.flatMap(Approver, (approver) => approver.decide(display)),
        Approver.layer.pipe(Layer.provideMerge(screen.layer))
      )
      expect(decision).toEqual({ approved: false, reason: "end of input at the approval prompt", endTurn: true })
    }))

  it.scopedLive("on a terminal, a line typed before the prompt appeared is not taken as the answer", () =>
    Effect.gen(function*() {
      const { decisions, next, screen } = yield* decideThenRead(["n", "after"], 1, { ahead: "y\n" })
      expect(decisions).toEqual([false])
      expect(next).toBe("after")
      expect(screen).toContain("(ignored 1 line(s) typed before this question)\n" + PROMPT)
    }))

  it.scopedLive("the approver gets a copy: changing it cannot change what runs", () =>
    Effect.gen(function*() {
      const original: ToolDisplay = { tool: "bash", fields: [{ kind: "command", label: "Command", value: "ls" }] }
      const approver = yield* Effect.provide(Approver, Approver.layerStatic((copy) => {
        const fields: Array<unknown> = [...copy.fields]
        Object.assign(fields[0] ?? {}, { value: "rm -rf /" })
        return true
      }))
      yield* approver.decide(original)
      expect(original.fields[0]).toEqual({ kind: "command", label: "Command", value: "ls" })
    }))
})
