/**
 * The exclusive lock a process holds on its session for as long as it runs,
 * keyed by a string naming the session (its conversation directory or file).
 *
 * It is a listening Unix socket in Linux's abstract namespace, named after the
 * session file: binding fails with EADDRINUSE while another live process holds
 * it, and the kernel releases it the instant the holder dies, even by SIGKILL, so
 * a crash never leaves a stale lock to clean up and two starts cannot both win.
 */
import { createHash } from "node:crypto"
import * as net from "node:net"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

export interface LockError {
  readonly _tag: "Busy" | "Unavailable"
  readonly message: string
}

export const acquire = (key: string): Effect.Effect<void, LockError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.async<net.Server, LockError>((resume) => {
      const server = net.createServer()
      const name = `\0mino-session-${createHash("sha256").update(key).digest("hex").slice(0, 32)}`
      server.once("error", (error: NodeJS.ErrnoException) =>
        resume(Effect.fail({
          _tag: error.code === "EADDRINUSE" ? "Busy" : "Unavailable",
          message: error.code === "EADDRINUSE" ? "held by another process" : `cannot lock: ${error.message}`
        }))
      )
      server.listen({ path: name }, () => {
        // The lock must not keep the process alive on its own.
        server.unref()
        resume(Effect.succeed(server))
      })
    }),
    (server) => Effect.sync(() => server.close())
  ).pipe(Effect.asVoid)
