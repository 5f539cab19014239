import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import { INTERRUPTED_NOTICE } from "../../src/session/conversation/Recovery.js"
import type { SessionRecord } from "../../src/session/records/Records.js"
import { SessionDisk } from "../../src/session/conversation/SessionDisk.js"
import { SessionStore } from "../../src/session/SessionStore.js"
import * as FaultyDisk from "../support/FaultyDisk.js"
import { API_KEY, sessionFile, sessionLines, tempDir, types } from "../support/Harness.js"
import { Secrets } from "../../src/security/Secrets.js"

const storeLayer = (home: string, disk: Layer.Layer<SessionDisk> = SessionDisk.layer) =>
  SessionStore.layerOnDisk({ home }).pipe(Layer.provide(disk), Layer.provide(Secrets.layer(API_KEY)))

const withStore = <A, E>(home: string, use: Effect.Effect<A, E, SessionStore>, disk?: Layer.Layer<SessionDisk>) =>
  Effect.scoped(Effect.provide(use, storeLayer(home, disk)))

const completedTurn = (turnId: string, text: string): ReadonlyArray<SessionRecord> => [
  { type: "user_input", turn_id: turnId, text },
  { type: "model_response", turn_id: turnId, response_id: `resp_${turnId}`, output: [{ type: "message", role: "assistant", content: [{ type: "output_text", text: `answer ${text}` }], future_field: { kept: true } }] },
  { type: "turn_end", turn_id: turnId, status: "completed" }
]

const appendAll = (records: ReadonlyArray<SessionRecord>) =>
  Effect.flatMap(SessionStore, (store) => Effect.forEach(records, store.append, { discard: true }))

