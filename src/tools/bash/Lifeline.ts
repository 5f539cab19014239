/**
 * The lifeline: how an approved command is started, and the bounds it keeps
 * whatever becomes of Mino. Mino's own timer and kill calls stop with Mino
 * (SIGKILL, a crash, the terminal closing, a command killing Mino) or pause with
 * it (Ctrl+Z, SIGSTOP); the lifeline does not. Every mechanism here exists on
 * macOS and Linux alike: POSIX `sh` scripts, pipes, process groups and absolute
 * paths (`/bin/sh`, `/bin/sleep`, `/usr/bin/env`, `/bin/bash`), nothing else.
 *
 * - The watcher: one `/bin/sh` per Mino (another only after one has died), in a
 *   session of its own (Ctrl+Z, Ctrl+C and a hangup never reach it), with no
 *   environment but `LC_ALL=C` (never the key). It reads whole lines on its
 *   stdin, a pipe only Mino holds: `arm <pgid> <ms>` starts one background
 *   sleeper that SIGKILLs the group at its deadline, `disarm <pgid>` ends that
 *   sleeper. At end of file, which the kernel delivers the moment Mino is gone
 *   however it ended, it SIGKILLs every armed group, then its own group (itself
 *   and its sleepers).
 * - The gate: Mino spawns each command itself, `detached` (a session and process
 *   group of its own, led by the command, with no controlling terminal), as
 *   `/bin/sh -c <GATE>` with an empty environment, stdin a pipe from Mino and
 *   stdout one pipe to Mino. The gate reads one line on stdin and exits 125
 *   unless it is the go line; then it takes `/dev/null` as stdin, sends stderr
 *   to the output pipe, closes every other descriptor it may hold, and `exec`s
 *   `/usr/bin/env -i <the environment> /bin/bash --noprofile --norc -c
 *   <command>`: the process Mino armed is the command's bash, with exactly the
 *   given environment (the gate's shell adds nothing to it), `$0` `/bin/bash`,
 *   the signal dispositions and mask Node's spawn resets to their defaults.
 *
 * Mino writes `arm` first and the go line only once `arm` is in the watcher's
 * pipe, which keeps it even if Mino dies the next instant. So a command cannot
 * execute one instruction before its deadline is held: Mino gone before the go
 * line, the gate reads end of file and exits having run nothing; after it, the
 * watcher holds the deadline. Mino reaps every command (it is their parent), so
 * none is left a zombie; how it ended comes from the kernel, not from a report.
 *
 * The command's parent is Mino (`$PPID`): a command that kills it is killed by
 * the watcher. A command that kills the watcher (same uid) is killed by Mino at
 * once, its result says so, and the next command gets a new watcher; one that
 * stops the watcher is bounded by Mino's own timer, and the next command
 * continues it; one that kills the sleep holding its deadline is killed as at
 * the deadline. A command that stops or kills the watcher and then kills Mino
 * escapes every bound, as does one that leaves its group (`setsid`, `set -m`,
 * coreutils `timeout`).
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

/**
 * The watcher (exported for its tests, which run it under several shells). POSIX
 * `sh`, builtins only but `/bin/sleep`; started detached, so that `kill -KILL 0`
 * at the end reaches its own group alone. A sleeper reaps its sleep; the watcher
 * reaps a sleeper when it is disarmed.
 */
export const WATCHER = `
trap '' HUP INT QUIT TSTP TTIN TTOU PIPE
# kill is a builtin of every sh Mino meets (dash, bash, busybox); a shell without it
# (posh) gets /bin/kill by its absolute path. Forms every one of them reads alike.
case $(command -v kill) in
kill) group() { kill -KILL "-$1" 2>/dev/null; } ;;
*) kill() { /bin/kill "$@"; }; group() { /bin/kill -KILL -- "-$1" 2>/dev/null; } ;;
esac
armed=
while IFS=' ' read -r verb g ms rest; do
  case $g in ''|0*|*[!0-9]*) continue ;; esac
  case $verb in
  arm)
    case $ms in ''|*[!0-9]*) continue ;; esac
    f=$((ms % 1000))
    case $f in ?) f=00$f ;; ??) f=0$f ;; esac
    (
      # A disarm before the sleep has a pid stops it as soon as it has one.
      stop=
      trap 'stop=1' TERM
      /bin/sleep "$((ms / 1000)).$f" & s=$!
      trap 'kill -KILL "$s" 2>/dev/null; exit 0' TERM
      [ -z "$stop" ] || { kill "$s" 2>/dev/null; exit 0; }
      # Ended by the deadline or by anyone else but a disarm: the group dies.
      wait "$s"
      group "$g"
    ) &
    armed="$armed $g:$!"
    ;;
  disarm)
    left=
    for entry in $armed; do
      if [ "\${entry%%:*}" = "$g" ]; then
        # A sleeper a command stopped would never take its TERM, and the wait would never end.
        kill -CONT "\${entry#*:}" 2>/dev/null
        kill "\${entry#*:}" 2>/dev/null
        wait "\${entry#*:}"
      else
        left="$left $entry"
      fi
    done
    armed=$left
    ;;
  esac
done
for entry in $armed; do group "\${entry%%:*}"; done
# Its own group (it leads it, being detached): itself and every sleeper with its sleep.
group "$$"
`

