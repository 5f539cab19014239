/**
 * The session file: `~/.mino/sessions/<session_id>.jsonl`, one record a line.
 *
 * Every `append` writes the line and fsyncs it before the in-memory state
 * advances; a failed write or sync is a `SessionWriteError` and leaves the
 * committed state as it was (the store then refuses further writes, because the
 * chat must stop). On open the store takes the session's lock, sets aside lines a
 * crash tore, closes any turn left open, and replays only completed turns.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Clock from "effect/Clock"
import * as FileSystem from "@effect/platform/FileSystem"
import type { PlatformError } from "@effect/platform/Error"
import * as Path from "node:path"
import { contextItems, KnownLine, SessionRecord } from "./Records.js"
import { closeOpenTurns, INTERRUPTED_NOTICE } from "./Recovery.js"
import * as Json from "../Json.js"
import * as Secrets from "../security/Secrets.js"
import * as SessionLock from "./SessionLock.js"

export class SessionWriteError extends Schema.TaggedError<SessionWriteError>()("SessionWriteError", {
  path: Schema.String,
  message: Schema.String
}) {}

export class SessionBusy extends Schema.TaggedError<SessionBusy>()("SessionBusy", {
  path: Schema.String,
  message: Schema.String
}) {}

export class SessionOpenError extends Schema.TaggedError<SessionOpenError>()("SessionOpenError", {
  path: Schema.String,
  message: Schema.String
}) {}

type Item = Readonly<Record<string, unknown>>

export interface SessionStoreShape {
  readonly sessionId: string
  readonly path: string
  /** What opening the session had to tell the user (recovery, set-aside lines), in order. */
  readonly notices: ReadonlyArray<string>
  /** The model's context from completed turns only, in file order. */
  readonly context: Effect.Effect<ReadonlyArray<Item>>
  /** The records committed so far, including those read on open. */
  readonly records: Effect.Effect<ReadonlyArray<SessionRecord>>
  /**
   * Writes and fsyncs one record; only then does the in-memory state advance.
   * Returns the record as committed (secrets redacted): what a restart replays,
   * so callers that build a request from it send what the file holds.
   */
  readonly append: (record: SessionRecord) => Effect.Effect<SessionRecord, SessionWriteError>
}

export interface SessionOptions {
  /** The user's home directory; sessions live in `<home>/.mino/sessions`. */
  readonly home: string
  /** A fixed session name (the demo uses `demo`); otherwise the newest conversation, or a new one. */
  readonly sessionId?: string
  /** Strings that must never reach the file (the API key); replaced by `[redacted]`. */
  readonly secrets?: ReadonlyArray<string>
}

export class SessionStore extends Context.Tag("mino/SessionStore")<SessionStore, SessionStoreShape>() {
  static readonly layer = (options: SessionOptions) => Layer.scoped(SessionStore, open(options))

  /**
   * A session held in memory, for embedders and tests that want no files: the
   * same replay rules, recovery of `records` given to start from, redaction and
   * timestamps as the file, and nothing is kept when the layer is released.
   */
  static readonly layerMemory = (options: MemorySessionOptions = {}) => Layer.effect(SessionStore, openMemory(options))
}

export interface MemorySessionOptions {
  /** Records to start from, as a session file would hold them; a turn left open is closed as on a restart. */
  readonly records?: ReadonlyArray<SessionRecord>
  /** Strings that must never be kept (the API key); replaced by `[redacted]`. */
  readonly secrets?: ReadonlyArray<string>
}

const openMemory = (options: MemorySessionOptions) =>
  Effect.gen(function*() {
    const secrets = Secrets.effective(options.secrets ?? [])
    // Through JSON, as the file does: what is kept is a redacted copy, decoded as a restart would read it.
    const keep = (record: SessionRecord): SessionRecord => decodeRecord(JSON.parse(Secrets.redact(JSON.stringify(record), secrets)))
    const initial = (options.records ?? []).map(keep)
    const conversation = new Conversation(initial)
    const closing = closeOpenTurns(initial, yield* isoNow)
    for (const record of closing) conversation.add(record)
    return SessionStore.of({
      sessionId: "memory",
      path: ":memory:",
      notices: closing.some((record) => record.type === "turn_end") ? [INTERRUPTED_NOTICE] : [],
      context: Effect.sync(() => conversation.context.slice()),
      records: Effect.sync(() => conversation.records.slice()),
      append: (record) =>
        Effect.map(isoNow, (time) => {
          const committed = keep({ ...record, time: record.time ?? time })
          conversation.add(committed)
          return committed
        })
    })
  })

const isoNow = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis).toISOString())

const CONVERSATION = /^\d{8}-\d{6}-[0-9a-f]{8}\.jsonl$/

