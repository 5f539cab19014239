/**
 * The conversations in a sessions directory, found without taking the lock:
 * for `mino log`, which may read a conversation another Mino is appending to.
 * Each conversation is `~/.mino/sessions/<id>.jsonl`; ids sort by the time the
 * conversation started, so the newest is the last.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as SessionDirectory from "./SessionDirectory.js"
import * as SessionReader from "./SessionReader.js"

/** No conversation with that id (or the id is not a conversation's name). */
export class ConversationNotFound extends Schema.TaggedError<ConversationNotFound>()("ConversationNotFound", {
  id: Schema.String,
  message: Schema.String
}) {}

/** `HOME` cannot hold sessions (unset, empty, relative): a configuration error. */
export class SessionHomeError extends Schema.TaggedError<SessionHomeError>()("SessionHomeError", {
  message: Schema.String
}) {}

/** Which conversation a start opens: the newest (a new one when there is none), a new one, or one by id. */
export type Which = "newest" | "new" | { readonly id: string }

export interface ConversationFile {
  readonly id: string
  readonly path: string
}

/** The sessions directory under `home`, or why `home` cannot be used. */
export const directory = (home: string | undefined): Effect.Effect<string, SessionHomeError> =>
  Either.match(SessionDirectory.sessionsDirectory(home), {
    onLeft: (message) => Effect.fail(new SessionHomeError({ message })),
    onRight: Effect.succeed
  })

/** The conversations under `home`, oldest first; none when the directory does not exist yet. */
export const list = (home: string | undefined): Effect.Effect<ReadonlyArray<ConversationFile>, SessionHomeError> =>
  Effect.map(directory(home), (dir) =>
    Fs.existsSync(dir) ? SessionDirectory.conversationIds(dir).map((id) => ({ id, path: Path.join(dir, `${id}.jsonl`) })) : [])

/** Whether `id` can name a conversation file (no path, no traversal). */
export const isId = (id: string): boolean => SessionDirectory.CONVERSATION.test(`${id}.jsonl`)

/** The newest conversation (undefined when there is none), or the one named `id`. */
export const locate = (
  home: string | undefined,
  which: "newest" | { readonly id: string }
): Effect.Effect<ConversationFile | undefined, SessionHomeError | ConversationNotFound> =>
  Effect.gen(function*() {
    const all = yield* list(home)
    if (which === "newest") return all.at(-1)
    const found = all.find((conversation) => conversation.id === which.id)
    if (found !== undefined) return found
    const dir = yield* directory(home)
    return yield* new ConversationNotFound({
      id: which.id,
      message: `no conversation ${JSON.stringify(which.id)} in ${SessionDirectory.show(dir)}`
    })
  })

/**
 * The lines of a conversation file, read as a stream and without the lock
 * (`SessionReader.Line`: records, other record types, unreadable lines). A last
 * line still being written by a running Mino shows as unreadable. Throws the
 * system's error when the file cannot be opened; it is never followed if it is a
 * symlink, and a FIFO or device is refused rather than read.
 */
export const read = (path: string): Generator<SessionReader.Line> => SessionReader.readFile(path)

/** When a conversation started, from its id (`20260102-030405-…` is UTC), if the id says. */
export const startedAtOf = (id: string): string | undefined => {
  const match = /^(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})-/.exec(id)
  return match === null ? undefined : `${match[1]}-${match[2]}-${match[3]}T${match[4]}:${match[5]}:${match[6]}.000Z`
}
