/**
 * The lifeline: a command's bounds that do not depend on Mino being alive or
 * scheduled. Mino's own timer and kill calls stop with Mino (SIGKILL, a crash,
 * the terminal closing, a command killing `$PPID`) or pause with it (Ctrl+Z,
 * SIGSTOP); this watcher does not.
 *
 * One small bash process per Mino, spawned on the first command and kept until
 * the runner's scope closes. It is in a session of its own: outside the
 * command's process group, without a controlling terminal (Ctrl+Z, Ctrl+C and a
 * hangup never reach it), and with `LC_ALL=C` as its whole environment (nothing
 * of Mino's, never the key). Mino holds the write end of its stdin, a pipe
 * nothing else holds, and writes one line per event:
 *
 *   arm <pgid> <timeout ms>     once a command's group is spawned, before it may run
 *   disarm <pgid>               once bash has exited and its group is killed
 *
 * The watcher SIGKILLs an armed group at its deadline, and every armed group as
 * soon as the pipe reaches end of file, which the kernel delivers the moment Mino
 * is gone, however it ended. The cost per command is two short writes.
 *
 * A command is armed before it runs: `Launch` holds it at a gate until `arm`'s
 * line is in the watcher's pipe (`arm` reports when), so no gap is left between
 * a command's first instruction and its deadline. A command that kills the
 * watcher itself (it runs with the same uid) removes the lifeline; the next `arm`
 * starts another watcher.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

/** Deadlines are kept in microseconds of the watcher's own clock, from the moment it reads `arm`. */
const SCRIPT = `
trap '' HUP INT QUIT TSTP TTIN TTOU PIPE
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
    exit 0
  fi
  [[ $g =~ ^[1-9][0-9]*$ ]] || continue
  case $verb in
    arm) [[ $ms =~ ^[0-9]+$ ]] && due[$g]=$(( \${EPOCHREALTIME/[.,]/} + ms * 1000 )) ;;
    disarm) unset "due[$g]" ;;
  esac
done
`

export interface Lifeline {
  /** Starts the watcher if it is not running: call before spawning, so `arm` is only a write. */
  readonly ready: () => void
  /**
   * Hands the group's deadline to the watcher; `armed(true)` once the line is in
   * the watcher's pipe (from then on it holds the deadline, Mino alive or not),
   * `armed(false)` when no watcher could take it.
   */
  readonly arm: (pgid: number, timeoutMs: number, armed: (ok: boolean) => void) => void
  /** The group is gone: forget it, so a reused id is never signalled. */
  readonly disarm: (pgid: number) => void
}

/**
 * A lifeline for one runner. The watcher starts with the first `arm` (so start-up
 * pays nothing) and ends when the scope closes; should it die, the next `arm`
 * starts another. Used after its scope has closed, it starts a watcher that ends
 * with Mino.
 */
export const make: Effect.Effect<Lifeline, never, Scope.Scope> = Effect.map(
  Effect.acquireRelease(Effect.sync(() => new Watcher()), (watcher) => Effect.sync(() => watcher.close())),
  (watcher): Lifeline => ({
    ready: () => void watcher.stdin(),
    arm: (pgid, timeoutMs, armed) => watcher.send(`arm ${pgid} ${Math.ceil(timeoutMs)}\n`, true, armed),
    disarm: (pgid) => watcher.send(`disarm ${pgid}\n`, false)
  })
)

class Watcher {
  private process: ChildProcess | undefined

  /**
   * Writes `line`; `done(true)` once it is in the pipe. A watcher that has died
   * (EPIPE) is replaced, once, when `start` allows it.
   */
  send(line: string, start: boolean, done: (ok: boolean) => void = () => {}, retry = true): void {
    const current = this.process
    const stdin = this.stdin(start)
    if (stdin === undefined) return done(false)
    stdin.write(line, (error) => {
      if (error === undefined || error === null) return done(true)
      if (this.process === current) this.process = undefined
      if (retry && start) this.send(line, start, done, false)
      else done(false)
    })
  }

  close(): void {
    this.process?.stdin?.end()
    this.process = undefined
  }

  stdin(start = true) {
    const current = this.process
    if (current?.stdin?.writable === true && current.exitCode === null && current.signalCode === null) return current.stdin
    if (!start) return undefined
    const watcher = spawn("/bin/bash", ["--noprofile", "--norc", "-c", SCRIPT], {
      cwd: "/",
      env: { LC_ALL: "C" },
      stdio: ["pipe", "ignore", "ignore"],
      detached: true
    })
    watcher.on("error", () => {}) // it could not start: the next `arm` tries again
    watcher.stdin.on("error", () => {}) // EPIPE: it has died; the next `arm` starts another
    // Neither the watcher nor its pipe keeps Mino running.
    watcher.unref()
    if ("unref" in watcher.stdin && typeof watcher.stdin.unref === "function") watcher.stdin.unref()
    this.process = watcher
    return watcher.stdin
  }
}
