/**
 * Conversations belong to the directory they started in, as the built `mino`
 * shows it: a restart in a directory continues the newest conversation started
 * there (the banner says so, and the model gets that history and no other),
 * a directory with none starts one and says how many exist elsewhere; `--new`
 * and `--continue ID` work, with `--demo` too, whose conversations stay apart;
 * `mino sessions` lists them all, escaped; one chat per conversation, so two
 * directories run at once and a second mino in one directory is busy.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import * as Pty from "../support/Pty.js"
import { BIN, environment, exitsWith, inputOf, runPlain, sandbox, type Sandbox, scriptedServer } from "../support/MinoProcess.js"

/** The questions a request carried, in order. */
const questions = (request: ResponsesServer.LoggedRequest): ReadonlyArray<unknown> =>
  inputOf(request).filter((item) => item["role"] === "user").map((item) => (item["content"] as Array<{ text: string }>)[0]?.text)

const sessionsOf = (box: Sandbox, place = "sessions"): ReadonlyArray<string> => {
  const dir = path.join(box.home, ".mino", place)
  return fs.existsSync(dir) ? fs.readdirSync(dir).filter((name) => name.endsWith(".jsonl")).sort() : []
}

const fileOf = (box: Sandbox, name: string, place = "sessions") => path.join(box.home, ".mino", place, name)

/** A project directory beside the sandbox's working directory (a real path). */
const project = (box: Sandbox, name: string): string => {
  const dir = path.join(path.dirname(box.cwd), name)
  fs.mkdirSync(dir)
  return dir
}

/** One piped start of mino in `cwd` asking `question`; what it printed and the questions the model received. */
const ask = (box: Sandbox, cwd: string, args: ReadonlyArray<string>, question: string) =>
  Effect.gen(function*() {
    const server = yield* scriptedServer([ResponsesServer.textResponse(`answer to ${question}`)])
    const run = yield* runPlain(args, environment(box, server.url), cwd, `${question}\n`)
    const [request] = yield* server.requests
    return { run, sent: request === undefined ? [] : questions(request) }
  }).pipe(Effect.scoped)

/** `mino` in a terminal wide enough that the banner is one line a sentence. */
const chatIn = (box: Sandbox, cwd: string, url: string, args: ReadonlyArray<string> = []) =>
  Pty.spawn({ argv: [process.execPath, BIN, ...args], env: environment(box, url), cwd, columns: 500 })

const TIME = "\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC"
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

