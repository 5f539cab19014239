/**
 * The lifeline: how an approved command is started, and the bounds it keeps
 * whatever becomes of Mino. Mino's own timer and kill calls stop with Mino
 * (SIGKILL, a crash, the terminal closing, a command killing Mino) or pause with
 * it (Ctrl+Z, SIGSTOP); the lifeline does not.
 *
 * One small bash process (the helper) per running command at most, usually one
 * per Mino, spawned with the first command and kept until the runner's scope
 * closes. It is in a session of its own (no controlling terminal: Ctrl+Z,
 * Ctrl+C and a hangup never reach it) and has no environment but `LC_ALL=C`
 * (never the key). It plays two parts, over pipes only Mino holds:
 *
 * - the watcher (the process Mino spawned) reads one line per event on its
 *   stdin, `arm <pgid> <timeout ms>` and `disarm <pgid>`; it SIGKILLs an armed
 *   group at its deadline, and every armed group as soon as that pipe reaches
 *   end of file, which the kernel delivers the moment Mino is gone, however it
 *   ended; it then waits for the spawner, and ends;
 * - the spawner (a subshell of the watcher) starts the commands, so that a start
 *   forks this small shell rather than Mino's whole heap. For each request
 *   (`run`, then the directory, the command and each `NAME=VALUE`, each as many
 *   bytes as the request says) it forks a child in a new process group, in the
 *   command's directory, which waits for one byte on its stdin. It reports
 *   `started <pid> <spawner pid> <output fd> <gate fd>`: Mino opens the child's
 *   output pipe (stdout and stderr, one pipe) and the write end of its stdin
 *   through `/proc/<spawner pid>/fd/` and says `opened` (the spawner then closes
 *   its own end of that stdin), arms the group, and only once `arm` is in the
 *   watcher's pipe writes the go byte. The child then takes `/dev/null` as
 *   stdin, closes every other descriptor, exports exactly the given environment
 *   and `exec`s `/bin/bash --noprofile --norc -c <command>`: the process Mino
 *   armed is the command's bash. When it ends, the spawner reports how (its job
 *   line: `Exit 3`, `Done`, or the signal, then `exit <status>`).
 *
 * So a command cannot execute one instruction before the watcher holds its
 * deadline: Mino gone before the go byte, no one holds the child's stdin any
 * more, and it reads end of file and exits without running anything (the spawner,
 * at end of file too, reaps it and ends); after it, the watcher already holds the
 * deadline. The spawner reaps every command itself, so none is left a zombie for
 * init to collect.
 *
 * The command's parent is the spawner, not Mino (`$PPID`). A command that kills
 * it, or the watcher (it runs with the same uid), is killed by Mino at once (its
 * status can no longer be known), and the next command gets a new helper; killing
 * the watcher while Mino is stopped removes the lifeline, as a command can remove
 * any cleanup.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import { constants as os } from "node:os"
import * as path from "node:path"
import { type Readable, Writable } from "node:stream"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

/**
 * The helper (exported for its tests). Deadlines are kept in microseconds of the
 * watcher's own clock, from the moment it reads `arm`.
 */
