/**
 * Mino reads only the configuration it documents, and writes only where it
 * belongs: the openai SDK's own variables add nothing to a request and change no
 * header's value; an empty or
 * relative HOME (or XDG_CACHE_HOME) creates nothing in the current directory, not
 * even the start-up code cache; a startup directory that was deleted or cannot be
 * read is one line and exit code 2.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import { API_KEY, BIN, environment, requestsReceived, runPlain, sandbox, scriptedServer } from "../support/MinoProcess.js"

/** The SDK's implicit variables, set as an attacker (or a forgotten shell profile) would. */
const SDK_VARIABLES = {
  OPENAI_CUSTOM_HEADERS: "X-Evil: 1\nAuthorization: Bearer stolen\nOpenAI-Organization: org-evil",
  OPENAI_ORG_ID: "org-from-the-environment",
  OPENAI_PROJECT_ID: "proj-from-the-environment",
  OPENAI_ADMIN_KEY: "sk-admin-from-the-environment",
  OPENAI_WEBHOOK_SECRET: "whsec-from-the-environment",
  OPENAI_LOG: "debug"
}

/** OPENAI_CUSTOM_HEADERS naming only headers a request has anyway: the SDK would merge these values over its own. */
const OWN_NAMES = {
  OPENAI_CUSTOM_HEADERS: [
    "User-Agent: LEAKUA",
    "Accept: leak/accept",
    "Content-Type: leak/type",
    "X-Stainless-Lang: LEAKLANG",
    "X-Stainless-OS: LEAKOS",
    "X-Stainless-Retry-Count: 99",
    "X-Stainless-Timeout: 1",
    "Authorization: Bearer stolen",
    "Connection: close"
  ].join("\n")
}

/** One piped question; the headers of the request that reached the model, and what Mino printed. */
const headersOfOneRequest = (extra: Readonly<Record<string, string>>) =>
  Effect.gen(function*() {
    const box = yield* sandbox
    const server = yield* scriptedServer([ResponsesServer.textResponse("Hello.")])
    const run = yield* runPlain([], environment(box, server.url, extra), box.cwd, "hi\n")
    expect(run.code).toBe(0)
    const [request] = yield* requestsReceived(server, 1)
    return { headers: request?.headers ?? {}, output: run.stderr }
  }).pipe(Effect.scoped)

/** Everything in `dir`, recursively. */
const entries = (dir: string): ReadonlyArray<string> => fs.readdirSync(dir, { recursive: true }).map(String).sort()

describe("only documented configuration", () => {
  it.live("OPENAI_CUSTOM_HEADERS, OPENAI_ORG_ID, OPENAI_PROJECT_ID, OPENAI_LOG...: no extra header arrives, the key is Mino's, nothing is logged", () =>
    Effect.gen(function*() {
      const plain = yield* headersOfOneRequest({})
      const tampered = yield* headersOfOneRequest(SDK_VARIABLES)
      const names = (headers: Readonly<Record<string, unknown>>) => Object.keys(headers).sort()
      expect(names(tampered.headers)).toEqual(names(plain.headers))
      expect(tampered.headers["authorization"]).toBe(`Bearer ${API_KEY}`)
      for (const name of ["x-evil", "openai-organization", "openai-project"]) expect(tampered.headers[name]).toBeUndefined()
      const values = JSON.stringify(tampered.headers)
      for (const value of ["stolen", "org-evil", "org-from-the-environment", "proj-from-the-environment", "sk-admin", "whsec"]) {
        expect(values).not.toContain(value)
      }
      // OPENAI_LOG=debug logs nothing: the SDK logs only what Mino lets it (nothing).
      expect(tampered.output).toBe(plain.output)
      expect(tampered.output).toBe("")
    }), 60_000)

  it.live("OPENAI_CUSTOM_HEADERS naming only headers Mino sends (User-Agent, Accept, X-Stainless-...): the headers that arrive equal a plain run's, values included", () =>
    Effect.gen(function*() {
      // Each run has its own server: only the port in Host differs.
      const withoutHost = ({ host: _host, ...rest }: Readonly<Record<string, unknown>>) => rest
      const plain = withoutHost((yield* headersOfOneRequest({})).headers)
      const tampered = withoutHost((yield* headersOfOneRequest(OWN_NAMES)).headers)
      // Every header is Mino's own (docs/configuration.md), and none comes from the variable.
      expect(Object.keys(plain).sort()).toEqual(["accept", "authorization", "connection", "content-length", "content-type", "user-agent"])
      expect(tampered).toEqual(plain)
      expect(JSON.stringify(tampered)).not.toMatch(/LEAK|leak\/|stolen|99/)
    }), 60_000)
})