describe("a conversation per directory", () => {
  it.scopedLive("A, then B, then A again: the banner says which, and the model gets that directory's history only", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const a = project(box, "projA")
      const b = project(box, "projB")
      const server = yield* scriptedServer(["one", "two", "three"].map((text) => ResponsesServer.textResponse(`Answer ${text}.`)))
      const turn = (cwd: string, question: string, answer: string) =>
        Effect.gen(function*() {
          const mino = yield* chatIn(box, cwd, server.url)
          const opening = yield* mino.waitFor("You> ")
          yield* mino.write(`${question}\r`)
          yield* mino.waitFor(`Assistant> ${answer}\n`)
          yield* mino.waitFor("You> ")
          yield* mino.write("\x04")
          yield* exitsWith(mino, { code: 0, signal: null })
          return opening
        })

      const inA = yield* turn(a, "question in A", "Answer one.")
      const [fileA] = sessionsOf(box)
      expect(inA).toContain(`New conversation, saved in ${fileOf(box, fileA!)}.\n`)
      expect(inA).not.toContain("elsewhere")

      const inB = yield* turn(b, "question in B", "Answer two.")
      const fileB = sessionsOf(box).find((name) => name !== fileA)!
      expect(inB).toContain(`New conversation, saved in ${fileOf(box, fileB)}. 1 conversation started elsewhere: \`mino sessions\` lists it.\n`)
      expect(inB).toContain(`Commands run in ${b} after you approve them.`)

      const againInA = yield* turn(a, "again in A", "Answer three.")
      expect(againInA).toMatch(new RegExp(
        `Continuing the conversation started here on ${TIME} \\(1 turn\\), saved in ${escapeRegExp(fileOf(box, fileA!))}; \`mino --new\` starts another\\.\\n`
      ))
      const sent = (yield* server.requests).map(questions)
      expect(sent).toEqual([["question in A"], ["question in B"], ["question in A", "again in A"]])
      expect(sessionsOf(box)).toHaveLength(2)
    }), 90_000)

  it.scopedLive("--new starts one beside this directory's, which it then continues; --continue takes up any by id, from anywhere", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const b = project(box, "projB")
      const first = yield* ask(box, box.cwd, [], "first")
      const [a] = sessionsOf(box)
      const fileA = fileOf(box, a!)
      expect(first.run.stdout).toContain(`New conversation, saved in ${fileA}.\n`)
      expect((yield* ask(box, box.cwd, [], "second")).sent).toEqual(["first", "second"])
      const before = fs.readFileSync(fileA)

      const fresh = yield* ask(box, box.cwd, ["--new"], "third")
      expect(fresh.sent).toEqual(["third"])
      expect(fresh.run.stdout).toContain("Earlier conversations stay: `mino sessions` lists them, `mino --continue ID` takes one up again.")
      const newer = sessionsOf(box).find((name) => name !== a)!
      expect(newer > a!).toBe(true)
      expect(fs.readFileSync(fileA)).toEqual(before)
      const restart = yield* ask(box, box.cwd, [], "fourth")
      expect(restart.sent).toEqual(["third", "fourth"])
      expect(restart.run.stdout).toContain(`(1 turn), saved in ${fileOf(box, newer)}`)

      // From B: A's first conversation by id; the banner says where it started; commands run in B.
      const old = yield* ask(box, b, ["--continue", a!.replace(/\.jsonl$/, "")], "fifth")
      expect(old.sent).toEqual(["first", "second", "fifth"])
      expect(old.run.stdout).toMatch(new RegExp(`Continuing the conversation started in ${escapeRegExp(box.cwd)} on ${TIME} \\(2 turns\\), saved in ${escapeRegExp(fileA)}\\.\\n`))
      expect(old.run.stdout).toContain(`Commands run in ${b} after`)
      // It still belongs to A: B's own start is a new conversation.
      expect((yield* ask(box, b, [], "sixth")).sent).toEqual(["sixth"])
      expect(sessionsOf(box)).toHaveLength(3)
    }), 90_000)

  it.scopedLive("a directory reached through a symlink is the same directory", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const link = path.join(path.dirname(box.cwd), "work-link")
      fs.symlinkSync(box.cwd, link)
      yield* ask(box, box.cwd, [], "real")
      const through = yield* ask(box, link, [], "linked")
      expect(through.sent).toEqual(["real", "linked"])
      expect(through.run.stdout).toMatch(/Continuing the conversation started here on/)
      expect(through.run.stdout).toContain(`Commands run in ${box.cwd} after`)
      expect(sessionsOf(box)).toHaveLength(1)
    }), 60_000)

  it.scopedLive("a conversation without a header (made before) is never continued on its own; --continue takes it up", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const id = "20260101-000000-0000aaaa"
      fs.mkdirSync(path.join(box.home, ".mino", "sessions"), { recursive: true, mode: 0o700 })
      fs.writeFileSync(fileOf(box, `${id}.jsonl`), [
        { type: "user_input", turn_id: "t1", text: "old question", time: "2026-01-01T00:00:01.000Z" },
        { type: "model_response", turn_id: "t1", output: [{ type: "message", role: "assistant", content: [{ type: "output_text", text: "old answer" }] }] },
        { type: "turn_end", turn_id: "t1", status: "completed" }
      ].map((record) => JSON.stringify(record) + "\n").join(""), { mode: 0o600 })
      const plain = yield* ask(box, box.cwd, [], "new here")
      expect(plain.sent).toEqual(["new here"])
      expect(plain.run.stdout).toContain("1 conversation started elsewhere: `mino sessions` lists it.")
      const taken = yield* ask(box, box.cwd, ["--continue", id], "and again")
      expect(taken.sent).toEqual(["old question", "and again"])
      expect(taken.run.stdout).toMatch(new RegExp(`Continuing the conversation started on ${TIME} \\(1 turn; where is not recorded\\), saved in `))
      // Still without a header: a plain start continues the one made here.
      expect((yield* ask(box, box.cwd, [], "third")).sent).toEqual(["new here", "third"])
    }), 60_000)

  it.scopedLive("--continue with an id that does not exist: one line, exit 2, nothing created", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const { run, sent } = yield* ask(box, box.cwd, ["--continue", "20990101-000000-deadbeef"], "hello")
      expect(run.code).toBe(2)
      expect(sent).toEqual([])
      expect(run.stderr).toMatch(/^mino: no conversation "20990101-000000-deadbeef" in .*\.\n$/)
      expect(sessionsOf(box)).toEqual([])
    }))
})

