/**
 * The lock primitive on its own: `flock(2)` through /usr/bin/perl on a lent descriptor. With the
 * system calls injected: exactly that program, that script and that descriptor, and one clear line
 * for each way it can fail. For real: the lock belongs to the open file, a second descriptor is
 * refused until the first closes, the waiting form waits, and a `perl` on PATH never runs.
 */
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FileLock from "../../src/platform/FileLock.js"
import { holdLock, tryLock } from "../support/Flock.js"
import { tempDir } from "../support/Harness.js"

type Run = FileLock.System["run"]

const fake = (exists: boolean, result: ReturnType<Run>) => {
  const calls: Array<{ readonly program: string; readonly args: ReadonlyArray<string>; readonly stdin: number }> = []
  const os: FileLock.System = {
    isExecutableFile: (path) => exists && path === FileLock.PERL,
    run: (program, args, stdin) => {
      calls.push({ program, args, stdin })
      return result
    }
  }
  return { os, calls }
}

describe("FileLock with the system injected", () => {
  it("runs /usr/bin/perl itself, the script, on the lent descriptor; 0 is locked, 75 busy", () => {
    const locked = fake(true, { status: 0, signal: null, stderr: "" })
    expect(FileLock.lock(7, {}, locked.os)).toEqual({ _tag: "Locked" })
    expect(locked.calls).toEqual([{ program: "/usr/bin/perl", args: ["-e", FileLock.SCRIPT, ...FileLock.ERRNOS], stdin: 7 }])
    const busy = fake(true, { status: 75, signal: null, stderr: "" })
    expect(FileLock.lock(7, {}, busy.os)).toEqual({ _tag: "Busy" })
  })

  it("the waiting form passes whole seconds, at least one (alarm(0) would wait forever)", () => {
    for (const [wait, passed] of [[5, "5"], [0.2, "1"], [0, "1"], [1.5, "2"]] as const) {
      const run = fake(true, { status: 0, signal: null, stderr: "" })
      FileLock.lock(3, { waitSeconds: wait }, run.os)
      expect(run.calls[0]?.args).toEqual(["-e", FileLock.SCRIPT, ...FileLock.ERRNOS, passed])
    }
  })

  it("each failure is one line naming perl", () => {
    const cases: ReadonlyArray<readonly [boolean, ReturnType<Run>, RegExp]> = [
      [false, { status: 0, signal: null, stderr: "" }, /^\/usr\/bin\/perl is not installed \(Mino takes its lock with flock\(2\) through it\)$/],
      [true, { status: null, signal: null, stderr: "", error: new Error("spawnSync /usr/bin/perl EACCES") }, /^\/usr\/bin\/perl could not run \(spawnSync \/usr\/bin\/perl EACCES\)$/],
      [true, { status: 1, signal: null, stderr: "Bad file descriptor\n" }, /^flock\(2\) through \/usr\/bin\/perl failed: Bad file descriptor$/],
      [true, { status: 1, signal: null, stderr: "Operation not supported\nmore\n" }, /^flock\(2\) through \/usr\/bin\/perl failed: Operation not supported$/],
      [true, { status: null, signal: "SIGKILL", stderr: "" }, /^flock\(2\) through \/usr\/bin\/perl failed: was killed by SIGKILL$/],
      [true, { status: 2, signal: null, stderr: "" }, /^flock\(2\) through \/usr\/bin\/perl failed: exited with 2$/]
    ]
    for (const [exists, result, line] of cases) {
      const outcome = FileLock.lock(3, {}, fake(exists, result).os)
      expect(outcome._tag).toBe("Unavailable")
      if (outcome._tag === "Unavailable") expect(outcome.reason).toMatch(line)
    }
    // Perl is never looked for elsewhere: missing at its path, nothing is run.
    const missing = fake(false, { status: 0, signal: null, stderr: "" })
    FileLock.lock(3, {}, missing.os)
    expect(missing.calls).toEqual([])
  })
})

