/**
 * Conversations belong to the directory they started in: a start continues the
 * newest conversation started in its directory (symlinks resolved), else
 * creates one with a header saying where; `new` starts another beside it; one
 * opens by id wherever it started. The demo's are kept apart. Each conversation
 * has its own lock, so two directories run at once and a second start in one
 * directory is busy. Files that are not what they claim (no header, a symlink,
 * a FIFO, a huge first line, a header naming another directory) are never
 * continued on their own; listing reads them without blocking or following.
 */
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as fc from "effect/FastCheck"
import * as Conversations from "../../src/session/directory/Conversations.js"
import { encode, type SessionRecord } from "../../src/session/records/Records.js"
import { type SessionOptions, SessionStore } from "../../src/session/SessionStore.js"
import * as FaultyDisk from "../support/FaultyDisk.js"
import { tempDir } from "../support/Harness.js"
import { PROC } from "../support/Proc.js"
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

/** A HOME and project directories under one temporary root, each a real path. */
const place = (...projects: ReadonlyArray<string>) => {
  const root = Fs.realpathSync(tempDir("convs"))
  const home = Path.join(root, "home")
  Fs.mkdirSync(home)
  const dirs = projects.map((name) => {
    const dir = Path.join(root, name)
    Fs.mkdirSync(dir, { recursive: true })
    return dir
  })
  return { home, dirs, sessions: Path.join(home, ".mino", "sessions") }
}

const busy = (exit: Exit.Exit<unknown, unknown>): string => Exit.isFailure(exit) && String(exit.cause).includes("SessionBusy") ? String(exit.cause) : ""

/** Writes a conversation file by hand: `lines` as given, each followed by a newline. */
const plant = (dir: string, id: string, lines: ReadonlyArray<string>): string => {
  Fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  const file = Conversations.pathOf(dir, id)
  Fs.writeFileSync(file, lines.map((line) => line + "\n").join(""), { mode: 0o600 })
  return file
}

const header = (cwd: string, time = "2026-01-02T03:04:05.000Z") => Conversations.headerLine(cwd, time).trimEnd()
const lines = (records: ReadonlyArray<SessionRecord>) => records.map((record) => JSON.stringify(record))