describe("the demo's conversations", () => {
  it.scopedLive("stay apart: --demo --new and --demo --continue ID work; a real mino never lists or continues them", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const demo = (args: ReadonlyArray<string>, question: string) => runPlain(["--demo", ...args], environment(box, "http://127.0.0.1:9/v1"), box.cwd, `${question}\n`)
      const first = yield* demo([], "run echo first")
      expect(first.code).toBe(0)
      const [one] = sessionsOf(box, "demo")
      expect(first.stdout).toContain(`New conversation, saved in ${fileOf(box, one!, "demo")}.\n`)
      const again = yield* demo([], "run echo again")
      expect(again.stdout).toMatch(/Continuing the conversation started here on .*; `mino --demo --new` starts another\.\n/)
      const fresh = yield* demo(["--new"], "run echo fresh")
      expect(fresh.stdout).toContain("Earlier conversations stay: `mino sessions --demo` lists them, `mino --demo --continue ID` takes one up again.")
      expect(sessionsOf(box, "demo")).toHaveLength(2)
      const back = yield* demo(["--continue", one!.replace(/\.jsonl$/, "")], "run echo back")
      expect(back.stdout).toMatch(/Continuing the conversation started here on .* \(2 turns\)/)
      const log = yield* runPlain(["log", "--demo", one!.replace(/\.jsonl$/, "")], environment(box, "http://127.0.0.1:9/v1"), box.cwd)
      expect(log.stdout.match(/You> run echo \w+/g)).toEqual(["You> run echo first", "You> run echo again", "You> run echo back"])

      // A real mino in the same directory: a new conversation of its own, nothing from the demo.
      const real = yield* ask(box, box.cwd, [], "real question")
      expect(real.sent).toEqual(["real question"])
      expect(real.run.stdout).not.toContain("elsewhere")
      expect(sessionsOf(box)).toHaveLength(1)
      const listed = yield* runPlain(["sessions"], environment(box, "http://127.0.0.1:9/v1"), box.cwd)
      expect(listed.stdout).toContain("1 conversation in ")
      expect(listed.stdout).not.toContain("run echo")
      const demoListed = yield* runPlain(["sessions", "--demo"], environment(box, "http://127.0.0.1:9/v1"), box.cwd)
      expect(demoListed.stdout).toContain("2 demo conversations in ")
      expect(demoListed.stdout).toContain("last question: run echo back")
      const missing = yield* ask(box, box.cwd, ["--continue", one!.replace(/\.jsonl$/, "")], "steal it")
      expect(missing.run.code).toBe(2)
    }), 90_000)
})

describe("mino sessions", () => {
  it.scopedLive("lists every conversation newest first: id, start, turns, directory and last question, escaped", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const hostile = project(box, "proj\u001b[2J\nX\u202e")
      yield* ask(box, box.cwd, [], "first here")
      yield* ask(box, box.cwd, [], "question with \u001b[31mcolour\u001b[0m, then words that go on and on and on past sixty characters")
      yield* ask(box, hostile, [], "in the hostile directory")
      const legacy = "20200101-000000-0000aaaa"
      fs.writeFileSync(fileOf(box, `${legacy}.jsonl`), "", { mode: 0o600 })
      const [here, there] = [sessionsOf(box).find((n) => n !== `${legacy}.jsonl`)!, sessionsOf(box).at(-1)!]
      const run = yield* runPlain(["sessions"], environment(box, "http://127.0.0.1:9/v1"), box.cwd)
      expect(run.code).toBe(0)
      expect(run.stderr).toBe("")
      const entry = (name: string) => name.replace(/\.jsonl$/, "")
      expect(run.stdout).toMatch(new RegExp(
        `^3 conversations in ${escapeRegExp(path.join(box.home, ".mino", "sessions"))}, newest first:\\n\\n` +
          `${entry(there)}  started ${TIME}  1 turn\\n` +
          `  in ${escapeRegExp(hostile.replace("\u001b", "\\e").replace("\n", "\\n").replace("\u202e", "\\u202e"))}\\n` +
          "  last question: in the hostile directory\\n\\n" +
          `${entry(here)}  started ${TIME}  2 turns\\n` +
          `  in ${escapeRegExp(box.cwd)} \\(here\\)\\n` +
          escapeRegExp("  last question: question with \\e[31mcolour\\e[0m, then words that go on and on…") + "\\n\\n" +
          `${legacy}  started 2020-01-01 00:00 UTC  0 turns\\n` +
          "  in a directory not recorded \\(made before Mino recorded it\\)\\n\\n" +
          escapeRegExp("`mino --continue ID` takes one up (its commands then run where you start it); `mino log ID` shows it.") + "\\n$"
      ))
      expect(run.stdout).not.toMatch(/[\u001b\u202e]/)
      // In the hostile directory: its conversation is marked, and its banner names nothing raw.
      const inHostile = yield* runPlain(["sessions"], environment(box, "http://127.0.0.1:9/v1"), hostile)
      expect(inHostile.stdout).toMatch(/ {2}in .*\\e\[2J\\nX\\u202e \(here\)\n/)
      const banner = yield* ask(box, hostile, [], "again")
      expect(banner.run.stdout).toContain("Continuing the conversation started here on")
      expect(banner.run.stdout.split("You>")[0]).not.toMatch(/[\u001b\u202e]/)
      // Taken up from elsewhere, the banner names the hostile directory, escaped.
      const taken = yield* ask(box, box.cwd, ["--continue", entry(there)], "from here")
      const opening = taken.run.stdout.split("You>")[0]!
      expect(opening).toContain(`Continuing the conversation started in ${path.dirname(box.cwd)}/proj\\e[2J\\nX\\u202e on `)
      expect(opening).not.toMatch(/[\u001b\u202e]/)
      const none = yield* runPlain(["sessions", "--demo"], environment(box, "http://127.0.0.1:9/v1"), box.cwd)
      expect(none.stdout).toBe(`No demo conversations yet in ${path.join(box.home, ".mino", "demo")}.\n`)
    }), 90_000)
})

