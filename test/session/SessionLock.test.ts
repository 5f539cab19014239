/**
 * The lock follows the file, not its name: the same conversation reached
 * through a symlinked HOME, a path spelled another way, or a bind mount is busy;
 * another user cannot take or block it; the kernel releases it when the holder
 * dies, even by SIGKILL; of two processes started at once exactly one opens.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Exit from "effect/Exit"
import { SessionStore } from "../../src/session/SessionStore.js"
import { PYTHON, SCRIPT as FLOCK_SCRIPT, holdLock, tryLock } from "../support/Flock.js"
import { tempDir } from "../support/Harness.js"
import { Secrets } from "../../src/security/Secrets.js"

const HOLDER = fileURLToPath(new URL("../support/hold-session.mjs", import.meta.url))

const withStore = <A, E>(home: string, use: Effect.Effect<A, E, SessionStore>) =>
  Effect.scoped(Effect.provide(use, SessionStore.layer({ home }).pipe(Layer.provide(Secrets.layerNone))))

/** Whether opening the session under `home` is refused as busy. */
const busy = (home: string) =>
  Effect.map(Effect.exit(withStore(home, Effect.void)), (exit) =>
    Exit.isFailure(exit) && String(exit.cause).includes("SessionBusy"))

/** The same session, first under `home`, then under `other`: the second must be busy. */
const heldThen = (home: string, other: string) =>
  withStore(home, Effect.flatMap(SessionStore, () => busy(other)))

/** A holder process: resolves with its first line ("opened" or the refusal). */
const holder = (home: string, user?: string, ask = false) => {
  const argv = user === undefined ? [process.execPath, HOLDER] : ["setpriv", `--reuid=${user}`, `--regid=${user === "nobody" ? "nogroup" : user}`, "--clear-groups", process.execPath, HOLDER]
  const child = spawn(argv[0]!, argv.slice(1), { env: { HOME: home, PATH: process.env["PATH"] ?? "/usr/bin:/bin", ...(ask ? { HOLD_ASK: "1" } : {}) }, stdio: ["pipe", "pipe", "inherit"] })
  const first = new Promise<string>((resolve) => {
    let text = ""
    child.stdout.on("data", (chunk: Buffer) => {
      text += chunk.toString()
      if (text.includes("\n")) resolve(text.split("\n")[0]!)
    })
    child.on("exit", () => resolve(text.trim()))
  })
  return { child, first }
}

const exited = (child: ChildProcess) => new Promise<void>((resolve) => child.exitCode !== null || child.signalCode !== null ? resolve() : child.on("exit", () => resolve()))

