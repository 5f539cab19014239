/**
 * Red-team attacks on "one mino per conversation": the built `mino` started
 * many times at once in one directory, from a hostile repository and
 * environment. The repository ships its own `perl` (`node_modules/.bin/perl`,
 * which exits 0 as if it had locked) first on a PATH with relative entries,
 * with `PERL5OPT`/`PERL5LIB` naming a module that would also claim the lock; the
 * starts spell HOME and the directory several ways (a trailing slash, `..`, a
 * symlink). In every round exactly one start holds the directory's
 * conversation; every other is refused busy (exit 1, one line naming it), none
 * hangs, the hostile perl never runs, and one conversation file results.
 *
 * Rounds: a directory with no conversation yet (plain starts), and one whose
 * conversation exists (plain starts mixed with `--continue ID`).
 *
 * And an approved command that leaves a process running outside Mino's group
 * (`setsid`): it holds none of Mino's descriptors on `~/.mino`, so once Mino
 * ends the next start opens the conversation instead of being refused busy.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import * as Pty from "../support/Pty.js"
import { answerPrompt, API_KEY, bashCall, BIN, environment, exitsWith, type Sandbox, sandbox, scriptedServer } from "../support/MinoProcess.js"
import { PROC } from "../support/Proc.js"

const STARTS = 6
const ROUNDS = 3

/** A hostile repository in the sandbox's work directory: its own perl and a perl module, both leaving a trace. */
const hostileRepository = (box: Sandbox): { readonly trace: string; readonly bin: string } => {
  const bin = path.join(box.cwd, "node_modules", ".bin")
  fs.mkdirSync(bin, { recursive: true })
  const trace = path.join(box.home, "..", "hostile-ran")
  fs.writeFileSync(path.join(bin, "perl"), `#!/bin/sh\necho perl >> '${trace}'\nexit 0\n`, { mode: 0o755 })
  fs.writeFileSync(path.join(bin, "Hostile.pm"), `package Hostile; open(my $f, ">>", "${trace}"); print $f "module\\n"; exit 0;\n1;\n`)
  return { trace, bin }
}

interface Start {
  readonly child: ChildProcess
  readonly stderr: () => string
  readonly ended: Promise<number | null>
}

/** Starts `mino` with piped input (kept open: a start that holds its conversation stays), asking one question. */
const startMino = (box: Sandbox, url: string, bin: string, variant: number, args: ReadonlyArray<string>): Start => {
  const homes = [box.home, `${box.home}/`, path.join(box.home, "..", path.basename(box.home))]
  const link = path.join(box.home, "..", "work-link")
  if (!fs.existsSync(link)) fs.symlinkSync(box.cwd, link)
  const cwds = [box.cwd, link, `${box.cwd}/.`]
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: cwds[variant % cwds.length],
    env: {
      HOME: homes[variant % homes.length] ?? box.home,
      PATH: `node_modules/.bin:${bin}:/usr/local/bin:/usr/bin:/bin`,
      PERL5LIB: bin,
      PERL5OPT: "-MHostile",
      LANG: "C.UTF-8",
      TERM: "dumb",
      OPENAI_API_KEY: API_KEY,
      OPENAI_BASE_URL: url
    },
    stdio: ["pipe", "ignore", "pipe"]
  })
  let stderr = ""
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
  child.stdin?.write("one question\n")
  const ended = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  return { child, stderr: () => stderr, ended }
}

const running = (start: Start) => start.child.exitCode === null && start.child.signalCode === null

/** Waits until all but one have ended (or 20 s: a second holder would keep running). */
const settled = (starts: ReadonlyArray<Start>) =>
  Effect.gen(function*() {
    const deadline = Date.now() + 20_000
    while (Date.now() < deadline && starts.filter(running).length > 1) yield* Effect.sleep("50 millis")
  })

const conversationFiles = (box: Sandbox) => fs.readdirSync(path.join(box.home, ".mino", "sessions")).filter((name) => name.endsWith(".jsonl"))

/** One round: `argsOf(i)` for each start; then exactly one runs, the rest are busy; then the holder ends. */
const round = (box: Sandbox, url: string, bin: string, argsOf: (i: number) => ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const starts = Array.from({ length: STARTS }, (_, i) => startMino(box, url, bin, i, argsOf(i)))
    yield* settled(starts)
    const holders = starts.filter(running)
    const refused = starts.filter((start) => !running(start))
    const refusals = refused.map((start) => ({ code: start.child.exitCode, busy: /^mino: .*busy/.test(start.stderr()) }))
    for (const start of holders) start.child.stdin?.end()
    const codes = yield* Effect.promise(() => Promise.all(holders.map((start) => start.ended)))
    return { holders: holders.length, refusals, codes }
  })