describe("a conversation per directory", () => {
  it.live("A, then B, then A again: each directory continues its own; the header says where each started", () =>
    Effect.gen(function*() {
      const { home, dirs: [a, b], sessions } = place("projA", "projB")
      const first = yield* session({ home, directory: a! }, turn("t1", "in A"))
      expect(first.info).toMatchObject({ turns: 0, continued: false, directory: a, startedElsewhere: 0 })
      expect(Fs.readFileSync(first.info.path, "utf8").split("\n")[0]).toBe(header(a!, first.info.startedAt))

      const other = yield* session({ home, directory: b! }, turn("t2", "in B"))
      expect(other.info.id).not.toBe(first.info.id)
      expect(other.info).toMatchObject({ turns: 0, continued: false, directory: b, startedElsewhere: 1 })

      const again = yield* session({ home, directory: a! })
      expect(again.info).toMatchObject({ id: first.info.id, turns: 1, continued: true, directory: a })
      expect(again.context).toBe(2)
      expect(again.info.startedElsewhere).toBeUndefined()
      const backInB = yield* session({ home, directory: b! })
      expect(backInB.info).toMatchObject({ id: other.info.id, turns: 1, continued: true })
      expect(Conversations.files(sessions).map((file) => file.id)).toEqual([first.info.id, other.info.id].sort())
    }))

  it.live("new starts beside the older ones and is then this directory's newest; one opens by id wherever it started", () =>
    Effect.gen(function*() {
      const { home, dirs: [a, b] } = place("projA", "projB")
      const first = yield* session({ home, directory: a! }, turn("t1", "one"))
      const firstBytes = Fs.readFileSync(first.info.path)
      const second = yield* session({ home, directory: a!, conversation: "new" }, [...turn("t2", "two"), ...turn("t3", "three")])
      expect(second.info).toMatchObject({ turns: 0, continued: false, directory: a })
      expect(second.info.id > first.info.id).toBe(true)
      expect(Fs.readFileSync(first.info.path).equals(firstBytes)).toBe(true)

      expect((yield* session({ home, directory: a! })).info).toMatchObject({ id: second.info.id, turns: 2, continued: true })
      // From B, by id: A's first conversation, which still says it started in A.
      const byId = yield* session({ home, directory: b!, conversation: { id: first.info.id } })
      expect(byId.info).toMatchObject({ id: first.info.id, turns: 1, continued: true, directory: a })
      expect(byId.context).toBe(2)
      // B had none: a plain start there makes one, and A's two count as elsewhere.
      expect((yield* session({ home, directory: b! })).info).toMatchObject({ continued: false, directory: b, startedElsewhere: 2 })
    }))

  it.live("a directory reached through a symlink, or spelled with `..`, is the same directory", () =>
    Effect.gen(function*() {
      const { home, dirs: [a] } = place("projA")
      const link = `${a!}-link`
      Fs.symlinkSync(a!, link)
      const first = yield* session({ home, directory: link }, turn("t1", "through the link"))
      expect(first.info.directory).toBe(a)
      expect((yield* session({ home, directory: a! })).info).toMatchObject({ id: first.info.id, continued: true })
      expect((yield* session({ home, directory: `${a!}/../${Path.basename(a!)}/` })).info).toMatchObject({ id: first.info.id, continued: true })
    }))

  it.live("an id that names no conversation, or a path, is ConversationNotFound and creates nothing", () =>
    Effect.gen(function*() {
      const { home, dirs: [a], sessions } = place("projA")
      yield* session({ home, directory: a! }, turn("t0", "the one conversation"))
      for (const id of ["20990101-000000-deadbeef", "../../etc/passwd", "demo", "20260102-030405-1A2B3C4D", "20260102-030405-1a2b3c4d/x"]) {
        const exit = yield* Effect.exit(session({ home, directory: a!, conversation: { id } }))
        expect(Exit.isFailure(exit) && String(exit.cause)).toMatch(/ConversationNotFound[\s\S]*no conversation/)
      }
      expect(Conversations.files(sessions)).toHaveLength(1)
      expect(Exit.isFailure(yield* Effect.exit(Conversations.find(sessions, "20990101-000000-deadbeef")))).toBe(true)
    }))

  it.live("the demo's conversations are kept apart: a real start never sees them, and they have their own", () =>
    Effect.gen(function*() {
      const { home, dirs: [a], sessions } = place("projA")
      const demo = yield* session({ home, directory: a!, demo: true }, turn("t1", "demo question"))
      expect(demo.info.path).toBe(Path.join(home, ".mino", "demo", `${demo.info.id}.jsonl`))
      const real = yield* session({ home, directory: a! }, turn("t2", "real question"))
      expect(real.info).toMatchObject({ continued: false, startedElsewhere: 0 })
      expect(Exit.isFailure(yield* Effect.exit(session({ home, directory: a!, conversation: { id: demo.info.id } })))).toBe(true)
      expect(Conversations.files(sessions).map((file) => file.id)).toEqual([real.info.id])
      // The demo continues its own, and --new and --continue work for it too.
      expect((yield* session({ home, directory: a!, demo: true })).info).toMatchObject({ id: demo.info.id, continued: true, turns: 1 })
      const fresh = yield* session({ home, directory: a!, demo: true, conversation: "new" })
      expect(fresh.info.id).not.toBe(demo.info.id)
      expect((yield* session({ home, directory: a!, demo: true, conversation: { id: demo.info.id } })).info).toMatchObject({ turns: 1 })
    }))
})

