/**
 * How `mino` starts (scripts/cli-loader.mjs over the split build of
 * scripts/build.mjs): each part of the build that a run loads gets a V8 code
 * cache of its own under `~/.cache/mino`, named by its installation, the build
 * and the Node that made it; the installation's caches of other builds are
 * removed, another installation's are kept (unless unused for a month); a
 * damaged cache only costs time;
 * `NODE_DISABLE_COMPILE_CACHE=1` writes none; and a chat does not load the
 * commands that only print.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { environment, ROOT, runPlain, sandbox } from "../support/MinoProcess.js"

const CACHE_NAME = /^cli-([0-9a-f]{16})-([0-9a-f]{16})-(.+)-(v\d+\.\d+\.\d+)-([a-z0-9]+)\.v8$/

const cacheFiles = (home: string): ReadonlyArray<string> => {
  const dir = path.join(home, ".cache", "mino")
  return fs.existsSync(dir) ? fs.readdirSync(dir).sort() : []
}

/** A demo chat with one question piped in: it loads the chat, the Agent and the SDK. */
const demoTurn = (home: string, cwd: string, extra: Readonly<Record<string, string>> = {}) =>
  Effect.gen(function*() {
    const run = yield* runPlain(["--demo"], environment({ home, cwd }, "http://127.0.0.1:9/v1", extra), cwd, "hello\n")
    expect(run.code).toBe(0)
    expect(run.stdout).toContain("Assistant> ")
    return run
  })

describe("mino's start-up code cache", () => {
  it.scopedLive("one cache per part a run loaded, named by this build and this Node; the printing commands' part is not loaded by a chat", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      yield* demoTurn(box.home, box.cwd)
      const names = cacheFiles(box.home)
      const parsed = names.map((name) => CACHE_NAME.exec(name))
      expect(parsed.every((match) => match !== null)).toBe(true)
      const matches = parsed.filter((match) => match !== null)
      // One installation, one build, this Node.
      expect(new Set(matches.map((match) => match[1])).size).toBe(1)
      expect(new Set(matches.map((match) => match[2])).size).toBe(1)
      expect(matches.every((match) => match[4] === process.version && match[5] === process.arch)).toBe(true)
      // Each names a file of the build; a chat loaded its start, its Agent and the SDK, not Print.
      const parts = matches.map((match) => match[3]!)
      for (const part of parts) expect(fs.existsSync(path.join(ROOT, "dist", "cli", `${part}.cjs`))).toBe(true)
      expect(parts).toEqual(expect.arrayContaining(["app", "openai"]))
      expect(parts.some((part) => part.startsWith("ChatAgent-"))).toBe(true)
      expect(parts.some((part) => part.startsWith("chunk-"))).toBe(true)
      expect(parts.some((part) => part.startsWith("Print-"))).toBe(false)
      // Written aside and renamed: nothing half-written is left.
      expect(names.filter((name) => !name.endsWith(".v8"))).toEqual([])
    }))

  it.scopedLive("a damaged cache only costs time and is rewritten; this installation's caches of other builds and Node versions are removed, another's are kept until unused for a month", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const first = yield* demoTurn(box.home, box.cwd)
      const dir = path.join(box.home, ".cache", "mino")
      const names = cacheFiles(box.home)
      const [app, other] = [names.find((name) => name.includes("-app-"))!, names.find((name) => name.includes("-chunk-"))!]
      const [, install, buildId] = CACHE_NAME.exec(app)!
      const fullSize = fs.statSync(path.join(dir, app)).size
      // Cut in half; and bytes that are no cache at all, at the same length.
      fs.truncateSync(path.join(dir, app), Math.floor(fullSize / 2))
      const otherSize = fs.statSync(path.join(dir, other)).size
      fs.writeFileSync(path.join(dir, other), Buffer.alloc(otherSize, 0x5a))
      const stale = [
        // Another build and another Node of this installation, and a name from before installations were.
        `cli-${install}-0123456789abcdef-app-${process.version}-${process.arch}.v8`,
        `cli-${install}-${buildId}-app-v1.0.0-${process.arch}.v8`,
        `cli-0123456789abcdef-app-${process.version}-${process.arch}.v8`,
        // Another installation's, unused for 31 days.
        `cli-fedcba9876543210-0123456789abcdef-app-${process.version}-${process.arch}.v8`
      ]
      for (const name of stale) fs.writeFileSync(path.join(dir, name), "stale")
      const monthAgo = new Date(Date.now() - 31 * 24 * 60 * 60 * 1000)
      fs.utimesSync(path.join(dir, stale[3]!), monthAgo, monthAgo)
      // Another installation's in use (another checkout's build, a side-by-side run): kept.
      const kept = [`cli-fedcba9876543211-0123456789abcdef-app-${process.version}-${process.arch}.v8`, `cli-fedcba9876543211-${buildId}-app-${process.version}-${process.arch}.v8`]
      for (const name of kept) fs.writeFileSync(path.join(dir, name), "another installation's")

      const second = yield* demoTurn(box.home, box.cwd)
      // The same turn (only the banner's conversation line differs: it continues the first).
      const turn = (run: { readonly stdout: string }) => run.stdout.slice(run.stdout.indexOf("You> "))
      expect(turn(second)).toBe(turn(first))
      const after = cacheFiles(box.home)
      for (const name of stale) expect(after).not.toContain(name)
      expect(after).toEqual([...names, ...kept].sort())
      expect(fs.statSync(path.join(dir, app)).size).toBeGreaterThan(Math.floor(fullSize / 2))
      expect(fs.readFileSync(path.join(dir, other)).every((byte) => byte === 0x5a)).toBe(false)
    }))

  it.scopedLive("NODE_DISABLE_COMPILE_CACHE=1 writes no cache", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      yield* demoTurn(box.home, box.cwd, { NODE_DISABLE_COMPILE_CACHE: "1" })
      expect(fs.existsSync(path.join(box.home, ".cache"))).toBe(false)
    }))
})
