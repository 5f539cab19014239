/**
 * The command line as a user meets it: help written for people, `--version`,
 * one line and exit code 2 for a mistake, `-m`, and a question given on the
 * command line asked as the first turn (then the chat goes on).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ChatCommands from "../../src/cli/ChatCommands.js"
import * as ResponsesServer from "../../src/model/ResponsesServer.js"
import { width } from "../../src/terminal/LineEditor.js"
import * as Pty from "../support/Pty.js"
import {
  BIN,
  bodyOf,
  environment,
  exitsWith,
  inputOf,
  packageVersion,
  recordSummary,
  requestsReceived,
  runPlain,
  sandbox,
  scriptedServer,
  sessionRecords,
  start
} from "../support/MinoProcess.js"

const userMessage = (text: string) => ({ type: "message", role: "user", content: [{ type: "input_text", text }] })

describe("mino's command line", () => {
  it.scopedLive("without OPENAI_API_KEY: exit 2 and one line on stderr naming it, nothing created", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const { OPENAI_API_KEY: _key, ...env } = environment(box, "http://127.0.0.1:9/v1")
      const run = yield* runPlain([], env, box.cwd)
      expect(run.code).toBe(2)
      expect(run.stdout).toBe("")
      const lines = run.stderr.split("\n").filter((line) => line.length > 0)
      expect(lines).toHaveLength(1)
      expect(lines[0]).toContain("OPENAI_API_KEY")
      expect(fs.existsSync(path.join(box.home, ".mino"))).toBe(false)
    }))

  it.scopedLive("--version and -V print the package version", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      for (const flag of ["--version", "-V"]) {
        const run = yield* runPlain([flag], environment(box, "http://127.0.0.1:9/v1"), box.cwd)
        expect(run.code).toBe(0)
        expect(run.stdout).toBe(`${packageVersion()}\n`)
      }
    }))

  it.scopedLive("an unknown option exits 2 without starting a chat", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const run = yield* runPlain(["--bogus"], environment(box, "http://127.0.0.1:9/v1"), box.cwd)
      expect(run.code).toBe(2)
      expect(run.stdout).not.toContain("You> ")
      expect(run.stderr).toBe("mino: unknown option --bogus; `mino --help` lists the options.\n")
      expect(fs.existsSync(path.join(box.home, ".mino"))).toBe(false)
    }))

  it.scopedLive("--model without its value: exit 2 and one line naming --model, no chat", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const run = yield* runPlain(["--model"], environment(box, "http://127.0.0.1:9/v1"), box.cwd)
      expect(run.code).toBe(2)
      expect(run.stdout).toBe("")
      expect(run.stderr).toBe("mino: --model needs a value (NAME), as in `mino --model gpt-5.1`.\n")
      expect(fs.existsSync(path.join(box.home, ".mino"))).toBe(false)
    }))

  it.scopedLive("--help is written for people: options, environment, files, exit codes, examples; no internals", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const run = yield* runPlain(["--help"], environment(box, "http://127.0.0.1:9/v1"), box.cwd)
      expect(run.code).toBe(0)
      expect(run.stderr).toBe("")
      const help = run.stdout
      expect(help).toMatch(/^Mino \d+\.\d+\.\d+: a terminal coding agent\.\n.*approve/s)
      expect(help).toMatch(/^ {2}-m, --model NAME +the model to ask/m)
      expect(help).toMatch(/^ {6}--demo +use a scripted demo model/m)
      expect(help).toMatch(/^ {2}mino log \[ID\]/m)
      expect(help).toMatch(/^ {6}--unknown +list only the tool calls whose outcome is unknown/m)
      expect(help).toMatch(/^ {2}-h, --help +show this help/m)
      expect(help).toMatch(/^ {2}-V, --version +print the version/m)
      for (const name of ["OPENAI_API_KEY", "OPENAI_BASE_URL", "MINO_MODEL", "NO_COLOR", "~/.mino/sessions/"]) expect(help).toContain(name)
      for (const code of ["0", "1", "2", "130", "128+N"]) expect(help).toMatch(new RegExp(`^ {2}${code.replace("+", "\\+")} +\\S`, "m"))
      expect(help).toContain("mino \"why is the build failing?\"")
      // Nothing of @effect/cli's generic text or built-in options.
      for (const internal of ["--wizard", "--completions", "--log-level", "A user-defined piece of text", "This setting is optional"]) {
        expect(help).not.toContain(internal)
      }
      expect(help).not.toContain("\u001b[")
      const short = yield* runPlain(["-h"], environment(box, "http://127.0.0.1:9/v1"), box.cwd)
      expect(short.stdout).toBe(help)
    }))

  it.scopedLive("-m chooses the model sent with the request", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const server = yield* scriptedServer([ResponsesServer.textResponse("ok")])
      const run = yield* runPlain(["-m", "short-flag-model"], environment(box, server.url, { MINO_MODEL: "from-env" }), box.cwd, "hello\n")
      expect(run.code).toBe(0)
      expect(run.stdout).toContain("model short-flag-model")
      const [request] = yield* server.requests
      expect(bodyOf(request!)["model"]).toBe("short-flag-model")
    }))

  it.scopedLive("a question on the command line is the first turn, then piped questions follow", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const server = yield* scriptedServer([ResponsesServer.textResponse("first answer"), ResponsesServer.textResponse("second answer")])
      const run = yield* runPlain(["why is the build failing?"], environment(box, server.url), box.cwd, "and then?\n")
      expect(run.code).toBe(0)
      const [first, second] = yield* server.requests
      expect(inputOf(first!)).toEqual([userMessage("why is the build failing?")])
      expect(inputOf(second!).at(-1)).toEqual(userMessage("and then?"))
      expect(run.stdout).toContain("You> why is the build failing?\n")
      expect(run.stdout.indexOf("first answer")).toBeLessThan(run.stdout.indexOf("second answer"))
      expect(recordSummary(sessionRecords(box)).filter((type) => type.startsWith("turn_end"))).toEqual(["turn_end:completed", "turn_end:completed"])
    }))

  it.scopedLive("in a terminal, the question is shown as asked (escaped), answered, and the chat continues", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const server = yield* scriptedServer([ResponsesServer.textResponse("It is the linker."), ResponsesServer.textResponse("Bye.")])
      const mino = yield* start(box, server.url, ["why \u001b[2Jis the build failing?"])
      yield* mino.waitFor("You> why \\e[2Jis the build failing?\n")
      yield* mino.waitFor("Assistant> It is the linker.\n")
      yield* mino.waitFor("You> ")
      const [first] = yield* requestsReceived(server, 1)
      expect(inputOf(first!)).toEqual([userMessage("why \u001b[2Jis the build failing?")])
      yield* mino.write("thanks\n")
      yield* mino.waitFor("Assistant> Bye.\n")
      yield* mino.waitFor("You> ")
      yield* mino.write("\u0004")
      yield* exitsWith(mino, { code: 0, signal: null })
      expect(inputOf((yield* server.requests)[1]!).at(-1)).toEqual(userMessage("thanks"))
    }))

  it.scopedLive("`mino help` is `mino --help`", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const env = environment(box, "http://127.0.0.1:9/v1")
      const help = yield* runPlain(["help"], env, box.cwd)
      expect(help.code).toBe(0)
      expect(help.stdout).toBe((yield* runPlain(["--help"], env, box.cwd)).stdout)
      expect(help.stdout).toMatch(/^Mino \d+\.\d+\.\d+: a terminal coding agent\./)
    }))

  it.scopedLive("in a terminal, /help and an unknown /word never reach the model; // sends a line beginning with /", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const server = yield* scriptedServer([ResponsesServer.textResponse("That is the temporary directory.")])
      const mino = yield* start(box, server.url)
      yield* mino.waitFor("You> ")
      yield* mino.write("/help\r")
      yield* mino.waitFor("Commands (a line that starts with / is never sent to the model):")
      yield* mino.waitFor("Keys at You>:")
      yield* mino.waitFor("You> ")
      yield* mino.write("/tmp is full, why?\r")
      yield* mino.waitFor(ChatCommands.unknown("/tmp"))
      yield* mino.waitFor("You> ")
      expect(yield* server.requests).toHaveLength(0)
      yield* mino.write("//tmp is full, why?\r")
      yield* mino.waitFor("Assistant> That is the temporary directory.\n")
      yield* mino.waitFor("You> ")
      yield* mino.write("\u0004")
      yield* exitsWith(mino, { code: 0, signal: null })
      const requests = yield* server.requests
      expect(requests).toHaveLength(1)
      expect(inputOf(requests[0]!)).toEqual([userMessage("/tmp is full, why?")])
      // Nothing of the commands was saved as a question either.
      expect(recordSummary(sessionRecords(box)).filter((type) => type === "user_input")).toHaveLength(1)
    }))

  it.scopedLive("at 80 columns the banner breaks at word boundaries, never inside a word", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      // A long working directory, so the banner's lines are longer than the terminal.
      const cwd = path.join(box.cwd, "a-project-with-a-rather-long-name", "and-a-subdirectory")
      fs.mkdirSync(cwd, { recursive: true })
      const server = yield* scriptedServer([])
      const bannerAt = (columns: number) =>
        Effect.gen(function*() {
          const mino = yield* Pty.spawn({ argv: [process.execPath, BIN], env: environment(box, server.url), cwd, columns, rows: 24 })
          const opening = (yield* mino.waitFor("You> ")).replace(/\u001b\[[0-9;?]*[a-zA-Z]/g, "")
          yield* mino.write("\u0004")
          yield* exitsWith(mino, { code: 0, signal: null })
          return opening.slice(0, opening.lastIndexOf("You> ")).trimEnd().split("\n")
        })
      const wide = yield* bannerAt(200)
      const narrow = yield* bannerAt(80)
      for (const row of narrow) expect(width(row)).toBeLessThanOrEqual(80)
      expect(narrow.length).toBeGreaterThan(wide.length)
      // The same words, each whole: the directory and the session file's path too.
      const words = (rows: ReadonlyArray<string>) => rows.flatMap((row) => row.split(" ")).filter((word) => word.length > 0)
      expect(words(narrow)).toEqual(words(wide))
      expect(words(narrow)).toContain(cwd)
    }))
})
