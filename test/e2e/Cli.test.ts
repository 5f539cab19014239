/**
 * The command line as a user meets it: help written for people, `--version`,
 * one line and exit code 2 for a mistake, `-m`, and a question given on the
 * command line asked as the first turn (then the chat goes on).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import * as Effect from "effect/Effect"
import * as ChatCommands from "../../src/cli/ChatCommands.js"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import { width } from "../../src/terminal/input/LineEditor.js"
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

/** A program's standard output, for a helper that must succeed. */
const runProcess = (file: string, args: ReadonlyArray<string>) =>
  Effect.async<string>((resume) => {
    execFile(file, [...args], { timeout: 15_000 }, (error, stdout, stderr) => {
      resume(error === null ? Effect.succeed(stdout) : Effect.die(new Error(`${file} failed: ${stderr}`)))
    })
  })

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
      expect(help).toMatch(/^ {6}--completions SHELL +print a completion script/m)
      for (const name of ["OPENAI_API_KEY", "OPENAI_BASE_URL", "MINO_MODEL", "NO_COLOR", "TERM", "~/.mino/sessions/"]) expect(help).toContain(name)
      expect(help).toMatch(/^ {2}OPENAI_API_KEY .*any value for a local server that needs none/m)
      for (const code of ["0", "1", "2", "130", "128+N"]) expect(help).toMatch(new RegExp(`^ {2}${code.replace("+", "\\+")} +\\S`, "m"))
      expect(help).toContain("mino \"why is the build failing?\"")
      for (const shell of ["bash", "zsh", "fish"]) expect(help).toMatch(new RegExp(`^ {2}${shell} +mino --completions ${shell} > `, "m"))
      // Nothing of @effect/cli's generic text, nor the built-ins Mino refuses.
      for (const internal of ["--wizard", "--log-level", "A user-defined piece of text", "This setting is optional", "USAGE"]) {
        expect(help).not.toContain(internal)
      }
      expect(help).not.toContain("\u001b[")
      const short = yield* runPlain(["-h"], environment(box, "http://127.0.0.1:9/v1"), box.cwd)
      expect(short.stdout).toBe(help)
      // The same plain text under NO_COLOR and TERM=dumb, and with questions piped in (none is read).
      for (const extra of [{ NO_COLOR: "1" }, { TERM: "dumb" }]) {
        expect((yield* runPlain(["--help"], environment(box, "http://127.0.0.1:9/v1", extra), box.cwd)).stdout).toBe(help)
      }
      const piped = yield* runPlain(["--help"], environment(box, "http://127.0.0.1:9/v1"), box.cwd, "hello\n")
      expect(piped).toEqual({ code: 0, stdout: help, stderr: "" })
      expect(fs.existsSync(path.join(box.home, ".mino"))).toBe(false)
    }))

  it.scopedLive("in a terminal, the help is the same plain text", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const env = environment(box, "http://127.0.0.1:9/v1")
      const plain = (yield* runPlain(["--help"], env, box.cwd)).stdout
      const mino = yield* Pty.spawn({ argv: [process.execPath, BIN, "--help"], env, cwd: box.cwd, columns: 200, rows: 50 })
      yield* exitsWith(mino, { code: 0, signal: null })
      expect((yield* mino.rawOutput).toString("utf8").replace(/\r\n/g, "\n")).toBe(plain)
    }))

  it.scopedLive("--completions SHELL prints @effect/cli's script for bash, zsh and fish; bash completes mino's options with it", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const env = environment(box, "http://127.0.0.1:9/v1")
      for (const shell of ["bash", "zsh", "fish"]) {
        const run = yield* runPlain(["--completions", shell], env, box.cwd)
        expect(run).toMatchObject({ code: 0, stderr: "" })
        // fish names a long option `-l model`; bash and zsh write `--model`.
        for (const name of ["model", "continue", "unknown"]) expect(run.stdout).toMatch(new RegExp(`(--|-l )${name}\\b`))
        // Only what Mino takes: not @effect/cli's wizard or log level.
        expect(run.stdout).not.toMatch(/wizard|log-level/)
      }
      const script = path.join(box.cwd, "mino.bash")
      fs.writeFileSync(script, (yield* runPlain(["--completions", "bash"], env, box.cwd)).stdout)
      // What Tab offers after `mino --` and after `mino log --`, as bash's completion machinery asks for it.
      const complete = (words: ReadonlyArray<string>) =>
        runProcess("/bin/bash", [
          "--norc",
          "-c",
          `source ${JSON.stringify(script)}; COMP_WORDS=(${words.map((word) => JSON.stringify(word)).join(" ")}); COMP_CWORD=${
            words.length - 1
          }; _mino_bash_completions mino; printf '%s\\n' "\${COMPREPLY[@]}"`
        ])
      const top = (yield* complete(["mino", "--"])).split("\n")
      expect(top).toEqual(expect.arrayContaining(["--model", "--demo", "--new", "--continue", "--help", "--version", "--completions"]))
      expect(top).not.toEqual(expect.arrayContaining(["--wizard"]))
      expect(top).not.toEqual(expect.arrayContaining(["--log-level"]))
      const log = (yield* complete(["mino", "log", "--"])).split("\n")
      expect(log).toEqual(expect.arrayContaining(["--json", "--unknown", "--demo"]))
      expect(log).not.toEqual(expect.arrayContaining(["--model"]))
      expect((yield* complete(["mino", "l"])).split("\n")).toContain("log")
    }))

  it.scopedLive("a hostile command line is refused with one escaped line and exit 2, and starts nothing", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const env = environment(box, "http://127.0.0.1:9/v1")
      const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
        [["--\u001b]0;owned\u0007"], "mino: unknown option --\\e]0;owned\\x07; `mino --help` lists the options.\n"],
        [["--continue", "../../../etc/passwd"], "not \"../../../etc/passwd\""],
        [["--continue", "20261203-074000-0123abcd/../../x"], "--continue takes a conversation id"],
        [["--completions", "\u001b[2J"], "mino: --completions takes bash, zsh or fish, not \"\\u001b[2J\"."],
        [["log", "a", "b\u202e"], "mino: \"b\\u202e\" is one argument too many for `mino log`"],
        [[`--${"x".repeat(100_000)}`], "mino: unknown option --xxxxxxxx"],
        [["--wizard"], "mino: unknown option --wizard;"],
        [["--log-level", "debug"], "mino: unknown option --log-level;"]
      ]
      for (const [args, said] of cases) {
        const run = yield* runPlain(args, env, box.cwd, "y\n")
        expect(run.code).toBe(2)
        expect(run.stdout).toBe("")
        expect(run.stderr).toContain(said)
        expect(run.stderr.split("\n")).toHaveLength(2)
        expect(run.stderr.length).toBeLessThan(300)
        expect(run.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/)
      }
      expect(fs.existsSync(path.join(box.home, ".mino"))).toBe(false)
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
      yield* mino.write("thanks\r")
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
      // Each start that asks nothing begins a conversation of its own: the ids differ, nothing else.
      const words = (rows: ReadonlyArray<string>) =>
        rows.flatMap((row) => row.split(" ")).filter((word) => word.length > 0).map((word) => word.replace(/\d{8}-\d{6}-[0-9a-f]{8}/, "ID"))
      expect(words(narrow)).toEqual(words(wide))
      expect(words(narrow)).toContain(cwd)
    }))
})