describe("one lock a conversation", () => {
  it.live("two directories run at once; a second start in the same directory is busy and names it; --new beside it opens", () =>
    Effect.gen(function*() {
      const { home, dirs: [a, b] } = place("projA", "projB")
      const held = yield* withStore({ home, directory: a! }, Effect.gen(function*() {
        const inA = yield* SessionStore
        // A question made its file: a second start finds it, started in A.
        for (const record of turn("t1", "in A")) yield* inA.append(record)
        const inB = yield* Effect.exit(session({ home, directory: b! }))
        const second = yield* Effect.exit(session({ home, directory: a! }))
        const byId = yield* Effect.exit(session({ home, directory: b!, conversation: { id: inA.info.id } }))
        const beside = yield* Effect.exit(session({ home, directory: a!, conversation: "new" }))
        return { inA: inA.info, inB, second, byId, beside }
      }))
      expect(Exit.isSuccess(held.inB)).toBe(true)
      expect(busy(held.second)).toContain(`the session is busy: another mino process is using the conversation started in ${a!} (${held.inA.id}); \`mino --new\` starts another beside it`)
      expect(busy(held.byId)).toContain(`another mino process is using the conversation started in ${a!} (${held.inA.id})`)
      expect(busy(held.byId)).not.toContain("--new")
      expect(Exit.isSuccess(held.beside)).toBe(true)
      // Released with the scope: it opens again by id. The one --new began asked nothing, so left no file:
      // a plain start in A takes the newest there is, A's.
      expect((yield* session({ home, directory: a!, conversation: { id: held.inA.id } })).info).toMatchObject({ continued: true, turns: 1 })
      expect((yield* session({ home, directory: a! })).info.id).toBe(held.inA.id)
    }))

  it.live("before any question: no file, yet a second plain start in the directory is busy; another directory and --new are not", () =>
    Effect.gen(function*() {
      const { home, dirs: [a, b], sessions } = place("projA", "projB")
      const held = yield* withStore({ home, directory: a! }, Effect.gen(function*() {
        const inA = yield* SessionStore
        const filesBefore = Conversations.files(sessions).length
        const second = yield* Effect.exit(session({ home, directory: a! }))
        const inB = yield* Effect.exit(session({ home, directory: b! }))
        const beside = yield* Effect.exit(session({ home, directory: a!, conversation: "new" }))
        // The first question creates the file, header first; then a second start is busy on it by name.
        for (const record of turn("t1", "first question")) yield* inA.append(record)
        const afterQuestion = yield* Effect.exit(session({ home, directory: a! }))
        return { inA: inA.info, filesBefore, second, inB, beside, afterQuestion }
      }))
      expect(held.filesBefore).toBe(0)
      expect(busy(held.second)).toContain(`another mino process has begun the conversation of ${a!} (nothing asked yet); \`mino --new\` starts another beside it`)
      expect(Exit.isSuccess(held.inB) && Exit.isSuccess(held.beside)).toBe(true)
      expect(busy(held.afterQuestion)).toContain(`another mino process is using the conversation started in ${a!} (${held.inA.id})`)
      expect(Conversations.files(sessions).map((file) => file.id)).toEqual([held.inA.id])
      expect(Fs.readFileSync(held.inA.path, "utf8").split("\n")[0]).toBe(header(a!, held.inA.startedAt))
      // Released: a plain start continues it; a start that asks nothing leaves nothing behind.
      expect((yield* session({ home, directory: a! })).info).toMatchObject({ id: held.inA.id, continued: true, turns: 1 })
      yield* session({ home, directory: b!, conversation: "new" })
      expect(Conversations.files(sessions)).toHaveLength(1)
      expect(Fs.readdirSync(sessions).filter((name) => name.endsWith(".jsonl"))).toHaveLength(1)
    }))
})

describe("new conversations begun at once", () => {
  it.live("two --new starts that draw the same id (the newest is from their second): the second takes the next, and both keep their questions", () =>
    Effect.gen(function*() {
      const { home, dirs: [a], sessions } = place("projA")
      // A newest conversation later than the clock: every new id is the one right after it.
      plant(sessions, "20991231-235959-00000001", [header(a!)])
      const ids = yield* withStore({ home, directory: a!, conversation: "new" }, Effect.gen(function*() {
        const first = yield* SessionStore
        const second = yield* withStore({ home, directory: a!, conversation: "new" }, Effect.gen(function*() {
          const store = yield* SessionStore
          for (const record of turn("t2", "second")) yield* store.append(record)
          return store.info.id
        }))
        for (const record of turn("t1", "first")) yield* first.append(record)
        return [first.info.id, second]
      }))
      expect(ids).toEqual(["20991231-235959-00000002", "20991231-235959-00000003"])
      expect(Conversations.summaries(sessions).map((summary) => [summary.id, summary.lastQuestion])).toEqual([
        ["20991231-235959-00000003", "second"],
        ["20991231-235959-00000002", "first"],
        ["20991231-235959-00000001", undefined]
      ])
    }))
})