describe("SessionStore", () => {
  it.live("creates ~/.mino/sessions owner-only and a 0600 file, one fsynced JSON line per record", () =>
    Effect.gen(function*() {
      const home = tempDir("store")
      yield* withStore(home, appendAll(completedTurn("t1", "hello")))
      const dir = Path.join(home, ".mino", "sessions")
      expect(Fs.statSync(Path.join(home, ".mino")).mode & 0o777).toBe(0o700)
      expect(Fs.statSync(dir).mode & 0o777).toBe(0o700)
      const file = sessionFile(home)!
      expect(Path.basename(file)).toMatch(/^\d{8}-\d{6}-[0-9a-f]{8}\.jsonl$/)
      expect(Fs.statSync(file).mode & 0o777).toBe(0o600)
      const lines = sessionLines(home)
      expect(types(lines)).toEqual(["user_input", "model_response", "turn_end"])
      expect(lines.every((line) => line["turn_id"] === "t1" && typeof line["time"] === "string")).toBe(true)
    }))

  it.live("restores the one conversation and replays only completed turns, output items verbatim", () =>
    Effect.gen(function*() {
      const home = tempDir("store")
      yield* withStore(home, appendAll([
        ...completedTurn("t1", "first"),
        { type: "user_input", turn_id: "t2", text: "failed one" },
        { type: "turn_end", turn_id: "t2", status: "failed", reason: "HTTP 500" },
        ...completedTurn("t3", "third")
      ]))
      const context = yield* withStore(home, Effect.flatMap(SessionStore, (store) => store.context))
      expect(context).toEqual([
        { type: "message", role: "user", content: [{ type: "input_text", text: "first" }] },
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "answer first" }], future_field: { kept: true } },
        { type: "message", role: "user", content: [{ type: "input_text", text: "third" }] },
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "answer third" }], future_field: { kept: true } }
      ])
      // Same HOME, same conversation: still one file.
      expect(Fs.readdirSync(Path.join(home, ".mino", "sessions")).filter((f) => f.endsWith(".jsonl"))).toHaveLength(1)
    }))

  for (const [where, code] of [["sync", "ENOSPC"], ["write", "EIO"]] as const) {
    it.live(`a failed ${where} is a typed error; the in-memory state does not advance and the store stops`, () =>
      Effect.gen(function*() {
        const home = tempDir("store")
        // The first append succeeds, the second fails.
        const armed: FaultyDisk.Faults = { [where]: { code, after: 1 } }
        const outcome = yield* withStore(home, Effect.gen(function*() {
          const store = yield* SessionStore
          yield* store.append({ type: "user_input", turn_id: "t1", text: "kept" })
          const before = { turn: yield* store.openTurn("t1"), context: yield* store.context }
          const failed = yield* Effect.exit(store.append({ type: "turn_end", turn_id: "t1", status: "completed" }))
          const again = yield* Effect.exit(store.append({ type: "user_input", turn_id: "t2", text: "after failure" }))
          return { before, failed, again, turn: yield* store.openTurn("t1"), context: yield* store.context }
        }), FaultyDisk.layer(armed))
        expect(Exit.isFailure(outcome.failed)).toBe(true)
        if (Exit.isFailure(outcome.failed)) {
          const error = outcome.failed.cause
          expect(String(error)).toContain("SessionWriteError")
          expect(String(error)).toContain(code)
        }
        expect(Exit.isFailure(outcome.again)).toBe(true)
        expect(outcome.turn).toEqual(outcome.before.turn)
        expect(outcome.turn?.items).toHaveLength(1)
        expect(outcome.context).toEqual(outcome.before.context)
        // The committed record is intact and the file ends on it.
        expect(types(sessionLines(home))).toEqual(["user_input"])
        expect(Fs.readFileSync(sessionFile(home)!, "utf8").endsWith("\n")).toBe(true)
      }))
  }

  it.live("a second open of the same session is refused as busy while the first holds it", () =>
    Effect.gen(function*() {
      const home = tempDir("store")
      const second = yield* withStore(home, Effect.gen(function*() {
        const first = yield* SessionStore
        yield* first.append({ type: "user_input", turn_id: "t1", text: "one" })
        return yield* Effect.exit(withStore(home, Effect.void))
      }))
      expect(Exit.isFailure(second)).toBe(true)
      expect(String(Exit.isFailure(second) ? second.cause : "")).toMatch(/SessionBusy[\s\S]*busy/)
      expect(types(sessionLines(home))).toEqual(["user_input"])
      // Released with its scope: the session opens again.
      const reopened = yield* Effect.exit(withStore(home, Effect.void))
      expect(Exit.isSuccess(reopened)).toBe(true)
    }))

  it.live("two starts at once on a fresh home: one opens the conversation, the other is busy", () =>
    Effect.gen(function*() {
      const home = tempDir("store")
      const release = yield* Deferred.make<void>()
      // The winner asks a question once released: that makes its file.
      const attempt = withStore(home, Effect.zipRight(Deferred.await(release), Effect.flatMap(SessionStore, (store) => store.append({ type: "user_input", turn_id: "t1", text: "q" })))).pipe(Effect.either)
      const both = yield* Effect.fork(Effect.all([attempt, attempt], { concurrency: "unbounded" }))
      // Whichever lost fails at once; then let the winner go.
      yield* Effect.sleep("100 millis")
      yield* Deferred.succeed(release, undefined)
      const results = yield* Fiber.join(both)
      expect(results.filter((r) => r._tag === "Left").map((r) => r._tag === "Left" && r.left._tag)).toEqual(["SessionBusy"])
      expect(Fs.readdirSync(Path.join(home, ".mino", "sessions")).filter((f) => f.endsWith(".jsonl"))).toHaveLength(1)
    }))

  it.live("closes an open turn on open: not_executed without a start, unknown with one, turn interrupted", () =>
    Effect.gen(function*() {
      const home = tempDir("store")
      const output = [
        { type: "function_call", call_id: "c1", name: "bash", arguments: "{}" },
        { type: "function_call", call_id: "c2", name: "bash", arguments: "{}" },
        { type: "function_call", call_id: "c3", name: "bash", arguments: "{}" }
      ]
      // A committed file the way a crash leaves it: c1 finished, c2 started, c3 never started.
      yield* withStore(home, appendAll([
        ...completedTurn("t0", "earlier"),
        { type: "user_input", turn_id: "t1", text: "crashing turn" },
        { type: "model_response", turn_id: "t1", output },
        { type: "tool_start", turn_id: "t1", call_id: "c1" },
        { type: "tool_result", turn_id: "t1", call_id: "c1", result: { status: "completed", output: "ok", exit_code: 0 } },
        { type: "tool_start", turn_id: "t1", call_id: "c2" }
      ]))
      const opened = yield* withStore(home, Effect.map(SessionStore, (store) => store.notices))
      expect(opened).toEqual([INTERRUPTED_NOTICE, "Outcome unknown: bash \"{}\""])
      const closing = sessionLines(home).slice(8)
      expect(closing.map((l) => [l["type"], l["call_id"], (l["result"] as { status?: string } | undefined)?.status ?? l["status"]])).toEqual([
        ["tool_result", "c2", "unknown"],
        ["tool_result", "c3", "not_executed"],
        ["turn_end", undefined, "interrupted"]
      ])
      // Closed once: the next open has nothing to tell.
      const again = yield* withStore(home, Effect.map(SessionStore, (store) => ({ notices: store.notices })))
      expect(again.notices).toEqual([])
      expect(sessionLines(home)).toHaveLength(11)
    }))

  it.live("a torn last line and a garbage line are set aside; every committed record is kept", () =>
    Effect.gen(function*() {
      const home = tempDir("store")
      yield* withStore(home, appendAll([...completedTurn("t1", "one"), ...completedTurn("t2", "two")]))
      const file = sessionFile(home)!
      const lines = Fs.readFileSync(file, "utf8").split("\n").filter(Boolean)
      Fs.writeFileSync(file, [lines[0], lines[1], "{\"type\":\"tur\u0000garbage", ...lines.slice(2)].join("\n") + "\n{\"type\":\"user_input\",\"turn_id\":\"t3\",\"te")
      const result = yield* withStore(home, Effect.gen(function*() {
        const store = yield* SessionStore
        return { notices: store.notices, context: yield* store.context }
      }))
      expect(result.notices).toHaveLength(1)
      expect(result.notices[0]).toMatch(/^Set aside 2 unreadable line\(s\) of the session file in \S+: 1 in the middle of the file \(damage, not a write cut short by a crash\), 1 at its end\. Every readable record was kept\.$/)
      expect(sessionLines(home).map((r) => r["turn_id"])).toEqual(["t1", "t1", "t1", "t2", "t2", "t2"])
      expect(result.context).toHaveLength(4)
      expect(Fs.readFileSync(file, "utf8")).toBe(lines.join("\n") + "\n")
      const aside = Fs.readdirSync(Path.dirname(file)).filter((name) => name.includes(".set-aside-"))
      expect(aside).toHaveLength(1)
      expect(Fs.readFileSync(Path.join(Path.dirname(file), aside[0]!), "utf8")).toContain("\"turn_id\":\"t3\",\"te")
    }))

  it.live("the API key never reaches the file", () =>
    Effect.gen(function*() {
      const home = tempDir("store")
      yield* withStore(home, appendAll(completedTurn("t1", `my key is ${API_KEY}`)))
      const text = Fs.readFileSync(sessionFile(home)!, "utf8")
      expect(text).not.toContain(API_KEY)
      expect(text).toContain("my key is [redacted]")
    }))
})
