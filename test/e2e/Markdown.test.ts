/**
 * The model's Markdown on the screen of the built `mino --demo`, in a real
 * pseudo-terminal: styled on a terminal, as written (escaped) under NO_COLOR,
 * TERM=dumb and a piped standard output; hostile text inside code spans, links
 * and emphasis (CSI, OSC 8 and OSC 52, C1 controls, bidi overrides) shown
 * escaped, the only escape sequences being Mino's own styles.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { MARKDOWN_SAMPLE } from "../../src/demo/DemoModel.js"
import * as Pty from "../support/Pty.js"
import { BIN, environment, exitsWith, runPlain, sandbox, type Sandbox } from "../support/MinoProcess.js"

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
      yield* mino.write("y\r")
    }
    yield* mino.waitFor("Assistant>")
    return yield* mino.waitFor("You> ")
  })

const DISPLAYS = [
  { name: "on a terminal", display: { TERM: "xterm-256color" }, styled: true },
  { name: "with NO_COLOR set", display: { NO_COLOR: "1", TERM: "xterm-256color" }, styled: false },
  { name: "with TERM=dumb", display: { TERM: "dumb" }, styled: false }
] as const

// The demo answers `run …` by running it, then quotes the output's first line in its
// summary: model text carrying whatever the command printed.
const HOSTILE_COMMAND = String.raw`run printf 'Use ` + "`" + String.raw`\033[2J\033[H` + "`" +
  String.raw` or [here\302\2338m](https://evil.example/\033]8;;https://evil.example\a) \342\200\256 **\033]52;c;eA==\a**\n'`

describe("the model's Markdown on the built mino's screen", () => {
  for (const { name, display, styled } of DISPLAYS) {
    it.scopedLive(`${name}: ${styled ? "drawn with styles, markers taken away" : "shown as written, with no style at all"}`, () =>
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
          expect(summary).toContain(`Use \`${escaped.code}\` or [${escaped.label}]${escaped.url.slice(0, -1)}) \\u202e **${escaped.strong}**`)
          expect(ANY_STYLE.test(summary)).toBe(false)
        }
        yield* mino.write("\x04")
        yield* exitsWith(mino, { code: 0, signal: null })
      }), 60_000)
  }
})