/**
 * The gate (exported for its tests): `sh -c GATE <name> <command> <high fds>
 * NAME=VALUE...`. POSIX `sh`; its own environment is empty, so nothing in the
 * command's can change what it does, and `env -i` gives bash exactly the
 * command's. It closes 3 to 9 itself; a descriptor numbered 10 or more (which
 * POSIX `sh` cannot name) that Mino itself inherited open is closed by a `bash`
 * step, run only when there is one (`<high fds>`, found by `PROBE`).
 */
export const GATE = `
IFS= read -r go || exit 125
[ "$go" = go ] || exit 125
exec </dev/null 2>&1 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&-
command=$1
high=$2
shift 2
[ -z "$high" ] || exec /bin/bash --noprofile --norc -c 'for fd in $1; do eval "exec $fd>&-"; done; shift; exec "$@"' \\
  mino-close "$high" /usr/bin/env -i "$@" /bin/bash --noprofile --norc -c "$command"
exec /usr/bin/env -i "$@" /bin/bash --noprofile --norc -c "$command"
`

/**
 * Lists the descriptors from 10 to 1023 a process Mino spawns inherits
 * (exported for its tests): those Mino inherited open without close-on-exec
 * from whatever started it (Node opens its own close-on-exec). Run once per
 * lifeline by `/bin/bash` (any version: POSIX syntax, but a descriptor over 9).
 */
export const PROBE = `
i=10
while [ "$i" -lt 1024 ]; do
  if { eval ": >&$i"; } 2>/dev/null; then printf '%s ' "$i"; fi
  i=$((i + 1))
done
`

/** The line that releases a gate. */
export const GO = "go\n"

/** What a command runs with. */
export interface LaunchOptions {
  readonly command: string
  readonly cwd: string
  /** The complete environment; nothing else is exported. */
  readonly env: Readonly<Record<string, string>>
  readonly timeoutMs: number
}

/**
 * What the caller hears of one command: `running` (unless it was killed first),
 * then `exited` or `lost`; or `failed` alone.
 */
export interface LaunchEvents {
  /** Armed and released: the command runs, in process group `pgid`; `output` is its stdout and stderr. */
  readonly running: (pgid: number, output: net.Socket) => void
  /**
   * Its bash has ended: by itself (`code`) or by a signal. What was left of its
   * group has been killed (background jobs die with bash) and disarmed.
   */
  readonly exited: (code: number | null, signal: NodeJS.Signals | null) => void
  /** The watcher that bounded it ended while it ran, so Mino killed its group (now ended). `reason` is one line. */
  readonly lost: (reason: string) => void
  /** It did not run; `message` says why, in one line. */
  readonly failed: (message: string) => void
}

export interface Launch {
  /** Kills the command's group: at once if it runs, or before it is released (it then never runs). */
  readonly kill: () => void
}

export interface Lifeline {
  /** Starts `options.command` as the module comment says. */
  readonly launch: (options: LaunchOptions, events: LaunchEvents) => Launch
}

/**
 * A lifeline whose gates and watchers run under `shell` (its tests run every
 * sh they must work under; Mino runs `/bin/sh`): its watcher is spawned with the
 * first command and ends when the scope closes.
 */
export const makeWith = (shell: ReadonlyArray<string>): Effect.Effect<Lifeline, never, Scope.Scope> =>
  Effect.map(
    Effect.acquireRelease(Effect.sync(() => new Watchers(shell)), (watchers) => Effect.sync(() => watchers.close())),
    (watchers): Lifeline => ({ launch: (options, events) => launch(watchers, options, events) })
  )

/** The lifeline for one runner, under `/bin/sh`. */
export const make: Effect.Effect<Lifeline, never, Scope.Scope> = makeWith(["/bin/sh"])

/**
 * Names bash cannot take as given: its read-only variables, its arrays, and
 * those whose value it computes on each use. (The child environment never holds
 * one; a caller that passes one is told, rather than running with another value.)
 */
