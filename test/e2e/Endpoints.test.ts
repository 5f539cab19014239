/**
 * Issue 29 end to end: the built `mino` in a pseudo-terminal against loopback
 * servers standing in for Hugging Face's router (fixtures rebuilt from
 * huggingface/responses.js @ c0ac6ee, see test/model/endpoints/fixtures/huggingface.build.py),
 * a base URL pasted with `/responses`, a gateway that needs its own header, and
 * a local server's placeholder key.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { PROC } from "../support/Proc.js"
import * as Effect from "effect/Effect"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import { isObject } from "../../src/protocol/ResponseItem.js"
import { load, steps } from "../model/endpoints/Driver.js"
import {
  answerPrompt,
  API_KEY,
  bashCall,
  BIN,
  environment,
  exitsWith,
  inputOf,
  requestsReceived,
  runPlain,
  type Sandbox,
  sandbox,
  scriptedServer,
  sessionFile
} from "../support/MinoProcess.js"
import * as Pty from "../support/Pty.js"

const COUNTER = "counter.txt"
/** The command the router's call asks for here: each run adds a line to a file, so runs can be counted. */
const COMMAND = `echo ran >> ${COUNTER}`

/** A fixture's stream with the conformance command replaced by `COMMAND` (in the call's arguments, and its deltas). */
const withCommand = (name: string): ReadonlyArray<ResponsesServer.Step> =>
  steps(JSON.parse(JSON.stringify(load(name)).split("echo mino-conformance").join(COMMAND)) as ReturnType<typeof load>)

const reasoningIn = (request: ResponsesServer.LoggedRequest): boolean => inputOf(request).some((item) => item["type"] === "reasoning")

/** The router's zod refusal of a reasoning item (fixtures/huggingface.error-reasoning.json), its paths moved to `index`. */
const refusalAt = (index: number): ResponsesServer.HttpError => {
  const file = path.join(import.meta.dirname, "..", "model", "endpoints", "fixtures", "huggingface.error-reasoning.json")
  const fixture = JSON.parse(fs.readFileSync(file, "utf8")) as { status: number; body: unknown }
  const move = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(move)
    if (!isObject(value)) return value
    const moved = Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, move(inner)]))
    const at = value["path"]
    return Array.isArray(at) && at[0] === "input" && at[1] === 1 ? { ...moved, path: ["input", index, ...at.slice(2)] } : moved
  }
  return { status: fixture.status, body: move(fixture.body) }
}

/** Hugging Face's router: a reasoning item anywhere in the input is refused; otherwise the streams in order. */
const router = (streams: ReadonlyArray<ReadonlyArray<ResponsesServer.Step>>) => {
  let played = 0
  return ResponsesServer.make((request) =>
    Effect.sync(() => {
      const input = Array.isArray(isObject(request.body) ? request.body["input"] : undefined) ? (request.body as { input: Array<unknown> }).input : []
      const index = input.findIndex((item) => isObject(item) && item["type"] === "reasoning")
      return index === -1 ? streams[Math.min(played++, streams.length - 1)]! : refusalAt(index)
    })
  )
}

const spawn = (box: Sandbox, url: string, extra: Readonly<Record<string, string>> = {}) =>
  Pty.spawn({ argv: [process.execPath, BIN], env: { ...environment(box, url), ...extra }, cwd: box.cwd })

const ANNOUNCED = "the endpoint takes no reasoning items in its input; asking again without them"

