/**
 * A program in a real pseudo-terminal, for end-to-end tests. node-pty is not a
 * dependency, so a small python3 driver (`pty_driver.py`, beside this file) forks
 * with `pty.fork()`, execs the program, reports its pid and exit status on a side
 * channel, and relays bytes both ways. The program sees a terminal on stdin,
 * stdout and stderr: cooked mode, echo, Ctrl+C as SIGINT, Ctrl+D as end of input.
 *
 * The process is scoped: closing the scope SIGKILLs it if it is still running.
 *
 * Timing-sensitive tests talk to the driver on a side channel: `typeAcked`
 * returns once the bytes are in the terminal's input queue (with the driver's
 * time of that), and `flushOutput` once everything the program has written so
 * far is on `screen`; spawned with `stamps`, `relayedAt` tells when the driver
 * read a byte of the output (wall-clock milliseconds, as `Date.now()`).
 */
import * as fs from "node:fs"
import { spawn as spawnProcess } from "node:child_process"
import { fileURLToPath } from "node:url"
import { StringDecoder } from "node:string_decoder"
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Scope from "effect/Scope"
import { PROC } from "./Proc.js"

const DRIVER = fileURLToPath(new URL("./pty_driver.py", import.meta.url))

export interface ExitStatus {
  /** The exit code when the program exited on its own, else null. */
  readonly code: number | null
  /** The signal that ended it (`SIGKILL`), else null. */
  readonly signal: string | null
}

export interface Termios {
  readonly echo: boolean
  readonly icanon: boolean
  readonly isig: boolean
}

export class PtyTimeout extends Data.TaggedError("PtyTimeout")<{ readonly message: string }> {}

export interface SpawnOptions {
  readonly argv: ReadonlyArray<string>
  /** The program's complete environment: nothing is inherited. */
  readonly env: Readonly<Record<string, string>>
  readonly cwd: string
  /** `hangup` closes the terminal (the program gets SIGHUP, then EIO on it). */
  readonly hangupable?: boolean
  /** The terminal's size, set before the program starts (default 200 columns, 50 rows). */
  readonly columns?: number
  readonly rows?: number
  /** Record when each piece of output was read, for `relayedAt`. */
  readonly stamps?: boolean
  /**
   * A slow display: the output is read as fast as the program writes it and
   * reaches `screen` at this many bytes a second (cursor position requests are
   * answered as they reach it).
   */
  readonly bytesPerSecond?: number
  /** `false`: a terminal that never answers a cursor position request (by default it does, as terminals do). */
  readonly answersPosition?: boolean
}

export interface Pty {
  /** The program's own pid (it is exec'd, not wrapped). */
  readonly pid: number
  /**
   * Everything shown so far, with the terminal's `\r\n` turned back into `\n` and
   * the bracketed-paste switches (which are never drawn) left out.
   */
  readonly screen: Effect.Effect<string>
  /** Every byte the program wrote, as it wrote them (escape sequences included). */
  readonly rawOutput: Effect.Effect<Buffer>
  /** Types `text`: `"y\n"` answers a prompt, `"\x03"` is Ctrl+C, `"\x04"` Ctrl+D. */
  readonly write: (text: string) => Effect.Effect<void>
  /**
   * Types `text` and returns once it is in the terminal's input queue (the
   * program may not have read it), with the driver's wall-clock time then (ms).
   */
  readonly typeAcked: (text: string) => Effect.Effect<number, PtyTimeout>
  /** When the driver read the output byte at `offset` of `rawOutput` (ms, as `Date.now()`); only when spawned with `stamps`. */
  readonly relayedAt: (offset: number) => Effect.Effect<number | undefined>
  /** Returns once everything the program has written so far is on `screen`. */
  readonly flushOutput: Effect.Effect<void, PtyTimeout>
  /**
   * Waits until `pattern` appears after the end of the previous match, like
   * `expect`, and returns the screen from there through this match. Fails with
   * the screen's tail if it does not appear in time or the program exits first.
   */
  readonly waitFor: (pattern: string | RegExp, timeoutMs?: number) => Effect.Effect<string, PtyTimeout>
  readonly kill: (signal: NodeJS.Signals) => Effect.Effect<void>
  /** SIGSTOP, returning once the kernel reports the program stopped (SIGCONT continues it). */
  readonly stop: Effect.Effect<void, PtyTimeout>
  /** Closes the terminal, as closing its window does; only when spawned `hangupable`. */
  readonly hangup: Effect.Effect<void>
  /** The terminal's modes right now, as the program left them. */
  readonly termios: Effect.Effect<Termios, PtyTimeout>
  /** Completes when the program has ended and all of its output has been read. */
  readonly exited: Effect.Effect<ExitStatus>
  /** `exited`, failing if it takes longer than `timeoutMs`. */
  readonly exitedWithin: (timeoutMs: number) => Effect.Effect<ExitStatus, PtyTimeout>
}

