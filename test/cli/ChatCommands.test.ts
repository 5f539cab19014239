/**
 * Lines typed at `You> `: a line that starts with `/` is never a question unless
 * it starts with `//`, which sends it with one `/` removed. Properties over
 * generated lines, then the commands themselves.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as ChatCommands from "../../src/cli/ChatCommands.js"

const RUNS = 3000
const anyLine = fc.string({ unit: fc.constantFrom("/", " ", "\t", "a", "e", "x", "h", "l", "p", "i", "t", "\u001b", "\u202e", "\n", "界"), maxLength: 20 })

describe(`ChatCommands.read (${RUNS} generated lines per property)`, () => {
  it("a line that starts with one / (after blanks) is never asked", () => {
    fc.assert(fc.property(anyLine, (line) => {
      const typed = ChatCommands.read(line)
      const start = line.trimStart()
      if (start.startsWith("/") && !start.startsWith("//")) expect(typed._tag).not.toBe("Ask")
    }), { numRuns: RUNS })
  })

  it("// sends the rest with exactly one / removed; any other non-blank line is asked as typed", () => {
    fc.assert(fc.property(anyLine, (line) => {
      const typed = ChatCommands.read(line)
      const start = line.trimStart()
      if (line.trim().length === 0) expect(typed).toEqual({ _tag: "Blank" })
      else if (start.startsWith("//")) expect(typed).toEqual({ _tag: "Ask", question: start.slice(1) })
      else if (!start.startsWith("/")) expect(typed).toEqual({ _tag: "Ask", question: line })
    }), { numRuns: RUNS })
  })

  it("the line for an unknown /word is one line, terminal-safe, and says how to send a literal /", () => {
    fc.assert(fc.property(anyLine.map((s) => `/${s}`), (line) => {
      const typed = ChatCommands.read(line)
      if (typed._tag !== "Unknown") return
      const message = ChatCommands.unknown(typed.word)
      expect(message).not.toMatch(/[\u0000-\u001f\u007f\u202e]/)
      expect(message).toContain("nothing was sent")
      expect(message).toContain("start the line with //")
    }), { numRuns: RUNS })
  })

  it("/exit and /help, with blanks around them; a near miss is unknown, named as typed", () => {
    expect(ChatCommands.read("/exit")).toEqual({ _tag: "Exit" })
    expect(ChatCommands.read("  /exit  ")).toEqual({ _tag: "Exit" })
    expect(ChatCommands.read("/help")).toEqual({ _tag: "Help" })
    expect(ChatCommands.read("/hlep me")).toEqual({ _tag: "Unknown", word: "/hlep" })
    expect(ChatCommands.read("/usr/bin/env is missing")).toEqual({ _tag: "Unknown", word: "/usr/bin/env" })
    expect(ChatCommands.read("//usr/bin/env is missing")).toEqual({ _tag: "Ask", question: "/usr/bin/env is missing" })
    expect(ChatCommands.unknown("/hlep")).toBe(
      "/hlep is not a command, so nothing was sent (/help lists the commands). To ask something that begins with /, start the line with //."
    )
  })

  it("the chat's commands, as a table: each name alone, with blanks; arguments where none belong are refused", () => {
    const table: ReadonlyArray<readonly [string, ChatCommands.Typed]> = [
      ["/status", { _tag: "Status" }],
      [" /new ", { _tag: "New" }],
      ["/sessions", { _tag: "Sessions" }],
      ["/log", { _tag: "Log" }],
      ["/clear", { _tag: "Clear" }],
      ["/model gpt-5.1-mini", { _tag: "Model", name: "gpt-5.1-mini" }],
      ["/model   openai/gpt-oss-120b ", { _tag: "Model", name: "openai/gpt-oss-120b" }],
      ["/model qwen3:8b", { _tag: "Model", name: "qwen3:8b" }],
      ["/statuss", { _tag: "Unknown", word: "/statuss" }],
      ["/Status", { _tag: "Unknown", word: "/Status" }]
    ]
    for (const [line, typed] of table) expect(ChatCommands.read(line)).toEqual(typed)
    for (const line of ["/new now", "/status please", "/log all", "/clear\tscreen"]) expect(ChatCommands.read(line)._tag).toBe("Misused")
    for (const line of ["/model", "/model a b", "/model gpt\u001b[31m", "/model a\u202eb", "/model -rf", "/model ../x\u0007", `/model ${"x".repeat(201)}`]) {
      const typed = ChatCommands.read(line)
      expect(typed._tag).toBe("Misused")
      // Mino's own words: nothing typed is repeated, so nothing typed can draw.
      if (typed._tag === "Misused") expect(typed.message).not.toMatch(/[\u0000-\u001f\u007f\u202e]/)
    }
  })

  it(`a /model name is accepted only when it cannot draw (${RUNS} generated names)`, () => {
    fc.assert(fc.property(fc.string({ maxLength: 30 }), (name) => {
      const typed = ChatCommands.read(`/model ${name}`)
      if (typed._tag === "Model") {
        expect(typed.name).toMatch(ChatCommands.MODEL_NAME)
        expect(typed.name).not.toMatch(/[\s\u0000-\u001f\u007f-\u009f]/)
      }
    }), { numRuns: RUNS })
  })

  it("Tab's list holds every command, /model with its space", () => {
    expect(ChatCommands.COMPLETIONS).toEqual(["/clear", "/exit", "/help", "/log", "/model ", "/new", "/sessions", "/status"])
  })

  it("the help lists the commands and keys, and fits 80 columns", () => {
    for (const name of ["/help", "/exit", "/status", "/new", "/sessions", "/log", "/model NAME", "/clear", "Tab", "//", "Ctrl+D", "Ctrl+C", "↑ ↓", "only y or yes approves"]) {
      expect(ChatCommands.HELP_TEXT).toContain(name)
    }
    for (const row of ChatCommands.HELP_TEXT.split("\n")) expect([...row].length).toBeLessThanOrEqual(80)
  })
})