export const SCRIPT = `
export -n LC_ALL PWD OLDPWD SHLVL
trap '' HUP INT QUIT TSTP TTIN TTOU PIPE

gate() {
  IFS= read -r -N 1 go && [[ $go == g ]] || exit 125
  exec </dev/null 2>&1
  trap - HUP INT QUIT TSTP TTIN TTOU PIPE CHLD
  for fd in /proc/self/fd/*; do fd=\${fd##*/}; (( fd > 2 )) && exec {fd}>&-; done
  # The gate's own variables go: a name in the environment is then exported as given, and cannot change what runs.
  set -- "\${env[@]}" "$cmd"
  unset -v env head cmd cwd entry i go fd opened C C_PID
  while (( $# > 1 )); do export -- "$1" || exit 125; shift; done
  exec /bin/bash --noprofile --norc -c "$1"
}

spawner() {
  trap 'jobs -l' CHLD
  while IFS=' ' read -r -a head; do
    [[ \${head[0]} == run ]] || exit 1
    IFS= read -r -N "\${head[1]}" cwd && (( \${#cwd} == head[1] )) || exit 1
    IFS= read -r -N "\${head[2]}" cmd && (( \${#cmd} == head[2] )) || exit 1
    env=()
    for (( i = 3; i < \${#head[@]}; i++ )); do
      IFS= read -r -N "\${head[i]}" entry && (( \${#entry} == head[i] )) || exit 1
      env+=("$entry")
    done
    if ! cd -P -- "$cwd" 2>/dev/null; then printf 'nocd\\n'; continue; fi
    set -m
    coproc C { gate; }
    set +m
    cd /
    printf 'started %s %s %s %s\\n' "$C_PID" "$BASHPID" "\${C[0]}" "\${C[1]}"
    # Once Mino has opened the child's pipes (or is gone), the spawner's end of its
    # stdin goes: the child then reads end of file as soon as Mino's end is closed.
    IFS= read -r opened
    fd=\${C[1]}
    exec {fd}>&-
    wait "$C_PID"
    printf 'exit %s\\n' "$?"
  done
}

spawner 0<&3 3<&- &
exec 3<&- 1>/dev/null

declare -A due=()
while :; do
  now=\${EPOCHREALTIME/[.,]/}
  wait=
  for g in "\${!due[@]}"; do
    left=$(( due[$g] - now ))
    if (( left <= 0 )); then
      kill -KILL -- "-$g" 2>/dev/null
      unset "due[$g]"
    elif [[ -z $wait ]] || (( left < wait )); then
      wait=$left
    fi
  done
  if [[ -n $wait ]]; then
    printf -v t '%d.%06d' $(( wait / 1000000 )) $(( wait % 1000000 ))
    read -r -t "$t" verb g ms
  else
    read -r verb g ms
  fi
  status=$?
  (( status > 128 )) && continue
  if (( status != 0 )); then
    for g in "\${!due[@]}"; do kill -KILL -- "-$g" 2>/dev/null; done
    # The spawner ends by itself once its child is gone (killed, or at end of file
    # before the go byte): it reaps it first, so no command is left a zombie.
    wait
    exit 0
  fi
  [[ $g =~ ^[1-9][0-9]*$ ]] || continue
  case $verb in
    arm) [[ $ms =~ ^[0-9]+$ ]] && due[$g]=$(( \${EPOCHREALTIME/[.,]/} + ms * 1000 )) ;;
    disarm) unset "due[$g]" ;;
  esac
done
`

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
  /** Its status can no longer be known (the spawner was killed): its group has been killed. `reason` is one line. */
  readonly lost: (reason: string) => void
  /** It did not run; `message` says why, in one line. */
  readonly failed: (message: string) => void
}

export interface Launch {
  /** Kills the command's group: at once if it runs, or as soon as it is started (it then never runs). */
  readonly kill: () => void
  /**
   * The helper did not report the command's end in time after a kill (a command
   * stopped it, say `kill -STOP $PPID`): kills the command's group and the whole
   * helper (watcher and spawner, stopped or not), which the next command replaces.
   */
  readonly abandon: () => void
}

export interface Lifeline {
  /** Starts `options.command` as the module comment says. */
  readonly launch: (options: LaunchOptions, events: LaunchEvents) => Launch
}

/**
 * A lifeline for one runner: helpers are spawned as commands need them (one
 * unless commands run at once) and end when the scope closes.
 */
export const make: Effect.Effect<Lifeline, never, Scope.Scope> = Effect.map(
  Effect.acquireRelease(Effect.sync(() => new Helpers()), (helpers) => Effect.sync(() => helpers.close())),
  (helpers): Lifeline => ({ launch: (options, events) => helpers.launch(options, events) })
)

class Helpers {
  private readonly idle: Array<Helper> = []
  private readonly all = new Set<Helper>()

  launch(options: LaunchOptions, events: LaunchEvents): Launch {
    const invalid = unsendable(options)
    if (invalid !== undefined) {
      events.failed(invalid)
      return { kill: () => {}, abandon: () => {} }
    }
    let helper = this.idle.pop()
    while (helper !== undefined && !helper.alive) {
      this.all.delete(helper)
      helper = this.idle.pop()
    }
    if (helper === undefined) {
      helper = new Helper()
      this.all.add(helper)
    }
    const chosen = helper
    return chosen.launch(options, events, () => {
      if (chosen.alive) this.idle.push(chosen)
      else this.all.delete(chosen)
    })
  }

  close(): void {
    for (const helper of this.all) helper.close()
    this.all.clear()
    this.idle.length = 0
  }
}