const open = (options: SessionOptions) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const dir = Path.join(options.home, ".mino", "sessions")
    const openError = (path: string) => (error: PlatformError) =>
      new SessionOpenError({ path, message: `cannot open the session at ${path}: ${describe(error)}` })

    yield* ensureDirectory(fs, Path.join(options.home, ".mino")).pipe(Effect.mapError(openError(dir)))
    yield* ensureDirectory(fs, dir).pipe(Effect.mapError(openError(dir)))
    // Lock before choosing: two starts on a fresh HOME must not each create a conversation.
    const lockKey = options.sessionId === undefined ? `${dir}#conversation` : Path.join(dir, `${options.sessionId}.jsonl`)
    yield* SessionLock.acquire(lockKey).pipe(
      Effect.mapError((error) =>
        error._tag === "Busy"
          ? new SessionBusy({ path: dir, message: `the session is busy: another mino process is using the conversation in ${dir}` })
          : new SessionOpenError({ path: dir, message: `cannot lock the session in ${dir}: ${error.message}` })
      )
    )
    const sessionId = options.sessionId ?? (yield* newestConversation(fs, dir).pipe(Effect.mapError(openError(dir))))
    const path = Path.join(dir, `${sessionId}.jsonl`)

    const existed = yield* fs.exists(path).pipe(Effect.mapError(openError(path)))
    const read = existed ? yield* readRecords(fs, path).pipe(Effect.mapError(openError(path))) : emptyRead
    const now = yield* isoNow
    const notices: Array<string> = []
    if (read.rejected.length > 0) {
      const aside = yield* setAside(fs, path, read, now).pipe(Effect.mapError(openError(path)))
      notices.push(
        `Set aside ${read.rejected.length} unreadable line(s) of the session file (a write cut short by a crash) in ${aside}; every complete record was kept.`
      )
    }

    const file = yield* fs.open(path, { flag: "a", mode: 0o600 }).pipe(Effect.mapError(openError(path)))
    yield* fs.chmod(path, 0o600).pipe(Effect.mapError(openError(path)))
    if (!existed) yield* syncDirectory(fs, dir).pipe(Effect.mapError(openError(dir)))

    const conversation = new Conversation(read.records)
    // The length of the committed prefix of the file, so a failed append can be taken back.
    const committedSize = yield* Ref.make((yield* file.stat.pipe(Effect.mapError(openError(path)))).size)
    const broken = yield* Ref.make<Option.Option<SessionWriteError>>(Option.none())
    const secrets = Secrets.effective(options.secrets ?? [])

    const append = Effect.fn("SessionStore.append")(function*(record: SessionRecord) {
      const failure = yield* Ref.get(broken)
      if (Option.isSome(failure)) return yield* failure.value
      const stamped = { ...record, time: record.time ?? (yield* isoNow) }
      const json = JSON.stringify(stamped)
      const text = Secrets.redact(json, secrets)
      const line = new TextEncoder().encode(text + "\n")
      const size = yield* Ref.get(committedSize)
      yield* file.writeAll(line).pipe(
        Effect.zipRight(file.sync),
        // Best effort: take back a partial line so the file ends on a committed record.
        Effect.tapError(() => Effect.ignore(Effect.zipRight(file.truncate(size), file.sync))),
        Effect.mapError((error) =>
          new SessionWriteError({ path, message: `cannot save the session to ${path}: ${describe(error)}` })
        ),
        Effect.tapError((error) => Ref.set(broken, Option.some(error)))
      )
      yield* Ref.set(committedSize, FileSystem.Size(BigInt(size) + BigInt(line.byteLength)))
      // Memory holds what the file holds: a restart must replay exactly what this process sends.
      const committed = text === json ? stamped : decodeRecord(JSON.parse(text))
      conversation.add(committed)
      return committed
    })

    const closing = closeOpenTurns(read.records, now)
    for (const record of closing) yield* append(record).pipe(Effect.mapError((e) => new SessionOpenError({ path: e.path, message: e.message })))
    if (closing.some((record) => record.type === "turn_end")) notices.push(INTERRUPTED_NOTICE)

    return SessionStore.of({
      sessionId,
      path,
      notices,
      context: Effect.sync(() => conversation.context.slice()),
      records: Effect.sync(() => conversation.records.slice()),
      append
    })
  })

// ---------------------------------------------------------------------------
// In-memory state: what replay sees. Items of an open turn wait in `pending`
// and join `context` only when the turn ends `completed`. It is changed only
// by `add`, which `append` calls after the record is durable.

class Conversation {
  readonly records: Array<SessionRecord> = []
  readonly context: Array<Item> = []
  private readonly pending = new Map<string, Array<Item>>()

  constructor(records: ReadonlyArray<SessionRecord>) {
    for (const record of records) this.add(record)
  }