describe("attack: many starts at once on one directory's conversation, from a hostile repository", () => {
  it.live(`${ROUNDS} rounds of ${STARTS} plain starts in a directory with no conversation, then ${ROUNDS} of ${STARTS} mixed with --continue: one holder each`, () =>
    Effect.scoped(Effect.gen(function*() {
      const box = yield* sandbox
      const { bin, trace } = hostileRepository(box)
      const server = yield* scriptedServer(Array.from({ length: 2 * ROUNDS * STARTS }, () => ResponsesServer.textResponse("Answered.")))
      const outcomes = []
      for (let r = 0; r < ROUNDS; r++) {
        // Fresh each round: no conversation here yet.
        fs.rmSync(path.join(box.home, ".mino"), { recursive: true, force: true })
        outcomes.push(yield* round(box, server.url, bin, () => []))
        expect(conversationFiles(box)).toHaveLength(1)
      }
      const id = conversationFiles(box)[0]?.replace(/\.jsonl$/, "") ?? ""
      for (let r = 0; r < ROUNDS; r++) {
        outcomes.push(yield* round(box, server.url, bin, (i) => (i % 2 === 0 ? [] : ["--continue", id])))
        expect(conversationFiles(box)).toEqual([`${id}.jsonl`])
      }
      console.log(`lock sweep: ${outcomes.length} rounds of ${STARTS} simultaneous starts (${outcomes.length * STARTS} starts), hostile perl on PATH and PERL5OPT`)
      for (const outcome of outcomes) {
        expect(outcome).toEqual({
          holders: 1,
          refusals: Array.from({ length: STARTS - 1 }, () => ({ code: 1, busy: true })),
          codes: [0]
        })
      }
      expect(fs.existsSync(trace)).toBe(false)
    })), 240_000)
})

describe("attack: a command that leaves a process behind, outside Mino's process group", () => {
  it.live("the escaped process holds none of Mino's locks: after Mino ends, the next start in the directory opens its conversation", () =>
    Effect.scoped(Effect.gen(function*() {
      const box = yield* sandbox
      const pidFile = path.join(box.cwd, "escaped.pid")
      // It waits a second, so that its group is killed (as the command ends) only after the child left it.
      const server = yield* scriptedServer([
        ResponsesServer.toolCallResponse([bashCall("c1", `setsid sh -c 'echo $$ > escaped.pid; exec sleep 60' </dev/null >/dev/null 2>&1 & sleep 1`)]),
        ResponsesServer.textResponse("Left one behind."),
        ResponsesServer.textResponse("Second start answered.")
      ])
      const first = yield* Pty.spawn({ argv: [process.execPath, BIN], env: environment(box, server.url), cwd: box.cwd })
      yield* first.waitFor("You> ")
      yield* first.write("leave a process behind\r")
      yield* first.waitFor("Approve this operation? [y/N] ", 30_000)
      yield* answerPrompt(first, "y")
      yield* first.waitFor("Assistant> Left one behind.", 30_000)
      const escaped = Number((yield* Effect.promise(() => waitForFile(pidFile))).trim())
      yield* Effect.addFinalizer(() => Effect.sync(() => {
        try {
          process.kill(escaped, "SIGKILL")
        } catch {
          // already gone
        }
      }))
      // Its descriptors: none is a lock or a conversation of Mino's.
      const held = fs.readdirSync(`${PROC}/${escaped}/fd`).flatMap((fd) => {
        try {
          return [fs.readlinkSync(`${PROC}/${escaped}/fd/${fd}`)]
        } catch {
          return []
        }
      })
      expect(held.filter((target) => target.includes(".mino"))).toEqual([])
      yield* first.write("\x04")
      yield* exitsWith(first, { code: 0, signal: null }, 30_000)
      // The escaped process still runs; the next start continues the conversation, not busy.
      expect(fs.existsSync(`${PROC}/${escaped}`)).toBe(true)
      const second = yield* Pty.spawn({ argv: [process.execPath, BIN], env: environment(box, server.url), cwd: box.cwd })
      yield* second.waitFor("You> ", 30_000)
      yield* second.write("still there?\r")
      yield* second.waitFor("Assistant> Second start answered.", 30_000)
      yield* second.write("\x04")
      yield* exitsWith(second, { code: 0, signal: null }, 30_000)
    })), 90_000)
})

const waitForFile = async (file: string): Promise<string> => {
  for (let i = 0; i < 200; i++) {
    if (fs.existsSync(file)) {
      const text = fs.readFileSync(file, "utf8")
      if (text.endsWith("\n")) return text
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`${file} was not written`)
}