export const DEFAULT_TIMEOUT_MS = 15_000
const POLL = Duration.millis(20)

const tail = (text: string): string => (text.length > 1500 ? `…${text.slice(-1500)}` : text)

export const spawn = (options: SpawnOptions): Effect.Effect<Pty, never, Scope.Scope> =>
  Effect.gen(function*() {
    const exit = yield* Deferred.make<ExitStatus>()
    const started = yield* Deferred.make<number>()
    let screen = ""
    let cursor = 0
    let reported: ExitStatus = { code: null, signal: null }
    let controlLines = ""
    const termiosReports: Array<Termios> = []
    const rawChunks: Array<Buffer> = []
    let received = 0
    let nextCommand = 0
    const acked = new Map<number, { readonly relayed: number; readonly at: number }>()
    // (bytes relayed in all, when): one per read of the output, with `stamps`.
    const relays: Array<readonly [number, number]> = []

    const driver = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const spec = JSON.stringify({
          argv: options.argv,
          env: options.env,
          cwd: options.cwd,
          hangup: options.hangupable === true,
          ...(options.columns === undefined ? {} : { columns: options.columns }),
          ...(options.rows === undefined ? {} : { rows: options.rows }),
          ...(options.stamps === true ? { stamps: true } : {}),
          ...(options.bytesPerSecond === undefined ? {} : { rate: options.bytesPerSecond }),
          ...(options.answersPosition === false ? { answers: false } : {})
        })
        // python3 runs with the test's own environment; only the program gets `options.env`.
        const child = spawnProcess("python3", [DRIVER, spec], { stdio: ["pipe", "pipe", "pipe", "pipe"] })
        const decoder = new StringDecoder("utf8")
        child.stdout.on("data", (chunk: Buffer) => {
          rawChunks.push(chunk)
          received += chunk.length
          // Bracketed paste on and off, which Mino re-asserts before every prompt, is not drawn;
          // nor are its cursor position requests (the cursor ends where it was).
          screen += decoder.write(chunk).replace(/\r\n/g, "\n").replace(/\u001b\[\?2004[hl]|(?:\u001b\[\d+G)?\u001b\[6n\r?/g, "")
        })
        child.stderr.setEncoding("utf8")
        child.stderr.on("data", (chunk: string) => {
          controlLines += chunk
          for (const line of controlLines.split("\n").slice(0, -1)) {
            const pid = /^pid (\d+)$/.exec(line)
            const ended = /^exit (\S+) (\S+)$/.exec(line)
            const modes = /^termios ([01]) ([01]) ([01])$/.exec(line)
            const ack = /^ack (\d+) (\d+) ([\d.]+)$/.exec(line)
            const relay = /^relayed (\d+) ([\d.]+)$/.exec(line)
            if (ack?.[1] !== undefined && ack[2] !== undefined) acked.set(Number(ack[1]), { relayed: Number(ack[2]), at: Number(ack[3]) })
            else if (relay !== null) relays.push([Number(relay[1]), Number(relay[2])])
            else if (pid?.[1] !== undefined) Deferred.unsafeDone(started, Exit.succeed(Number(pid[1])))
            else if (modes !== null) termiosReports.push({ echo: modes[1] === "1", icanon: modes[2] === "1", isig: modes[3] === "1" })
            else if (ended?.[1] !== undefined && ended[2] !== undefined) {
              reported = { code: ended[1] === "-" ? null : Number(ended[1]), signal: ended[2] === "-" ? null : ended[2] }
            } else if (line.length > 0) screen += `\n[pty_driver] ${line}\n`
          }
          controlLines = controlLines.slice(controlLines.lastIndexOf("\n") + 1)
        })
        child.stdin.on("error", () => {}) // the driver may be gone when a test writes
        // "close" follows the last byte of output, so `exited` never misses the end of the screen.
        child.on("close", () => {
          Deferred.unsafeDone(started, Exit.succeed(-1))
          Deferred.unsafeDone(exit, Exit.succeed(reported))
        })
        return child
      }),
      (child) =>
        Effect.gen(function*() {
          const pid = yield* Deferred.await(started)
          if (!(yield* Deferred.isDone(exit)) && pid > 0) signal(pid, "SIGKILL")
          const ended = yield* Deferred.await(exit).pipe(Effect.timeout(Duration.seconds(5)), Effect.option)
          if (ended._tag === "None") child.kill("SIGKILL")
        })
    )

    const pid = yield* Deferred.await(started)
    if (pid <= 0) return yield* Effect.die(new Error(`pty_driver could not start ${options.argv.join(" ")}: ${screen}`))

    const exited = Deferred.await(exit)
    const commands = driver.stdio[3]
    /** Sends a command to the driver and waits for its ack: the output byte count it reported, and its time. */
    const command = (body: Readonly<Record<string, unknown>>) =>
      Effect.gen(function*() {
        const id = nextCommand++
        if (commands === null || commands === undefined || !("write" in commands)) return yield* Effect.die(new Error("no command channel"))
        commands.write(JSON.stringify({ id, ...body }) + "\n")
        const deadline = Date.now() + DEFAULT_TIMEOUT_MS
        while (!acked.has(id)) {
          if (Date.now() > deadline) return yield* new PtyTimeout({ message: `pty_driver did not acknowledge ${JSON.stringify(body).slice(0, 80)}` })
          yield* Effect.sleep(Duration.millis(2))
        }
        return acked.get(id) ?? { relayed: 0, at: 0 }
      })
    const waitFor = (pattern: string | RegExp, timeoutMs = DEFAULT_TIMEOUT_MS) =>
      Effect.gen(function*() {
        const deadline = Date.now() + timeoutMs
        while (true) {
          const rest = screen.slice(cursor)
          const found = typeof pattern === "string"
            ? (rest.includes(pattern) ? { index: rest.indexOf(pattern), length: pattern.length } : undefined)
            : (() => {
              const match = pattern.exec(rest)
              return match === null ? undefined : { index: match.index, length: match[0].length }
            })()
          if (found !== undefined) {
            const segment = rest.slice(0, found.index + found.length)
            cursor += segment.length
            return segment
          }
          const over = yield* Deferred.isDone(exit)
          if (over || Date.now() > deadline) {
            const why = over ? `the program exited (${JSON.stringify(yield* exited)})` : `${timeoutMs} ms passed`
            return yield* new PtyTimeout({
              message: `waiting for ${String(pattern)}: ${why}; screen since the last match:\n${tail(rest)}`
            })
          }
          yield* Effect.sleep(POLL)
        }
      })

    return {
      pid,
      screen: Effect.sync(() => screen),
      rawOutput: Effect.sync(() => Buffer.concat(rawChunks)),
      write: (text) => Effect.sync(() => void driver.stdin.write(text)),
      typeAcked: (text) => Effect.map(command({ type: Buffer.from(text, "utf8").toString("base64") }), (ack) => ack.at),
      relayedAt: (offset) => Effect.sync(() => relays.find(([total]) => total > offset)?.[1]),
      flushOutput: Effect.gen(function*() {
        const { relayed } = yield* command({ flush: true })
        while (received < relayed) yield* Effect.sleep(Duration.millis(2))
      }),
      waitFor,
      kill: (name) => Effect.sync(() => signal(pid, name)),
      stop: Effect.gen(function*() {
        signal(pid, "SIGSTOP")
        const deadline = Date.now() + DEFAULT_TIMEOUT_MS
        while (true) {
          const stat = fs.readFileSync(`${PROC}/${pid}/stat`, "utf8")
          if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("T")) return
          if (Date.now() > deadline) return yield* new PtyTimeout({ message: `process ${pid} did not stop` })
          yield* Effect.sleep(Duration.millis(1))
        }
      }),
      hangup: Effect.sync(() => void driver.stdin.end()),
      termios: Effect.gen(function*() {
        const before = termiosReports.length
        if (driver.pid !== undefined) signal(driver.pid, "SIGUSR1")
        const deadline = Date.now() + DEFAULT_TIMEOUT_MS
        while (termiosReports.length === before) {
          if (Date.now() > deadline) return yield* new PtyTimeout({ message: "pty_driver did not report the terminal's modes" })
          yield* Effect.sleep(POLL)
        }
        const report = termiosReports[termiosReports.length - 1]
        if (report === undefined) return yield* Effect.die(new Error("no termios report"))
        return report
      }),
      exited,
      exitedWithin: (timeoutMs) =>
        exited.pipe(
          Effect.timeoutFail({
            duration: Duration.millis(timeoutMs),
            onTimeout: () => new PtyTimeout({ message: `still running after ${timeoutMs} ms; screen:\n${tail(screen)}` })
          })
        )
    } satisfies Pty
  })

const signal = (pid: number, name: NodeJS.Signals): void => {
  try {
    process.kill(pid, name)
  } catch {
    // ESRCH: it has already exited.
  }
}
