/**
 * Conversations: the one module that knows their ids, their file names, the
 * header that records where each one started, which one a start takes, and the
 * locks that make it that start's alone.
 *
 * A conversation is `<dir>/<id>.jsonl` (`~/.mino/sessions`, or `~/.mino/demo`
 * for the demo's), its id the UTC time it started and random hex, so ids sort
 * by age. Its file is made with its first question (`createFile`), so a start
 * that asks nothing leaves none. Its first line, written and fsynced as it is
 * created, is its header: `{"type":"conversation","turn_id":"","cwd":…,"time":…}`,
 * `cwd` the real path of the directory Mino was started in. A start continues
 * the newest conversation whose header names its directory, or begins one; a file with no
 * header (made before Mino recorded directories) is listed and can be taken up
 * by id, but never continued on its own.
 *
 * Locks: choosing happens under `conversations.lock`, held only for that
 * moment (two starts in one directory must not both create one); the chosen
 * conversation's own `<id>.lock` is then held for the whole session, so a chat
 * in one directory never makes another directory's start busy. A plain start
 * that begins its directory's conversation also holds `here-<hash>.lock` for the
 * session: until the first question there is no file for a second start to
 * find, and that lock is what makes it busy.
 *
 * Reading for `mino log` and `mino sessions` takes no lock: a conversation in
 * use can be shown. Every file is opened without following a symlink or waiting
 * on a FIFO, and only its first line is read to learn where it started.
 */
import { createHash } from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Json from "../../Json.js"
import { MAX_RECORD_BYTES } from "../records/Records.js"
import * as SessionDirectory from "./SessionDirectory.js"
import * as SessionLock from "./SessionLock.js"
import * as SessionReader from "../records/SessionReader.js"

/** No conversation with that id (or the id is not a conversation's name). */
export class ConversationNotFound extends Schema.TaggedError<ConversationNotFound>()("ConversationNotFound", {
  id: Schema.String,
  message: Schema.String
}) {}

/** `HOME` cannot hold sessions (unset, empty, relative): a configuration error. */
export class SessionHomeError extends Schema.TaggedError<SessionHomeError>()("SessionHomeError", {
  message: Schema.String
}) {}

/** Another Mino holds the conversation this start would take. */
export class SessionBusy extends Schema.TaggedError<SessionBusy>()("SessionBusy", {
  path: Schema.String,
  message: Schema.String
}) {}

/** The session cannot be opened: a refused file or directory, an I/O error. */
export class SessionOpenError extends Schema.TaggedError<SessionOpenError>()("SessionOpenError", {
  path: Schema.String,
  message: Schema.String
}) {}

/** Which conversation a start opens: the newest started here (a new one when there is none), a new one, or one by id. */
export type Which = "newest" | "new" | { readonly id: string }

export interface ConversationFile {
  readonly id: string
  readonly path: string
}

// ---------------------------------------------------------------------------
// Ids and file names

const FILE_NAME = /^(\d{8}-\d{6}-[0-9a-f]{8})\.jsonl$/

/** Whether `id` can name a conversation file (no path, no traversal). */
export const isId = (id: string): boolean => FILE_NAME.test(`${id}.jsonl`)

/** The file of conversation `id` in `dir`. */
export const pathOf = (dir: string, id: string): string => Path.join(dir, `${id}.jsonl`)

/** The lock of conversation (or fixed session) `id`; without one, the directory's, held while choosing. */
export const lockPath = (dir: string, id?: string): string => Path.join(dir, id === undefined ? "conversations.lock" : `${id}.lock`)

/** A conversation's file as its directory lists it, with what it is when it is no regular file. */
interface Listed extends ConversationFile {
  /** `a symbolic link`, `a FIFO`...: from the directory entry, so nothing is opened to learn it. */
  readonly notRegular: string | undefined
}

/** The conversations in `dir`, oldest first (ids sort by start); none when `dir` does not exist yet. */
const listed = (dir: string): ReadonlyArray<Listed> => {
  let entries: ReadonlyArray<Fs.Dirent>
  try {
    entries = Fs.readdirSync(dir, { withFileTypes: true })
  } catch (error) {
    if (SessionDirectory.errno(error) === "ENOENT") return []
    throw error
  }
  return entries.flatMap((entry) => {
    const id = FILE_NAME.exec(entry.name)?.[1]
    if (id === undefined) return []
    return [{ id, path: pathOf(dir, id), notRegular: entry.isFile() ? undefined : SessionDirectory.kind(entry) }]
  }).sort((a, b) => (a.id < b.id ? -1 : 1))
}

