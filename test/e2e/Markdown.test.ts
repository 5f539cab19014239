/**
 * The model's Markdown on the screen of the built `mino --demo`, in a real
 * pseudo-terminal: styled on a terminal, drawn without styles under NO_COLOR,
 * as written (escaped) under TERM=dumb and a piped standard output; hostile
 * text inside code spans, links and emphasis (CSI, OSC 8 and OSC 52, C1
 * controls, bidi overrides) shown escaped, the only escape sequences being
 * Mino's own styles. At 80 columns, from a scripted model: a paragraph broken
 * at word boundaries, a table with aligned columns (with colour or not).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { MARKDOWN_SAMPLE } from "../../src/demo/DemoModel.js"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import * as Width from "../../src/terminal/display/Width.js"
import * as Pty from "../support/Pty.js"
import { answerPrompt, BIN, environment, exitsWith, runPlain, sandbox, scriptedServer, type Sandbox } from "../support/MinoProcess.js"

/** The styles Markdown.ts and the screen write: a reset, or parameters from their set. */
const OWN_STYLE = /\u001b\[(?:0|[0-9]{1,2}(?:;[0-9]{1,2})*)m/g
const ANY_STYLE = /\u001b\[[0-9;]*m/

/** Every escape sequence in `text` that is not one of Mino's styles (none is expected). */
const foreignEscapes = (text: string): Array<string> => text.replace(OWN_STYLE, "").match(/[\u001b\u009b][^]{0,8}/g) ?? []

/** `mino --demo` in a pseudo-terminal; `NO_COLOR` and `TERM` as given (unset NO_COLOR when `undefined`). */
const demo = (box: Sandbox, display: { readonly NO_COLOR?: string; readonly TERM: string }) => {
  const { NO_COLOR: _, ...env } = environment(box, "http://127.0.0.1:9/v1", { TERM: display.TERM })
  return Pty.spawn({ argv: [process.execPath, BIN, "--demo"], env: display.NO_COLOR === undefined ? env : { ...env, NO_COLOR: display.NO_COLOR }, cwd: box.cwd })
}

/** Asks `question` and returns the screen from the answer's start to the next prompt. */
const answer = (mino: Pty.Pty, question: string, approve = false) =>
  Effect.gen(function*() {
    yield* mino.write(`${question}\r`)
    if (approve) {
      yield* mino.waitFor("Approve this operation? [y/N] ")
      yield* answerPrompt(mino, "y")
    }
    yield* mino.waitFor("Assistant>")
    return yield* mino.waitFor("You> ")
  })

const DISPLAYS = [
  { name: "on a terminal", display: { TERM: "xterm-256color" }, styled: true, drawn: true },
  { name: "with NO_COLOR set", display: { NO_COLOR: "1", TERM: "xterm-256color" }, styled: false, drawn: true },
  { name: "with TERM=dumb", display: { TERM: "dumb" }, styled: false, drawn: false }
] as const

// The demo answers `run …` by running it, then quotes the output's first line in its
// summary: model text carrying whatever the command printed.
const HOSTILE_COMMAND = String.raw`run printf 'Use ` + "`" + String.raw`\033[2J\033[H` + "`" +
  String.raw` or [here\302\2338m](https://evil.example/\033]8;;https://evil.example\a) \342\200\256 **\033]52;c;eA==\a**\n'`

describe("the model's Markdown on the built mino's screen", () => {
  for (const { name, display, styled, drawn: structured } of DISPLAYS) {
    const how = styled ? "drawn with styles, markers taken away" : structured ? "drawn without styles" : "shown as written, with no style at all"
    it.scopedLive(`${name}: ${how}`, () =>
      Effect.gen(function*() {
        const box = yield* sandbox
        const mino = yield* demo(box, display)
        yield* mino.waitFor("You> ")
        const shown = yield* answer(mino, "show me some markdown")
        const text = shown.slice(0, shown.lastIndexOf("\n"))
        if (styled) {
          for (
            const drawn of [
              "\u001b[1mWhat the demo model does\u001b[0m\n",
              "with \u001b[1mone bash command\u001b[0m, shown in full, which runs only if you type \u001b[36my\u001b[0m:",
              "• \u001b[36mrun <command>\u001b[0m asks for exactly that command\n",
              "• a question about a \u001b[3mversion\u001b[0m asks for",
              "\u001b[2m┃ \u001b[0mEvery command waits for your answer; nothing runs unseen.\n",
              "\u001b[2m╭─ sh\u001b[0m\n\u001b[2m│ \u001b[0mrun ls -la **/*.ts\n\u001b[2m╰─\u001b[0m\n",
              "as \u001b[4mCommonMark\u001b[0m\u001b[2m (https://commonmark.org)\u001b[0m reads it."
            ]
          ) expect(text).toContain(drawn)
          expect(text).not.toContain("## ")
          expect(text).not.toContain("**one")
          expect(text).not.toContain("```")
        } else if (structured) {
          // The same structure, no style: heading marks and code backticks stand in for the styles.
          for (
            const drawn of [
              "## What the demo model does\n",
              "with one bash command, shown in full, which runs only if you type `y`:",
              "• `run <command>` asks for exactly that command\n",
              "┃ Every command waits for your answer; nothing runs unseen.\n",
              "╭─ sh\n│ run ls -la **/*.ts\n╰─\n",
              "as CommonMark (https://commonmark.org) reads it."
            ]
          ) expect(text).toContain(drawn)
          expect(ANY_STYLE.test(text)).toBe(false)
        } else {
          expect(text).toContain(` ${MARKDOWN_SAMPLE}\n`)
          expect(ANY_STYLE.test(text)).toBe(false)
        }
        expect(foreignEscapes(text)).toEqual([])
        yield* mino.write("\x04")
        yield* exitsWith(mino, { code: 0, signal: null })
      }), 60_000)
  }

  it.scopedLive("with standard output piped: as written, with no style at all", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const { NO_COLOR: _, ...env } = environment(box, "http://127.0.0.1:9/v1", { TERM: "xterm-256color" })
      const run = yield* runPlain(["--demo"], env, box.cwd, "show me some markdown\n")
      expect(run.code).toBe(0)
      expect(run.stdout).toContain(`Assistant> ${MARKDOWN_SAMPLE}\n`)
      expect(run.stdout).not.toContain("\u001b")
    }), 60_000)

  for (const { name, display, styled } of DISPLAYS.slice(0, 2)) {
    it.scopedLive(`${name}: escape sequences in code spans, links and emphasis are shown escaped`, () =>
      Effect.gen(function*() {
        const box = yield* sandbox
        const mino = yield* demo(box, display)
        yield* mino.waitFor("You> ")
        const shown = yield* answer(mino, HOSTILE_COMMAND, true)
        const summary = shown.slice(shown.indexOf("It printed: "))
        expect(foreignEscapes(summary)).toEqual([])
        const escaped = {
          code: "\\e[2J\\e[H",
          label: "here\\x9b8m",
          url: "(https://evil.example/\\e]8;;https://evil.example\\x07)",
          strong: "\\e]52;c;eA==\\x07"
        }
        if (styled) {
          expect(summary).toContain(`Use \u001b[36m${escaped.code}\u001b[0m or \u001b[4m${escaped.label}\u001b[0m\u001b[2m ${escaped.url}\u001b[0m \\u202e \u001b[1m${escaped.strong}\u001b[0m`)
        } else {
          expect(summary).toContain(`Use \`${escaped.code}\` or ${escaped.label} ${escaped.url} \\u202e ${escaped.strong}`)
          expect(ANY_STYLE.test(summary)).toBe(false)
        }
        yield* mino.write("\x04")
        yield* exitsWith(mino, { code: 0, signal: null })
      }), 60_000)
  }

  describe("at 80 columns, from a model", () => {
    const PARAGRAPH = "Mino keeps one conversation per directory, saves every step to its session file before the next " +
      "one starts, and asks before it runs anything at all, so a long answer like this one has to wrap across several " +
      "rows of an eighty-column terminal without cutting any word in two."
    const TABLE = [
      "| File | Lines | Kind |",
      "|:-----|------:|:----:|",
      "| src/main.ts | 12 | entry |",
      "| src/terminal/display/Markdown.ts | 623 | renderer |",
      "| 日本語.md | 7 | doc |"
    ].join("\n")
    const ANSWER = `${PARAGRAPH}\n\n${TABLE}\n\nThat is all.`

    /** The answer's rows on a pseudo-terminal 80 columns wide (styles left out), after asking once. */
    const answered = (display: { readonly NO_COLOR?: string; readonly TERM: string }) =>
      Effect.gen(function*() {
        const box = yield* sandbox
        const server = yield* scriptedServer([ResponsesServer.textResponse(ANSWER)])
        const { NO_COLOR: _, ...env } = environment(box, server.url, { TERM: display.TERM })
        const mino = yield* Pty.spawn({
          argv: [process.execPath, BIN],
          env: display.NO_COLOR === undefined ? env : { ...env, NO_COLOR: display.NO_COLOR },
          cwd: box.cwd,
          columns: 80,
          rows: 40
        })
        yield* mino.waitFor("You> ")
        const shown = yield* answer(mino, "what is in this repository?")
        yield* mino.write("\x04")
        yield* exitsWith(mino, { code: 0, signal: null })
        return `Assistant>${shown.slice(0, shown.lastIndexOf("\n")).replace(/\n+$/, "")}`
      })

    for (const { name, display } of DISPLAYS.slice(0, 2)) {
      it.scopedLive(`${name}: the paragraph breaks at word boundaries and the table lines up`, () =>
        Effect.gen(function*() {
          const raw = yield* answered(display)
          if ("NO_COLOR" in display) expect(ANY_STYLE.test(raw)).toBe(false)
          expect(foreignEscapes(raw)).toEqual([])
          const rows = raw.replace(OWN_STYLE, "").split("\n")
          console.log(`${name} at 80 columns:\n${rows.join("\n")}`)
          for (const row of rows) expect(Width.width(row)).toBeLessThanOrEqual(80)
          // The paragraph: over several rows, every word whole on one of them.
          const paragraph = rows.slice(0, rows.indexOf(""))
          expect(paragraph.length).toBeGreaterThanOrEqual(3)
          expect(paragraph.join(" ")).toBe(`Assistant> ${PARAGRAPH}`)
          // The table: a header, a rule and three rows, the bars in the same columns on each.
          const table = rows.filter((row) => row.includes("│") || row.includes("┼"))
          expect(table.length).toBe(5)
          expect(table[1]).toMatch(/^─+┼─+┼─+$/)
          const bars = (row: string) => [...row].flatMap((ch, i) => ("│┼".includes(ch) ? [Width.width([...row].slice(0, i).join(""))] : []))
          for (const row of table) expect(bars(row)).toEqual(bars(table[0] ?? ""))
          // Lines is right-aligned: its digits end in one column, just before the second bar.
          const body = table.slice(2)
          const digitsEnd = body.map((row) => Width.width(row.split("│").slice(0, 2).join("│").trimEnd()))
          expect(new Set(digitsEnd).size).toBe(1)
          expect(body.map((row) => row.split("│")[1]?.trim())).toEqual(["12", "623", "7"])
          expect(body.map((row) => row.split("│")[0]?.trim())).toEqual(["src/main.ts", "src/terminal/display/Markdown.ts", "日本語.md"])
          expect(rows.at(-1)).toBe("That is all.")
        }), 60_000)
    }

    it.scopedLive("with TERM=dumb and with standard output piped: the model's text exactly as it wrote it", () =>
      Effect.gen(function*() {
        const shown = yield* answered({ TERM: "dumb" })
        expect(shown).toBe(`Assistant> ${ANSWER}`)
        const box = yield* sandbox
        const server = yield* scriptedServer([ResponsesServer.textResponse(ANSWER)])
        const { NO_COLOR: _, ...env } = environment(box, server.url, { TERM: "xterm-256color" })
        const run = yield* runPlain([], env, box.cwd, "what is in this repository?\n")
        expect(run.code).toBe(0)
        expect(run.stdout).toContain(`Assistant> ${ANSWER}\n`)
      }), 60_000)
  })
})
