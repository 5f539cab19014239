/**
 * The start path: the lifeline's spawner holds a command at its gate until the
 * watcher holds its deadline, runs it as exactly `/bin/bash --noprofile --norc -c
 * <command>` with the documented environment once released, reports its end as
 * a spawn would, and never lets it outlive Mino, whenever Mino dies.
 */
import { execFile, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Writable } from "node:stream"
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Secrets from "../../src/security/Secrets.js"
import { type BashOperation, BashRunner } from "../../src/tools/bash/BashRunner.js"
import * as ChildEnvironment from "../../src/tools/bash/ChildEnvironment.js"
import * as Lifeline from "../../src/tools/bash/Lifeline.js"

const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mino-lifeline-")))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const env = ChildEnvironment.make({
  parentEnv: { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: dir, USER: "tester", LOGNAME: "tester", LANG: "C.UTF-8", TMPDIR: dir },
  cwd: dir,
  secrets: Secrets.make("")
})

const sleep = (ms: number) => Effect.sleep(`${ms} millis`)

const operation = (command: string): BashOperation => ({ command, cwd: dir, env, timeoutMs: 10_000, outputLimitBytes: 65_536 })

/** Runs `command` as the chapter says, bash started directly: what the spawner's start must be indistinguishable from. */
const direct = (command: string) =>
  Effect.async<string>((resume) => {
    execFile("/bin/bash", ["--noprofile", "--norc", "-c", command], { cwd: dir, env }, (_error, stdout, stderr) =>
      resume(Effect.succeed(stdout + stderr)))
  })

/** Every command in one runner (one lifeline): its results in order. */
const throughRunner = (...commands: ReadonlyArray<string>) =>
  Effect.scoped(Effect.flatMap(BashRunner, (runner) => Effect.forEach(commands, (command) => Effect.scoped(runner.run(operation(command)))))).pipe(
    Effect.provide(BashRunner.layer),
    Effect.provide(Secrets.Secrets.layerNone)
  )

const outputOf = (command: string) => Effect.map(throughRunner(command), ([result]) => result?.output)

const stat = (pid: number): ReadonlyArray<string> | undefined => {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return text.slice(text.lastIndexOf(")") + 2).split(" ")
  } catch {
    return undefined
  }
}

const alive = (pid: number): boolean => {
  const state = stat(pid)?.[0]
  return state !== undefined && state !== "Z" && state !== "X"
}

/** Live processes whose working directory is `cwd`. */
const processesIn = (cwd: string): ReadonlyArray<number> =>
  fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name)).map(Number).filter((pid) => {
    try {
      return fs.readlinkSync(`/proc/${pid}/cwd`) === cwd && alive(pid)
    } catch {
      return false
    }
  })

/** The helper script, started as `Lifeline` starts it, driven by hand. */
const helper = () => {
  const watcher = spawn("/bin/bash", ["--noprofile", "--norc", "-c", Lifeline.SCRIPT], {
    cwd: "/",
    env: { LC_ALL: "C" },
    stdio: ["pipe", "pipe", "ignore", "pipe"],
    detached: true
  })
  const requests = watcher.stdio[3]
  if (!(requests instanceof Writable)) throw new Error("no request pipe")
  let reports = ""
  watcher.stdout?.on("data", (chunk: Buffer) => void (reports += chunk.toString("latin1")))
  const report = (pattern: RegExp) =>
    Effect.gen(function*() {
      for (let i = 0; i < 500; i++) {
        const match = pattern.exec(reports)
        if (match !== null) return match
        yield* sleep(10)
      }
      throw new Error(`no report matching ${pattern} in ${JSON.stringify(reports)}`)
    })
  return { watcher, requests, report }
}

