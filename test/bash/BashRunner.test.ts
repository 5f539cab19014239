import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { PROC } from "../support/Proc.js"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as fc from "fast-check"
import * as Secrets from "../../src/security/Secrets.js"
import { type BashOperation, BashRunner, move, type Phase, PIPE_DRAIN_MS, type Signals } from "../../src/tools/bash/BashRunner.js"
import * as ChildEnvironment from "../../src/tools/bash/ChildEnvironment.js"

const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mino-bash-runner-")))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const operation = (command: string, overrides: Partial<BashOperation> = {}): BashOperation => ({
  command,
  cwd: dir,
  env: ChildEnvironment.make({ parentEnv: process.env, cwd: dir, secrets: Secrets.make("") }),
  timeoutMs: 10_000,
  outputLimitBytes: 65_536,
  ...overrides
})

/** Runs `op`; when `cancel` completes, the runner is told to stop with its cause (as the Agent tells a running tool). */
const run = (op: BashOperation, cancel?: Effect.Effect<string>) =>
  Effect.scoped(Effect.gen(function* () {
    const runner = yield* BashRunner
    if (cancel === undefined) return yield* runner.run(op)
    let stop: ((cause: string) => void) | undefined
    yield* Effect.forkScoped(Effect.flatMap(cancel, (cause) => Effect.sync(() => stop?.(cause))))
    return yield* runner.run(op, { onCancel: (registered) => void (stop = registered) })
  })).pipe(Effect.provide(BashRunner.layer), Effect.provide(Secrets.Secrets.layerNone))

/** Blocks this thread, and with it Node's event loop and every timer of Mino's, as a SIGSTOP would. */
const freezeEventLoop = (ms: number): void => {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
}

const timed = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const startedAt = Date.now()
    const value = yield* self
    return { value, elapsedMs: Date.now() - startedAt }
  })

const firstLinePid = (output: string): number => {
  const pid = Number(output.split("\n")[0])
  expect(Number.isInteger(pid) && pid > 1).toBe(true)
  return pid
}

