/**
 * Several conversations per HOME: `--new` starts one (the old file stays), a
 * plain restart continues the newest, `--continue ID` takes an older one up
 * again, and the banner says which of these happened.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ResponsesServer from "../../src/model/ResponsesServer.js"
import { environment, inputOf, runPlain, sandbox, type Sandbox, scriptedServer } from "../support/MinoProcess.js"

/** The questions a request carried, in order. */
const questions = (request: ResponsesServer.LoggedRequest): ReadonlyArray<unknown> =>
  inputOf(request).filter((item) => item["role"] === "user").map((item) => (item["content"] as Array<{ text: string }>)[0]?.text)

const conversations = (box: Sandbox): ReadonlyArray<string> =>
  fs.readdirSync(path.join(box.home, ".mino", "sessions")).filter((name) => name.endsWith(".jsonl")).sort()

/** One piped start of mino asking `question`; returns what it printed and what the model received. */
const ask = (box: Sandbox, args: ReadonlyArray<string>, question: string) =>
  Effect.gen(function*() {
    const server = yield* scriptedServer([ResponsesServer.textResponse(`answer to ${question}`)])
    const run = yield* runPlain(args, environment(box, server.url), box.cwd, `${question}\n`)
    const [request] = yield* server.requests
    return { run, sent: request === undefined ? [] : questions(request) }
  }).pipe(Effect.scoped)

describe("conversations", () => {
  it.scopedLive("--new starts a conversation beside the old one; a restart continues the newest; --continue takes up the old", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const first = yield* ask(box, [], "first")
      expect(first.run.code).toBe(0)
      const [a] = conversations(box)
      const fileA = path.join(box.home, ".mino", "sessions", a!)
      expect(first.run.stdout).toContain(`New conversation, saved in ${fileA}.\n`)
      expect(first.run.stdout).not.toContain("Earlier conversations stay")

      const second = yield* ask(box, [], "second")
      expect(second.sent).toEqual(["first", "second"])
      expect(second.run.stdout).toMatch(
        new RegExp(`Continuing the conversation started \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC \\(1 turn\\), saved in ${fileA}; \`mino --new\` starts another\\.\\n`)
      )
      const before = fs.readFileSync(fileA)

      const fresh = yield* ask(box, ["--new"], "third")
      expect(fresh.sent).toEqual(["third"])
      expect(fresh.run.stdout).toContain("Earlier conversations stay; `mino --continue ID` takes one up again.")
      const [, b] = conversations(box)
      expect(conversations(box)).toHaveLength(2)
      expect(b! > a!).toBe(true)
      // The old file is untouched.
      expect(fs.readFileSync(fileA)).toEqual(before)

      // A plain restart continues the newest: the one --new started.
      const restart = yield* ask(box, [], "fourth")
      expect(restart.sent).toEqual(["third", "fourth"])
      expect(restart.run.stdout).toContain(`(1 turn), saved in ${path.join(box.home, ".mino", "sessions", b!)}`)

      const old = yield* ask(box, ["--continue", a!.replace(/\.jsonl$/, "")], "fifth")
      expect(old.sent).toEqual(["first", "second", "fifth"])
      expect(old.run.stdout).toContain("(2 turns)")
      expect(conversations(box)).toHaveLength(2)
    }), 60_000)

  it.scopedLive("--continue with an id that does not exist: one line, exit 2, nothing created", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const { run, sent } = yield* ask(box, ["--continue", "20990101-000000-deadbeef"], "hello")
      expect(run.code).toBe(2)
      expect(sent).toEqual([])
      expect(run.stderr).toMatch(/^mino: no conversation "20990101-000000-deadbeef" in .*\.\n$/)
      expect(conversations(box)).toEqual([])
    }))
})
