/**
 * Daily use (issue 30, items 2, 5, 6, 8), as the built `mino` shows it in an
 * 80-column pseudo-terminal: the banner names a non-OpenAI endpoint and
 * AGENTS.md; `/status` shows the model, the endpoint, the conversation, AGENTS.md
 * and the tokens of a scripted `usage`, kept in the session file; `/new` starts a
 * second conversation whose request carries none of the first's turns; Tab
 * completes `/st` to `/status`; a start followed by Ctrl+D leaves no file; the
 * exit line names the way back; `~/.mino/config.json` is used, a variable
 * overrides it, a key in it is refused, and `--help` says where each came from.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import * as Pty from "../support/Pty.js"
import { API_KEY, BIN, bodyOf, environment, exitsWith, inputOf, runPlain, sandbox, type Sandbox, scriptedServer } from "../support/MinoProcess.js"

const sessionsOf = (box: Sandbox): ReadonlyArray<string> => {
  const dir = path.join(box.home, ".mino", "sessions")
  return fs.existsSync(dir) ? fs.readdirSync(dir).filter((name) => name.endsWith(".jsonl")).sort() : []
}

const chat = (box: Sandbox, url: string, args: ReadonlyArray<string> = [], extra: Readonly<Record<string, string>> = {}) =>
  Pty.spawn({ argv: [process.execPath, BIN, ...args], env: environment(box, url, extra), cwd: box.cwd, columns: 80 })

/** The questions a request carried, in order. */
const questions = (request: ResponsesServer.LoggedRequest): ReadonlyArray<unknown> =>
  inputOf(request).filter((item) => item["role"] === "user").map((item) => (item["content"] as Array<{ text: string }>)[0]?.text)

/** The screen with the pty's wrapping undone: what a line said, whatever its row breaks. */
const unwrapped = (screen: string) => screen.replace(/\n/g, " ").replace(/ +/g, " ")

describe("where you are", () => {
  it.scopedLive("the banner names the endpoint and AGENTS.md; /status shows model, endpoint, conversation, AGENTS.md and the scripted tokens", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      fs.writeFileSync(path.join(box.cwd, "AGENTS.md"), "Use tabs.\n")
      const server = yield* scriptedServer([
        ResponsesServer.textResponse("First answer.", { usage: { input_tokens: 1234, output_tokens: 56 } }),
        ResponsesServer.textResponse("Second answer.", { usage: { input_tokens: 2000, output_tokens: 100 } })
      ])
      const port = new URL(server.url).port
      const mino = yield* chat(box, server.url)
      const opening = unwrapped(yield* mino.waitFor("You> "))
      expect(opening).toContain(`Endpoint 127.0.0.1:${port} (from OPENAI_BASE_URL). AGENTS.md is used.`)
      for (const [question, answer] of [["one", "First answer."], ["two", "Second answer."]] as const) {
        yield* mino.write(`${question}\r`)
        yield* mino.waitFor(`Assistant> ${answer}`)
        yield* mino.waitFor("You> ")
      }
      yield* mino.write("/status\r")
      const status = unwrapped(yield* mino.waitFor("You> "))
      const [file] = sessionsOf(box)
      expect(status).toContain("Model: gpt-5.1 (the default)")
      expect(status).toContain(`Endpoint: ${server.url} (from OPENAI_BASE_URL)`)
      expect(status).toContain(`Conversation: ${file!.replace(/\.jsonl$/, "")}, 2 turns, in ${path.join(box.home, ".mino", "sessions", file!)}`)
      expect(status).toContain("AGENTS.md: used (10 bytes, sent with every request)")
      expect(status).toContain("Tokens: last turn 2,000 in, 100 out; conversation so far 3,234 in, 156 out")
      // gpt-5.1's window is in the table: 2,100 of 400,000 is 1%.
      expect(status).toContain("1% of 400,000 tokens used (2,100)")
      yield* mino.write("\x04")
      yield* exitsWith(mino, { code: 0, signal: null })
      // Kept in the session file: each response's usage on its record.
      const records = fs.readFileSync(path.join(box.home, ".mino", "sessions", file!), "utf8").trim().split("\n").map((line) => JSON.parse(line))
      expect(records.filter((record) => record.type === "model_response").map((record) => record.usage)).toEqual([
        { input_tokens: 1234, output_tokens: 56 },
        { input_tokens: 2000, output_tokens: 100 }
      ])
      // mino log reads it as it reads files without usage.
      const log = yield* runPlain(["log"], environment(box, server.url), box.cwd)
      expect(log.code).toBe(0)
      expect(log.stdout).toContain("You> two")
    }), 60_000)
})

