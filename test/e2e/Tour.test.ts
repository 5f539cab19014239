/**
 * The README's two-minute tour is what the built `mino` shows: a `--demo` turn
 * approved, one denied, then `mino log --demo`, each run in a real 80x24
 * pseudo-terminal and read back as a person sees it (test/support/VirtualTerminal).
 *
 * Normalised, because they must vary from run to run, and only these:
 * - the home directory, a fresh one of exactly as many characters as the
 *   README's `/home/you`, so every line wraps where it would there;
 * - times (`2026-12-03 07:40:12 UTC`) and conversation ids (`20261203-074012-…`),
 *   replaced digit for digit, so widths do not change either.
 *
 * `MINO_README_UPDATE=1 npx vitest run test/e2e/Tour.test.ts` writes what the
 * binary shows now into the README (after a change to the screens).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { PROMPT } from "../../src/approval/Approver.js"
import { width } from "../../src/terminal/input/LineEditor.js"
import * as Pty from "../support/Pty.js"
import { BIN, ROOT } from "../support/MinoProcess.js"
import * as VirtualTerminal from "../support/VirtualTerminal.js"

const README = path.join(ROOT, "README.md")
const BEGIN = "<!-- tour: the built `mino --demo` at 80 columns; test/e2e/Tour.test.ts checks it -->"
const PLACEHOLDER_HOME = "/home/you"
const COLUMNS = 80

/** A new directory `/tmp/xxxx`: as long as `/home/you`. */
const shortHome = Effect.acquireRelease(
  Effect.sync(() => {
    for (let attempt = 0; ; attempt++) {
      const candidate = `/tmp/${Math.random().toString(36).slice(2, 6).padEnd(4, "0")}`
      try {
        fs.mkdirSync(candidate, { mode: 0o700 })
        return fs.realpathSync(candidate)
      } catch (error) {
        if (attempt > 100) throw error
      }
    }
  }),
  (home) => Effect.sync(() => fs.rmSync(home, { recursive: true, force: true }))
)

const normalise = (text: string, home: string): string =>
  text
    .split(home).join(PLACEHOLDER_HOME)
    .replace(/\b\d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)? UTC\b/g, (time) => "2026-12-03 07:40:12 UTC".slice(0, time.length - 4) + " UTC")
    .replace(/\b\d{8}-\d{6}-[0-9a-f]{8}\b/g, "20261203-074012-1a2b3c4d")

/** The fenced block after the marker in the README. */
const readmeTour = (readme: string): { readonly start: number; readonly end: number; readonly text: string } => {
  const marker = readme.indexOf(BEGIN)
  if (marker < 0) throw new Error(`README.md has no ${BEGIN}`)
  const start = readme.indexOf("```text\n", marker) + "```text\n".length
  const end = readme.indexOf("```\n", start)
  return { start, end, text: readme.slice(start, end) }
}

describe("the README's tour", () => {
  it("is read back as a terminal shows it: deferred wrap, spinner erased, a redrawn line", () => {
    expect(VirtualTerminal.render("a".repeat(80) + "\nb", 80)).toBe("a".repeat(80) + "\nb\n")
    expect(VirtualTerminal.render("a".repeat(81), 80)).toBe("a".repeat(80) + "\na\n")
    expect(VirtualTerminal.render("You> \r⠋ waiting 0s\u001b[K\r\u001b[KAssistant> hi", 80)).toBe("Assistant> hi\n")
    expect(VirtualTerminal.render("You> ab\nc\u001b[1A\r\u001b[JYou> abc\u001b[1mX\u001b[0m", 80)).toBe("You> abcX\n")
    expect(VirtualTerminal.render("界".repeat(41), 80)).toBe("界".repeat(40) + "\n界\n")
  })

  it.scopedLive("matches what the built mino --demo and mino log --demo show at 80 columns", () =>
    Effect.gen(function*() {
      const home = yield* shortHome
      const project = path.join(home, "project")
      fs.mkdirSync(path.join(project, "src"), { recursive: true })
      fs.writeFileSync(path.join(project, "README.md"), "# my project\n")
      fs.writeFileSync(path.join(project, "package.json"), "{}\n")
      const env = { HOME: home, PATH: "/usr/local/bin:/usr/bin:/bin", LANG: "C.UTF-8", TERM: "xterm-256color" }
      const inTerminal = (args: ReadonlyArray<string>) =>
        Pty.spawn({ argv: [process.execPath, BIN, ...args], env, cwd: project, columns: COLUMNS, rows: 24 })
      // An answer typed after the approval screen has stood for a moment, as a person's is.
      const answer = (mino: Pty.Pty, text: string) =>
        Effect.gen(function*() {
          yield* mino.waitFor(PROMPT)
          yield* Effect.sleep(Duration.millis(1500))
          yield* mino.write(`${text}\r`)
        })

      const chat = yield* inTerminal(["--demo"])
      yield* chat.waitFor("You> ")
      yield* chat.write("run ls\r")
      yield* answer(chat, "y")
      yield* chat.waitFor("You> ")
      yield* chat.write("run rm -rf src\r")
      yield* answer(chat, "yes please")
      yield* chat.waitFor("You> ")
      yield* chat.write("\u0004")
      expect(yield* chat.exitedWithin(10_000)).toEqual({ code: 0, signal: null })
      const log = yield* inTerminal(["log", "--demo"])
      expect(yield* log.exitedWithin(10_000)).toEqual({ code: 0, signal: null })

      const shown = [
        `$ mino --demo\n${VirtualTerminal.render(yield* chat.screen, COLUMNS)}`,
        `$ mino log --demo\n${VirtualTerminal.render(yield* log.screen, COLUMNS)}`
      ].map((part) => normalise(part, home)).join("\n")
      expect(fs.existsSync(path.join(project, "src"))).toBe(true)

      const readme = fs.readFileSync(README, "utf8")
      const tour = readmeTour(readme)
      if (process.env["MINO_README_UPDATE"] === "1") fs.writeFileSync(README, readme.slice(0, tour.start) + shown + readme.slice(tour.end))
      else expect(tour.text).toBe(shown)
      for (const row of shown.split("\n")) expect(width(row)).toBeLessThanOrEqual(COLUMNS)
    }), 60_000)
})
