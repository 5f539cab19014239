/**
 * An observer of `flock(2)` locks for the lock tests, independent of the one Mino uses
 * (`platform/FileLock`, through perl): python3's `fcntl.flock`, which needs neither util-linux
 * nor /proc, so it works with what a Mac lacks taken away too.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"

/** The system's python3, which another user (nobody) can run too. */
export const PYTHON = "/usr/bin/python3"

/** Tries `path` without waiting: prints "took" (and lets go) or "busy"; `hold` keeps it that many seconds. */
export const SCRIPT = [
  "import fcntl, os, sys, time",
  "fd = os.open(sys.argv[1], os.O_RDWR)",
  "try:",
  "    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)",
  "except BlockingIOError:",
  "    print('busy', flush=True); sys.exit(75)",
  "print('took', flush=True)",
  "time.sleep(float(sys.argv[2]))"
].join("\n")

/** `prefix` runs the observer as another user (e.g. `setpriv --reuid=nobody ...`). */
export const tryLock = (path: string, options: { readonly cwd?: string; readonly prefix?: ReadonlyArray<string> } = {}): string => {
  const argv = [...(options.prefix ?? []), PYTHON, "-c", SCRIPT, path, "0"]
  const result = spawnSync(argv[0]!, argv.slice(1), { encoding: "utf8", ...(options.cwd === undefined ? {} : { cwd: options.cwd }) })
  return (result.stdout.trim() || `error: ${result.stderr.trim().split("\n").at(-1) ?? ""}`)
}

/** A process that takes `path` (if free) and holds it for `seconds`. */
export const holdLock = (path: string, seconds: number): ChildProcess =>
  spawn(PYTHON, ["-c", SCRIPT, path, String(seconds)], { stdio: ["ignore", "pipe", "ignore"] })
