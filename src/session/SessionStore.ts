/**
 * The session store: the one service the Agent saves through. Opening it
 * takes a conversation (`Conversations.take`: chosen under the directory's lock,
 * then held by its own; a new one's file is made with its first save), replays the file as a stream (`SessionReader`) into the `Conversation`, sets
 * unreadable lines aside and closes a turn a crash left open (`Recovery`,
 * `TurnClosing`). Every save is encoded once (`Records.encode`, secrets
 * redacted), made durable (`DurableFile`), and only then applied to memory.
 */
import * as Fs from "node:fs"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import type { Committed, KeyReading, OpenCall, OpenTurn } from "./conversation/ConversationState.js"
import { committed, ConversationState, withoutKey } from "./conversation/ConversationState.js"
import * as Conversations from "./directory/Conversations.js"
import { ConversationNotFound, SessionBusy, SessionHomeError, SessionOpenError } from "./directory/Conversations.js"
import * as DurableFile from "./conversation/DurableFile.js"
import { SessionWriteError } from "./conversation/DurableFile.js"
import { encode, type SessionRecord } from "./records/Records.js"
import * as Recovery from "./conversation/Recovery.js"
import { fromThrown, SessionDisk, type SessionDiskShape } from "./conversation/SessionDisk.js"
import * as SessionDirectory from "./directory/SessionDirectory.js"
import * as SessionReader from "./records/SessionReader.js"
import { Secrets, type SecretsShape } from "../security/Secrets.js"
import { type Closing, closingRecords, interrupted } from "./conversation/TurnClosing.js"
import type { History } from "../model/request/History.js"
import type { ResponseItem } from "../protocol/ResponseItem.js"
import type { Texts } from "../TextList.js"

export { ConversationNotFound, SessionBusy, SessionHomeError, SessionOpenError, SessionWriteError }

/** A turn's reason when the one given could not be saved (it held the key in a form that cannot be taken out). */
export const UNSAVED_REASON = "the reason could not be saved"

/** A record that cannot be saved (too deep, too large): the turn fails, the file is unchanged. */
export class RecordRejected extends Schema.TaggedError<RecordRejected>()("RecordRejected", {
  message: Schema.String
}) {}

/** What the banner says about the conversation a start opened. */
export interface ConversationInfo {
  readonly id: string
  readonly path: string
  /** When it started: its header's time, else its first record's, else the time its id names (ISO 8601). */
  readonly startedAt: string
  /** How many turns it holds, each ended (recovery has closed any left open). */
  readonly turns: number
  /** Whether it continues an existing conversation (false: it starts empty). */
  readonly continued: boolean
  /** The directory it was started in (a real path), when its file records one. */
  readonly directory: string | undefined
  /**
   * When this start found no conversation started in its directory and began
   * one: how many conversations there are from elsewhere (or from a directory
   * not recorded), to say so.
   */
  readonly startedElsewhere?: number
}

export interface SessionStoreShape {
  readonly sessionId: string
  readonly path: string
  /** The conversation opened: id, path, start time, number of turns, continued or new. */
  readonly info: ConversationInfo
  /** What opening the session had to tell the user (recovery, set-aside lines), one line each, in order. */
  readonly notices: ReadonlyArray<string>
  /**
   * The completed, whole turns the model is sent again, kept in the form a request
   * needs (`WholeTurns.ts` says which; the others are named in `notices`). A live
   * object: it grows as turns complete.
   */
  readonly history: History
  /** The model's context from completed turns, parsed, every item as saved (for tests and embedders; a request uses `history`). */
  readonly context: Effect.Effect<ReadonlyArray<ResponseItem>>
  /** Every record in the session, oldest first: read back from the file when asked, not kept in memory. */
  readonly records: Effect.Effect<ReadonlyArray<SessionRecord>>
  /** Every question (`user_input` text) in the session, oldest first: kept in memory as records are committed. */
  readonly questions: Effect.Effect<Texts>
  /** The open turn `turnId` as saved so far: its items, call ids, unfinished calls. */
  readonly openTurn: (turnId: string) => Effect.Effect<OpenTurn | undefined>
  /** Encodes, writes and fsyncs one record; only then does the conversation advance. */
  readonly append: (record: SessionRecord) => Effect.Effect<void, SessionWriteError | RecordRejected>
  /** Ends open turn `turnId` (`TurnClosing`): a result for each unfinished call, then `turn_end`. */
  readonly closeTurn: (turnId: string, closing: Closing) => Effect.Effect<void, SessionWriteError>
}