/** The ids of the conversations in `dir`, oldest first; none when `dir` does not exist yet. */
export const ids = (dir: string): ReadonlyArray<string> => listed(dir).map((file) => file.id)

/** A new conversation id, named by the time it starts: `20260102-030405-1a2b3c4d`. */
export const newId = (now: Date): string => {
  const stamp = now.toISOString().slice(0, 19).replace(/-|:/g, "").replace("T", "-")
  const random = Array.from(crypto.getRandomValues(new Uint8Array(4)), (b) => b.toString(16).padStart(2, "0")).join("")
  return `${stamp}-${random}`
}

/** When a conversation started, from its id (`20260102-030405-…` is UTC), if the id says. */
export const startedAtOf = (id: string): string | undefined => {
  const match = /^(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})-/.exec(id)
  return match === null ? undefined : `${match[1]}-${match[2]}-${match[3]}T${match[4]}:${match[5]}:${match[6]}.000Z`
}

/** The directory of conversations under `home` (the demo's apart), or why `home` cannot be used. */
export const directory = (home: string | undefined, demo = false): Effect.Effect<string, SessionHomeError> =>
  Either.match(SessionDirectory.sessionsDirectory(home, demo ? "demo" : "sessions"), {
    onLeft: (message) => Effect.fail(new SessionHomeError({ message })),
    onRight: Effect.succeed
  })

/**
 * The directory a conversation belongs to: `cwd` (default: the process's working
 * directory) with every symlink resolved; undefined when it cannot be read (it
 * was deleted, say).
 */
export const startupDirectory = (cwd?: string): string | undefined => {
  try {
    return Fs.realpathSync(cwd ?? process.cwd())
  } catch {
    return undefined
  }
}

// ---------------------------------------------------------------------------
// The header: where a conversation started

export const HEADER_TYPE = "conversation"

/** The header line of a conversation started in `cwd` at `time`. */
export const headerLine = (cwd: string, time: string): string =>
  JSON.stringify({ type: HEADER_TYPE, turn_id: "", cwd, time }) + "\n"

/** Where a conversation started, as far as its file says. */
export type Origin =
  | { readonly _tag: "Started"; readonly cwd: string; readonly time: string | undefined }
  /** No header: made before Mino recorded directories, or its header was cut short. */
  | { readonly _tag: "NotRecorded" }
  /** Not a regular file, or not readable: never opened as a conversation. */
  | { readonly _tag: "Unreadable"; readonly reason: string }

const NOT_RECORDED: Origin = { _tag: "NotRecorded" }

/** A header holds an absolute path, so far fewer bytes than this; a longer first line is no header. */
const HEADER_BYTES = 64 * 1024

/** The origin a header line's text gives. */
const originOf = (text: string): Origin => {
  // A byte order mark an editor put before the line is not part of it, as for every record (`SessionReader`).
  const json = Json.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text)
  if (typeof json !== "object" || json === null || !("type" in json) || json.type !== HEADER_TYPE) return NOT_RECORDED
  if (!("cwd" in json) || typeof json.cwd !== "string" || !Path.isAbsolute(json.cwd)) return NOT_RECORDED
  // A time that does not parse says nothing: the id's is used instead.
  const time = "time" in json && typeof json.time === "string" && !Number.isNaN(Date.parse(json.time)) ? json.time : undefined
  return { _tag: "Started", cwd: json.cwd, time }
}

/**
 * `use` on the conversation file at `path`, opened read-only, never following a
 * symlink, never opening a FIFO or device (opening one can block or act); the
 * reason when it cannot be. What it is comes from its directory entry when
 * `file` is listed, else from `lstat` and, once open, `fstat`. (A listed entry
 * is trusted: a node's Stats cost more than the read, and a FIFO swapped in
 * since is opened non-blocking and reads as empty.)
 */
