/**
 * The package as people get it:
 * - a user: `npm run install:cli` (the README's Install) into a temporary prefix,
 *   with no npm warning, at most 15 MB installed (printed); `mino` on PATH prints
 *   its version and runs a `--demo` turn, approved in a terminal, from a directory
 *   that is not the clone. The install needs no registry, so it runs in every `npm test`;
 * - a library user: the packed tarball installed from the registry into a fresh
 *   project beside `effect@3.22`, with one copy of Effect, a program that runs one
 *   turn with its own tool against the loopback server from `mino-agent/testing`,
 *   typechecked and run. It needs the npm registry, so it runs when
 *   MINO_PACK_SMOKE=1 (`.ci/run` sets it) and is skipped in the offline `npm test`.
 * Both use the `dist/` that `npm test` has just built.
 */
import { execFile } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { answerPrompt, packageVersion } from "../support/MinoProcess.js"
import * as Pty from "../support/Pty.js"

const ROOT = fileURLToPath(new URL("../../", import.meta.url))
const TSC = Path.join(ROOT, "node_modules", "typescript", "bin", "tsc")

interface Ran {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

const run = (file: string, args: ReadonlyArray<string>, cwd: string, timeout = 240_000) =>
  Effect.async<Ran>((resume) => {
    execFile(file, [...args], { cwd, timeout, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, npm_config_update_notifier: "false" } }, (error, stdout, stderr) => {
      resume(Effect.succeed({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr }))
    })
  })

const succeeded = (what: string, ran: Ran) => {
  if (ran.code !== 0) throw new Error(`${what} failed (${ran.code}):\n${ran.stdout}\n${ran.stderr}`)
  return ran.stdout
}

const PackReport = Schema.parseJson(Schema.Tuple(Schema.Struct({ filename: Schema.String, files: Schema.Array(Schema.Struct({ path: Schema.String })) })))

/** A scratch directory (removed with the scope) holding the tarball of the `dist/` just built. */
const packed = Effect.gen(function*() {
  const dir = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "mino-pack-")))
  yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true })))
  // --ignore-scripts: packing must not rebuild dist/ under the other tests.
  const report = succeeded("npm pack", yield* run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", dir], ROOT))
  const [info] = Schema.decodeUnknownSync(PackReport)(report)
  return { dir, tarball: Path.join(dir, info.filename), files: info.files.map((file) => file.path) }
})

const SMOKE = process.env["MINO_PACK_SMOKE"] !== "1"

/** Bytes of the regular files under `dir` (symlinks not followed). */
const directorySize = (dir: string): number =>
  Fs.readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((name) => Fs.lstatSync(Path.join(dir, name)))
    .filter((stat) => stat.isFile())
    .reduce((sum, stat) => sum + stat.size, 0)

const PROGRAM = `import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Effect from "effect/Effect"
import { ResponsesServer, scriptedServer } from "mino-agent/testing"
import { askOnce } from "./library.js"

const program = Effect.gen(function*() {
  const server = yield* scriptedServer([
    ResponsesServer.toolCallResponse([{ call_id: "s1", name: "shout", arguments: JSON.stringify({ text: "hello" }) }]),
    ResponsesServer.textResponse("It says HELLO.")
  ])
  const home = Fs.mkdtempSync(Path.join(Os.tmpdir(), "mino-smoke-home-"))
  const result = yield* askOnce("shout hello", { apiKey: "sk-smoke-test-0123456789", baseURL: server.url, home })
  const requests = yield* server.requests
  const sessions = Path.join(home, ".mino", "sessions")
  const lines = Fs.readdirSync(sessions).filter((name) => name.endsWith(".jsonl")).flatMap((name) => Fs.readFileSync(Path.join(sessions, name), "utf8").trim().split("\\n"))
  Fs.rmSync(home, { recursive: true, force: true })
  return { ...result, requests: requests.length, records: lines.map((line) => JSON.parse(line).type) }
}).pipe(Effect.scoped)

Effect.runPromise(program).then((outcome) => console.log(JSON.stringify(outcome)))
`

const TSCONFIG = {
  compilerOptions: {
    target: "ES2022",
    module: "NodeNext",
    moduleResolution: "NodeNext",
    types: ["node"],
    strict: true,
    exactOptionalPropertyTypes: true,
    noUncheckedIndexedAccess: true,
    // Mino's declarations are checked too, against the consumer's Effect.
    skipLibCheck: false,
    outDir: "out"
  },
  include: ["*.ts"]
}