  add(record: SessionRecord): void {
    this.records.push(record)
    const turn = this.pending.get(record.turn_id)
    if (record.type === "turn_end") {
      if (record.status === "completed" && turn !== undefined) for (const item of turn) this.context.push(item)
      this.pending.delete(record.turn_id)
    } else if (turn === undefined) {
      this.pending.set(record.turn_id, [...contextItems(record)])
    } else {
      for (const item of contextItems(record)) turn.push(item)
    }
  }
}

// ---------------------------------------------------------------------------
// Reading the file: complete lines are records; a final line without its
// newline was never committed (the write was cut short) and is set aside, as is
// any line that does not parse. Lines are decoded one at a time from the bytes,
// so the whole file never exists as one string beside its parsed records.

interface ReadResult {
  readonly records: ReadonlyArray<SessionRecord>
  /** The bytes read, and where each readable line (unknown record types included) starts and ends. */
  readonly bytes: Uint8Array
  readonly kept: ReadonlyArray<readonly [number, number]>
  readonly rejected: ReadonlyArray<string>
}

const emptyRead: ReadResult = { records: [], bytes: new Uint8Array(), kept: [], rejected: [] }

const isRecord = Schema.is(SessionRecord)
const decodeRecord = Schema.decodeUnknownSync(SessionRecord)
const isKnown = Schema.is(KnownLine)

const readRecords = (fs: FileSystem.FileSystem, path: string) =>
  Effect.map(fs.readFile(path), (bytes): ReadResult => {
    const records: Array<SessionRecord> = []
    const kept: Array<readonly [number, number]> = []
    const rejected: Array<string> = []
    const decoder = new TextDecoder()
    let start = 0
    while (start < bytes.length) {
      const newline = bytes.indexOf(0x0a, start)
      const end = newline === -1 ? bytes.length : newline
      if (end > start) {
        const line = decoder.decode(bytes.subarray(start, end))
        const json = newline === -1 ? undefined : Json.parse(line)
        if (json === undefined || !isKnown(json)) rejected.push(line)
        else {
          kept.push([start, end + 1])
          if (isRecord(json)) records.push(json)
        }
      }
      start = end + 1
    }
    return { records, bytes, kept, rejected }
  })

/** Moves unreadable lines to a side file, then atomically rewrites the session with the rest. */
const setAside = (fs: FileSystem.FileSystem, path: string, read: ReadResult, now: string) =>
  Effect.gen(function*() {
    const aside = `${path}.set-aside-${now.replace(/[:.]/g, "-")}`
    yield* writeDurably(fs, aside, new TextEncoder().encode(read.rejected.join("\n") + "\n"))
    const temporary = `${path}.rewrite`
    yield* writeDurably(fs, temporary, Buffer.concat(read.kept.map(([start, end]) => read.bytes.subarray(start, end))))
    yield* fs.rename(temporary, path)
    yield* syncDirectory(fs, Path.dirname(path))
    return aside
  })

const writeDurably = (fs: FileSystem.FileSystem, path: string, bytes: Uint8Array) =>
  Effect.scoped(Effect.gen(function*() {
    const file = yield* fs.open(path, { flag: "w", mode: 0o600 })
    yield* file.writeAll(bytes)
    yield* file.sync
  }))

// ---------------------------------------------------------------------------

const ensureDirectory = (fs: FileSystem.FileSystem, dir: string) =>
  Effect.gen(function*() {
    if (yield* fs.exists(dir)) return
    yield* fs.makeDirectory(dir, { recursive: true, mode: 0o700 })
    yield* syncDirectory(fs, Path.dirname(dir))
  })

const syncDirectory = (fs: FileSystem.FileSystem, dir: string): Effect.Effect<void, PlatformError> =>
  Effect.scoped(Effect.flatMap(fs.open(dir, { flag: "r" }), (handle) => handle.sync))

/** The newest conversation's id, or a new one named by its creation time. */
const newestConversation = (fs: FileSystem.FileSystem, dir: string) =>
  Effect.gen(function*() {
    const names = (yield* fs.readDirectory(dir)).filter((name) => CONVERSATION.test(name)).sort()
    const newest = names.at(-1)
    if (newest !== undefined) return newest.slice(0, -".jsonl".length)
    const now = yield* isoNow
    const stamp = now.slice(0, 19).replace(/-|:/g, "").replace("T", "-")
    const random = Array.from(crypto.getRandomValues(new Uint8Array(4)), (b) => b.toString(16).padStart(2, "0"))
    return `${stamp}-${random.join("")}`
  })


/** One line for the user: the errno when the platform only says "Unknown". */
export const describe = (error: PlatformError): string => {
  const cause = error._tag === "SystemError" ? error.cause : undefined
  const code = typeof cause === "object" && cause !== null && "code" in cause ? String(cause.code) : undefined
  const detail = typeof cause === "object" && cause !== null && "message" in cause ? String(cause.message) : undefined
  return code !== undefined ? `${code}${detail !== undefined ? ` (${detail})` : ""}` : error.message
}