describe("files that are not what they claim", () => {
  it.live("a conversation without a header is listed and opens by id, but is never continued on its own", () =>
    Effect.gen(function*() {
      const { home, dirs: [a], sessions } = place("projA")
      const id = "20260101-000000-0000aaaa"
      plant(sessions, id, lines(turn("t1", "from before headers")))
      const plain = yield* session({ home, directory: a! })
      expect(plain.info).toMatchObject({ continued: false, startedElsewhere: 1 })
      expect(plain.info.id).not.toBe(id)
      const byId = yield* session({ home, directory: a!, conversation: { id } })
      expect(byId.info).toMatchObject({ id, continued: true, turns: 1, directory: undefined })
      // Continuing it adds no header: it still says nothing about where it started.
      expect(Conversations.origin(Conversations.pathOf(sessions, id))).toEqual({ _tag: "NotRecorded" })
      expect(Conversations.summaries(sessions).find((s) => s.id === id)).toMatchObject({ origin: { _tag: "NotRecorded" }, turns: 1, lastQuestion: "from before headers" })
    }))

  it.live("symlinks, FIFOs, huge first lines and headers naming another directory are never continued here; nothing blocks", () =>
    Effect.gen(function*() {
      const { home, dirs: [a, b], sessions } = place("projA", "projB")
      // Newest first, each would be "the newest started in A" if believed.
      const outside = Path.join(b!, "elsewhere.jsonl")
      Fs.writeFileSync(outside, header(a!) + "\n" + lines(turn("t1", "through a symlink")).join("\n") + "\n")
      Fs.mkdirSync(sessions, { recursive: true, mode: 0o700 })
      Fs.symlinkSync(outside, Conversations.pathOf(sessions, "20260105-000000-0000000e"))
      execFileSync("mkfifo", [Conversations.pathOf(sessions, "20260104-000000-0000000d")])
      plant(sessions, "20260103-000000-0000000c", [JSON.stringify({ type: "conversation", turn_id: "", cwd: a, pad: "x".repeat(70_000) })])
      plant(sessions, "20260102-000000-0000000b", [header(b!), ...lines(turn("t1", "in B"))])
      plant(sessions, "20260101-000000-0000000a", [JSON.stringify({ type: "conversation", turn_id: "", cwd: "projA" })])
      const started = yield* session({ home, directory: a! }, turn("t9", "here")).pipe(Effect.timeout("10 seconds"))
      expect(started.info).toMatchObject({ continued: false, directory: a, startedElsewhere: 5 })
      expect(Fs.readFileSync(outside, "utf8")).toContain("through a symlink")

      const listed = Object.fromEntries(Conversations.summaries(sessions).map((s) => [s.id, s.origin]))
      expect(listed["20260105-000000-0000000e"]).toEqual({ _tag: "Unreadable", reason: "a symbolic link, not a regular file" })
      expect(listed["20260104-000000-0000000d"]).toEqual({ _tag: "Unreadable", reason: "a FIFO, not a regular file" })
      expect(listed["20260103-000000-0000000c"]).toEqual({ _tag: "NotRecorded" })
      expect(listed["20260102-000000-0000000b"]).toMatchObject({ _tag: "Started", cwd: b })
      expect(listed["20260101-000000-0000000a"]).toEqual({ _tag: "NotRecorded" })
      expect(listed[started.info.id]).toMatchObject({ _tag: "Started", cwd: a })
      // Names that are no conversation id are not conversations at all.
      for (const name of ["x.jsonl", "20260101-000000-0000000a.jsonl.set-aside-1", ".20260101-000000-0000000f.jsonl", "20260101-000000-0000000G.jsonl"]) {
        Fs.writeFileSync(Path.join(sessions, name), header(a!) + "\n")
      }
      expect(Conversations.files(sessions)).toHaveLength(6)
      expect((yield* session({ home, directory: a! })).info.id).toBe(started.info.id)
    }))

  it.live("a header is written with the key redacted, like every record", () =>
    Effect.gen(function*() {
      const key = "sk-test-0123456789abcdefghij"
      const { home, dirs: [dir] } = place(`project-${key}`)
      const info = yield* Effect.scoped(Effect.provide(
        Effect.flatMap(SessionStore, (store) => Effect.as(store.append(turn("t1", "a question")[0]!), store.info)),
        SessionStore.layer({ home, directory: dir! }).pipe(Layer.provide(Secrets.layer(key)))
      ))
      expect(Fs.readFileSync(info.path, "utf8")).not.toContain(key)
      expect(Fs.readFileSync(info.path, "utf8")).toContain("[redacted]")
    }))
})

