/**
 * A lock a process holds for a scope: on its conversation for as long as it
 * runs, on the sessions directory for the moment it takes to choose one.
 *
 * It is a `flock(2)` on a lock file inside the user's 0700 sessions directory, so
 * it belongs to the file, not to the name used to reach it: a symlinked HOME, a
 * bind mount or a relative path all reach the same inode and the same lock.
 * Another user cannot open the file, so cannot take or block it. The lock is
 * taken by `platform/FileLock` on the descriptor this process opened: it stays
 * until that descriptor closes, and the kernel closes it on exit, crash or
 * SIGKILL. `flock(2)` is atomic: of two simultaneous starts exactly one wins.
 */
import * as Fs from "node:fs"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as FileLock from "../../platform/FileLock.js"
import * as SessionDirectory from "./SessionDirectory.js"

export class LockBusy extends Data.TaggedError("LockBusy")<{ readonly path: string }> {}

export class LockUnavailable extends Data.TaggedError("LockUnavailable")<{ readonly path: string; readonly message: string }> {}

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
      const taken = FileLock.lock(fd, options)
      if (taken._tag === "Locked") return Effect.succeed(fd)
      Fs.closeSync(fd)
      return Effect.fail(taken._tag === "Busy" ? new LockBusy({ path }) : new LockUnavailable({ path, message: taken.reason }))
    }),
    (fd) => Effect.sync(() => Fs.closeSync(fd))
  ).pipe(Effect.asVoid)
