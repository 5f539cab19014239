/**
 * The real session disk with injectable faults: a test arms a fault (ENOSPC, EIO)
 * for `write` or `sync`, and every later call of that kind on a session file fails
 * the way the system reports it. Swapped in as a layer; nothing is patched.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { DiskError, SessionDisk } from "../../src/session/conversation/SessionDisk.js"

export type Errno = "ENOSPC" | "EIO"

export interface Faults {
  /** Which files the faults apply to (default: session files, `*.jsonl`). */
  readonly files?: (path: string) => boolean
  /** Fail writes after this many more have succeeded (undefined: never). */
  write?: { readonly code: Errno; after: number } | undefined
  /** Fail syncs after this many more have succeeded (undefined: never). */
  sync?: { readonly code: Errno; after: number } | undefined
}

const MESSAGES: Record<Errno, string> = { ENOSPC: "no space left on device", EIO: "i/o error" }

/** Whether the armed fault fires now; counts down the calls it lets through. */
const fires = (fault: { readonly code: Errno; after: number } | undefined): fault is { readonly code: Errno; after: number } => {
  if (fault === undefined) return false
  if (fault.after > 0) {
    fault.after -= 1
    return false
  }
  return true
}

export const layer = (faults: Faults): Layer.Layer<SessionDisk> =>
  Layer.effect(
    SessionDisk,
    Effect.map(SessionDisk, (disk) => {
      const applies = (path: string) => (faults.files ?? ((name: string) => name.endsWith(".jsonl")))(path)
      return SessionDisk.of({
        write: (file, bytes) =>
          applies(file.path) && fires(faults.write)
            ? Effect.fail(new DiskError({ code: faults.write.code, message: `${MESSAGES[faults.write.code]}, write` }))
            : disk.write(file, bytes),
        sync: (file) =>
          applies(file.path) && fires(faults.sync)
            ? Effect.fail(new DiskError({ code: faults.sync.code, message: `${MESSAGES[faults.sync.code]}, fsync` }))
            : disk.sync(file)
      })
    })
  ).pipe(Layer.provide(SessionDisk.layer))