describe("Hugging Face's router, through the built mino", () => {
  it.scopedLive("a reasoning tool turn: the sentence before the call is shown, the call is offered and runs exactly once, the answer arrives after one announced retry", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const server = yield* router([withCommand("huggingface.tool-call"), withCommand("huggingface.after-tool"), steps(load("huggingface.text"))])
      const mino = yield* spawn(box, server.url)
      yield* mino.waitFor("You> ")
      yield* mino.write("Run the counter.\r")
      // The router left this message in_progress; it is text, shown, and the call after it is offered.
      const approval = yield* mino.waitFor("Approve this operation? [y/N] ")
      expect(approval).toContain("Assistant> I'll run that for you.")
      expect(approval).toContain(`Command: "${COMMAND}"`)
      yield* answerPrompt(mino, "y")
      yield* mino.waitFor("[Tool result: completed; exit code 0]")
      yield* mino.waitFor(ANNOUNCED)
      yield* mino.waitFor("It printed mino-conformance.")
      yield* mino.waitFor("You> ")
      // The next turn: no reasoning from the start, no second announcement.
      yield* mino.write("Thanks.\r")
      yield* mino.waitFor("Hello! How can I help?")
      yield* mino.waitFor("You> ")
      const requests = yield* requestsReceived(server, 4)
      expect(requests.map(reasoningIn)).toEqual([false, true, false, false])
      yield* mino.write("\x04")
      yield* exitsWith(mino, { code: 0, signal: null })
      // Run exactly once, whatever was retried.
      expect(fs.readFileSync(path.join(box.cwd, COUNTER), "utf8")).toBe("ran\n")
      const screen = yield* mino.screen
      expect(screen.split(ANNOUNCED).length).toBe(2)
      expect(screen).not.toContain("invalid response")
      expect(screen).not.toContain(API_KEY)
      expect(fs.readFileSync(sessionFile(box), "utf8")).not.toContain(API_KEY)
    }), 60_000)
})

describe("a base URL pasted with its path", () => {
  for (const suffix of ["/responses", "/responses/", "/"]) {
    it.scopedLive(`OPENAI_BASE_URL ending in ${suffix} reaches /v1/responses`, () =>
      Effect.gen(function*() {
        const box = yield* sandbox
        const server = yield* ResponsesServer.make(() => Effect.succeed(ResponsesServer.textResponse("Reached.")))
        const mino = yield* spawn(box, `${server.url}${suffix}`)
        yield* mino.waitFor("You> ")
        yield* mino.write("hello\r")
        yield* mino.waitFor("Assistant> Reached.")
        yield* mino.waitFor("You> ")
        const [request] = yield* requestsReceived(server, 1)
        expect(request?.url).toBe("/v1/responses")
        yield* mino.write("\x04")
        yield* exitsWith(mino, { code: 0, signal: null })
      }), 60_000)
  }
})