describe("the spawner's gate", () => {
  it.live("holds a started command until the go byte: nothing runs before, the child holds only its three descriptors; then it runs", () =>
    Effect.gen(function*() {
      const marker = path.join(dir, "held.txt")
      const { watcher, requests, report } = helper()
      requests.write(Lifeline.request({ command: `echo ran > ${marker}`, cwd: dir, env, timeoutMs: 10_000 }))
      const [, pid, spawner, , gateFd] = (yield* report(/^started (\d+) (\d+) (\d+) (\d+)\n/m)).map(Number)
      // Long enough for the child to reach its gate many times over.
      yield* sleep(500)
      expect(fs.existsSync(marker)).toBe(false)
      // A process group of its own; stdin (the gate), stdout and stderr (one pipe): none of the helper's pipes,
      // only what the helper itself inherited from the test's own parent, which the gate closes before it runs anything.
      expect(stat(pid!)?.[2]).toBe(String(pid))
      const links = (of: number) => fs.readdirSync(`/proc/${of}/fd`).map((fd) => `${fd} ${fs.readlinkSync(`/proc/${of}/fd/${fd}`)}`)
      const inherited = new Set(links(watcher.pid!).filter((link) => Number(link.split(" ")[0]) > 2))
      const held = links(pid!).filter((link) => !inherited.has(link)).map((link) => Number(link.split(" ")[0])).sort((a, b) => a - b)
      expect(held).toEqual([0, 1, 2])
      const gate = fs.openSync(`/proc/${spawner}/fd/${gateFd}`, "w")
      requests.write("opened\n")
      fs.writeSync(gate, "g")
      fs.closeSync(gate)
      yield* report(/^exit 0\n/m)
      expect(fs.readFileSync(marker, "utf8")).toBe("ran\n")
      watcher.stdin?.end()
      requests.end()
    }))

  it.live("with Mino gone before the go byte, the gate exits having run nothing", () =>
    Effect.gen(function*() {
      const marker = path.join(dir, "abandoned.txt")
      const { watcher, requests, report } = helper()
      requests.write(Lifeline.request({ command: `echo ran > ${marker}`, cwd: dir, env, timeoutMs: 10_000 }))
      const [, pid] = (yield* report(/^started (\d+) /m)).map(Number)
      // Both pipes from Mino reach end of file, as when Mino dies.
      watcher.stdin?.end()
      requests.end()
      for (let i = 0; i < 200 && alive(pid!); i++) yield* sleep(10)
      expect(alive(pid!)).toBe(false)
      expect(fs.existsSync(marker)).toBe(false)
    }))

  it.live("a stand-in Mino SIGKILLed at every moment of a start (40 offsets): no command outlives it (the longest gap printed; 5 s allowed), none reaches its next step", () =>
    Effect.gen(function*() {
      const offsets = 40
      const launcher = path.join(dir, "launcher.mjs")
      // A stand-in for Mino: starts a command through the built lifeline and SIGKILLs itself `offset` tenths of a ms later.
      fs.writeFileSync(launcher, [
        `import * as Effect from ${JSON.stringify(path.resolve("node_modules/effect/dist/esm/Effect.js"))}`,
        `import * as Scope from ${JSON.stringify(path.resolve("node_modules/effect/dist/esm/Scope.js"))}`,
        `import { make } from ${JSON.stringify(path.resolve("dist/lib/tools/bash/Lifeline.js"))}`,
        "const [cwd, offset] = process.argv.slice(2)",
        "const lifeline = Effect.runSync(Scope.extend(make, Effect.runSync(Scope.make())))",
        "const die = () => process.kill(process.pid, 'SIGKILL')",
        "const ignore = () => {}",
        "lifeline.launch({ command: 'echo ran > ran.txt; sleep 6; echo late > late.txt', cwd, env: { PATH: '/usr/bin:/bin' }, timeoutMs: 30000 },",
        "  { running: (_group, output) => output.resume(), exited: ignore, lost: ignore, failed: (message) => { console.error(message); process.exit(3) } })",
        "const until = performance.now() + Number(offset) / 10",
        "const spin = () => performance.now() >= until ? die() : setImmediate(spin)",
        "spin()"
      ].join("\n"))
      const outcomes = yield* Effect.forEach(Array.from({ length: offsets }, (_, i) => i), (i) =>
        Effect.gen(function*() {
          const cwd = fs.realpathSync(fs.mkdtempSync(path.join(dir, `start-${i}-`)))
          yield* Effect.async<void>((resume) => {
            const mino = spawn(process.execPath, [launcher, cwd, String(i * 3)], { stdio: ["ignore", "ignore", "inherit"] })
            mino.on("close", () => resume(Effect.void))
          })
          const diedAt = Date.now()
          // Gone within a quarter of a second when measured (the longest is printed); the test allows 5 s for a loaded machine.
          while (Date.now() - diedAt < 5_000 && processesIn(cwd).length > 0) yield* sleep(10)
          return { left: processesIn(cwd).length, gone: Date.now() - diedAt, ran: fs.existsSync(path.join(cwd, "ran.txt")), cwd }
        }), { concurrency: 4 })
      // Long enough for any survivor to reach its next step (6 s after it started).
      yield* sleep(6_500)
      const ran = outcomes.filter((outcome) => outcome.ran).length
      const longest = Math.max(...outcomes.map((outcome) => outcome.gone))
      console.log(
        `stand-in Mino SIGKILLed during a start: ${offsets} offsets (0-${((offsets - 1) * 0.3).toFixed(1)} ms), the command ran in ${ran}; ` +
          `every process gone at most ${longest} ms after its Mino`
      )
      expect(outcomes.map(({ cwd, left }) => ({ left, late: fs.existsSync(path.join(cwd, "late.txt")) }))).toEqual(
        outcomes.map(() => ({ left: 0, late: false }))
      )
    }), 120_000)
})

