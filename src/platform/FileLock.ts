/**
 * An exclusive `flock(2)` on an open file, the same way on macOS and Linux.
 *
 * Node has no `flock`. Perl's built-in `flock` is that system call, and
 * `/usr/bin/perl` is on every macOS (13 and later) and every Debian base system,
 * so the lock is taken by `/usr/bin/perl` on a descriptor this process lends it
 * as its standard input: the lock belongs to the shared open file description,
 * stays after perl exits, and the kernel drops it when this process's
 * descriptor closes (on exit, crash or SIGKILL). Both systems implement
 * `flock(2)` on the file, not its name, and atomically: of two simultaneous
 * takers exactly one wins. The script loads no module (the flag values 2, 4
 * and 6 are the same on both systems; the errno numbers are passed in), so it
 * costs one small process start.
 *
 * Perl is run by absolute path, never through `PATH` (a relative entry such as
 * `node_modules/.bin` would let a repository ship its own `perl`, run before
 * any prompt), with an empty environment (no `PERL5LIB`, `PERL5OPT` or key)
 * in `/`.
 */
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import { constants } from "node:os"

/** The only program the lock runs. */
export const PERL = "/usr/bin/perl"

/** The helper's exit status when another holds the lock. */
const BUSY = 75

/**
 * `flock(fd, LOCK_EX | LOCK_NB)`, or with a wait argument `LOCK_EX` bounded by
 * an alarm. Its arguments are this system's `EWOULDBLOCK` and `EINTR` numbers
 * (from Node, which knows them on both systems), then the wait: naming `$!{…}`
 * would make perl load `Errno`, `Exporter` and `strict` on every lock, about as
 * long again as perl's own start.
 */
export const SCRIPT = [
  "my ($busy, $interrupted, $wait) = @ARGV;",
  "if (defined $wait) { $SIG{ALRM} = sub { exit 75 }; alarm $wait; flock(STDIN, 2) and exit 0; exit 75 if $! == $interrupted }",
  "else { flock(STDIN, 6) and exit 0; exit 75 if $! == $busy }",
  "print STDERR \"$!\\n\"; exit 1"
].join("\n")

/** The script's first arguments: what `flock` fails with when the lock is held, and when the alarm cut the wait. */
export const ERRNOS = [String(constants.errno.EWOULDBLOCK), String(constants.errno.EINTR)] as const

export type Outcome =
  | { readonly _tag: "Locked" }
  | { readonly _tag: "Busy" }
  | { readonly _tag: "Unavailable"; readonly reason: string }

/** What the lock asks of the system: injected in tests. */
export interface System {
  readonly isExecutableFile: (path: string) => boolean
  readonly run: (program: string, args: ReadonlyArray<string>, stdin: number) => {
    readonly status: number | null
    readonly signal: string | null
    readonly stderr: string
    readonly error?: Error
  }
}

export const system: System = {
  isExecutableFile: (path) => {
    try {
      Fs.accessSync(path, Fs.constants.X_OK)
      return Fs.statSync(path).isFile()
    } catch {
      return false
    }
  },
  run: (program, args, stdin) => {
    const result = spawnSync(program, [...args], { stdio: [stdin, "ignore", "pipe"], encoding: "utf8", env: {}, cwd: "/" })
    return { status: result.status, signal: result.signal, stderr: result.stderr ?? "", ...(result.error === undefined ? {} : { error: result.error }) }
  }
}

/**
 * Takes an exclusive lock on open `fd`: at once, or, with `waitSeconds`, waiting
 * up to that long (whole seconds, at least one) for its holder to let go.
 */
export const lock = (fd: number, options: { readonly waitSeconds?: number } = {}, os: System = system): Outcome => {
  if (!os.isExecutableFile(PERL)) return { _tag: "Unavailable", reason: `${PERL} is not installed (Mino takes its lock with flock(2) through it)` }
  const wait = options.waitSeconds === undefined ? [] : [String(Math.max(1, Math.ceil(options.waitSeconds)))]
  const helper = os.run(PERL, ["-e", SCRIPT, ...ERRNOS, ...wait], fd)
  if (helper.status === 0) return { _tag: "Locked" }
  if (helper.status === BUSY) return { _tag: "Busy" }
  if (helper.error !== undefined) return { _tag: "Unavailable", reason: `${PERL} could not run (${helper.error.message})` }
  const said = helper.stderr.trim().split("\n")[0] ?? ""
  const how = helper.signal !== null ? `was killed by ${helper.signal}` : `exited with ${helper.status}`
  return { _tag: "Unavailable", reason: `flock(2) through ${PERL} failed: ${said.length > 0 ? said : how}` }
}