const withFile = <A>(file: string | Listed, use: (fd: number) => A): Either.Either<A, string> => {
  const path = typeof file === "string" ? file : file.path
  const notRegular = (kind: string) => Either.left(`${kind}, not a regular file`)
  let fd: number
  try {
    if (typeof file !== "string" && file.notRegular !== undefined) return notRegular(file.notRegular)
    const before = typeof file === "string" ? Fs.lstatSync(path) : undefined
    if (before !== undefined && !before.isFile()) return notRegular(SessionDirectory.kind(before))
    fd = Fs.openSync(path, Fs.constants.O_RDONLY | Fs.constants.O_NOFOLLOW | Fs.constants.O_NONBLOCK)
  } catch (error) {
    return Either.left(`cannot be opened (${SessionDirectory.errno(error)})`)
  }
  try {
    const stats = typeof file === "string" ? Fs.fstatSync(fd) : undefined
    if (stats !== undefined && !stats.isFile()) return notRegular(SessionDirectory.kind(stats))
    return Either.right(use(fd))
  } catch (error) {
    return Either.left(`cannot be read (${SessionDirectory.errno(error)})`)
  } finally {
    Fs.closeSync(fd)
  }
}

// Mino writes a record's `type` first and a line holds no raw newline, so a
// question is a line that begins with these bytes, wherever it is in the file.
const QUESTION = Buffer.from("\n{\"type\":\"user_input\"")
const SCAN_CHUNK = 1 << 20

/** One buffer for every read here: they are synchronous, so never two at once. */
let scratchBuffer: Buffer | undefined
const scratch = (): Buffer => (scratchBuffer ??= Buffer.allocUnsafe(SCAN_CHUNK + QUESTION.length))

/** The file's header: a first read of 4 KiB holds it (a path and a time); a longer line is read to 64 KiB. */
const readHeader = (fd: number): Origin => {
  const buffer = scratch()
  let read = Fs.readSync(fd, buffer, 0, 4096, 0)
  if (read === 4096 && buffer.subarray(0, read).indexOf(0x0a) < 0) read += Fs.readSync(fd, buffer, read, HEADER_BYTES - read, read)
  const newline = buffer.subarray(0, read).indexOf(0x0a)
  return newline < 0 ? NOT_RECORDED : originOf(buffer.toString("utf8", 0, newline))
}

/** Where the conversation at `path` started: only its first line is read, and at most 64 KiB of it. */
export const origin = (file: string | Listed): Origin =>
  Either.match(withFile(file, readHeader), { onLeft: (reason) => ({ _tag: "Unreadable", reason }), onRight: (found) => found })

/** Whether `origin` says the conversation started in `cwd` (a real path). */
export const startedIn = (found: Origin, cwd: string): boolean => found._tag === "Started" && found.cwd === cwd

// ---------------------------------------------------------------------------
// Taking a conversation for a session

export interface TakeOptions {
  readonly home: string | undefined
  /** The demo's conversations (`~/.mino/demo`) instead of the real ones. */
  readonly demo: boolean
  readonly which: Which
  /** The directory Mino was started in (default: the working directory). */
  readonly cwd: string | undefined
  readonly now: Date
  /** Applied to the header line, and to a header's directory an error names: the key never reaches a file or the screen, not even in a directory's name. */
  readonly redact: (text: string) => string
}

/** The conversation a session took: its lock is held for the scope. */
export interface Taken extends ConversationFile {
  /** The directory of conversations it is in. */
  readonly dir: string
  readonly origin: Origin
  /**
   * Whether this start began it: its file does not exist yet. `create` makes it
   * (with `header`) when the first question is saved, so a start that asks
   * nothing leaves no file behind.
   */
  readonly created: boolean
  /** The header line a new conversation's file begins with (redacted); empty for one that exists. */
  readonly header?: string
  /**
   * When this start found no conversation started in its directory and created
   * one: how many there are from elsewhere (or from a directory not recorded).
   */
  readonly startedElsewhere?: number
}

/**
 * The directory of conversations under `home` for `mino log` and `mino sessions`:
 * checked as a start checks it (`SessionDirectory.checkDirectory`: real
 * directories owned by this user, a symlink never followed), but neither made nor
 * changed; a refusal is one line.
 */
export const readableDirectory = (home: string | undefined, demo = false): Effect.Effect<string, SessionHomeError | SessionOpenError> =>
  Effect.flatMap(directory(home, demo), (dir) => {
    const refused = SessionDirectory.checkDirectory(dir)
    return refused === undefined ? Effect.succeed(dir) : Effect.fail(new SessionOpenError({ path: dir, message: refused }))
  })

/** The directory of conversations under `home`, made if missing and checked (`SessionDirectory.ensureDirectory`). */
const ensured = (home: string | undefined, demo: boolean) =>
  Effect.flatMap(directory(home, demo), (dir) =>
    Effect.as(Either.mapLeft(SessionDirectory.ensureDirectory(dir), (message) => new SessionOpenError({ path: dir, message })), dir))

