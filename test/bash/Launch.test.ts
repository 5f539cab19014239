/**
 * The start path: a command is held at its gate until it is released, runs as
 * exactly `/bin/bash --noprofile --norc -c <command>` with the documented
 * environment once it is, and never runs when Mino is gone before that.
 */
import { execFile, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Secrets from "../../src/security/Secrets.js"
import * as ChildEnvironment from "../../src/tools/bash/ChildEnvironment.js"
import * as Launch from "../../src/tools/bash/Launch.js"
import { BashRunner } from "../../src/tools/bash/BashRunner.js"

const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mino-launch-")))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const env = ChildEnvironment.make({
  parentEnv: { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: dir, USER: "tester", LOGNAME: "tester", LANG: "C.UTF-8", TMPDIR: dir },
  cwd: dir,
  secrets: Secrets.make("")
})

const exitOf = (launched: Launch.Launched) =>
  Effect.async<{ code: number | null; signal: string | null }>((resume) => {
    launched.child.on("exit", (code, signal) => resume(Effect.succeed({ code, signal })))
  })

const shIsBash = fs.realpathSync("/bin/sh").endsWith("/bash")

const sleep = (ms: number) => Effect.sleep(`${ms} millis`)

/** Runs `command` as the chapter says, bash started directly: what the gate must be indistinguishable from. */
const direct = (command: string) =>
  Effect.async<string>((resume) => {
    execFile("/bin/bash", ["--noprofile", "--norc", "-c", command], { cwd: dir, env }, (_error, stdout, stderr) =>
      resume(Effect.succeed(stdout + stderr)))
  })

const throughRunner = (command: string) =>
  Effect.scoped(Effect.flatMap(BashRunner, (runner) =>
    runner.run({ command, cwd: dir, env, timeoutMs: 10_000, outputLimitBytes: 65_536 }))).pipe(
      Effect.provide(BashRunner.layer),
      Effect.provide(Secrets.Secrets.layerNone),
      Effect.map((result) => result.output)
    )

describe("the gate", () => {
  it.live("holds the command until it is released: nothing runs before", () =>
    Effect.gen(function*() {
      const marker = path.join(dir, "held.txt")
      const launched = Launch.launch({ command: `echo ran > ${marker}`, cwd: dir, env })
      // Long enough for bash to start and reach its gate many times over.
      yield* sleep(500)
      expect(fs.existsSync(marker)).toBe(false)
      launched.release()
      expect(yield* exitOf(launched)).toEqual({ code: 0, signal: null })
      expect(fs.readFileSync(marker, "utf8")).toBe("ran\n")
    }))

  it.live("closed without the go byte, the gate exits and the command never runs", () =>
    Effect.gen(function*() {
      const marker = path.join(dir, "abandoned.txt")
      const launched = Launch.launch({ command: `echo ran > ${marker}`, cwd: dir, env })
      yield* sleep(100)
      launched.abandon()
      expect(yield* exitOf(launched)).toEqual({ code: 125, signal: null })
      expect(fs.existsSync(marker)).toBe(false)
    }))

  it.live("a Mino SIGKILLed before the go byte leaves a gate that exits, having run nothing (20 processes)", () =>
    Effect.gen(function*() {
      const runs = 20
      const launcher = path.join(dir, "launcher.mjs")
      // A stand-in for Mino: starts the gate from the built library, reports its pid, and dies.
      fs.writeFileSync(launcher, [
        `import { launch } from ${JSON.stringify(path.resolve("dist/lib/tools/bash/Launch.js"))}`,
        "const [marker] = process.argv.slice(2)",
        `const launched = launch({ command: "echo ran > " + marker, cwd: ${JSON.stringify(dir)}, env: { PATH: "/usr/bin:/bin" } })`,
        "process.stdout.write(launched.child.pid + '\\n', () => process.kill(process.pid, 'SIGKILL'))"
      ].join("\n"))
      const outcomes = yield* Effect.forEach(Array.from({ length: runs }, (_, i) => i), (i) =>
        Effect.gen(function*() {
          const marker = path.join(dir, `killed-${i}.txt`)
          const gate = yield* Effect.async<number>((resume) => {
            const mino = spawn(process.execPath, [launcher, marker], { stdio: ["ignore", "pipe", "inherit"] })
            let out = ""
            mino.stdout.on("data", (chunk: Buffer) => void (out += chunk.toString()))
            mino.on("close", () => resume(Effect.succeed(Number(out.trim()))))
          })
          // The gate's pid is its group: wait until it is gone.
          const deadline = Date.now() + 10_000
          while (Date.now() < deadline && alive(gate)) yield* sleep(20)
          return { gone: !alive(gate), ran: fs.existsSync(marker) }
        }), { concurrency: 5 })
      console.log(`gate after a SIGKILLed launcher: ${runs} runs`)
      expect(outcomes).toEqual(Array.from({ length: runs }, () => ({ gone: true, ran: false })))
    }), 60_000)

  it.live("what runs is exactly /bin/bash --noprofile --norc -c <command>: same environment, $0, SHLVL, _ and descriptors", () =>
    Effect.gen(function*() {
      const commands = [
        "env | sort",
        "echo \"[$0] [$SHLVL] [$_] [$-] [$BASH_EXECUTION_STRING]\"",
        "echo \"$PWD $OLDPWD\"; shopt | md5sum; declare -x"
      ]
      for (const command of commands) {
        const gated = yield* throughRunner(command)
        expect({ command, output: gated }).toEqual({ command, output: yield* direct(command) })
      }
      // The gate's descriptor is closed before the command runs; stdin is /dev/null.
      expect(yield* throughRunner("if [ -e /proc/$$/fd/3 ]; then readlink /proc/$$/fd/3; else echo closed; fi")).toBe("closed\n")
      expect(yield* throughRunner("readlink /proc/$$/fd/0")).toBe("/dev/null\n")
      // The process's initial environment block too: the gate adds nothing (where /bin/sh is bash, its exec adds SHLVL=0).
      const environ = "tr '\\0' '\\n' < /proc/$$/environ | sort"
      const gatedEnviron = (yield* throughRunner(environ)).split("\n").filter((line) => !(shIsBash && line === "SHLVL=0"))
      expect(gatedEnviron).toEqual((yield* direct(environ)).split("\n"))
      // And the environment is the documented one, plus what bash itself sets.
      const names = (yield* throughRunner("env")).trimEnd().split("\n").map((line) => line.slice(0, line.indexOf("="))).sort()
      expect(names).toEqual([...Object.keys(env), "SHLVL", "_"].sort())
    }))
})

const alive = (pid: number): boolean => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0]
    return state !== "Z" && state !== "X"
  } catch {
    return false
  }
}
