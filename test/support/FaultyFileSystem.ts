/**
 * The real Node FileSystem with injectable faults on open files: a test arms a
 * fault (ENOSPC, EIO) for `writeAll` or `sync`, and every later call of that kind
 * fails the way the platform reports it (`reason: "Unknown"`, errno in `cause`).
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { SystemError } from "@effect/platform/Error"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

export type Errno = "ENOSPC" | "EIO"

export interface Faults {
  /** Which opened files the faults apply to (default: session files, `*.jsonl`). */
  readonly files?: (path: string) => boolean
  /** Fail writes after this many more have succeeded (undefined: never). */
  write?: { readonly code: Errno; after: number } | undefined
  /** Fail syncs after this many more have succeeded (undefined: never). */
  sync?: { readonly code: Errno; after: number } | undefined
}

const MESSAGES: Record<Errno, string> = { ENOSPC: "no space left on device", EIO: "i/o error" }

const systemError = (method: string, code: Errno) =>
  new SystemError({
    reason: "Unknown",
    module: "FileSystem",
    method,
    cause: Object.assign(new Error(`${code}: ${MESSAGES[code]}, ${method}`), { code })
  })

/** Whether the armed fault fires now; counts down the calls it lets through. */
const fires = (fault: { readonly code: Errno; after: number } | undefined): fault is { readonly code: Errno; after: number } => {
  if (fault === undefined) return false
  if (fault.after > 0) {
    fault.after -= 1
    return false
  }
  return true
}

export const layer = (faults: Faults): Layer.Layer<FileSystem.FileSystem> =>
  Layer.effect(
    FileSystem.FileSystem,
    Effect.map(FileSystem.FileSystem, (fs) => ({
      ...fs,
      open: (path: string, options?: FileSystem.OpenFileOptions) =>
        Effect.map(fs.open(path, options), (file) =>
          !(faults.files ?? ((name: string) => name.endsWith(".jsonl")))(path) ? file : new Proxy(file, {
            get(target, property) {
              if (property === "sync" && fires(faults.sync)) return Effect.fail(systemError("sync", faults.sync.code))
              if (property === "writeAll") {
                return (buffer: Uint8Array) =>
                  fires(faults.write) ? Effect.fail(systemError("writeAll", faults.write.code)) : target.writeAll(buffer)
              }
              const value: unknown = Reflect.get(target, property, target)
              return typeof value === "function" ? value.bind(target) : value
            }
          }))
    }))
  ).pipe(Layer.provide(NodeFileSystem.layer))