/** How long a start waits for another to finish choosing (a moment, unless that one is stopped). */
const CHOOSING_SECONDS = 5

/**
 * Takes a conversation for the scope: under the directory's lock, chooses one,
 * then takes its own lock. Busy when another Mino holds it. A new one is only
 * chosen: its file is made by `create`, with the first question. So that two
 * plain starts in one directory stay exclusive before either asks anything, a
 * start that begins this directory's conversation also holds the directory's
 * own lock (`here-<hash>.lock`) for the scope, and a second start finding no
 * conversation here finds that lock held.
 */
export const take = (options: TakeOptions): Effect.Effect<Taken, SessionHomeError | SessionOpenError | SessionBusy | ConversationNotFound, Scope.Scope> =>
  Effect.gen(function*() {
    const cwd = startupDirectory(options.cwd)
    if (cwd === undefined) {
      return yield* new SessionOpenError({ path: options.cwd ?? ".", message: "the startup directory cannot be read (was it deleted?), so no conversation belongs to it" })
    }
    const dir = yield* ensured(options.home, options.demo)
    const session = yield* Effect.scope
    return yield* Effect.scoped(Effect.gen(function*() {
      yield* lock(lockPath(dir), { waitSeconds: CHOOSING_SECONDS }, () =>
        `the session is busy: another mino process has been choosing a conversation in ${SessionDirectory.show(dir)} for ${CHOOSING_SECONDS} s`)
      const chosen = yield* choose(dir, options.which, cwd, options.now)
      const taken: Taken = {
        ...chosen,
        dir,
        path: pathOf(dir, chosen.id),
        ...(chosen.created ? { header: options.redact(headerLine(options.redact(cwd), options.now.toISOString())) } : {})
      }
      // Begun here by a plain start: this directory's, until it has a file another start would find.
      if (taken.created && options.which === "newest") {
        yield* lock(lockPath(dir, hereLockName(cwd)), {}, () => beginning(cwd, options)).pipe(Scope.extend(session))
      }
      return yield* lockTaken(taken, options, session)
    }))
  })

/** How many ids after a new one a start tries when another start holds it (begun in the same second, its file not made yet). */
const FRESH_TRIES = 16

/** Takes `taken`'s own lock for `session`; a new one whose id another start holds (and has not made yet) takes the next id. */
const lockTaken = (taken: Taken, options: TakeOptions, session: Scope.Scope): Effect.Effect<Taken, SessionBusy | SessionOpenError> =>
  Effect.gen(function*() {
    let current = taken
    for (let tries = 1;; tries++) {
      const locked = yield* Effect.either(lock(lockPath(current.dir, current.id), {}, () => busy(current, options)).pipe(Scope.extend(session)))
      if (Either.isRight(locked)) return current
      if (!current.created || locked.left._tag !== "SessionBusy" || tries >= FRESH_TRIES) return yield* locked.left
      const id = after(current.id)
      current = { ...current, id, path: pathOf(current.dir, id) }
    }
  })

/** The name of the lock a start holds while it begins `cwd`'s conversation: a hash, so no path reaches a file name. */
export const hereLockName = (cwd: string): string => `here-${createHash("sha256").update(cwd).digest("hex").slice(0, 24)}`

const beginning = (cwd: string, options: TakeOptions): string =>
  `the session is busy: another mino process has begun the conversation of ${SessionDirectory.show(cwd)} (nothing asked yet); \`mino${
    options.demo ? " --demo" : ""
  } --new\` starts another beside it`

/**
 * Makes the file of a conversation this start began (`taken.created`), holding its
 * header, fsynced with its directory entry: called once, as its first question is
 * saved. Nothing is left when it fails.
 */
export const createFile = (taken: Taken): Either.Either<void, string> =>
  taken.created ? create(taken, taken.header ?? "") : Either.void

/** A session under a fixed name (`<name>.jsonl`, a benchmark's, say): no header, no choosing, its lock for the scope. */
export const takeNamed = (home: string | undefined, name: string): Effect.Effect<Taken, SessionHomeError | SessionOpenError | SessionBusy, Scope.Scope> =>
  Effect.gen(function*() {
    const dir = yield* ensured(home, false)
    const path = Path.join(dir, `${name}.jsonl`)
    yield* lock(lockPath(dir, name), {}, () => `the session is busy: another mino process is using ${SessionDirectory.show(path)}`)
    return { id: name, path, dir, origin: NOT_RECORDED, created: false }
  })