describe("the session file and its locks are scoped resources", () => {
  const openDescriptors = () => Fs.readdirSync(`${PROC}/self/fd`).length

  it.live("no descriptor is left open: after a chat, after a set-aside that replaced the file, after an open that failed", () =>
    Effect.gen(function*() {
      const { home, dirs: [a], sessions } = place("projA")
      const before = openDescriptors()
      const ROUNDS = 10
      for (let round = 0; round < ROUNDS; round++) {
        const { info } = yield* session({ home, directory: a! }, turn(`t${round}`, "again"))
        // A crash left a turn open and the file ends in garbage: recovery sets it aside and closes the turn...
        Fs.appendFileSync(info.path, JSON.stringify({ type: "user_input", turn_id: `open${round}`, text: "left open" }) + "\n{garbage\n")
        // ...but closing it fails on a full disk: the open fails after the file was opened.
        const failed = yield* Effect.exit(Effect.scoped(Effect.provide(
          SessionStore,
          SessionStore.layerOnDisk({ home, directory: a! }).pipe(Layer.provide(FaultyDisk.layer({ write: { code: "ENOSPC", after: 0 } })), Layer.provide(Secrets.layerNone))
        )))
        expect(Exit.isFailure(failed)).toBe(true)
        // Only garbage under a fixed name: the file is moved aside whole and opened anew.
        Fs.writeFileSync(Path.join(sessions, "fixed.jsonl"), "garbage\n")
        expect((yield* withStore({ home, sessionId: "fixed" }, Effect.map(SessionStore, (store) => store.notices)))[0]).toMatch(/could not be read/)
      }
      console.log(`scoped descriptors: ${ROUNDS} rounds of a chat, a failed open and a replaced file`)
      expect(openDescriptors()).toBe(before)
    }))
})

describe("summaries: turns and last question by a byte search", () => {
  const text = fc.string({ unit: fc.constantFrom("a", " ", "\n", "\"", "\\", "{", "}", ":", "\u001b", "界", "😀", "type", "user_input", "\n{\"type\":\"user_input\""), maxLength: 12 })
  const RUNS = 300

  it.prop(`agree with the records for generated conversations (${RUNS} runs)`, [fc.array(fc.tuple(text, text, fc.boolean()), { maxLength: 8 }), fc.boolean()], ([turns, withHeader]) => {
    const dir = tempDir("summaries")
    const records = turns.flatMap(([question, answer, ended], index): ReadonlyArray<SessionRecord> => [
      { type: "user_input", turn_id: `t${index}`, text: question, time: "2026-01-02T03:04:05.000Z" },
      { type: "model_response", turn_id: `t${index}`, output: [{ type: "message", role: "assistant", content: [{ type: "output_text", text: answer }], note: { type: "user_input" } }] },
      ...(ended ? [{ type: "turn_end", turn_id: `t${index}`, status: "completed" } as const] : [])
    ])
    const encoded = records.map((record) => Effect.runSync(encode(record, (s) => s)).trimEnd())
    plant(dir, "20260102-030405-1a2b3c4d", [...(withHeader ? [header("/p")] : []), ...encoded])
    const [summary] = Conversations.summaries(dir)
    expect(summary?.turns).toBe(turns.length)
    expect(summary?.lastQuestion).toBe(turns.at(-1)?.[0])
    expect(summary?.origin._tag).toBe(withHeader ? "Started" : "NotRecorded")
  }, { fastCheck: { numRuns: RUNS } })

  it("a question that straddles a read of the scan is counted once, at every offset around it", () => {
    const dir = tempDir("straddle")
    const question = JSON.stringify({ type: "user_input", turn_id: "t2", text: "the straddling one" })
    let sweep = 0
    for (let offset = -30; offset <= 30; offset++) {
      // The padding record's line ends so that the question's line begins `offset` bytes from 1 MiB.
      const first = JSON.stringify({ type: "user_input", turn_id: "t1", text: "first" })
      const bare = JSON.stringify({ type: "turn_end", turn_id: "t1", status: "completed", pad: "" })
      const pad = (1 << 20) + offset - (first.length + 1) - (bare.length + 1)
      const padding = JSON.stringify({ type: "turn_end", turn_id: "t1", status: "completed", pad: "x".repeat(pad) })
      plant(dir, "20260102-030405-1a2b3c4d", [first, padding, question])
      const [summary] = Conversations.summaries(dir)
      expect(Fs.readFileSync(Conversations.pathOf(dir, "20260102-030405-1a2b3c4d")).indexOf(question)).toBe((1 << 20) + offset)
      expect(summary).toMatchObject({ turns: 2, lastQuestion: "the straddling one" })
      sweep++
    }
    console.log(`straddle sweep: ${sweep} offsets`)
    expect(sweep).toBe(61)
  })
})