describe("one mino per conversation", () => {
  it.scopedLive("two directories run at once; a second mino in one is refused busy naming it, exit 1; --new beside it works", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const b = project(box, "projB")
      const server = yield* scriptedServer([ResponsesServer.textResponse("First from A."), ResponsesServer.textResponse("From A.")])
      const inA = yield* chatIn(box, box.cwd, server.url)
      yield* inA.waitFor("You> ")
      const inB = yield* chatIn(box, b, server.url)
      yield* inB.waitFor("You> ")
      // Before any question there is no file, yet A's directory is taken.
      expect(sessionsOf(box)).toEqual([])
      const early = yield* runPlain([], environment(box, server.url), box.cwd, "hello\n")
      expect(early.code).toBe(1)
      expect(early.stderr).toBe(
        `mino: the session is busy: another mino process has begun the conversation of ${box.cwd} (nothing asked yet); \`mino --new\` starts another beside it\n`
      )
      yield* inA.write("first in A\r")
      yield* inA.waitFor("Assistant> First from A.\n")
      yield* inA.waitFor("You> ")
      const [fileA] = sessionsOf(box)
      const before = fs.readFileSync(fileOf(box, fileA!))

      const second = yield* runPlain([], environment(box, server.url), box.cwd, "hello\n")
      expect(second.code).toBe(1)
      expect(second.stderr).toBe(
        `mino: the session is busy: another mino process is using the conversation started in ${box.cwd} (${fileA!.replace(/\.jsonl$/, "")}); \`mino --new\` starts another beside it\n`
      )
      expect(fs.readFileSync(fileOf(box, fileA!))).toEqual(before)
      const beside = yield* chatIn(box, box.cwd, server.url, ["--new"])
      yield* beside.waitFor("You> ")
      // B and the one beside have asked nothing: only A's conversation has a file.
      expect(sessionsOf(box)).toEqual([fileA])

      // The first is unaffected.
      yield* inA.write("still there?\r")
      yield* inA.waitFor("Assistant> From A.\n")
      yield* inA.waitFor("You> ")
      for (const mino of [inA, inB, beside]) {
        yield* mino.write("\x04")
        yield* exitsWith(mino, { code: 0, signal: null })
      }
    }), 90_000)

  it.scopedLive("a busy directory whose name holds escape sequences is named escaped", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const hostile = project(box, "p\u001b]0;owned\u0007\n\u202e")
      const first = yield* chatIn(box, hostile, "http://127.0.0.1:9/v1")
      yield* first.waitFor("You> ")
      const second = yield* runPlain([], environment(box, "http://127.0.0.1:9/v1"), hostile, "hello\n")
      expect(second.code).toBe(1)
      expect(second.stderr).toContain("the session is busy: another mino process has begun the conversation of ")
      expect(second.stderr).toContain("p\\e]0;owned\\x07\\n\\u202e (")
      expect(second.stderr).not.toMatch(/[\u0007\u001b\u202e]/)
      expect(second.stderr.split("\n")).toHaveLength(2)
      yield* first.write("\x04")
      yield* exitsWith(first, { code: 0, signal: null })
    }), 60_000)
})
