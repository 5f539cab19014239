/**
 * The approval screen of the built `mino` in a real pseudo-terminal: every
 * blank-looking code point (the whole class, generated from `Escape.BLANK`), in
 * a run long enough to hide text, is shown visibly and the command still reads
 * back exactly; and a short command's whole screen fits an 80 × 24 terminal
 * under the PATH `npx` builds, with every environment entry shown.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { rowsOf } from "../../src/approval/ApprovalScreen.js"
import * as ResponsesServer from "../../src/model/ResponsesServer.js"
import * as Escape from "../../src/security/Escape.js"
import * as Pty from "../support/Pty.js"
import { bashCall, BIN, environment, exitsWith, sandbox, scriptedServer, startReady } from "../support/MinoProcess.js"

const PROMPT = "Approve this operation? [y/N] "

/** Every code point of the blank class, from the regex itself. */
const BLANKS: ReadonlyArray<string> = (() => {
  const found: Array<string> = []
  for (let cp = 0; cp <= 0x10ffff; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue
    if (Escape.BLANK.test(String.fromCodePoint(cp))) found.push(String.fromCodePoint(cp))
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
  Array.from(shown).filter((ch) => ch !== " " && Escape.BLANK.test(ch)).map((ch) => `U+${(ch.codePointAt(0) ?? 0).toString(16)}`)

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
        yield* mino.write("\r")
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
      const PATH = [
        ...bins,
        "/usr/lib/node_modules/npm/node_modules/@npmcli/run-script/lib/node-gyp-bin",
        "/home/alice/.local/bin",
        "/usr/local/sbin",
        "/usr/local/bin",
        "/usr/sbin",
        "/usr/bin",
        "/sbin",
        "/bin"
      ].join(":")
      const server = yield* scriptedServer([ResponsesServer.toolCallResponse([bashCall("c1", "ls")]), ResponsesServer.textResponse("Not run.")])
      const env = { ...environment(box, server.url), PATH, USER: "alice", LOGNAME: "alice", TMPDIR: "/tmp" }
      const mino = yield* Pty.spawn({ argv: [process.execPath, BIN], env, cwd: project, rows: 24, columns: 80 })
      yield* mino.waitFor("You> ")
      yield* mino.write("list the files\r")
      const approval = yield* mino.waitFor(PROMPT)
      // From the empty `Assistant>` line to the prompt's row.
      const screen = approval.slice(approval.lastIndexOf("Assistant>"))
      const rows = rowsOf(screen, 80)
      console.log(`approval screen at 80 × 24 with a ${PATH.length}-character npx PATH: ${rows} rows\n${screen}`)
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
      yield* mino.write("\r")
      yield* mino.waitFor("Assistant> Not run.")
      yield* mino.write("\x04")
      yield* exitsWith(mino, { code: 0, signal: null })
    }), 60_000)
})