describe("cost with 1,000 conversations", () => {
  it("a start in a new directory reads every first line; listing reads every file once; times printed beside floors", () => {
    const dir = tempDir("thousand")
    const COUNT = 1000
    for (let i = 0; i < COUNT; i++) {
      const records = Array.from({ length: 20 }, (_, t) => turn(`t${t}`, `question ${t} of conversation ${i}`)).flat()
      plant(dir, `20260101-${String(100000 + i).slice(1)}0-${(0x10000000 + i).toString(16)}`, [header(`/projects/p${i % 50}`), ...lines(records)])
    }
    const paths = Conversations.files(dir).map((file) => file.path)
    /** The best of 5 runs, in ms: the machine is shared, the least disturbed run says most. */
    const best = (run: () => unknown): number => {
      let fastest = Number.POSITIVE_INFINITY
      for (let k = 0; k < 5; k++) {
        const start = performance.now()
        run()
        fastest = Math.min(fastest, performance.now() - start)
      }
      return fastest
    }
    const openClose = best(() => paths.forEach((path) => Fs.closeSync(Fs.openSync(path, "r"))))
    const readAll = best(() => paths.forEach((path) => Fs.readFileSync(path)))
    const choosing = best(() => expect(Conversations.newestStartedIn(dir, "/nowhere")).toBeUndefined())
    let listed: ReadonlyArray<Conversations.Summary> = []
    const listing = best(() => (listed = Conversations.summaries(dir)))
    expect(listed).toHaveLength(COUNT)
    expect(listed.every((summary) => summary.turns === 20 && summary.origin._tag === "Started")).toBe(true)
    expect(listed[0]?.lastQuestion).toBe(`question 19 of conversation ${COUNT - 1}`)
    const ratio = (a: number, b: number) => (a / b).toFixed(1)
    console.log(
      `${COUNT} conversations of ${Fs.statSync(paths[0]!).size} bytes: every header ${choosing.toFixed(1)} ms ` +
        `(opening and closing each file ${openClose.toFixed(1)} ms, ${ratio(choosing, openClose)}x); ` +
        `listing ${listing.toFixed(1)} ms (reading each file whole ${readAll.toFixed(1)} ms, ${ratio(listing, readAll)}x)`
    )
  }, 120_000)
})

describe("a new conversation's id", () => {
  it("sorts after the newest, whatever its random part and whatever the clock says (2,000 generated)", () => {
    const stamp = (date: Date) => Conversations.newId(date).slice(0, 15)
    fc.assert(
      fc.property(
        fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2030, 0, 1) }),
        // The newest id's random part: anywhere, its top included; the clock now: that second, later, or gone back.
        fc.oneof(fc.constant(0xffffffff), fc.constant(0xfffffffe), fc.integer({ min: 0, max: 0xffffffff })),
        fc.integer({ min: -5_000, max: 1_500 }),
        (at, random, offset) => {
          const newest = `${stamp(new Date(at))}-${random.toString(16).padStart(8, "0")}`
          const id = Conversations.freshId([{ id: Conversations.newId(new Date(at - 86_400_000)) }, { id: newest }], new Date(at + offset))
          expect(Conversations.isId(id)).toBe(true)
          expect(id > newest).toBe(true)
        }
      ),
      { numRuns: 2_000 }
    )
  })
})
