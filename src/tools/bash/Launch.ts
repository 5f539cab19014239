/**
 * How an approved command starts, in one small module so that the start can be
 * swapped (for a long-lived spawner that does not fork Mino's whole heap, say)
 * without touching the runner.
 *
 * Arm before run, by construction. The child starts as a gate: `/bin/sh -c <GATE>
 * mino-gate <command>` (a POSIX shell: cheaper to start than bash, and it leaves
 * the environment as it found it), in a new session and process group, with the
 * command's own environment, blocked reading one line from fd 3, a socket only
 * Mino holds. Mino hands the group's deadline to the lifeline
 * (`arm`), and only once that line is in the watcher's pipe does it send the go
 * byte. The gate then closes fd 3 and `exec`s `/bin/bash --noprofile --norc -c
 * <command>` in the same process (same pid, same group): what runs is exactly
 * the chapter's command, with the documented environment and nothing of the
 * gate's: the command sees the same variables, `$0`, `SHLVL`, `_` and
 * descriptors as a bash started directly. (Where `/bin/sh` is bash, its `exec`
 * hands the new bash `SHLVL=0`, which bash raises to 1 as it would from nothing;
 * only the process's initial environment block, `/proc/<pid>/environ`, shows it.)
 *
 * - Mino gone before the go byte (SIGKILL, a crash): fd 3 reaches end of file
 *   and the gate exits without running anything.
 * - Mino gone after it: the watcher already holds the deadline and kills the
 *   group when its own pipe from Mino reaches end of file.
 *
 * So the command cannot execute one instruction before the lifeline holds its
 * deadline. The price is one more `execve` per command, of the small shell
 * (`npm run bench` prints it).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { Writable } from "node:stream"

/** Runs before the command: waits for the go byte on fd 3, then becomes the command. */
export const GATE = "IFS= read -r go <&3 || exit 125; [ \"$go\" = g ] || exit 125; exec 3<&-; exec /bin/bash --noprofile --norc -c \"$1\""

/** What the command runs with. */
export interface LaunchOptions {
  readonly command: string
  readonly cwd: string
  readonly env: Readonly<Record<string, string>>
}

export interface Launched {
  readonly child: ChildProcess
  /** Lets the command run; call once its group is armed. Idempotent; a no-op once it has exited. */
  readonly release: () => void
  /** Closes the gate without running the command: it exits at once. */
  readonly abandon: () => void
}

/**
 * Spawns the gate for `options.command` in its own process group, stdin from
 * /dev/null, stdout and stderr piped. Throws when `spawn` rejects its arguments
 * (a NUL in the environment); a failure to start is reported on the child's
 * "error" event, as by `spawn`.
 */
export const launch = (options: LaunchOptions): Launched => {
  const child = spawn("/bin/sh", ["-c", GATE, "mino-gate", options.command], {
    cwd: options.cwd,
    env: { ...options.env },
    stdio: ["ignore", "pipe", "pipe", "pipe"],
    // A new process group (and session) led by bash, so one signal reaches all of it.
    detached: true
  })
  const fd3 = child.stdio[3]
  const gate = fd3 instanceof Writable ? fd3 : undefined
  // The gate may be gone (killed before it was released): nothing to report.
  gate?.on("error", () => {})
  let closed = false
  const close = (byte: string | undefined) => {
    if (closed) return
    closed = true
    if (byte === undefined) gate?.end()
    else gate?.end(byte)
  }
  return { child, release: () => close("g\n"), abandon: () => close(undefined) }
}