describe("a gateway's header (MINO_HEADERS)", () => {
  const TOKEN = "cfgw-e2e-token-5a4b3c2d1e"

  it.scopedLive("reaches the server with every request and never appears on the screen or in the session file, even echoed back", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      let n = 0
      const server = yield* ResponsesServer.make((request) =>
        Effect.sync(() =>
          n++ === 0
            // A gateway that repeats what it got: in the model's text, then in an error.
            ? ResponsesServer.textResponse(`Your gateway sent ${String(request.headers["cf-aig-authorization"])}.`)
            : { status: 403, body: { error: { message: `token ${TOKEN} is not allowed here` } } }
        )
      )
      const mino = yield* spawn(box, server.url, { MINO_HEADERS: `cf-aig-authorization: Bearer ${TOKEN}` })
      yield* mino.waitFor("You> ")
      yield* mino.write("hello\r")
      yield* mino.waitFor("Your gateway sent [redacted].")
      yield* mino.waitFor("You> ")
      yield* mino.write("again\r")
      yield* mino.waitFor("HTTP 403: token [redacted] is not allowed here")
      yield* mino.waitFor("You> ")
      const requests = yield* requestsReceived(server, 2)
      expect(requests.map((request) => request.headers["cf-aig-authorization"])).toEqual([`Bearer ${TOKEN}`, `Bearer ${TOKEN}`])
      expect(requests.map((request) => request.headers["authorization"])).toEqual([`Bearer ${API_KEY}`, `Bearer ${API_KEY}`])
      yield* mino.write("\x04")
      yield* exitsWith(mino, { code: 0, signal: null })
      const screen = yield* mino.screen
      expect(screen).not.toContain(TOKEN)
      expect(fs.readFileSync(sessionFile(box), "utf8")).not.toContain(TOKEN)
    }), 60_000)

  it.scopedLive("a command that reads them back from Mino's environment gets the value redacted on the screen, in the file and in the next request", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      // Mino's own /proc/<pid>/environ, as any command running with the user's uid can read it.
      const readBack = `tr '\\0' '\\n' < ${PROC}/$PPID/environ | grep '^MINO_HEADERS='`
      const server = yield* scriptedServer([
        ResponsesServer.toolCallResponse([bashCall("call_env_1", readBack)]),
        ResponsesServer.textResponse("I saw it.")
      ])
      const mino = yield* spawn(box, server.url, { MINO_HEADERS: `cf-aig-authorization: Bearer ${TOKEN}` })
      yield* mino.waitFor("You> ")
      yield* mino.write("What is in your environment?\r")
      yield* mino.waitFor("Approve this operation? [y/N] ")
      yield* answerPrompt(mino, "y")
      yield* mino.waitFor("[Tool result: completed; exit code 0]\nMINO_HEADERS=cf-aig-authorization: [redacted]\n")
      yield* mino.waitFor("I saw it.")
      yield* mino.waitFor("You> ")
      const requests = yield* requestsReceived(server, 2)
      for (const request of requests) expect(JSON.stringify(request.body)).not.toContain(TOKEN)
      yield* mino.write("\x04")
      yield* exitsWith(mino, { code: 0, signal: null })
      expect(yield* mino.screen).not.toContain(TOKEN)
      expect(fs.readFileSync(sessionFile(box), "utf8")).not.toContain(TOKEN)
    }), 60_000)

  const refused: ReadonlyArray<readonly [string, string, string]> = [
    ["an authorization header", `authorization: Bearer ${TOKEN}`, "mino: MINO_HEADERS line 1: authorization carries OPENAI_API_KEY, which Mino sends itself; set the key there, not in MINO_HEADERS.\n"],
    ["the key in a gateway header", `cf-aig-authorization: Bearer ${API_KEY}`, "mino: MINO_HEADERS line 1: cf-aig-authorization holds OPENAI_API_KEY; the key never goes in MINO_HEADERS.\n"],
    ["a CR/LF smuggling a second header", `x-gw: ${TOKEN}\r\nx-evil: 1`, "mino: MINO_HEADERS line 1: the value of x-gw holds a control or non-ASCII character.\n"]
  ]
  for (const [name, value, line] of refused) {
    it.scopedLive(`with ${name} is refused at start: one line, exit 2, nothing sent, no value shown`, () =>
      Effect.gen(function*() {
        const box = yield* sandbox
        const server = yield* ResponsesServer.make(() => Effect.succeed(ResponsesServer.textResponse("no")))
        const run = yield* runPlain(["hello"], { ...environment(box, server.url), MINO_HEADERS: value }, box.cwd)
        expect(run).toEqual({ code: 2, stdout: "", stderr: line })
        expect(yield* server.requests).toEqual([])
      }), 30_000)
  }

  it("--help names MINO_HEADERS", () =>
    Effect.runPromise(Effect.gen(function*() {
      const run = yield* runPlain(["--help"], { PATH: "/usr/bin:/bin", HOME: "/nonexistent" }, "/")
      expect(run.stdout).toMatch(/^ {2}MINO_HEADERS +headers for a gateway, one `Name: value` a line .*never the key; values redacted like it$/m)
    })), 30_000)
})

describe("a placeholder key", () => {
  const WARNING = "the API key is shorter than 8 characters"

  it.scopedLive("for a server on loopback is sent, with no warning", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const server = yield* ResponsesServer.make(() => Effect.succeed(ResponsesServer.textResponse("Hi.")))
      const mino = yield* spawn(box, server.url, { OPENAI_API_KEY: "ollama" })
      yield* mino.waitFor("You> ")
      yield* mino.write("hello\r")
      yield* mino.waitFor("Assistant> Hi.")
      yield* mino.waitFor("You> ")
      const [request] = yield* requestsReceived(server, 1)
      expect(request?.headers["authorization"]).toBe("Bearer ollama")
      expect(yield* mino.screen).not.toContain(WARNING)
      yield* mino.write("\x04")
      yield* exitsWith(mino, { code: 0, signal: null })
    }), 60_000)

  // 192.0.2.0/24 is TEST-NET-1 (RFC 5737): never routed; nothing is sent before a question.
  for (const url of ["http://192.0.2.1:9/v1", "http://0.0.0.0:9/v1"]) {
    it.scopedLive(`sent anywhere else (${url}) is still warned about, once, at start`, () =>
      Effect.gen(function*() {
        const box = yield* sandbox
        const mino = yield* spawn(box, url, { OPENAI_API_KEY: "x" })
        const opening = yield* mino.waitFor("You> ")
        expect(opening.split(WARNING).length).toBe(2)
        yield* mino.write("\x04")
        yield* exitsWith(mino, { code: 0, signal: null })
      }), 60_000)
  }
})