describe("files only where they belong", () => {
  it.live("HOME empty or relative, XDG_CACHE_HOME relative: nothing is created in the current directory (chat, --version, --help, log; 12 starts)", () =>
    Effect.gen(function*() {
      const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mino-files-")))
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(base, { recursive: true, force: true })))
      const cwd = path.join(base, "work")
      const home = path.join(base, "home")
      fs.mkdirSync(cwd)
      fs.mkdirSync(home)
      const runs: ReadonlyArray<readonly [Readonly<Record<string, string>>, ReadonlyArray<string>, number]> = [
        [{ HOME: "" }, ["--version"], 0],
        [{ HOME: "" }, ["--help"], 0],
        [{ HOME: "" }, [], 2],
        [{ HOME: "" }, ["log"], 2],
        [{ HOME: "relative-home" }, ["--version"], 0],
        [{ HOME: "relative-home" }, [], 2],
        [{ HOME: "relative-home" }, ["log"], 2],
        [{ HOME: "." }, ["--version"], 0],
        [{ HOME: "." }, [], 2],
        [{ HOME: home, XDG_CACHE_HOME: "relative-cache" }, ["--version"], 0],
        [{ HOME: home, XDG_CACHE_HOME: "." }, ["--version"], 0],
        [{ HOME: home, XDG_CACHE_HOME: "relative-cache" }, ["--demo"], 0]
      ]
      for (const [env, args, code] of runs) {
        const run = yield* runPlain(args, { PATH: "/usr/bin:/bin", OPENAI_API_KEY: API_KEY, ...env }, cwd)
        expect({ env, args, code: run.code }).toEqual({ env, args, code })
        expect({ env, args, created: entries(cwd) }).toEqual({ env, args, created: [] })
      }
      // A valid HOME gets its cache where it belongs (the demo ran a whole chat).
      expect(entries(path.join(home, ".cache", "mino")).some((name) => name.endsWith(".v8"))).toBe(true)
    }).pipe(Effect.scoped), 120_000)

  it.live("a start that is refused (no OPENAI_API_KEY) writes no code cache, even under a valid HOME", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const run = yield* runPlain([], { PATH: "/usr/bin:/bin", HOME: box.home }, box.cwd)
      expect(run.code).toBe(2)
      expect(run.stderr).toContain("OPENAI_API_KEY")
      expect(entries(box.home)).toEqual([])
      expect(entries(box.cwd)).toEqual([])
    }).pipe(Effect.scoped))
})

describe("the startup directory", () => {
  it.live("deleted before Mino starts: one line naming the problem, exit code 2, no stack trace", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const gone = path.join(box.cwd, "gone")
      fs.mkdirSync(gone)
      // Started in the directory, which is then removed before Mino looks at it.
      const output = execFileSync("/bin/bash", ["-c", `cd '${gone}' && rmdir '${gone}' && '${process.execPath}' '${BIN}' 2>&1; echo "exit=$?"`], {
        env: environment(box, "http://127.0.0.1:9"),
        encoding: "utf8"
      })
      expect(output).toBe("mino: the current directory cannot be read (was it deleted?); start mino in another one.\nexit=2\n")
    }).pipe(Effect.scoped))

  it.live.skipIf(process.getuid?.() !== 0)("one that cannot be read (another user's 0711 directory, as nobody): one line, exit code 2", () =>
    Effect.gen(function*() {
      const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mino-unreadable-")))
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(base, { recursive: true, force: true })))
      fs.chmodSync(base, 0o711)
      const home = path.join(base, "home")
      fs.mkdirSync(home, { mode: 0o777 })
      fs.chmodSync(home, 0o777)
      const output = execFileSync("setpriv", ["--reuid=nobody", "--regid=nogroup", "--clear-groups", "/bin/bash", "-c",
        `cd '${base}' && '${process.execPath}' '${BIN}' 2>&1; echo "exit=$?"`], {
        env: { PATH: "/usr/bin:/bin", HOME: home, OPENAI_API_KEY: API_KEY },
        encoding: "utf8"
      })
      expect(output).toBe("mino: the current directory cannot be read (was it deleted?); start mino in another one.\nexit=2\n")
    }).pipe(Effect.scoped))
})