describe("the session lock", () => {
  it.live("a HOME reached through a symlink is the same session: busy", () =>
    Effect.gen(function*() {
      const home = tempDir("lock")
      const link = `${home}-link`
      Fs.symlinkSync(home, link)
      expect(yield* heldThen(home, link)).toBe(true)
      expect(yield* heldThen(link, home)).toBe(true)
    }))

  it.live("a HOME spelled another way (through `..`, a trailing slash) is the same session: busy", () =>
    Effect.gen(function*() {
      const home = tempDir("lock")
      const other = Path.join(home, "..", Path.basename(home)) + "/./"
      expect(yield* heldThen(home, `${Path.dirname(home)}/./${Path.basename(home)}/`)).toBe(true)
      expect(yield* heldThen(other, home)).toBe(true)
    }))

  it.live("the conversation's lock reached through a relative path (the lock is on the inode): busy", () =>
    Effect.gen(function*() {
      const home = tempDir("lock")
      yield* withStore(home, Effect.void)
      const status = yield* withStore(home, Effect.flatMap(SessionStore, (store) => Effect.sync(() => {
        // Another process in another directory, given the same lock file by a relative route.
        const parent = Path.dirname(home)
        const lock = Path.relative(parent, Path.join(home, ".mino", "sessions", `${store.info.id}.lock`))
        return tryLock(lock, { cwd: parent })
      })))
      expect(status).toBe("busy")
    }))

  it.live("the directory's lock is held only while choosing: a start waits for one that is choosing, and frees it once open", () =>
    Effect.gen(function*() {
      const home = tempDir("lock")
      yield* withStore(home, Effect.void)
      const directoryLock = Path.join(home, ".mino", "sessions", "conversations.lock")
      // Another start choosing for 1 s: this one waits, then opens (the conversation is not the other's).
      const chooser = holdLock(directoryLock, 1)
      yield* Effect.promise(() => new Promise((resolve) => chooser.stdout?.once("data", resolve)))
      const opened = yield* Effect.exit(withStore(home, Effect.void))
      expect(Exit.isSuccess(opened)).toBe(true)
      yield* Effect.promise(() => exited(chooser))
      // While a session is open, the directory's lock is free.
      const status = yield* withStore(home, Effect.sync(() => tryLock(directoryLock)))
      expect(status).toBe("took")
    }), 30_000)

  const canMount = (() => {
    if (process.getuid?.() !== 0) return false
    const a = tempDir("mnt")
    const b = tempDir("mnt")
    try {
      execFileSync("mount", ["--bind", a, b], { stdio: "ignore" })
      execFileSync("umount", [b], { stdio: "ignore" })
      return true
    } catch {
      return false
    }
  })()

  it.live.skipIf(!canMount)("a HOME reached through a bind mount is the same session: busy", () =>
    Effect.gen(function*() {
      const home = tempDir("lock")
      const mount = tempDir("lock-bind")
      execFileSync("mount", ["--bind", home, mount])
      try {
        expect(yield* heldThen(home, mount)).toBe(true)
        expect(yield* heldThen(mount, home)).toBe(true)
      } finally {
        execFileSync("umount", [mount])
      }
    }))

  it.live.skipIf(process.getuid?.() !== 0)("another user (nobody) can neither take nor block the lock", () =>
    Effect.gen(function*() {
      const home = tempDir("lock")
      // A HOME the other user may enter, as on a shared machine; ~/.mino/sessions stays 0700.
      Fs.chmodSync(home, 0o755)
      yield* withStore(home, Effect.void)
      const sessions = Path.join(home, ".mino", "sessions")
      // The squatter, as nobody, tries the lock file and every name the old lock used.
      const nobody = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
      expect(tryLock(`${sessions}/conversations.lock`, { prefix: nobody })).toMatch(/^error: PermissionError/)
      const squatter = execFileSync(nobody[0]!, [...nobody.slice(1), "bash", "-c", `exec 3<>${home}/.mino/squat 2>/dev/null && echo wrote-mino || echo no-mino`], { encoding: "utf8" })
      expect(squatter).toContain("no-mino")
      // While nobody keeps trying in the background, the owner opens the session.
      const pest = spawn("setpriv", ["--reuid=nobody", "--regid=nogroup", "--clear-groups", "bash", "-c",
        `while true; do ${PYTHON} -c "$0" ${sessions}/conversations.lock 1 2>/dev/null; sleep 0.01; done`, FLOCK_SCRIPT], { stdio: "ignore" })
      try {
        const opened = yield* Effect.exit(withStore(home, Effect.void))
        expect(Exit.isSuccess(opened)).toBe(true)
        // And a holder of another uid cannot be started on the owner's session at all.
        const other = holder(home, "nobody")
        const line = yield* Effect.promise(() => other.first)
        expect(line).toMatch(/^Session(OpenError|Busy)/)
        expect(line).not.toBe("opened")
        yield* Effect.promise(() => exited(other.child))
      } finally {
        pest.kill("SIGKILL")
      }
    }), 30_000)

  it.live("the kernel releases the lock when its holder is SIGKILLed", () =>
    Effect.gen(function*() {
      const home = tempDir("lock")
      const first = holder(home)
      expect(yield* Effect.promise(() => first.first)).toBe("opened")
      expect(yield* busy(home)).toBe(true)
      first.child.kill("SIGKILL")
      yield* Effect.promise(() => exited(first.child))
      expect(yield* busy(home)).toBe(false)
    }), 30_000)

  it.live("two processes started at once on a fresh HOME: exactly one opens, one conversation file", () =>
    Effect.gen(function*() {
      for (let round = 0; round < 3; round++) {
        const home = tempDir("lock")
        // Each asks a question once it has opened: only the one that opened makes a file.
        const starts = [holder(home, undefined, true), holder(home, undefined, true)]
        const lines = yield* Effect.promise(() => Promise.all(starts.map((s) => s.first)))
        expect(lines.filter((line) => line === "opened")).toHaveLength(1)
        expect(lines.filter((line) => line.startsWith("SessionBusy: the session is busy"))).toHaveLength(1)
        for (const start of starts) start.child.stdin?.end()
        yield* Effect.promise(() => Promise.all(starts.map((s) => exited(s.child))))
        expect(Fs.readdirSync(Path.join(home, ".mino", "sessions")).filter((f) => f.endsWith(".jsonl"))).toHaveLength(1)
      }
    }), 60_000)
})
