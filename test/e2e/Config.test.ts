/**
 * Configuration from the contract: the model from `--model`, else `MINO_MODEL`,
 * else the default; the endpoint from `OPENAI_BASE_URL`; the key only in the
 * Authorization header. Piped input still asks questions, but approves nothing.
 */
import * as fs from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { VERSION as SDK_VERSION } from "openai/version"
import { DEFAULT_MODEL } from "../../src/defaults.js"
import { VERSION } from "../../src/version.js"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import { API_KEY, bashCall, bodyOf, environment, runPlain, sandbox, scriptedServer } from "../support/MinoProcess.js"

const modelUsed = (args: ReadonlyArray<string>, extra: Readonly<Record<string, string>>) =>
  Effect.gen(function*() {
    const box = yield* sandbox
    const server = yield* scriptedServer([ResponsesServer.textResponse("ok")])
    const run = yield* runPlain(args, environment(box, server.url, extra), box.cwd, "hello\n")
    expect(run.code).toBe(0)
    const [request] = yield* server.requests
    expect(request?.headers.authorization).toBe(`Bearer ${API_KEY}`)
    // The bundle keeps the SDK's class name, so its token is intact after Mino's.
    expect(request?.headers["user-agent"]).toBe(`Mino/${VERSION} OpenAI/JS ${SDK_VERSION}`)
    return bodyOf(request!)["model"]
  })

describe("configuration", () => {
  it.scopedLive("--model wins over MINO_MODEL, which wins over the default", () =>
    Effect.gen(function*() {
      expect(yield* modelUsed([], {})).toBe(DEFAULT_MODEL)
      expect(yield* modelUsed([], { MINO_MODEL: "from-env" })).toBe("from-env")
      expect(yield* modelUsed(["--model", "from-flag"], { MINO_MODEL: "from-env" })).toBe("from-flag")
    }), 60_000)

  it.scopedLive("with piped input the chat reads questions, and a `y` line is a question that approves nothing", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const server = yield* scriptedServer([
        ResponsesServer.toolCallResponse([bashCall("p1", "touch piped-marker")]),
        ResponsesServer.textResponse("I could not run it."),
        ResponsesServer.textResponse("You said y.")
      ])
      const run = yield* runPlain([], environment(box, server.url), box.cwd, "make a file\ny\n")
      expect(run.code).toBe(0)
      expect(run.stdout).toContain("Denied: standard input is not a terminal")
      expect(run.stdout).toContain("[Tool result: denied]")
      expect(run.stdout).toContain("Assistant> I could not run it.")
      expect(run.stdout).toContain("Assistant> You said y.")
      expect(fs.existsSync(`${box.cwd}/piped-marker`)).toBe(false)
    }), 30_000)
})