export interface SessionOptions {
  /** The user's home directory (`$HOME`); sessions live in `<home>/.mino/sessions`. */
  readonly home: string | undefined
  /**
   * The directory the conversation belongs to: the one Mino was started in
   * (default: the process's working directory); symlinks are resolved.
   */
  readonly directory?: string
  /** The demo's conversations, kept apart in `<home>/.mino/demo`. */
  readonly demo?: boolean
  /** A fixed session name (`<name>.jsonl`, records only); it takes precedence over `conversation`. */
  readonly sessionId?: string
  /**
   * Which conversation to open: `"newest"` (the default: the newest started in
   * `directory`, or a new one when there is none), `"new"` (a new file beside
   * the older ones, which stay), or `{ id }` (that one, wherever it was started;
   * `ConversationNotFound` when there is no such file).
   */
  readonly conversation?: Conversations.Which
}

export class SessionStore extends Context.Tag("mino/SessionStore")<SessionStore, SessionStoreShape>() {
  /** The store over the real disk. */
  static readonly layer = (options: SessionOptions) => SessionStore.layerOnDisk(options).pipe(Layer.provide(SessionDisk.layer))
  /** The store over a given `SessionDisk` (tests inject disk faults through it). */
  static readonly layerOnDisk = (options: SessionOptions) => Layer.scoped(SessionStore, open(options))
  /**
   * A session held in memory, for embedders and tests that want no files: the
   * same encoding (redaction, caps), replay and recovery of `records` given to
   * start from as the file; nothing is kept when the layer is released.
   */
  static readonly layerMemory = (options: MemorySessionOptions = {}) => Layer.effect(SessionStore, openMemory(options))
}

const { O_APPEND, O_CREAT, O_RDWR } = Fs.constants

/** Replays a session file, line by line, straight into a conversation: what it read, set aside and how far. */
const replay = (fd: number, path: string, secrets: KeyReading) =>
  Effect.try({
    try: () => {
      const conversation = new ConversationState(secrets)
      // The first record's time ("" when it has none); undefined while no record was read.
      let firstTime: string | undefined
      const rejected: Array<Recovery.Rejected> = []
      const readable = { count: 0, end: 0 }
      let size = 0
      for (const line of SessionReader.lines(fd)) {
        size = line.end
        if (line._tag === "Unreadable") {
          const position = conversation.position
          // The turn it names as the conversation names it (a key in use in the id redacted), for recovery and the set-aside marker.
          rejected.push({ line: conversation.read(line), position })
          continue
        }
        readable.count += 1
        readable.end = line.end
        if (line._tag === "Record") firstTime ??= line.record.time ?? ""
        conversation.read(line)
      }
      return { conversation, firstTime, rejected, readable, size }
    },
    catch: (error) => new SessionOpenError({ path, message: `cannot read the session file ${SessionDirectory.show(path)}: ${fromThrown(error).line}` })
  })