const lock = (path: string, options: { readonly waitSeconds?: number }, busyMessage: () => string) =>
  SessionLock.acquire(path, options).pipe(
    Effect.catchTags({
      LockBusy: () => new SessionBusy({ path, message: busyMessage() }),
      LockUnavailable: (error) => new SessionOpenError({ path, message: `cannot lock the session ${SessionDirectory.show(path)}: ${error.message}` })
    })
  )

const busy = (taken: Taken, options: TakeOptions): string => {
  const which = taken.origin._tag === "Started"
    ? `the conversation started in ${SessionDirectory.show(options.redact(taken.origin.cwd))} (${taken.id})`
    : `conversation ${taken.id}`
  const another = options.which === "newest" ? `; \`mino${options.demo ? " --demo" : ""} --new\` starts another beside it` : ""
  return `the session is busy: another mino process is using ${which}${another}`
}

type Chosen = Omit<Taken, "dir" | "path">

/** The conversation `options.which` names in `dir` (the directory's lock is held: nothing else creates one meanwhile). */
const choose = (dir: string, which: Which, cwd: string, now: Date): Effect.Effect<Chosen, ConversationNotFound> => {
  const all = listed(dir)
  const fresh = (): Chosen => ({ id: freshId(all, now), origin: { _tag: "Started", cwd, time: now.toISOString() }, created: true })
  if (which === "new") return Effect.succeed(fresh())
  if (which === "newest") {
    const found = newestOf(all, cwd)
    return Effect.succeed(found === undefined ? { ...fresh(), startedElsewhere: all.length } : { id: found.file.id, origin: found.origin, created: false })
  }
  const named = isId(which.id) ? all.find((file) => file.id === which.id) : undefined
  return named !== undefined
    ? Effect.succeed({ id: named.id, origin: origin(named), created: false })
    : Effect.fail(new ConversationNotFound({ id: which.id, message: `no conversation ${JSON.stringify(which.id)} in ${SessionDirectory.show(dir)}` }))
}

/**
 * A new id that sorts after every id in `all`, so that "newest" finds it: ids
 * sort by start time to the second, so a start in the same second as the newest
 * (or after the clock went back) takes the id right after the newest one. (Drawn
 * again at random instead, it could fail a thousand draws after an id whose
 * random part was near its top.)
 */
export const freshId = (all: ReadonlyArray<Pick<ConversationFile, "id">>, now: Date): string => {
  const drawn = newId(now)
  const newest = all.at(-1)?.id
  return newest === undefined || drawn > newest ? drawn : after(newest)
}

/** The id right after `id`: its random part plus one, or the next second's when that is at its top. */
const after = (id: string): string => {
  const random = Number.parseInt(id.slice(-8), 16)
  if (random < 0xffffffff) return `${id.slice(0, -8)}${(random + 1).toString(16).padStart(8, "0")}`
  const [, year, month, day, hour, minute, second] = /^(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})-/.exec(id)!
  return newId(new Date(Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second) + 1)))
}

/** Creates the conversation's file holding its header, fsynced with its directory entry; nothing is left when it fails. */
const create = (taken: Taken, header: string): Either.Either<void, string> => {
  const { O_CREAT, O_EXCL, O_NOFOLLOW, O_WRONLY } = Fs.constants
  const line = Buffer.from(header)
  let made = false
  try {
    const fd = Fs.openSync(taken.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600)
    made = true
    try {
      for (let written = 0; written < line.length;) written += Fs.writeSync(fd, line, written)
      Fs.fsyncSync(fd)
    } finally {
      Fs.closeSync(fd)
    }
    SessionDirectory.syncDirectory(taken.dir)
    return Either.void
  } catch (error) {
    if (made) Fs.rmSync(taken.path, { force: true })
    return Either.left(`cannot create the conversation ${SessionDirectory.show(taken.path)}: ${SessionDirectory.errno(error)}`)
  }
}

// ---------------------------------------------------------------------------
// Finding and reading, without a lock

/** The conversations in `dir`, oldest first. */
export const files = (dir: string): ReadonlyArray<ConversationFile> => listed(dir).map(({ id, path }) => ({ id, path }))

/** The newest of `all` started in `cwd` (a real path), with its origin: first lines only, newest first, until one is. */
const newestOf = (all: ReadonlyArray<Listed>, cwd: string): { readonly file: Listed; readonly origin: Origin } | undefined => {
  for (let i = all.length - 1; i >= 0; i--) {
    const found = origin(all[i]!)
    if (startedIn(found, cwd)) return { file: all[i]!, origin: found }
  }
  return undefined
}