// `${PROC}/<pid>/stat` is "pid (comm) state ppid pgrp ..."; comm may hold spaces.
const statFields = (pid: string | number): ReadonlyArray<string> | undefined => {
  try {
    const stat = fs.readFileSync(`${PROC}/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  } catch {
    return undefined
  }
}

const isRunning = (fields: ReadonlyArray<string> | undefined): boolean =>
  fields !== undefined && fields[0] !== "Z" && fields[0] !== "X"

/**
 * A group is gone when `kill(-pgid, 0)` says ESRCH. Where PID 1 does not reap
 * orphans (some containers), killed members linger as zombies and keep the
 * group "present", so zombies are then discounted by reading /proc.
 */
const groupIsGone = (pgid: number): boolean => {
  try {
    process.kill(-pgid, 0)
  } catch (error) {
    if (error instanceof Error && "code" in error && error.code === "ESRCH") return true
  }
  if (!fs.existsSync(PROC)) return false
  return fs
    .readdirSync(PROC)
    .filter((entry) => /^\d+$/.test(entry))
    .every((pid) => {
      const fields = statFields(pid)
      return !(isRunning(fields) && fields?.[2] === String(pgid))
    })
}

/** The lifeline watcher `parent` spawned: its `/bin/sh` child that leads a session of its own. */
const watcherOf = (parent: number): number => {
  const watchers = fs.readdirSync(PROC).filter((entry) => /^\d+$/.test(entry)).map(Number).filter((pid) => {
    const fields = statFields(pid)
    return isRunning(fields) && fields?.[1] === String(parent) && fields[3] === String(pid) &&
      fs.readFileSync(`${PROC}/${pid}/cmdline`, "utf8").includes("armed=")
  })
  expect(watchers).toHaveLength(1)
  return watchers[0] ?? 0
}

const processIsGone = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
  } catch {
    return true
  }
  return fs.existsSync(PROC) && !isRunning(statFields(pid))
}

/** Polls `check` until it holds or `withinMs` passes; SIGKILL delivery is asynchronous. */
const eventually = (check: () => boolean, withinMs = 2_000) =>
  Effect.gen(function* () {
    const deadline = Date.now() + withinMs
    while (!check()) {
      if (Date.now() > deadline) return false
      yield* Effect.sleep("20 millis")
    }
    return true
  })

describe("BashRunner", () => {
  it.live("exit code 0 is completed, with the output", () =>
    Effect.gen(function* () {
      const result = yield* run(operation("echo hello"))
      expect(result).toEqual({ status: "completed", output: "hello\n", exit_code: 0 })
    })
  )

  it.live("a nonzero exit code is failed, with the exit code", () =>
    Effect.gen(function* () {
      const result = yield* run(operation("echo oops; exit 3"))
      expect(result.status).toBe("failed")
      expect(result.exit_code).toBe(3)
      expect(result.output).toBe("oops\n")
      expect(result.truncated).toBeUndefined()
    })
  )

  it.live("stderr is captured in the same output as stdout", () =>
    Effect.gen(function* () {
      const result = yield* run(operation("echo to-stdout; echo to-stderr >&2; exit 1"))
      expect(result.output).toContain("to-stdout\n")
      expect(result.output).toContain("to-stderr\n")
      expect(result.exit_code).toBe(1)
    })
  )

  it.live("runs in the given directory with exactly the given environment", () =>
    Effect.gen(function* () {
      const result = yield* run(
        operation("pwd; env", { env: { PATH: "/usr/bin:/bin", MINO_GIVEN: "yes", PWD: dir } })
      )
      const [pwd, ...lines] = result.output.trimEnd().split("\n")
      expect(pwd).toBe(dir)
      const names = lines.map((line) => line.slice(0, line.indexOf("=")))
      expect(lines).toContain("MINO_GIVEN=yes")
      // bash itself adds SHLVL and _; nothing else may appear.
      expect(names.filter((name) => !["PATH", "MINO_GIVEN", "PWD", "SHLVL", "_"].includes(name))).toEqual([])
    })
  )

  it.live("stdin is /dev/null, so a command reading it does not wait", () =>
    Effect.gen(function* () {
      const result = yield* run(operation("cat; echo \"read done: $?\""))
      expect(result).toEqual({ status: "completed", output: "read done: 0\n", exit_code: 0 })
    })
  )

  it.live("output is decoded as UTF-8, invalid bytes as replacement characters", () =>
    Effect.gen(function* () {
      const result = yield* run(operation("printf '\\xe2\\x82\\xac \\xff'"))
      expect(result.output).toBe("€ \ufffd")
    })
  )
})

describe("BashRunner: the output limit", () => {
  it.live("output of exactly the limit is complete, one byte more is truncated", () =>
    Effect.gen(function* () {
      const exact = yield* run(operation("printf 0123456789", { outputLimitBytes: 10 }))
      expect(exact).toEqual({ status: "completed", output: "0123456789", exit_code: 0 })
      const over = yield* run(operation("printf 0123456789A", { outputLimitBytes: 10 }))
      // Whether bash exited by itself or was killed at the limit first, the cut capture says what was dropped.
      expect(over.output).toBe("0123456789\n[output limit of 10 bytes reached; process group killed; the first 10 bytes of the output are shown, the rest was dropped]")
      expect(over.truncated).toBe(true)
    })
  )

  it.live("overflow keeps the first 64 KiB, marks truncated and kills the process group", () =>
    Effect.gen(function* () {
      const { elapsedMs, value: result } = yield* timed(run(operation("echo $$; yes")))
      expect(result.truncated).toBe(true)
      expect(result.status).toBe("failed")
      expect(result.exit_code).toBeUndefined()
      expect(result.signal).toBe("SIGKILL")
      // The start of the capture, then a note that says the group was killed and what was dropped,
      // all within 65,536 bytes: what is saved and sent is what is capped.
      const shown = /\[output limit of 64 KiB reached; process group killed; the first ([\d,]+) bytes of the output are shown, the rest was dropped\]$/.exec(result.output)
      expect(shown).not.toBeNull()
      const kept = Number(shown?.[1]?.replaceAll(",", ""))
      expect(Buffer.byteLength(result.output)).toBeLessThanOrEqual(65_536)
      expect(kept).toBeGreaterThan(65_000)
      expect(result.output.slice(0, kept)).toMatch(/^\d+\n(y\n)+y?$/)
      expect(result.output.split("\n")[1]).toBe("y")
      expect(elapsedMs).toBeLessThan(5_000)
      const pgid = firstLinePid(result.output)
      expect(yield* eventually(() => groupIsGone(pgid))).toBe(true)
    })
  )

  it.live("undecodable output (head -c 70000 /dev/urandom) is counted as sent: at most 65,536 bytes with its note, 5 runs", () =>
    Effect.gen(function* () {
      for (let i = 0; i < 5; i++) {
        const result = yield* run(operation("head -c 70000 /dev/urandom"))
        const bytes = Buffer.byteLength(result.output)
        expect(result.truncated).toBe(true)
        // Each undecodable byte became U+FFFD, three bytes: 64 KiB of random bytes decode to far more.
        expect(bytes).toBeLessThanOrEqual(65_536)
        expect(bytes).toBeGreaterThan(65_000)
        expect(result.output).toMatch(/; the first [\d,]+ bytes of the output are shown, the rest was dropped\]$/)
        expect(Buffer.from(result.output, "utf8").toString("utf8")).toBe(result.output)
      }
    })
  )
})

describe("BashRunner: cut output", () => {
  it.live("undecodable output under the capture limit that decodes past 64 KiB is cut to fit, saying so", () =>
    Effect.gen(function* () {
      const result = yield* run(operation("head -c 40000 /dev/urandom"))
      expect(result.status).toBe("completed")
      expect(result.truncated).toBeUndefined()
      expect(Buffer.byteLength(result.output)).toBeLessThanOrEqual(65_536)
      expect(result.output).toMatch(/\[the first [\d,]+ of its [\d,]+ bytes are shown, the rest was dropped to fit 65,536 bytes\]$/)
    })
  )

  it.live("multi-byte output cut at the limit never ends in a broken character, whichever byte the limit falls on (4 characters x 4 offsets)", () =>
    Effect.gen(function* () {
      for (const char of ["é", "€", "😀", "a"]) {
        for (let pad = 0; pad < 4; pad++) {
          const result = yield* run(operation(`printf '%${pad}s' ''; yes '${char}${char}${char}' | tr -d '\\n'`))
          const body = result.output.slice(0, result.output.lastIndexOf("\n[output limit"))
          expect({ char, pad, bytes: Buffer.byteLength(result.output) <= 65_536 }).toEqual({ char, pad, bytes: true })
          expect({ char, pad, fffd: body.includes("\ufffd") }).toEqual({ char, pad, fffd: false })
          expect(body).toBe(" ".repeat(pad) + char.repeat([...body].length - pad))
        }
      }
    })
  )

  it.live("a capture limit that falls inside the key redacts what is left of it, at every offset", () =>
    Effect.gen(function* () {
      const key = "sk-runner-cut-0123456789abcdef"
      fs.writeFileSync(path.join(dir, "key.txt"), key)
      for (let before = 0; before <= key.length; before++) {
        // The limit falls `before` characters into the key (the command reads it: it never holds it).
        const result = yield* Effect.scoped(Effect.flatMap(BashRunner, (runner) =>
          runner.run(operation(`printf 'log: '; cat key.txt; yes`, { outputLimitBytes: 5 + before }))
        )).pipe(Effect.provide(BashRunner.layer), Effect.provide(Secrets.Secrets.layer(key)))
        const body = result.output.slice(0, result.output.indexOf("\n[output limit"))
        const expected = before >= Secrets.MIN_PREFIX ? "log: [redacted]" : `log: ${key.slice(0, before)}`
        expect({ before, body }).toEqual({ before, body: expected })
      }
    })
  )
})

describe("BashRunner: the deadline and the group kill", () => {
  it.live("a command that stops the lifeline's watcher (`kill -STOP`) still times out, and the next command continues the watcher", () =>
    Effect.scoped(Effect.gen(function* () {
      const runner = yield* BashRunner
      // The watcher is started with the first command: a child of this process, in a session of its own.
      yield* runner.run(operation("true"))
      const watcher = watcherOf(process.pid)
      const { elapsedMs, value: result } = yield* timed(runner.run(operation(`echo $$; kill -STOP ${watcher}; sleep 30`, { timeoutMs: 300 })))
      expect(result.status).toBe("failed")
      expect(result.timed_out).toBe(true)
      expect(result.output).toMatch(/\n\[timed out after 0\.3 s; process group killed\]$/)
      // The deadline, then at most the wait for bash's reaping (1 s), with room for a loaded machine.
      expect(elapsedMs).toBeLessThan(10_000)
      expect(yield* eventually(() => groupIsGone(firstLinePid(result.output)))).toBe(true)
      expect(statFields(watcher)?.[0]).toBe("T")
      const next = yield* runner.run(operation("echo next"))
      expect(next).toMatchObject({ status: "completed", exit_code: 0, output: "next\n" })
      // Continued before the next command was armed: it holds deadlines again.
      expect(isRunning(statFields(watcher)) && statFields(watcher)?.[0] !== "T").toBe(true)
      expect(watcherOf(process.pid)).toBe(watcher)
    })).pipe(Effect.provide(BashRunner.layer), Effect.provide(Secrets.Secrets.layerNone))
  )

  it.live("a watcher a command stopped, and left stopped, still ends when the runner's scope closes", () =>
    Effect.gen(function* () {
      const watcher = yield* Effect.scoped(Effect.gen(function* () {
        const runner = yield* BashRunner
        yield* runner.run(operation("true"))
        const watcher = watcherOf(process.pid)
        yield* runner.run(operation(`kill -STOP ${watcher}`))
        expect(yield* eventually(() => statFields(watcher)?.[0] === "T")).toBe(true)
        return watcher
      })).pipe(Effect.provide(BashRunner.layer), Effect.provide(Secrets.Secrets.layerNone))
      expect(yield* eventually(() => !isRunning(statFields(watcher)))).toBe(true)
    })
  )

  it.live("a timeout kills the process group; the result is failed and says it timed out", () =>
    Effect.gen(function* () {
      const { elapsedMs, value: result } = yield* timed(
        run(operation("echo $$; sleep 30", { timeoutMs: 300 }))
      )
      expect(result.status).toBe("failed")
      expect(result.timed_out).toBe(true)
      expect(result.exit_code).toBeUndefined()
      expect(result.output).toMatch(/\n\[timed out after 0\.3 s; process group killed\]$/)
      expect(elapsedMs).toBeLessThan(5_000)
      const pgid = firstLinePid(result.output)
      expect(yield* eventually(() => groupIsGone(pgid))).toBe(true)
    })
  )

  it.live("a command that ignores SIGTERM still dies on timeout", () =>
    Effect.gen(function* () {
      const { elapsedMs, value: result } = yield* timed(
        run(operation("trap '' TERM; echo $$; sleep 30; sleep 30", { timeoutMs: 300 }))
      )
      expect(result.status).toBe("failed")
      expect(result.timed_out).toBe(true)
      expect(elapsedMs).toBeLessThan(5_000)
      const pgid = firstLinePid(result.output)
      expect(yield* eventually(() => groupIsGone(pgid))).toBe(true)
    })
  )

  it.live("a background child holding the pipes does not delay the result and is killed afterwards", () =>
    Effect.gen(function* () {
      const { elapsedMs, value: result } = yield* timed(run(operation("echo $$; sleep 30 & echo $!; exit 0")))
      expect(result.status).toBe("completed")
      expect(result.exit_code).toBe(0)
      expect(elapsedMs).toBeLessThan(5_000)
      const [pgid, sleepPid] = result.output.trimEnd().split("\n").map(Number)
      expect(yield* eventually(() => processIsGone(sleepPid ?? 0))).toBe(true)
      expect(yield* eventually(() => groupIsGone(pgid ?? 0))).toBe(true)
    })
  )

  it.scopedLive("a child that left the group holds the pipes for at most the drain bound", () =>
    Effect.gen(function* () {
      // setsid puts sleep beyond the group kill: Mino cannot stop it, only stop waiting for it.
      // bash waits until the child has really left its group, so the exit-time kill cannot race it.
      const command = `setsid sleep 30 & p=$!; while read -r _ _ _ _ g _ < ${PROC}/$p/stat && [ "$g" = $$ ]; do sleep 0.01; done; echo $p`
      const { elapsedMs, value: result } = yield* timed(run(operation(command)))
      const escaped = firstLinePid(result.output)
      yield* Effect.addFinalizer(() => Effect.sync(() => process.kill(escaped, "SIGKILL")))
      expect(result).toEqual({ status: "completed", output: `${escaped}\n`, exit_code: 0 })
      expect(processIsGone(escaped)).toBe(false)
      expect(elapsedMs).toBeGreaterThanOrEqual(PIPE_DRAIN_MS - 50)
      expect(elapsedMs).toBeLessThan(5_000)
    })
  )
})

describe("BashRunner: how it ended", () => {
  it.live("killed by a signal is failed without an exit code, and the output names the signal", () =>
    Effect.gen(function* () {
      const result = yield* run(operation("echo before; kill -TERM $$"))
      expect(result.status).toBe("failed")
      expect(result.exit_code).toBeUndefined()
      expect(result.output).toBe("before\n[terminated by signal SIGTERM]")
    })
  )

  it.live("a missing working directory is a failed result that says so", () =>
    Effect.gen(function* () {
      const missing = path.join(dir, "does-not-exist")
      const result = yield* run(operation("echo never", { cwd: missing }))
      expect(result.status).toBe("failed")
      expect(result.exit_code).toBeUndefined()
      expect(result.output).toContain(missing)
      expect(result.output).toContain("does not exist")
    })
  )

  it.live("an environment the OS cannot take is a failed result, not a crash", () =>
    Effect.gen(function* () {
      const result = yield* run(operation("echo never", { env: { BROKEN: "a\u0000b" } }))
      expect(result.status).toBe("failed")
      expect(result.output).toMatch(/^Could not start \/bin\/bash: /)
    })
  )

  it.live("a cancelled command keeps the output captured so far and names the cause", () =>
    Effect.gen(function* () {
      const pidFile = path.join(dir, "cancel.pid")
      const started = eventually(() => fs.existsSync(pidFile) && fs.readFileSync(pidFile, "utf8").endsWith("\n"), 10_000)
      const cancel = Effect.as(started, "Cancelled by SIGTERM")
      const result = yield* run(operation(`echo partial; echo $$ > ${pidFile}; sleep 30 & sleep 30`), cancel)
      expect(result).toEqual({
        status: "unknown",
        output: "partial\n[Cancelled by SIGTERM while it ran; process group killed. It may have had effects.]",
        cancelled: true,
        signal: "SIGKILL"
      })
      const pgid = Number(fs.readFileSync(pidFile, "utf8"))
      expect(yield* eventually(() => groupIsGone(pgid))).toBe(true)
    })
  )
})

describe("BashRunner: Mino frozen or interrupted", () => {
  it.live("the lifeline kills the group at the deadline while Mino's event loop cannot run, and the result says it timed out", () =>
    Effect.gen(function* () {
      const pidFile = path.join(dir, "frozen.pid")
      const fiber = yield* Effect.fork(run(operation(`echo $$ > ${pidFile}; sleep 30 & sleep 30`, { timeoutMs: 500 })))
      expect(yield* eventually(() => fs.existsSync(pidFile) && fs.readFileSync(pidFile, "utf8").endsWith("\n"), 10_000)).toBe(true)
      const pgid = Number(fs.readFileSync(pidFile, "utf8"))
      // No timer of this process can fire during the freeze: only the watcher can kill the group.
      freezeEventLoop(3_000)
      expect(groupIsGone(pgid)).toBe(true)
      const result = yield* Fiber.join(fiber)
      expect(result.status).toBe("failed")
      expect(result.timed_out).toBe(true)
      expect(result.exit_code).toBeUndefined()
      expect(result.signal).toBe("SIGKILL")
    })
  )

  it.live("a command that exited by itself is not timed out, however late Mino notices", () =>
    Effect.gen(function* () {
      const fiber = yield* Effect.fork(run(operation("echo done", { timeoutMs: 300 })))
      // Mino notices the exit only after the deadline has passed.
      freezeEventLoop(1_000)
      expect(yield* Fiber.join(fiber)).toEqual({ status: "completed", output: "done\n", exit_code: 0 })
    })
  )

  it.live("interrupting the running fiber kills the process group", () =>
    Effect.gen(function* () {
      const pidFile = path.join(dir, "interrupt.pid")
      const fiber = yield* Effect.fork(run(operation(`echo $$ > ${pidFile}; sleep 30 & sleep 30`)))
      expect(yield* eventually(() => fs.existsSync(pidFile) && fs.readFileSync(pidFile, "utf8").endsWith("\n"))).toBe(
        true
      )
      const pgid = Number(fs.readFileSync(pidFile, "utf8"))
      expect(groupIsGone(pgid)).toBe(false)
      const { elapsedMs } = yield* timed(Fiber.interrupt(fiber))
      expect(elapsedMs).toBeLessThan(5_000)
      expect(yield* eventually(() => groupIsGone(pgid))).toBe(true)
    })
  )
})

describe("BashRunner: the settle's rule (move)", () => {
  const signals = fc.record({ ended: fc.boolean(), pipeClosed: fc.boolean(), cancelled: fc.boolean(), drainCut: fc.boolean() })
  const phase = fc.constantFrom<Phase>("running", "killing", "draining", "settled")

  it("every phase, signal set and timer (a sweep of all 64 cases, then 2,000 generated): bash's end wins, a kill names its cause, every bounded wait ends at its timer, and a settled run never moves again", () => {
    const phases: ReadonlyArray<Phase> = ["running", "killing", "draining", "settled"]
    let cases = 0
    const check = (at: Phase, heard: Signals, fired: boolean) => {
      cases += 1
      const next = move(at, heard, fired)
      switch (at) {
        case "running":
          // The end first: a kill after it would find nothing (and must not be reported as the cause).
          if (heard.ended) expect(next).toEqual({ _tag: "Drain" })
          else if (heard.cancelled) expect(next).toEqual({ _tag: "Kill", why: "cancel" })
          else if (fired) expect(next).toEqual({ _tag: "Kill", why: "timeout" })
          else expect(next).toEqual({ _tag: "Wait" })
          break
        case "killing":
          // The wait after a kill is bounded: its timer ends it, with or without the end.
          expect(next).toEqual(heard.ended || fired ? { _tag: "Drain" } : { _tag: "Wait" })
          break
        case "draining":
          expect(next).toEqual(heard.pipeClosed || heard.drainCut || fired ? { _tag: "Settle" } : { _tag: "Wait" })
          break
        case "settled":
          expect(next).toEqual({ _tag: "Wait" })
      }
    }
    for (const at of phases) {
      for (let bits = 0; bits < 16; bits++) {
        const heard = { ended: (bits & 1) !== 0, pipeClosed: (bits & 2) !== 0, cancelled: (bits & 4) !== 0, drainCut: (bits & 8) !== 0 }
        check(at, heard, false)
        check(at, heard, true)
      }
    }
    fc.assert(fc.property(phase, signals, fc.boolean(), (at, heard, fired) => check(at, heard, fired)), { numRuns: 2_000 })
    console.log(`settle rule: ${cases} cases checked`)
    expect(cases).toBe(128 + 2_000)
  })
})