const open = (options: SessionOptions) =>
  Effect.gen(function*() {
    const disk = yield* SessionDisk
    const secrets = yield* Secrets
    const now = new Date(yield* Clock.currentTimeMillis)
    const taken = options.sessionId !== undefined
      ? yield* Conversations.takeNamed(options.home, options.sessionId)
      : yield* Conversations.take({
        home: options.home,
        demo: options.demo ?? false,
        which: options.conversation ?? "newest",
        cwd: options.directory,
        now,
        redact: secrets.redact
      })
    const { dir, id: sessionId, path } = taken
    // Begun by this start: no file until the first question is saved (`pending`).
    if (taken.created) return yield* pending(taken, disk, secrets, now)
    const refuse = (path: string) => (message: string) => new SessionOpenError({ path, message })
    // The file is a scoped resource: closed on success, failure and interruption. As first
    // opened it has a scope of its own, closed early if a set-aside replaces the file.
    const openFile = Effect.acquireRelease(
      Effect.suspend(() => Either.mapLeft(SessionDirectory.openRegular(path, O_RDWR | O_APPEND | O_CREAT), refuse(path))),
      (fd) => Effect.sync(() => Fs.closeSync(fd))
    )
    const firstOpen = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
    let fd = yield* Scope.extend(openFile, firstOpen)

    const replayed = yield* replay(fd, path, secrets)
    const { conversation, firstTime, rejected, readable } = replayed
    let size = replayed.size
    const notices: Array<string> = []
    if (rejected.length > 0) {
      const aside = yield* Effect.try({
        try: () => Recovery.setAside(fd, path, size, rejected, readable, now),
        catch: (error) => new SessionOpenError({ path, message: `cannot set aside the unreadable lines of ${SessionDirectory.show(path)}: ${fromThrown(error).line}` })
      })
      notices.push(aside.notice)
      if (aside.replaced) {
        yield* Scope.close(firstOpen, Exit.void)
        fd = yield* openFile
      }
      const reopened = fd
      size = yield* Effect.try({
        try: () => Fs.fstatSync(reopened).size,
        catch: (error) => new SessionOpenError({ path, message: `cannot read the session file ${SessionDirectory.show(path)}: ${fromThrown(error).line}` })
      })
    }
    if (size === 0) {
      yield* Effect.try({
        try: () => SessionDirectory.syncDirectory(dir),
        catch: (error) => new SessionOpenError({ path, message: `cannot save the session directory ${SessionDirectory.show(dir)}: ${fromThrown(error).line}` })
      })
    }

    const durable = DurableFile.make(disk, { fd, path }, size)
    const readRecords = () => {
      const records: Array<SessionRecord> = []
      for (const line of SessionReader.lines(fd)) if (line._tag === "Record") records.push(withoutKey(line.record, secrets).record)
      return records
    }
    const store = assemble(conversation, durable.append, readRecords, secrets)
    // A turn a crash left open is closed on disk before anything else happens.
    for (const notice of yield* store.recover(rejected).pipe(Effect.mapError((e) => new SessionOpenError({ path: e.path, message: e.message })))) {
      notices.push(notice)
    }
    for (const notice of Recovery.leftOut(conversation.leftOut)) notices.push(notice)
    const info = infoOf(taken, conversation.endedTurns, firstTime, now, secrets.redact)
    return SessionStore.of({ sessionId, path, info, notices, ...store.shape })
  })

/**
 * A conversation this start began: nothing is on disk until its first save,
 * which creates the file with its header (fsynced, with its directory entry),
 * opens it as a session file is opened, and appends; a start that asks nothing
 * leaves no file. A failure to create is the save's `SessionWriteError`.
 */
const pending = (taken: Conversations.Taken, disk: SessionDiskShape, secrets: SecretsShape, now: Date) =>
  Effect.gen(function*() {
    const { path } = taken
    let durable: DurableFile.DurableFile | undefined
    yield* Effect.addFinalizer(() => Effect.sync(() => durable === undefined ? undefined : Fs.closeSync(durable.file.fd)))
    const cannot = (why: string) => new SessionWriteError({ path, message: `cannot save the session: ${why}` })
    const first = Effect.suspend(() => {
      const made = Either.flatMap(Conversations.createFile(taken), () => SessionDirectory.openRegular(path, O_RDWR | O_APPEND))
      if (Either.isLeft(made)) return Effect.fail(cannot(made.left))
      return Effect.try({
        try: () => (durable = DurableFile.make(disk, { fd: made.right, path }, Fs.fstatSync(made.right).size)),
        catch: (error) => {
          Fs.closeSync(made.right)
          return cannot(fromThrown(error).line)
        }
      })
    })
    const commit = (lines: ReadonlyArray<string>) => Effect.flatMap(durable === undefined ? first : Effect.succeed(durable), (file) => file.append(lines))
    const readRecords = () => {
      const records: Array<SessionRecord> = []
      if (durable !== undefined) for (const line of SessionReader.lines(durable.file.fd)) if (line._tag === "Record") records.push(withoutKey(line.record, secrets).record)
      return records
    }
    const conversation = new ConversationState(secrets)
    const store = assemble(conversation, commit, readRecords, secrets)
    const info = infoOf(taken, 0, undefined, now, secrets.redact)
    return SessionStore.of({ sessionId: taken.id, path, info, notices: [], ...store.shape })
  })

/**
 * What the file and the memory store share: saving (encode once, commit, then
 * apply), closing a turn, the views, and recovery of turns left open. `commit`
 * is the only way a line reaches the conversation.
 */