/** The newest conversation in `dir` started in `cwd` (a real path), if any. */
export const newestStartedIn = (dir: string, cwd: string): ConversationFile | undefined => {
  const found = newestOf(listed(dir), cwd)?.file
  return found === undefined ? undefined : { id: found.id, path: found.path }
}

/** The conversation named `id` in `dir`. */
export const find = (dir: string, id: string): Effect.Effect<ConversationFile, ConversationNotFound> =>
  isId(id) && ids(dir).includes(id)
    ? Effect.succeed({ id, path: pathOf(dir, id) })
    : Effect.fail(new ConversationNotFound({ id, message: `no conversation ${JSON.stringify(id)} in ${SessionDirectory.show(dir)}` }))

/**
 * The lines of a conversation file, read as a stream and without the lock
 * (`SessionReader.Line`: records, other record types such as the header,
 * unreadable lines). A last line still being written by a running Mino shows as
 * unreadable. Throws the system's error when the file cannot be opened; it is
 * never followed if it is a symlink, and a FIFO or device is refused rather than read.
 */
export const read = (path: string): Generator<SessionReader.Line> => SessionReader.readFile(path)

/** What `mino sessions` shows of a conversation. */
export interface Summary extends ConversationFile {
  readonly origin: Origin
  /** Its header's time, else the time its id names (ISO 8601). */
  readonly startedAt: string | undefined
  /** How many questions it holds: one a turn. */
  readonly turns: number
  /** Its last question's text, if it has one. */
  readonly lastQuestion: string | undefined
}

/** Every conversation in `dir`, newest first, each read once at the speed of a byte search. */
export const summaries = (dir: string): ReadonlyArray<Summary> =>
  [...listed(dir)].reverse().map((file) => {
    const { id, path } = file
    const scanned = withFile(file, (fd) => ({ origin: readHeader(fd), ...questions(fd) }))
    if (Either.isLeft(scanned)) {
      return { id, path, origin: { _tag: "Unreadable", reason: scanned.left }, startedAt: startedAtOf(id), turns: 0, lastQuestion: undefined }
    }
    const { origin: found, turns, lastQuestion } = scanned.right
    const startedAt = (found._tag === "Started" ? found.time : undefined) ?? startedAtOf(id)
    return { id, path, origin: found, startedAt, turns, lastQuestion }
  })

/** How many questions the file holds, and the text of the last one: a byte search, with one line parsed. */
const questions = (fd: number): { readonly turns: number; readonly lastQuestion: string | undefined } => {
  const buffer = scratch()
  // The bytes before the chunk: a match may straddle two reads; the file's start counts as a line start.
  let carried = 1
  buffer[0] = 0x0a
  let position = 0
  let turns = 0
  let last: number | undefined
  while (true) {
    const read = Fs.readSync(fd, buffer, carried, SCAN_CHUNK, position)
    if (read === 0) break
    const region = buffer.subarray(0, carried + read)
    for (let at = region.indexOf(QUESTION); at >= 0; at = region.indexOf(QUESTION, at + 1)) {
      turns++
      last = position - carried + at + 1
    }
    position += read
    carried = Math.min(QUESTION.length - 1, region.length)
    region.copy(buffer, 0, region.length - carried)
  }
  return { turns, lastQuestion: last === undefined ? undefined : questionAt(fd, last) }
}

/** The text of the question whose line starts at `start`; undefined when the line is cut short, too long, or not one. */
const questionAt = (fd: number, start: number): string | undefined => {
  // One read holds the line almost always; a longer one (up to a record's limit) is gathered in pieces.
  const buffer = scratch()
  const pieces: Array<Buffer> = []
  for (let bytes = 0; bytes <= MAX_RECORD_BYTES;) {
    const read = Fs.readSync(fd, buffer, 0, SCAN_CHUNK, start + bytes)
    if (read === 0) return undefined
    const newline = buffer.subarray(0, read).indexOf(0x0a)
    pieces.push(Buffer.from(buffer.subarray(0, newline < 0 ? read : newline)))
    if (newline >= 0) {
      const json = Json.parse(Buffer.concat(pieces).toString("utf8"))
      return typeof json === "object" && json !== null && "text" in json && typeof json.text === "string" ? json.text : undefined
    }
    bytes += read
  }
  return undefined
}
