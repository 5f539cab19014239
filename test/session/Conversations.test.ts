/**
 * Several conversations per directory: a new one starts beside the older ones,
 * the newest opens by default, one opens by id; the store says which it opened
 * (id, path, start, turns, continued); and a conversation is found and read
 * without the lock while another Mino holds it.
 */
import * as Fs from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Exit from "effect/Exit"
import * as Conversations from "../../src/session/Conversations.js"
import type { SessionRecord } from "../../src/session/Records.js"
import { type SessionOptions, SessionStore } from "../../src/session/SessionStore.js"
import { tempDir } from "../support/Harness.js"
import { Secrets } from "../../src/security/Secrets.js"

const withStore = <A, E>(options: SessionOptions, use: Effect.Effect<A, E, SessionStore>) =>
  Effect.scoped(Effect.provide(use, SessionStore.layer(options).pipe(Layer.provide(Secrets.layerNone))))

const turn = (turnId: string, text: string): ReadonlyArray<SessionRecord> => [
  { type: "user_input", turn_id: turnId, text },
  { type: "model_response", turn_id: turnId, output: [{ type: "message", role: "assistant", content: [{ type: "output_text", text: `re ${text}` }] }] },
  { type: "turn_end", turn_id: turnId, status: "completed" }
]

/** Opens, appends `records`, and answers what the store said about the conversation. */
const session = (options: SessionOptions, records: ReadonlyArray<SessionRecord> = []) =>
  withStore(options, Effect.gen(function*() {
    const store = yield* SessionStore
    const info = store.info
    for (const record of records) yield* store.append(record)
    return { info, context: (yield* store.context).length }
  }))

describe("several conversations per directory", () => {
  it.live("new starts beside the older ones; the newest opens by default; one opens by id", () =>
    Effect.gen(function*() {
      const home = tempDir("convs")
      const first = yield* session({ home }, turn("t1", "one"))
      expect(first.info).toMatchObject({ turns: 0, continued: false })
      expect(first.info.path).toBe(`${home}/.mino/sessions/${first.info.id}.jsonl`)
      expect(Date.parse(first.info.startedAt)).not.toBeNaN()
      const firstBytes = Fs.readFileSync(first.info.path)

      const second = yield* session({ home, conversation: "new" }, [...turn("t2", "two"), ...turn("t3", "three")])
      expect(second.info.id).not.toBe(first.info.id)
      expect(second.info).toMatchObject({ turns: 0, continued: false })
      // The older one is untouched.
      expect(Fs.readFileSync(first.info.path).equals(firstBytes)).toBe(true)

      const newest = yield* session({ home })
      expect(newest.info).toMatchObject({ id: second.info.id, turns: 2, continued: true })
      expect(newest.context).toBe(4)

      const byId = yield* session({ home, conversation: { id: first.info.id } })
      expect(byId.info).toMatchObject({ id: first.info.id, path: first.info.path, turns: 1, continued: true })
      expect(byId.context).toBe(2)
      expect(byId.info.startedAt).toBe(JSON.parse(firstBytes.toString().split("\n")[0]!).time)

      expect((yield* Conversations.list(home)).map((c) => c.id)).toEqual([first.info.id, second.info.id].sort())
    }))

  it.live("an id that names no conversation, or a path, is ConversationNotFound and creates nothing", () =>
    Effect.gen(function*() {
      const home = tempDir("convs")
      yield* session({ home })
      for (const id of ["20990101-000000-deadbeef", "../../etc/passwd", "demo"]) {
        const exit = yield* Effect.exit(session({ home, conversation: { id } }))
        expect(Exit.isFailure(exit) && String(exit.cause)).toMatch(/ConversationNotFound[\s\S]*no conversation/)
      }
      expect((yield* Conversations.list(home))).toHaveLength(1)
      expect(Exit.isFailure(yield* Effect.exit(Conversations.locate(home, { id: "20990101-000000-deadbeef" })))).toBe(true)
    }))

  it.live("a conversation is found and read without the lock while another Mino holds it", () =>
    Effect.gen(function*() {
      const home = tempDir("convs")
      const read = yield* withStore({ home }, Effect.gen(function*() {
        const store = yield* SessionStore
        for (const record of turn("t1", "one")) yield* store.append(record)
        yield* store.append({ type: "user_input", turn_id: "t2", text: "still running" })
        const found = yield* Conversations.locate(home, "newest")
        return { found, id: store.info.id, lines: [...Conversations.read(found!.path)] }
      }))
      expect(read.found?.id).toBe(read.id)
      expect(read.lines.map((line) => line._tag === "Record" ? line.record.type : line._tag)).toEqual(["user_input", "model_response", "turn_end", "user_input"])
      expect(yield* Conversations.locate(tempDir("convs-empty"), "newest")).toBeUndefined()
      expect(Exit.isFailure(yield* Effect.exit(Conversations.list("relative")))).toBe(true)
    }))
})