describe("slash commands", () => {
  it.scopedLive("/new gives a request without the earlier turns and a second conversation file; Tab completes /st to /status", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const server = yield* scriptedServer(["A", "B", "C"].map((text) => ResponsesServer.textResponse(`Answer ${text}.`)))
      const mino = yield* chat(box, server.url)
      yield* mino.waitFor("You> ")
      yield* mino.write("before new\r")
      yield* mino.waitFor("Answer A.")
      yield* mino.waitFor("You> ")
      yield* mino.write("/new\r")
      const renewed = unwrapped(yield* mino.waitFor("You> "))
      expect(renewed).toContain("New conversation, saved in ")
      yield* mino.write("after new\r")
      yield* mino.waitFor("Answer B.")
      yield* mino.waitFor("You> ")
      const sent = (yield* server.requests).map(questions)
      expect(sent).toEqual([["before new"], ["after new"]])
      expect(sessionsOf(box)).toHaveLength(2)

      yield* mino.write("/st\t")
      yield* mino.waitFor("/status")
      yield* mino.write("\r")
      const status = unwrapped(yield* mino.waitFor("You> "))
      expect(status).toContain("Conversation: ")
      expect(status).toContain("1 turn, in ")
      expect(status).toContain(sessionsOf(box)[1]!)
      // A name that could draw (a bidi override) is refused; an escape sequence never reaches the line at all.
      yield* mino.write("/model bad\u202ename\r")
      const refused = unwrapped(yield* mino.waitFor("You> "))
      expect(refused).toContain("that is not a model's name")
      expect(refused).not.toContain("\u202e")
      yield* mino.write("/model gpt-4o\r")
      expect(unwrapped(yield* mino.waitFor("You> "))).toContain("From the next question on, the model is gpt-4o.")
      yield* mino.write("/status\r")
      expect(unwrapped(yield* mino.waitFor("You> "))).toContain("Model: gpt-4o (set by /model)")
      // The same conversation goes on, with the model named.
      yield* mino.write("after model\r")
      yield* mino.waitFor("Answer C.")
      yield* mino.waitFor("You> ")
      const [, second, third] = yield* server.requests
      expect([bodyOf(second!)["model"], bodyOf(third!)["model"]]).toEqual(["gpt-5.1", "gpt-4o"])
      expect(questions(third!)).toEqual(["after new", "after model"])
      yield* mino.write("\x04")
      yield* exitsWith(mino, { code: 0, signal: null })
    }), 60_000)
})

describe("no empty conversations", () => {
  it.scopedLive("a start followed by Ctrl+D leaves no file; after a question, the exit line names the way back", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const server = yield* scriptedServer([ResponsesServer.textResponse("Kept.")])
      const first = yield* chat(box, server.url)
      yield* first.waitFor("You> ")
      yield* first.write("\x04")
      expect(unwrapped(yield* first.waitFor(/no conversation was kept\./))).toContain("Nothing was asked, so no conversation was kept.")
      yield* exitsWith(first, { code: 0, signal: null })
      expect(sessionsOf(box)).toEqual([])

      const second = yield* chat(box, server.url)
      yield* second.waitFor("You> ")
      yield* second.write("keep this\r")
      yield* second.waitFor("Kept.")
      yield* second.waitFor("You> ")
      yield* second.write("\x04")
      const id = sessionsOf(box)[0]!.replace(/\.jsonl$/, "")
      const line = unwrapped(yield* second.waitFor(/from anywhere\./))
      expect(line).toContain(`To come back to this conversation: \`mino\` here, or \`mino --continue ${id}\` from anywhere.`)
      yield* exitsWith(second, { code: 0, signal: null })

      // --new, then nothing asked: no second file, and the line names the one a plain start takes up.
      const third = yield* chat(box, server.url, ["--new"])
      yield* third.waitFor("You> ")
      yield* third.write("/new\r")
      yield* third.waitFor("You> ")
      yield* third.write("\x04")
      expect(unwrapped(yield* third.waitFor(/continues \S+\./))).toContain(`Nothing was asked in the new conversation, so it was not kept; \`mino\` here continues ${id}.`)
      yield* exitsWith(third, { code: 0, signal: null })
      expect(sessionsOf(box)).toEqual([`${id}.jsonl`])
    }), 60_000)
})