describe("what runs", () => {
  it.live("exactly /bin/bash --noprofile --norc -c <command>: same environment, $0, SHLVL, _, descriptors and signal dispositions", () =>
    Effect.gen(function*() {
      const commands = [
        "env | sort",
        "echo \"[$0] [$SHLVL] [$_] [$-] [$BASH_EXECUTION_STRING]\"",
        "echo \"$PWD $OLDPWD\"; shopt | md5sum; declare -x",
        // bash's own ignored set, and the mask and dispositions a program it starts inherits. (bash's own blocked
        // set is not compared: bash blocks SIGINT, SIGTERM and SIGCHLD for moments around a fork and a wait.)
        "grep -E '^SigIgn' /proc/$$/status; grep -E '^Sig(Ign|Blk)' /proc/self/status; trap -p",
        // The initial environment block, as the kernel keeps it.
        "tr '\\0' '\\n' < /proc/$$/environ | sort"
      ]
      for (const command of commands) {
        expect({ command, output: yield* outputOf(command) }).toEqual({ command, output: yield* direct(command) })
      }
      // Only stdin, stdout and stderr are open (3 is the directory ls reads: bash execs it); stdin is /dev/null.
      expect(yield* outputOf("ls /proc/$$/fd")).toBe("0\n1\n2\n3\n")
      expect(yield* outputOf("readlink /proc/$$/fd/0")).toBe("/dev/null\n")
      // A group and session of its own, led by the command's bash.
      expect(yield* outputOf("read -r _ _ _ _ g s _ < /proc/$$/stat; [ $g = $$ ] && [ $s != $$ ] && echo own group")).toBe("own group\n")
      // And the environment is the documented one, plus what bash itself sets.
      const names = ((yield* outputOf("env")) ?? "").trimEnd().split("\n").map((line) => line.slice(0, line.indexOf("="))).sort()
      expect(names).toEqual([...Object.keys(env), "SHLVL", "_"].sort())
    }))

  it.live("an environment name that is a variable of the gate's own is passed as given and changes nothing of what runs", () =>
    Effect.gen(function*() {
      const names = ["C", "C_PID", "cmd", "cwd", "entry", "env", "fd", "go", "head", "i", "IFS"]
      const command = `echo ran; env | grep -E '^(${names.join("|")})=' | sort`
      const withNames = { ...env, ...Object.fromEntries(names.map((name) => [name, `${name}-value`])) }
      const result = yield* Effect.scoped(Effect.flatMap(BashRunner, (runner) => runner.run({ ...operation(command), env: withNames }))).pipe(
        Effect.provide(BashRunner.layer),
        Effect.provide(Secrets.Secrets.layerNone)
      )
      const expected = yield* Effect.async<string>((resume) => {
        execFile("/bin/bash", ["--noprofile", "--norc", "-c", command], { cwd: dir, env: withNames }, (_error, stdout) => resume(Effect.succeed(stdout)))
      })
      expect(result.output).toBe(expected)
      expect(expected).toContain("head=head-value\n")
    }))

  it.live("a name bash keeps for itself (an array, a computed or read-only variable) is refused, not run with another value", () =>
    Effect.gen(function*() {
      for (const name of ["RANDOM", "PIPESTATUS", "PPID"]) {
        const [result] = yield* Effect.scoped(Effect.flatMap(BashRunner, (runner) => runner.run({ ...operation("echo ran"), env: { ...env, [name]: "1" } }))).pipe(
          Effect.provide(BashRunner.layer),
          Effect.provide(Secrets.Secrets.layerNone),
          Effect.map((result) => [result])
        )
        expect(result).toEqual({ status: "failed", output: `Could not start /bin/bash: the environment variable name "${name}" cannot be passed to bash` })
      }
    }))
})

describe("the report of a command's end", () => {
  it.live("tells an exit code above 128 from the signal it looks like, every time (4 endings x 15 runs)", () =>
    Effect.gen(function*() {
      const endings = [
        { command: "exit 137", expected: { exit_code: 137 } },
        { command: "kill -KILL $$", expected: { signal: "SIGKILL" } },
        { command: "exit 143", expected: { exit_code: 143 } },
        { command: "kill -TERM $$", expected: { signal: "SIGTERM" } }
      ]
      const runs = 15
      const commands = Array.from({ length: runs }, () => endings.map((ending) => ending.command)).flat()
      const results = yield* throughRunner(...commands)
      console.log(`exit codes and signals: ${endings.length} endings x ${runs} runs through one spawner`)
      expect(results.map((result) => ({ exit_code: result.exit_code, signal: result.signal }))).toEqual(
        Array.from({ length: runs }, () => endings.map(({ expected }) => ({ exit_code: undefined, signal: undefined, ...expected }))).flat()
      )
    }), 60_000)

  it.live("one spawner runs 100 commands and keeps none of their descriptors", () =>
    Effect.gen(function*() {
      const count = "ls /proc/$PPID/fd | wc -l"
      const results = yield* throughRunner(count, ...Array.from({ length: 98 }, () => "true"), count)
      expect(results.at(-1)?.output).toBe(results[0]?.output)
    }), 60_000)

  it.live("a command that kills its spawner is killed at once and says so; the next command gets a new one", () =>
    Effect.gen(function*() {
      const started = Date.now()
      const [killer, next] = yield* throughRunner("echo before; kill -9 $PPID; sleep 20", "echo next")
      expect(Date.now() - started).toBeLessThan(10_000)
      expect(killer).toMatchObject({ status: "failed", signal: "SIGKILL", output: "before\n[Mino's spawner ended while it ran; process group killed]" })
      expect(next).toMatchObject({ status: "completed", output: "next\n" })
    }), 30_000)
})