/**
 * Names bash cannot export as given: its read-only variables, its arrays, and
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

const isDirectory = (path: string): boolean => {
  try {
    return fs.statSync(path).isDirectory()
  } catch {
    return false
  }
}

/** The request for one command: a header of byte counts, then the bytes (exported for the helper's tests). */
export const request = (options: LaunchOptions): Buffer => {
  // A relative directory is Mino's, as for a spawn: the spawner's own directory is the last command's.
  const parts = [path.resolve(options.cwd), options.command, ...Object.entries(options.env).map(([name, value]) => `${name}=${value}`)].map((part) =>
    Buffer.from(part, "utf8"))
  return Buffer.concat([Buffer.from(`run ${parts.map((part) => part.length).join(" ")}\n`), ...parts])
}

const SIGNALS = new Map<number, NodeJS.Signals>(
  Object.entries(os.signals).map(([name, number]): [number, NodeJS.Signals] => [number, name as NodeJS.Signals])
)

/** One command on its helper, from the request to the exit report. */
interface Current {
  readonly options: LaunchOptions
  readonly events: LaunchEvents
  readonly done: () => void
  pgid: number | undefined
  /** Started and not yet reaped. */
  live: boolean
  /** The watcher holds its deadline. */
  armed: boolean
  killed: boolean
  /** From the spawner's job line: whether bash ended by itself. */
  exitedByItself: boolean | undefined
  settled: boolean
}

class Helper {
  alive = true
  private readonly process: ChildProcess
  private readonly requests: Writable | undefined
  private readonly reports: Readable | undefined
  private current: Current | undefined
  private pending = ""

  constructor() {
    this.process = spawn("/bin/bash", ["--noprofile", "--norc", "-c", SCRIPT], {
      cwd: "/",
      env: { LC_ALL: "C" },
      stdio: ["pipe", "pipe", "ignore", "pipe"],
      detached: true
    })
    const requests = this.process.stdio[3]
    this.requests = requests instanceof Writable ? requests : undefined
    this.reports = this.process.stdout ?? undefined
    this.process.on("error", () => this.died("the lifeline could not be started"))
    this.process.on("exit", () => this.died("the lifeline watcher ended"))
    this.process.stdin?.on("error", () => {}) // EPIPE: it has died; "exit" follows
    this.requests?.on("error", () => {})
    this.reports?.setEncoding("latin1")
    this.reports?.on("data", (text: string) => this.read(text))
    this.reports?.on("end", () => this.died("Mino's spawner ended"))
    this.reports?.on("error", () => {})
    // Idle, neither the helper nor its pipes keep Mino running.
    this.process.unref()
    this.idle()
  }

  launch(options: LaunchOptions, events: LaunchEvents, done: () => void): Launch {
    const current: Current = { options, events, done, pgid: undefined, live: false, armed: false, killed: false, exitedByItself: undefined, settled: false }
    this.current = current
    this.busy()
    this.requests?.write(request(options))
    return {
      kill: () => {
        current.killed = true
        if (current.live && current.pgid !== undefined) killGroup(current.pgid)
      },
      abandon: () => {
        current.killed = true
        if (current.pgid !== undefined) killGroup(current.pgid)
        // The helper is its own session's group leader: SIGKILL reaches a stopped spawner too.
        if (this.process.pid !== undefined) killGroup(this.process.pid)
      }
    }
  }

  /** A line to the watcher; `written(true)` once it is in the pipe, `written(false)` when the watcher is gone. */
  control(line: string, written: (ok: boolean) => void = () => {}): void {
    const stdin = this.process.stdin
    if (stdin === null || !stdin.writable) return written(false)
    stdin.write(line, (error) => written(error === undefined || error === null))
  }

  close(): void {
    this.alive = false
    this.requests?.end()
    this.process.stdin?.end()
  }

  private read(text: string): void {
    this.pending += text
    let end: number
    while ((end = this.pending.indexOf("\n")) >= 0) {
      const line = this.pending.slice(0, end)
      this.pending = this.pending.slice(end + 1)
      this.report(line)
    }
  }

  private report(line: string): void {
    const current = this.current
    if (current === undefined) return
    const started = /^started (\d+) (\d+) (\d+) (\d+)$/.exec(line)
    if (started !== null) return this.started(current, Number(started[1]), Number(started[2]), Number(started[3]), Number(started[4]))
    // A job line: `[1]+  12345 Exit 3   coproc C { gate; }`, `Done`, `Running`, or the signal's description.
    const job = /^\[\d+\][+-]?\s+(\d+)\s+(\S+)/.exec(line)
    if (job !== null && Number(job[1]) === current.pgid) {
      const state = job[2]
      if (state !== "Running" && state !== "Stopped") current.exitedByItself = state === "Exit" || state === "Done"
      return
    }
    const exited = /^exit (\d+)$/.exec(line)
    if (exited !== null) return this.exited(current, Number(exited[1]))
    if (line === "nocd") {
      const cwd = current.options.cwd
      const why = isDirectory(cwd) ? `the working directory ${cwd} cannot be entered` : `the working directory ${cwd} does not exist or is not a directory`
      return this.finish(current, () => current.events.failed(`Could not start /bin/bash: ${why}`))
    }
  }