const RESERVED = new Set([
  "BASHOPTS", "BASH_VERSINFO", "EUID", "PPID", "SHELLOPTS", "UID",
  "BASH_ALIASES", "BASH_ARGC", "BASH_ARGV", "BASH_CMDS", "BASH_LINENO", "BASH_REMATCH", "BASH_SOURCE", "DIRSTACK", "FUNCNAME", "GROUPS", "PIPESTATUS",
  "BASHPID", "BASH_ARGV0", "BASH_COMMAND", "BASH_SUBSHELL", "EPOCHREALTIME", "EPOCHSECONDS", "HISTCMD", "LINENO", "RANDOM", "SECONDS", "SRANDOM"
])

/** Why bash could not be started with exactly these, if it could not. */
const unsendable = (options: LaunchOptions): string | undefined => {
  const cannot = (why: string) => `Could not start /bin/bash: ${why}`
  if (options.cwd.includes("\0")) return cannot("the working directory contains a NUL byte")
  if (options.command.includes("\0")) return cannot("the command contains a NUL byte")
  for (const [name, value] of Object.entries(options.env)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) || RESERVED.has(name)) {
      return cannot(`the environment variable name ${JSON.stringify(name)} cannot be passed to bash`)
    }
    if (value.includes("\0")) return cannot(`the environment variable ${name} contains a NUL byte`)
  }
  return undefined
}

/** What a gate is given: the command, its environment, and the inherited descriptors over 9 it must close. */
export type GateOptions = Pick<LaunchOptions, "command" | "env" | "cwd"> & { readonly high: string }

/** Spawns a gate as the module comment says (exported for the gate's tests, which pass another shell). */
export const spawnGate = (options: GateOptions, shell: ReadonlyArray<string> = ["/bin/sh"]): ChildProcess => {
  const [file = "/bin/sh", ...flags] = shell
  const environment = Object.entries(options.env).map(([name, value]) => `${name}=${value}`)
  return spawn(file, [...flags, "-c", GATE, "mino-gate", options.command, options.high, ...environment], {
    // A relative directory is Mino's, as for any spawn.
    cwd: path.resolve(options.cwd),
    env: {},
    stdio: ["pipe", "pipe", "ignore"],
    detached: true
  })
}

/** The inherited descriptors over 9 (`PROBE`), as the gate takes them: `"251 300"`, or empty. */
export const inheritedHigh = (): string => {
  const probe = spawnSync("/bin/bash", ["--noprofile", "--norc", "-c", PROBE], {
    cwd: "/",
    env: {},
    stdio: ["pipe", "pipe", "ignore"],
    encoding: "latin1",
    timeout: 10_000
  })
  const found = typeof probe.stdout === "string" ? probe.stdout.trim() : ""
  return /^[0-9 ]*$/.test(found) ? found : ""
}

/** Spawns a watcher as the module comment says (exported for its tests, which pass another shell). */
export const spawnWatcher = (shell: ReadonlyArray<string> = ["/bin/sh"]): ChildProcess => {
  const [file = "/bin/sh", ...flags] = shell
  return spawn(file, [...flags, "-c", WATCHER], { cwd: "/", env: { LC_ALL: "C" }, stdio: ["pipe", "ignore", "ignore"], detached: true })
}

/** One watcher process and the commands it holds. */
interface Watcher {
  readonly process: ChildProcess
  alive: boolean
  /** The commands armed with it and not yet ended: told `lost` if it ends first. */
  readonly armed: Set<Command>
}

/** The watchers of one lifeline: the live one, spawned when needed, and every one until the scope closes. */
class Watchers {
  private current: Watcher | undefined
  private readonly all = new Set<Watcher>()
  private high: string | undefined

  constructor(readonly shell: ReadonlyArray<string>) {}

  /** The inherited descriptors over 9, probed once, with the first command. */
  inherited(): string {
    this.high ??= inheritedHigh()
    return this.high
  }

  /** The live watcher, continued should a command have stopped it. */
  get(): Watcher {
    if (this.current === undefined || !this.current.alive) this.current = this.spawn()
    const pid = this.current.process.pid
    if (pid !== undefined) signal(-pid, "SIGCONT")
    return this.current
  }

  close(): void {
    for (const watcher of this.all) {
      watcher.alive = false
      watcher.process.stdin?.end()
      // A watcher a command stopped would never read the end of its pipe: continued, it reads it and ends.
      const pid = watcher.process.pid
      if (pid !== undefined) signal(-pid, "SIGCONT")
    }
    this.all.clear()
  }

  private spawn(): Watcher {
    const watcher: Watcher = { process: spawnWatcher(this.shell), alive: true, armed: new Set() }
    this.all.add(watcher)
    const died = () => {
      if (!watcher.alive) return
      watcher.alive = false
      this.all.delete(watcher)
      for (const command of watcher.armed) command.lose("Mino's lifeline watcher ended")
    }
    watcher.process.on("error", died)
    watcher.process.on("exit", died)
    watcher.process.stdin?.on("error", () => {}) // EPIPE: it has died; "exit" follows
    // Neither the watcher nor its pipe keeps Mino running.
    watcher.process.unref()
    if (watcher.process.stdin instanceof net.Socket) watcher.process.stdin.unref()
    return watcher
  }
}