describe("FileLock for real", () => {
  const open = (path: string) => Fs.openSync(path, Fs.constants.O_RDWR | Fs.constants.O_CREAT, 0o600)

  it("a second open of the file is refused while the first holds it, through another name too, and takes it once the first closes", () => {
    const dir = tempDir("filelock")
    const path = Path.join(dir, "a.lock")
    Fs.symlinkSync(path, Path.join(dir, "link.lock"))
    const first = open(path)
    const second = open(Path.join(dir, "link.lock"))
    try {
      expect(FileLock.lock(first)).toEqual({ _tag: "Locked" })
      // Held on the open file: taking it again on the same descriptor succeeds, on another it is busy.
      expect(FileLock.lock(first)).toEqual({ _tag: "Locked" })
      expect(FileLock.lock(second)).toEqual({ _tag: "Busy" })
      expect(FileLock.lock(second, { waitSeconds: 1 })).toEqual({ _tag: "Busy" })
      Fs.closeSync(first)
      expect(FileLock.lock(second, { waitSeconds: 1 })).toEqual({ _tag: "Locked" })
    } finally {
      Fs.closeSync(second)
    }
  })

  it("the script loads no module on any of its ends: locked, busy, the wait cut by its alarm", () => {
    const path = Path.join(tempDir("filelock"), "c.lock")
    const held = open(path)
    const other = open(path)
    try {
      expect(FileLock.lock(held)).toEqual({ _tag: "Locked" })
      // The script as Mino runs it, with an END block that names every module perl loaded.
      const modules = (fd: number, wait: ReadonlyArray<string>) => {
        const run = spawnSync(FileLock.PERL, ["-e", `END { print join(",", sort keys %INC) }\n${FileLock.SCRIPT}`, ...FileLock.ERRNOS, ...wait], {
          stdio: [fd, "pipe", "pipe"],
          encoding: "utf8",
          env: {}
        })
        return { status: run.status, modules: run.stdout }
      }
      const ends = [modules(held, []), modules(other, []), modules(other, ["1"])]
      console.log(`lock script ends checked: ${ends.length}`)
      expect(ends).toEqual([{ status: 0, modules: "" }, { status: 75, modules: "" }, { status: 75, modules: "" }])
    } finally {
      for (const fd of [held, other]) Fs.closeSync(fd)
    }
  })

  it.live("the waiting form takes the lock when another process's hold ends, within its bound", () =>
    Effect.gen(function*() {
      const path = Path.join(tempDir("filelock"), "b.lock")
      Fs.closeSync(open(path))
      // Another process holds the lock for 1 s; it says so once it has it.
      const holder = holdLock(path, 1)
      const said = yield* Effect.promise(() => new Promise<string>((resolve) => holder.stdout?.once("data", (chunk: Buffer) => resolve(chunk.toString().trim()))))
      expect(said).toBe("took")
      const waiter = open(path)
      try {
        expect(FileLock.lock(waiter)).toEqual({ _tag: "Busy" })
        expect(FileLock.lock(waiter, { waitSeconds: 20 })).toEqual({ _tag: "Locked" })
        // Held now: the other process cannot take it.
        expect(tryLock(path)).toBe("busy")
      } finally {
        Fs.closeSync(waiter)
      }
    }))

  it("a perl on PATH (a repository's node_modules/.bin), or a module PERL5OPT names, never runs: the environment is empty and the path absolute", () => {
    const dir = tempDir("filelock")
    const bin = Path.join(dir, "node_modules", ".bin")
    Fs.mkdirSync(bin, { recursive: true })
    const ran = Path.join(dir, "ran")
    Fs.writeFileSync(Path.join(bin, "perl"), `#!/bin/sh\necho ran >> '${ran}'\nexit 0\n`, { mode: 0o755 })
    // And a module perl would load if Mino's environment reached it.
    Fs.writeFileSync(Path.join(bin, "Hostile.pm"), `package Hostile; open(my $f, ">>", "${ran}"); print $f "module ran\\n"; 1;\n`)
    const saved = process.env["PATH"]
    const savedCwd = process.cwd()
    process.env["PATH"] = `node_modules/.bin:${bin}:${saved ?? ""}`
    process.env["PERL5LIB"] = bin
    process.env["PERL5OPT"] = "-MHostile"
    process.chdir(dir)
    const first = open(Path.join(dir, "c.lock"))
    const second = open(Path.join(dir, "c.lock"))
    try {
      expect(FileLock.lock(first)).toEqual({ _tag: "Locked" })
      expect(FileLock.lock(second)).toEqual({ _tag: "Busy" })
    } finally {
      process.env["PATH"] = saved
      delete process.env["PERL5LIB"]
      delete process.env["PERL5OPT"]
      process.chdir(savedCwd)
      Fs.closeSync(first)
      Fs.closeSync(second)
    }
    expect(Fs.existsSync(ran)).toBe(false)
  })
})