describe("the packed tarball", () => {
  it.live(
    "`npm run install:cli` installs into a prefix, small and without warnings: `mino` on PATH prints its version and runs a --demo turn from another directory",
    () =>
      Effect.gen(function*() {
        const dir = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "mino-install-")))
        yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true })))
        const prefix = Path.join(dir, "prefix")
        // --prebuilt: the install must not rebuild dist/ under the other tests.
        const installed = yield* run(process.execPath, [Path.join(ROOT, "scripts", "install-cli.mjs"), "--prebuilt", "--prefix", prefix], dir)
        succeeded("npm run install:cli", installed)
        expect(`${installed.stdout}\n${installed.stderr}`).not.toMatch(/npm (warn|WARN|ERR)/)
        const bytes = directorySize(Path.join(prefix, "lib", "node_modules", "mino-agent"))
        console.log(`installed size: ${(bytes / 1e6).toFixed(2)} MB (goal: at most 15 MB)`)
        expect(bytes).toBeGreaterThan(0)
        expect(bytes).toBeLessThanOrEqual(15e6)
        // Not the clone, and nothing of it on PATH: only the prefix's bin and node itself.
        const elsewhere = Path.join(dir, "elsewhere")
        const home = Path.join(dir, "home")
        Fs.mkdirSync(elsewhere)
        Fs.mkdirSync(home)
        const env = {
          HOME: home,
          PATH: [Path.join(prefix, "bin"), Path.dirname(process.execPath), "/usr/bin", "/bin"].join(":"),
          LANG: "C.UTF-8",
          TERM: "xterm",
          NO_COLOR: "1"
        }
        const version = yield* Effect.async<Ran>((resume) => {
          execFile("mino", ["--version"], { cwd: elsewhere, env, timeout: 60_000 }, (error, stdout, stderr) => {
            resume(Effect.succeed({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr }))
          })
        })
        expect(version).toEqual({ code: 0, stdout: `${packageVersion()}\n`, stderr: "" })

        // `env` finds `mino` on PATH, as a shell would, and execs it: the pid is mino's.
        const mino = yield* Pty.spawn({ argv: ["/usr/bin/env", "mino", "--demo"], env, cwd: elsewhere })
        yield* mino.waitFor("You> ", 30_000)
        yield* mino.write("run pwd\r")
        yield* mino.waitFor("Approve this operation? [y/N] ", 30_000)
        yield* answerPrompt(mino, "y")
        yield* mino.waitFor("[Tool result: completed; exit code 0]", 30_000)
        yield* mino.waitFor(`${elsewhere}\n`)
        yield* mino.waitFor("You> ")
        yield* mino.write("\u0004")
        expect(yield* mino.exitedWithin(10_000)).toEqual({ code: 0, signal: null })
        // The demo's conversation was saved under this HOME.
        const saved = Fs.readdirSync(Path.join(home, ".mino"), { recursive: true, encoding: "utf8" })
          .filter((name) => name.endsWith(".jsonl"))
          .map((name) => Fs.readFileSync(Path.join(home, ".mino", name), "utf8"))
        expect(saved.join("")).toContain("\"tool_result\"")
      }).pipe(Effect.scoped),
    300_000
  )

  it.live.skipIf(SMOKE)(
    "installs beside effect@3.22 from the registry, typechecks and runs a turn with its own tool",
    () =>
      Effect.gen(function*() {
        const { dir, tarball, files } = yield* packed
        for (const file of ["LICENSE", "package.json", "bin/mino.js", "dist/cli/main.js", "dist/lib/index.d.ts", "dist/lib/testing.js"]) {
          expect(files).toContain(file)
        }
        expect(files.some((file) => file.startsWith("src/") || file.startsWith("test/"))).toBe(false)

        const project = Path.join(dir, "consumer")
        Fs.mkdirSync(project)
        Fs.writeFileSync(Path.join(project, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }))
        succeeded("npm install", yield* run("npm", [
          "install", "--no-audit", "--no-fund", "--save-exact",
          tarball, "effect@3.22", "@effect/platform@0.97", "@types/node@20.19.43"
        ], project))
        // One Effect: none nested under mino.
        expect(Fs.existsSync(Path.join(project, "node_modules", "mino-agent", "node_modules", "effect"))).toBe(false)
        const effectVersion = JSON.parse(Fs.readFileSync(Path.join(project, "node_modules", "effect", "package.json"), "utf8")).version
        expect(effectVersion).toMatch(/^3\.22\./)

        Fs.copyFileSync(Path.join(ROOT, "examples", "library.ts"), Path.join(project, "library.ts"))
        Fs.writeFileSync(Path.join(project, "main.ts"), PROGRAM)
        Fs.writeFileSync(Path.join(project, "tsconfig.json"), JSON.stringify(TSCONFIG))
        succeeded("tsc", yield* run(process.execPath, [TSC, "-p", "tsconfig.json"], project))
        const output = succeeded("the program", yield* run(process.execPath, ["out/main.js"], project, 60_000))
        expect(JSON.parse(output)).toEqual({
          status: "completed",
          answer: "It says HELLO.",
          requests: 2,
          // The conversation's header (where it started), then the turn.
          records: ["conversation", "user_input", "model_response", "tool_start", "tool_result", "model_response", "turn_end"]
        })
      }).pipe(Effect.scoped),
    300_000
  )
})