/** A line to a watcher; `written(true)` once it is in the pipe, `written(false)` when the watcher is gone. */
const tell = (watcher: Watcher, line: string, written: (ok: boolean) => void = () => {}): void => {
  const stdin = watcher.process.stdin
  if (!watcher.alive || stdin === null || !stdin.writable) return written(false)
  stdin.write(line, (error) => written(error === undefined || error === null))
}

/** One command, from its spawn to its end. */
interface Command {
  readonly pgid: number
  killed: boolean
  /** Released: the go line is written. */
  released: boolean
  /** Ended and reaped: its id may be reused from now on, so its group is not signalled again. */
  ended: boolean
  /** Why its watcher is gone, when it ended first. */
  lostReason: string | undefined
  readonly lose: (reason: string) => void
}

const launch = (watchers: Watchers, options: LaunchOptions, events: LaunchEvents): Launch => {
  const invalid = unsendable(options)
  if (invalid !== undefined) {
    events.failed(invalid)
    return { kill: () => {} }
  }
  const watcher = watchers.get()
  let child: ChildProcess
  try {
    child = spawnGate({ ...options, high: watchers.inherited() }, watchers.shell)
  } catch (error) {
    events.failed(startFailure(options.cwd, error))
    return { kill: () => {} }
  }
  const pgid = child.pid
  if (pgid === undefined) {
    child.on("error", (error) => events.failed(startFailure(options.cwd, error)))
    return { kill: () => {} }
  }
  const command: Command = {
    pgid,
    killed: false,
    released: false,
    ended: false,
    lostReason: undefined,
    lose: (reason) => {
      command.lostReason ??= reason
      killGroup(command)
    }
  }
  child.on("error", () => {}) // after a spawn, only a failed kill; "exit" reports the end
  child.stdin?.on("error", () => {}) // EPIPE: the gate is gone; "exit" follows
  child.on("exit", (code, signal) => ended(watcher, command, events, code, signal))
  watcher.armed.add(command)
  tell(watcher, `arm ${pgid} ${Math.ceil(options.timeoutMs)}\n`, (armed) => release(command, child, events, armed))
  return {
    kill: () => {
      command.killed = true
      killGroup(command)
    }
  }
}

/** `arm` is in the watcher's pipe (or could not be written): lets the command run, unless it must not. */
const release = (command: Command, child: ChildProcess, events: LaunchEvents, armed: boolean): void => {
  if (!armed) command.lose("the lifeline watcher that bounds it was gone, so it was not run")
  if (!armed || command.killed || command.ended || command.lostReason !== undefined) {
    // The gate reads end of file and exits, having run nothing (it is killed besides).
    child.stdin?.destroy()
    killGroup(command)
    return
  }
  command.released = true
  child.stdin?.end(GO)
  if (child.stdout instanceof net.Socket) events.running(command.pgid, child.stdout)
}

/** Its bash has ended and been reaped: what is left of its group dies, and the watcher forgets it. */
const ended = (
  watcher: Watcher,
  command: Command,
  events: LaunchEvents,
  code: number | null,
  signal: NodeJS.Signals | null
): void => {
  // Once: after the reaping its id may be reused, but not while its group still has members.
  killGroup(command)
  command.ended = true
  if (watcher.armed.delete(command)) tell(watcher, `disarm ${command.pgid}\n`)
  const lost = command.lostReason
  if (lost === undefined) events.exited(code, signal)
  else if (command.released) events.lost(lost)
  else events.failed(`Could not start the command: ${lost}.`)
}

const startFailure = (cwd: string, error: unknown): string => {
  const code = typeof error === "object" && error !== null && "code" in error ? String(error.code) : ""
  const resolved = path.resolve(cwd)
  if (!isDirectory(resolved)) return `Could not start /bin/bash: the working directory ${cwd} does not exist or is not a directory`
  if (code === "EACCES" || code === "EPERM") return `Could not start /bin/bash: the working directory ${cwd} cannot be entered`
  if (code === "E2BIG") return "Could not start /bin/bash: the command and its environment are over the system's limit for a program's arguments"
  return `Could not start /bin/bash: ${error instanceof Error ? error.message : String(error)}`
}

const isDirectory = (path: string): boolean => {
  try {
    return fs.statSync(path).isDirectory()
  } catch {
    return false
  }
}

const killGroup = (command: Command): void => {
  if (!command.ended) signal(-command.pgid, "SIGKILL")
}

const signal = (pid: number, name: NodeJS.Signals): void => {
  try {
    process.kill(pid, name)
  } catch {
    // ESRCH: already gone.
  }
}
