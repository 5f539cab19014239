/**
 * The command line without a terminal: configuration errors are one line and a
 * usage exit code, and `--version` prints the package's version.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { environment, packageVersion, runPlain, sandbox } from "../support/MinoProcess.js"

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

  it.scopedLive("--version prints the package version", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const run = yield* runPlain(["--version"], environment(box, "http://127.0.0.1:9/v1"), box.cwd)
      expect(run.code).toBe(0)
      expect(run.stdout).toBe(`${packageVersion()}\n`)
    }))

  it.scopedLive("an unknown option exits 2 without starting a chat", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const run = yield* runPlain(["--bogus"], environment(box, "http://127.0.0.1:9/v1"), box.cwd)
      expect(run.code).toBe(2)
      expect(run.stdout).not.toContain("You> ")
      expect(run.stderr).toBe("mino: Received unknown argument: '--bogus'\n")
      expect(fs.existsSync(path.join(box.home, ".mino"))).toBe(false)
    }))

  it.scopedLive("--help describes the command and its options, without colour when piped", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const run = yield* runPlain(["--help"], environment(box, "http://127.0.0.1:9/v1"), box.cwd)
      expect(run.code).toBe(0)
      expect(run.stdout).toContain("A terminal coding agent")
      expect(run.stdout).toContain("--model")
      expect(run.stdout).toContain("--demo")
      expect(run.stdout).not.toContain("\u001b[")
    }))
})