const assemble = (
  conversation: ConversationState,
  commit: (lines: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<Committed>, SessionWriteError>,
  readRecords: () => ReadonlyArray<SessionRecord>,
  secrets: SecretsShape
) => {
  const stamp = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis).toISOString())

  const line = (record: SessionRecord, time: string) =>
    Either.mapLeft(
      encode({ ...record, time: record.time ?? time }, secrets.redact),
      (why) => new RecordRejected({ message: `cannot save the ${record.type.replace("_", " ")}: ${why}; nothing of it was written` })
    )

  /** Writes `lines` with one fsync, then applies them: memory only ever follows the disk. */
  const commitAll = (lines: ReadonlyArray<string>) =>
    Effect.map(commit(lines), (entries) => {
      for (const entry of entries) conversation.apply(entry)
    })

  const append = Effect.fn("SessionStore.append")(function*(record: SessionRecord) {
    yield* commitAll([yield* line(record, yield* stamp)])
  })

  /**
   * Ends open turn `turnId`: its closing records (a result per unfinished call, then
   * `turn_end`) are written together with one fsync, however many calls it left.
   */
  const closeTurn = (turnId: string, closing: Closing) =>
    Effect.gen(function*() {
      const turn = conversation.openTurn(turnId)
      if (turn === undefined) return
      const time = yield* stamp
      const lines: Array<string> = []
      for (const record of closingRecords(turn, closing)) {
        // Closing records hold Mino's own words, but a turn_end's reason can quote the model (a call id):
        // one that cannot be saved as it is gives way to a reason that can, so the turn is still closed.
        const encoded = Either.orElse(line(record, time), () =>
          record.type === "turn_end" ? line({ ...record, reason: UNSAVED_REASON }, time) : line(record, time))
        lines.push(yield* Effect.orDie(encoded))
      }
      yield* commitAll(lines)
    })

  /** Closes every turn left open (`TurnClosing.interrupted`); the notices to show. */
  const recover = (rejected: ReadonlyArray<Recovery.Rejected>) =>
    Effect.gen(function*() {
      const open = conversation.openTurns()
      const unknown: Array<OpenCall> = []
      for (const turn of open) {
        const doubtful = Recovery.maybeStarted(turn, rejected)
        for (const call of turn.unfinished) if (call.started || doubtful.has(call.callId)) unknown.push(call)
        yield* closeTurn(turn.turnId, { ...interrupted, maybeStarted: doubtful })
      }
      return Recovery.notices(open, unknown, secrets.redact)
    })

  const shape = {
    history: conversation.history,
    context: Effect.sync(() => conversation.history.items()),
    records: Effect.sync(readRecords),
    questions: Effect.sync(() => conversation.questions),
    openTurn: (turnId: string) => Effect.sync(() => conversation.openTurn(turnId)),
    append,
    closeTurn
  }
  return { shape, recover }
}

export interface MemorySessionOptions {
  /** Records to start from, as a session file would hold them; a turn left open is closed as on a restart. */
  readonly records?: ReadonlyArray<SessionRecord>
}

/** The memory store: the same encoding, replay and recovery as the file, with the lines kept in an array. */
const openMemory = (options: MemorySessionOptions) =>
  Effect.gen(function*() {
    const secrets = yield* Secrets
    const conversation = new ConversationState(secrets)
    const kept: Array<SessionRecord> = []
    const commit = (lines: ReadonlyArray<string>) =>
      Effect.sync(() =>
        lines.map((line) => {
          const text = line.slice(0, -1)
          const entry = committed(JSON.parse(text) as SessionRecord, text)
          kept.push(entry.record)
          return entry
        })
      )
    const store = assemble(conversation, commit, () => kept.slice(), secrets)
    for (const record of options.records ?? []) {
      yield* store.shape.append(record).pipe(Effect.orDie)
    }
    const notices = [...yield* store.recover([]).pipe(Effect.orDie), ...Recovery.leftOut(conversation.leftOut)]
    const info: ConversationInfo = {
      id: "memory",
      path: ":memory:",
      startedAt: kept[0]?.time ?? new Date(yield* Clock.currentTimeMillis).toISOString(),
      turns: conversation.endedTurns,
      continued: (options.records ?? []).length > 0,
      directory: undefined
    }
    return SessionStore.of({ sessionId: "memory", path: ":memory:", info, notices, ...store.shape })
  })

/** What the banner is told: `firstTime` is the first record's time ("" when it has none, undefined without records). */
const infoOf = (taken: Conversations.Taken, turns: number, firstTime: string | undefined, now: Date, redact: (text: string) => string): ConversationInfo => {
  const started = taken.origin._tag === "Started" ? taken.origin : undefined
  return {
    id: taken.id,
    path: taken.path,
    startedAt: started?.time || firstTime || Conversations.startedAtOf(taken.id) || now.toISOString(),
    turns,
    continued: !taken.created && turns > 0,
    // A header written while another key was in use can hold this one in its directory's name.
    directory: started === undefined ? undefined : redact(started.cwd),
    ...(taken.startedElsewhere === undefined ? {} : { startedElsewhere: taken.startedElsewhere })
  }
}