  private started(current: Current, pgid: number, spawner: number, outputFd: number, gateFd: number): void {
    current.pgid = pgid
    current.live = true
    if (current.killed) {
      killGroup(pgid)
      return void this.requests?.write("opened\n")
    }
    let output: number | undefined
    let gate: number | undefined
    try {
      output = fs.openSync(`/proc/${spawner}/fd/${outputFd}`, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
      gate = fs.openSync(`/proc/${spawner}/fd/${gateFd}`, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK)
    } catch (error) {
      closeQuietly(output)
      current.killed = true
      killGroup(pgid)
      this.requests?.write("opened\n")
      return this.fail(current, `its output could not be opened through /proc (${error instanceof Error ? error.message : String(error)})`)
    }
    // The spawner lets go of the child's stdin: from now on only Mino holds it.
    this.requests?.write("opened\n")
    const opened = { output, gate }
    current.armed = true
    this.control(`arm ${pgid} ${Math.ceil(current.options.timeoutMs)}\n`, (armed) => {
      // Killed, or gone (killed from outside) while the line was written: it must not be released.
      if (!armed || current.killed || !current.live) {
        closeQuietly(opened.output)
        closeQuietly(opened.gate)
        // Once reaped, its id may be reused: a group already gone is not signalled again.
        if (!current.live) return
        current.killed = true
        killGroup(pgid)
        if (!armed) this.fail(current, "the lifeline watcher that bounds it was gone, so it was not run")
        return
      }
      // The watcher holds the deadline: let the command run.
      const socket = new net.Socket({ fd: opened.output, readable: true, writable: false })
      try {
        fs.writeSync(opened.gate, "g")
      } catch {
        // The child is gone (killed before it was released): its exit follows.
      }
      closeQuietly(opened.gate)
      current.events.running(pgid, socket)
    })
  }

  /** Not run: said once the child is gone, so that the helper is free for the next command. */
  private fail(current: Current, reason: string): void {
    current.events.failed(`Could not start the command: ${reason}.`)
    current.settled = true
  }

  private exited(current: Current, status: number): void {
    current.live = false
    this.cleanUp(current)
    this.finish(current, () => {
      if (current.settled) return
      // bash reports a signal as 128+N; the job line tells it from an exit code of that value.
      const bySignal = current.exitedByItself === undefined ? status > 128 : !current.exitedByItself
      const signal = bySignal ? SIGNALS.get(status - 128) : undefined
      if (signal !== undefined) current.events.exited(null, signal)
      else current.events.exited(status, null)
    })
  }

  private finish(current: Current, tell: () => void): void {
    if (this.current !== current) return
    this.current = undefined
    this.idle()
    tell()
    current.done()
  }

  private died(reason: string): void {
    if (!this.alive) return
    // What is left of it (the spawner, should only the watcher have died) ends with its pipes.
    this.close()
    const current = this.current
    if (current === undefined) return
    // Its status can no longer be known: the group is killed (the watcher may be gone too).
    this.cleanUp(current)
    this.finish(current, () => {
      if (current.settled) return
      if (current.pgid === undefined) current.events.failed(`Could not start the command: ${reason}.`)
      else current.events.lost(reason)
    })
  }

  /**
   * bash is gone: what is left of its group dies with it (once: after its
   * reaping its id may be reused), and the watcher forgets it.
   */
  private cleanUp(current: Current): void {
    if (current.pgid === undefined) return
    killGroup(current.pgid)
    if (current.armed) this.control(`disarm ${current.pgid}\n`)
    current.armed = false
  }

  private busy(): void {
    this.process.ref()
    if (this.reports instanceof net.Socket) this.reports.ref()
  }

  private idle(): void {
    this.process.unref()
    for (const stream of [this.process.stdin, this.reports, this.requests]) {
      if (stream instanceof net.Socket) stream.unref()
    }
  }
}

const killGroup = (pgid: number): void => {
  try {
    process.kill(-pgid, "SIGKILL")
  } catch {
    // ESRCH: the group is already gone.
  }
}

const closeQuietly = (fd: number | undefined): void => {
  if (fd === undefined) return
  try {
    fs.closeSync(fd)
  } catch {
    // Already closed.
  }
}
