/**
 * A lock a process holds for a scope: on its conversation for as long as it
 * runs, on the sessions directory for the moment it takes to choose one.
 *
 * It is a `flock(2)` on a lock file inside the user's 0700 sessions directory, so
 * it belongs to the file, not to the name used to reach it: a symlinked HOME, a
 * bind mount or a relative path all reach the same inode and the same lock.
 * Another user cannot open the file, so cannot take or block it. Node has no
 * `flock`, so the util-linux `flock` program takes it on a descriptor this process
 * lends it: the lock belongs to that shared open file, stays after the helper
 * exits, and the kernel drops it when this process's descriptor closes — on exit,
 * crash or SIGKILL. `flock` is atomic: of two simultaneous starts exactly one wins.
 *
 * The helper is never looked up through `PATH` (a relative entry such as
 * `node_modules/.bin` would let a repository ship its own `flock`, run before any
 * prompt): it is run by absolute path, from the first of a fixed list of system
 * directories that holds it, with an empty environment (never the key) in `/`.
 */
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as SessionDirectory from "./SessionDirectory.js"

export class LockBusy extends Data.TaggedError("LockBusy")<{ readonly path: string }> {}

export class LockUnavailable extends Data.TaggedError("LockUnavailable")<{ readonly path: string; readonly message: string }> {}

/** `flock`'s exit code when the lock is held elsewhere (its `-E` option). */
const CONFLICT = 75

/** Where util-linux installs `flock`, in the order they are tried; nothing else is. */
export const FLOCK_PATHS = ["/usr/bin/flock", "/bin/flock", "/usr/sbin/flock", "/sbin/flock"] as const

/** The first of `FLOCK_PATHS` that is an executable regular file. */
const flockProgram = (): string | undefined =>
  FLOCK_PATHS.find((path) => {
    try {
      Fs.accessSync(path, Fs.constants.X_OK)
      return Fs.statSync(path).isFile()
    } catch {
      return false
    }
  })

/**
 * Takes the lock on `path` (created 0600 if missing) for the scope. It fails at
 * once when another process holds it, or, with `waitSeconds`, when that one
 * still holds it after so long (for a lock held only for a moment).
 */
export const acquire = (path: string, options: { readonly waitSeconds?: number } = {}): Effect.Effect<void, LockBusy | LockUnavailable, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.suspend((): Effect.Effect<number, LockBusy | LockUnavailable> => {
      const opened = SessionDirectory.openRegular(path, Fs.constants.O_RDWR | Fs.constants.O_CREAT)
      if (opened._tag === "Left") return Effect.fail(new LockUnavailable({ path, message: opened.left }))
      const fd = opened.right
      const program = flockProgram()
      if (program === undefined) {
        Fs.closeSync(fd)
        return Effect.fail(new LockUnavailable({ path, message: `the util-linux \`flock\` program is not installed (looked for ${FLOCK_PATHS.join(", ")})` }))
      }
      const patience = options.waitSeconds === undefined ? ["--nonblock"] : ["--wait", String(options.waitSeconds)]
      const helper = spawnSync(program, [...patience, "--conflict-exit-code", String(CONFLICT), "3"], {
        stdio: ["ignore", "ignore", "pipe", fd],
        encoding: "utf8",
        env: {},
        cwd: "/"
      })
      if (helper.status === 0) return Effect.succeed(fd)
      Fs.closeSync(fd)
      if (helper.status === CONFLICT) return Effect.fail(new LockBusy({ path }))
      const why = helper.error !== undefined
        ? `the util-linux \`flock\` program could not run (${helper.error.message})`
        : `\`flock\` failed: ${helper.stderr.trim().split("\n")[0] ?? `exit ${helper.status}`}`
      return Effect.fail(new LockUnavailable({ path, message: why }))
    }),
    (fd) => Effect.sync(() => Fs.closeSync(fd))
  ).pipe(Effect.asVoid)
