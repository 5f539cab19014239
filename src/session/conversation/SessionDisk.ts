/**
 * The disk under a session file, as a service: synchronous `node:fs` calls on
 * the event loop, so a save is one write and one fsync with no thread-pool round
 * trip. Tests swap the layer to inject ENOSPC or EIO into writes and syncs.
 */
import * as Fs from "node:fs"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** A failed disk call: the errno code (`ENOSPC`, `EIO`...) and the system's words. */
export class DiskError extends Data.TaggedError("DiskError")<{ readonly code: string; readonly message: string }> {
  /** One line for the user: `ENOSPC (no space left on device, write)`. */
  get line(): string {
    return this.message.length > 0 ? `${this.code} (${this.message})` : this.code
  }
}

/** An open file and the path it was opened by, for messages and fault filters. */
export interface OpenFile {
  readonly fd: number
  readonly path: string
}

export interface SessionDiskShape {
  /** Writes every byte at the end of the file (it is opened with O_APPEND). */
  readonly write: (file: OpenFile, bytes: Uint8Array) => Effect.Effect<void, DiskError>
  /** fsync: the data and the metadata needed to read it back. */
  readonly sync: (file: OpenFile) => Effect.Effect<void, DiskError>
}

/** Maps a thrown `node:fs` error to a `DiskError`. */
export const fromThrown = (error: unknown): DiskError => {
  const code = typeof error === "object" && error !== null && "code" in error ? String(error.code) : "EIO"
  const message = error instanceof Error ? error.message.replace(/^[A-Z]+: /, "") : String(error)
  return new DiskError({ code, message })
}

/** Runs a synchronous `node:fs` call, mapping what it throws. */
export const attempt = <A>(call: () => A): Effect.Effect<A, DiskError> => Effect.try({ try: call, catch: fromThrown })

const writeAll = (fd: number, bytes: Uint8Array): void => {
  let done = 0
  while (done < bytes.byteLength) {
    const written = Fs.writeSync(fd, bytes, done, bytes.byteLength - done)
    // A write that makes no progress would loop for ever; report it as the disk's failure.
    if (written <= 0) throw Object.assign(new Error("write made no progress"), { code: "EIO" })
    done += written
  }
}

const real: SessionDiskShape = {
  write: (file, bytes) => attempt(() => writeAll(file.fd, bytes)),
  sync: (file) => attempt(() => Fs.fsyncSync(file.fd))
}

export class SessionDisk extends Context.Tag("mino/SessionDisk")<SessionDisk, SessionDiskShape>() {
  /** The real disk's calls, for a test disk that changes one of them. */
  static readonly layerValue: SessionDiskShape = real
  static readonly layer: Layer.Layer<SessionDisk> = Layer.succeed(SessionDisk, real)
}
