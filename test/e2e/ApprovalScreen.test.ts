/**
 * The approval screen of the built `mino` in a real pseudo-terminal: every
 * blank-looking code point (derived from Unicode's data here, apart from
 * `Escape.BLANK`: every assigned one, and the first and last of each range of
 * private use and unassigned code points, whose whole class the unit test
 * covers), in a run long enough to hide text, is shown visibly and the command still reads
 * back exactly; and a short command's whole screen fits an 80 × 24 terminal
 * under the PATH `npx` builds, with every environment entry shown.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import * as Escape from "../../src/security/Escape.js"
import { SHORT_KEY_WARNING } from "../../src/security/Secrets.js"
import * as Pty from "../support/Pty.js"
import * as VirtualTerminal from "../support/VirtualTerminal.js"
import { answerPrompt, bashCall, BIN, environment, exitsWith, sandbox, scriptedServer, startReady } from "../support/MinoProcess.js"

const PROMPT = "Approve this operation? [y/N] "

/** What renders as blank or as nothing, by Unicode's data (as in test/security/Escape.test.ts). */
const RENDERS_BLANK = /[\p{Zs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\p{Co}\p{Cn}\u2800\u{1d159}]/u
const UNASSIGNED = /[\p{Co}\p{Cn}]/u

/** Every assigned blank but U+0020, and each private use or unassigned range's ends. */
const BLANKS: ReadonlyArray<string> = (() => {
  const found: Array<string> = []
  const isBlank = (cp: number): boolean => cp !== 0x20 && !(cp >= 0xd800 && cp <= 0xdfff) && cp <= 0x10ffff && RENDERS_BLANK.test(String.fromCodePoint(cp))
  const isUnassigned = (cp: number): boolean => isBlank(cp) && UNASSIGNED.test(String.fromCodePoint(cp))
  for (let cp = 0; cp <= 0x10ffff; cp++) {
    if (!isBlank(cp)) continue
    if (!isUnassigned(cp) || !isUnassigned(cp - 1) || !isUnassigned(cp + 1)) found.push(String.fromCodePoint(cp))
  }
  return found
})()

/** Commands under the 16 KiB limit that together hold a run of every blank, each run between two words. */
const blankCommands = (): Array<string> => {
  const commands: Array<string> = []
  let command = "echo start"
  for (const ch of BLANKS) {
    const piece = `|${ch.repeat(Escape.BLANK_RUN)}|`
    if (Buffer.byteLength(command + piece) > 15_000) {
      commands.push(`${command}; touch PWNED`)
      command = "echo start"
    }
    command += piece
  }
  return [...commands, `${command}; touch PWNED`]
}

const rawBlanks = (shown: string): Array<string> =>
  (shown.match(new RegExp(RENDERS_BLANK.source, "gu")) ?? []).filter((ch) => ch !== " ").map((ch) => `U+${(ch.codePointAt(0) ?? 0).toString(16)}`)

describe("the approval screen in a terminal", () => {
  it.scopedLive(`every blank-looking code point (${BLANKS.length}) in a run of ${Escape.BLANK_RUN} is shown visibly`, () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const commands = blankCommands()
      const server = yield* scriptedServer([
        ResponsesServer.toolCallResponse(commands.map((command, i) => bashCall(`c${i}`, command))),
        ResponsesServer.textResponse("None ran.")
      ])
      const { mino } = yield* startReady(box, server.url)
      yield* mino.write("show me blanks\r")
      for (const command of commands) {
        const approval = yield* mino.waitFor(PROMPT, 60_000)
        const lines = approval.split("\n")
        const commandLine = lines.find((line) => line.startsWith("Command: ")) ?? ""
        const reminderLine = lines.find((line) => line.startsWith("Command above: ")) ?? ""
        for (const line of [commandLine, reminderLine]) {
          expect(rawBlanks(line)).toEqual([])
          expect(/ {8}/.test(line)).toBe(false)
        }
        expect(JSON.parse(commandLine.slice("Command: ".length))).toBe(command)
        yield* answerPrompt(mino, "")
        yield* mino.waitFor("[Tool result: denied]")
      }
      yield* mino.waitFor("Assistant> None ran.")
      yield* mino.write("\x04")
      yield* exitsWith(mino, { code: 0, signal: null })
      expect(fs.existsSync(path.join(box.cwd, "PWNED"))).toBe(false)
      console.log(`blank-looking code points shown on the approval screen: ${BLANKS.length}, in ${commands.length} commands`)
    }), 120_000)

  it.scopedLive("a short command's whole screen fits 80 × 24 under an npx PATH, every entry shown", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      // A project three directories deep, and the PATH npx runs it with: each directory's
      // node_modules/.bin up to the root, npm's node-gyp-bin, then the user's own PATH.
      const project = path.join(box.cwd, "src", "acme", "webapp")
      fs.mkdirSync(project, { recursive: true })
      const bins: Array<string> = []
      for (let dir = project; ; dir = path.dirname(dir)) {
        bins.push(path.join(dir, "node_modules", ".bin"))
        if (dir === path.dirname(dir)) break
      }
      const entries = [
        ...bins,
        "/home/alice/.nvm/versions/node/v20.11.1/lib/node_modules/npm/node_modules/@npmcli/run-script/lib/node-gyp-bin",
        "/home/alice/.nvm/versions/node/v20.11.1/bin",
        "/home/alice/.local/bin",
        "/home/alice/.cargo/bin",
        "/usr/local/sbin",
        "/usr/local/bin",
        "/usr/sbin",
        "/usr/bin",
        "/sbin",
        "/bin",
        "/usr/games",
        "/usr/local/games",
        "/snap/bin"
      ]
      const PATH = entries.join(":")
      const server = yield* scriptedServer([ResponsesServer.toolCallResponse([bashCall("c1", "ls")]), ResponsesServer.textResponse("Not run.")])
      const env = { ...environment(box, server.url), PATH, USER: "alice", LOGNAME: "alice", TMPDIR: "/tmp" }
      const mino = yield* Pty.spawn({ argv: [process.execPath, BIN], env, cwd: project, rows: 24, columns: 80 })
      yield* mino.waitFor("You> ")
      yield* mino.write("list the files\r")
      const approval = yield* mino.waitFor(PROMPT)
      // From the empty `Assistant>` line to the prompt's row.
      const screen = approval.slice(approval.lastIndexOf("Assistant>"))
      // Rows as an 80-column terminal takes them (counted here, not by the module's own `rowsOf`):
      // every line of ASCII text wraps at 80, an empty one takes its row.
      expect(/[^\x20-\x7e\n]/.test(screen)).toBe(false)
      const rows = screen.split("\n").reduce((total, line) => total + Math.max(1, Math.ceil(line.length / 80)), 0)
      console.log(`approval screen at 80 × 24 with an npx PATH of ${entries.length} entries (${PATH.length} characters): ${rows} rows\n${screen}`)
      expect(entries.length).toBeGreaterThanOrEqual(15)
      expect(rows).toBeLessThanOrEqual(24)
      expect(screen).not.toContain("Command above:")
      // Every entry is there, whole: the PATH read back from its wrapped lines.
      const lines = screen.split("\n")
      const start = lines.findIndex((line) => line.startsWith("Environment: PATH="))
      let shownPath = lines[start]!.slice("Environment: PATH=".length)
      for (const line of lines.slice(start + 1)) {
        if (!line.startsWith(" ".repeat("Environment: PATH=".length))) break
        shownPath += line.trim()
      }
      expect(shownPath).toBe(PATH)
      for (const entry of ["HOME=", "USER=alice", "LOGNAME=alice", "LANG=C.UTF-8", "TERM=dumb", "SHELL=/bin/bash", `PWD=${project}`, "TMPDIR=/tmp"]) {
        expect(screen).toContain(entry)
      }
      yield* answerPrompt(mino, "")
      yield* mino.waitFor("Assistant> Not run.")
      yield* mino.write("\x04")
      yield* exitsWith(mino, { code: 0, signal: null })
    }), 60_000)

  it.scopedLive("a command of emoji that terminals draw two columns wide keeps its start in sight at 80 × 24", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      // U+2615 HOT BEVERAGE: Emoji_Presentation, East Asian Wide; 960 of them fill 24 rows and more.
      const command = `touch PWNED; : ${"\u2615".repeat(960)}`
      const server = yield* scriptedServer([ResponsesServer.toolCallResponse([bashCall("c1", command)]), ResponsesServer.textResponse("Not run.")])
      const mino = yield* Pty.spawn({ argv: [process.execPath, BIN], env: environment(box, server.url), cwd: box.cwd, rows: 24, columns: 80 })
      yield* mino.waitFor("You> ")
      yield* mino.write("make a file\r")
      yield* mino.waitFor(PROMPT)
      // The last 24 rows as a terminal draws them, its widths from Unicode's data, not from Mino's.
      const rows = VirtualTerminal.render(yield* mino.screen, 80).replace(/\n$/, "").split("\n").slice(-24)
      console.log(`the last 24 rows at 80 columns:\n${rows.join("\n")}`)
      expect(rows.some((row) => /^Command( above)?: .*touch PWNED/.test(row))).toBe(true)
      yield* answerPrompt(mino, "")
      yield* mino.waitFor("Assistant> Not run.")
      yield* mino.write("\x04")
      yield* exitsWith(mino, { code: 0, signal: null })
      expect(fs.existsSync(path.join(box.cwd, "PWNED"))).toBe(false)
    }), 60_000)

  it.scopedLive("a denial, and a warning on stderr, are broken at word boundaries to a 44-column terminal", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const server = yield* scriptedServer([ResponsesServer.toolCallResponse([bashCall("c1", "touch PWNED")]), ResponsesServer.textResponse("Not run.")])
      // A key too short to redact, for an endpoint off this machine: Mino warns on stderr (the same
      // terminal here) before the banner. TEST-NET-1 (RFC 5737), never routed: nothing is sent before a question.
      const warned = yield* Pty.spawn({
        argv: [process.execPath, BIN],
        env: { ...environment(box, "http://192.0.2.1:9/v1"), OPENAI_API_KEY: "ollama" },
        cwd: box.cwd,
        rows: 24,
        columns: 44
      })
      const opening = yield* warned.waitFor("You> ")
      yield* warned.write("\x04")
      yield* exitsWith(warned, { code: 0, signal: null })
      const mino = yield* Pty.spawn({ argv: [process.execPath, BIN], env: environment(box, server.url), cwd: box.cwd, rows: 24, columns: 44 })
      yield* mino.waitFor("You> ")
      yield* mino.write("make a file\r")
      yield* mino.waitFor(PROMPT)
      yield* mino.write("yes please, go ahead and run it\r")
      const answered = yield* mino.waitFor("approves.\n")
      yield* mino.waitFor("Assistant> Not run.")
      yield* mino.write("\x04")
      yield* exitsWith(mino, { code: 0, signal: null })
      const reason = "Denied: the answer was \"yes please, go ahead and run it\"; only y or yes approves."
      const warning = opening.slice(opening.indexOf("mino: the API key"), opening.indexOf("see it.") + "see it.".length)
      const denial = answered.slice(answered.lastIndexOf("Denied: "), -1)
      console.log(`at 44 columns:\n${warning}\n${denial}`)
      // Each row fits, and the rows joined by one space are the sentence: no word was cut in two.
      for (const [text, sentence] of [[warning, SHORT_KEY_WARNING], [denial, reason]] as const) {
        const rows = text.split("\n")
        expect(rows.length).toBeGreaterThan(1)
        for (const row of rows) expect(row.length).toBeLessThanOrEqual(44)
        expect(rows.join(" ")).toBe(sentence)
      }
      expect(fs.existsSync(path.join(box.cwd, "PWNED"))).toBe(false)
    }), 60_000)
})