describe("the configuration file", () => {
  const writeConfig = (box: Sandbox, settings: unknown, mode = 0o600) => {
    fs.mkdirSync(path.join(box.home, ".mino"), { recursive: true, mode: 0o700 })
    const file = path.join(box.home, ".mino", "config.json")
    fs.writeFileSync(file, typeof settings === "string" ? settings : JSON.stringify(settings), { mode })
    fs.chmodSync(file, mode)
    return file
  }

  it.scopedLive("its values are used, a variable overrides them, and --help says where each came from", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const server = yield* scriptedServer(["one", "two"].map((text) => ResponsesServer.textResponse(text)))
      writeConfig(box, { model: "from-file", endpoint: server.url, headers: { "cf-aig-authorization": "Bearer gateway-token-0123" } })
      const { OPENAI_BASE_URL: _, ...env } = environment(box, "unused")
      const fromFile = yield* runPlain([], env, box.cwd, "hello\n")
      expect(fromFile.code).toBe(0)
      const help = yield* runPlain(["--help"], env, box.cwd)
      expect(help.stdout).toMatch(/^ {2}model +from-file \(from ~\/\.mino\/config\.json\)$/m)
      // Headers by name only, never their values.
      expect(help.stdout).toMatch(/^ {2}headers +cf-aig-authorization \(from ~\/\.mino\/config\.json\)$/m)
      expect(help.stdout).not.toContain("gateway-token-0123")
      expect((yield* server.requests)[0]?.headers["cf-aig-authorization"]).toBe("Bearer gateway-token-0123")
      expect(help.stdout).toMatch(new RegExp(`^ {2}endpoint +${server.url.replace(/[.]/g, "\\.")} \\(from ~/\\.mino/config\\.json\\)$`, "m"))

      const overridden = yield* runPlain([], { ...env, MINO_MODEL: "from-env" }, box.cwd, "hello\n")
      expect(overridden.code).toBe(0)
      expect((yield* server.requests).map((request) => bodyOf(request)["model"])).toEqual(["from-file", "from-env"])
      const helpEnv = yield* runPlain(["--help"], { ...env, MINO_MODEL: "from-env" }, box.cwd)
      expect(helpEnv.stdout).toMatch(/^ {2}model +from-env \(from MINO_MODEL\)$/m)
      // /status in a chat says the same; --model wins over both.
      const status = yield* runPlain(["--model", "from-flag"], { ...env, MINO_MODEL: "from-env" }, box.cwd, "/status\n")
      expect(status.stdout).toContain("Model:        from-flag (from --model)")
      expect(status.stdout).toContain(`Endpoint:     ${server.url} (from ~/.mino/config.json)`)
      expect(status.stdout).toContain(`Endpoint 127.0.0.1:${new URL(server.url).port} (from ~/.mino/config.json).`)
    }), 60_000)

  it.scopedLive("a key in it (any spelling), a group-writable file, a symlink or a FIFO: one line, exit 2, the file untouched", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const env = environment(box, "http://127.0.0.1:9/v1")
      const refused = (settings: unknown, mode = 0o600) =>
        Effect.gen(function*() {
          const file = writeConfig(box, settings, mode)
          const before = fs.readFileSync(file)
          const run = yield* runPlain([], env, box.cwd, "hello\n")
          expect(run.code).toBe(2)
          expect(run.stderr.split("\n")).toHaveLength(2)
          expect(fs.readFileSync(file)).toEqual(before)
          expect(sessionsOf(box)).toEqual([])
          return run.stderr
        })
      for (const settings of [{ apiKey: "x" }, { OPENAI_API_KEY: "x" }, { "api-key": "x" }, { model: API_KEY }, { headers: { Authorization: "Bearer x" } }, `{"model":"gpt","token":"x"}`]) {
        const stderr = yield* refused(settings)
        expect(stderr).toContain("~/.mino/config.json holds an API key; the key never goes in the file")
        expect(stderr).not.toContain(API_KEY)
      }
      expect(yield* refused({ model: "m" }, 0o620)).toContain("can be written by others")
      expect(yield* refused("{not json")).toContain("is not valid JSON")
      // --help still prints, and says the file is refused.
      const help = yield* runPlain(["--help"], env, box.cwd)
      expect(help.code).toBe(0)
      expect(help.stdout).toContain("Settings now: ~/.mino/config.json is not valid JSON (a chat will not start until it is fixed).")
      expect(yield* refused({ modle: "m" })).toContain("unknown setting \"modle\"")
      expect(yield* refused(`{"model":"x${" ".repeat(70_000)}"}`)).toContain("larger than 64 KiB")
      const file = path.join(box.home, ".mino", "config.json")
      fs.rmSync(file)
      fs.writeFileSync(path.join(box.home, "elsewhere.json"), "{}")
      fs.symlinkSync(path.join(box.home, "elsewhere.json"), file)
      const link = yield* runPlain([], env, box.cwd, "hello\n")
      expect([link.code, link.stderr]).toEqual([2, "mino: ~/.mino/config.json is a symbolic link, not a regular file; Mino does not open it.\n"])
      fs.rmSync(file)
      const { execFileSync } = yield* Effect.promise(() => import("node:child_process"))
      execFileSync("mkfifo", [file])
      const fifo = yield* runPlain([], env, box.cwd, "hello\n")
      expect([fifo.code, fifo.stderr]).toEqual([2, "mino: ~/.mino/config.json is a FIFO, not a regular file; Mino does not open it.\n"])
    }), 60_000)
})
