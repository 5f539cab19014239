/**
 * Where a record is made durable: its line is appended and fsynced, and only
 * then is it `Committed`, the one thing the in-memory `Conversation` accepts.
 *
 * A failed write or sync is a `SessionWriteError`: the file is cut back to its
 * last committed record (best effort) and every later append fails the same way,
 * because the chat must stop with the committed state as it was.
 */
import * as Fs from "node:fs"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { type Committed, committed } from "./ConversationState.js"
import type { SessionRecord } from "../records/Records.js"
import type { DiskError, OpenFile, SessionDiskShape } from "./SessionDisk.js"
import { show } from "../directory/SessionDirectory.js"

export class SessionWriteError extends Schema.TaggedError<SessionWriteError>()("SessionWriteError", {
  path: Schema.String,
  message: Schema.String
}) {}

export interface DurableFile {
  readonly file: OpenFile
  /** Appends `lines` (encoded records, each with its newline) in one write, and fsyncs them once. */
  readonly append: (lines: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<Committed>, SessionWriteError>
}

/** The append side of the open session file `file`, whose committed length is `size`. */
export const make = (disk: SessionDiskShape, file: OpenFile, size: number): DurableFile => {
  let committedSize = size
  let broken: SessionWriteError | undefined
  const fail = (error: DiskError) => {
    // Take back a partial line so the file ends on a committed record.
    try {
      Fs.ftruncateSync(file.fd, committedSize)
      Fs.fsyncSync(file.fd)
    } catch {
      // The write already failed; that is the error to report.
    }
    broken = new SessionWriteError({ path: file.path, message: `cannot save the session to ${show(file.path)}: ${error.line}` })
    return broken
  }
  return {
    file,
    append: (lines) =>
      Effect.suspend(() => {
        if (broken !== undefined) return Effect.fail(broken)
        const bytes = Buffer.from(lines.length === 1 ? lines[0]! : lines.join(""))
        return disk.write(file, bytes).pipe(
          Effect.zipRight(disk.sync(file)),
          Effect.mapError(fail),
          Effect.map(() => {
            committedSize += bytes.byteLength
            return lines.map((line) => {
              const text = line.endsWith("\n") ? line.slice(0, -1) : line
              return committed(JSON.parse(text) as SessionRecord, text)
            })
          })
        )
      })
  }
}
