/**
 * Attacks on the session file's promises from a hostile home directory: what
 * `mino log` and `mino sessions` do when `~/.mino` or its `sessions` is a
 * symlink, a regular file or a FIFO (they read through a symlinked directory and
 * crashed with a stack trace on the others, until fixed); a header an editor
 * gave a byte order mark (it lost its directory, until fixed); a file cut at
 * every byte of the last records of a tool turn, as a SIGKILL mid-write leaves
 * it; and generated files whose records reuse turn and call ids, start calls
 * that never end, end turns never begun, carry times that are no strings, BOMs,
 * unreadable lines and lines of other types. Whatever the file holds, the start
 * fails in one line or opens; it closes every turn left open with one write,
 * gives a started call `unknown`, never `not_executed`, keeps every readable
 * line byte for byte and every unreadable one in the set-aside file, and a second
 * start finds nothing left to do.
 */
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as fc from "fast-check"
import { Secrets } from "../../src/security/Secrets.js"
import * as Conversations from "../../src/session/directory/Conversations.js"
import * as Records from "../../src/session/records/Records.js"
import type { SessionRecord } from "../../src/session/records/Records.js"
import { SessionStore } from "../../src/session/SessionStore.js"
import { tempDir } from "../support/Harness.js"
import { environment, runPlain, sandbox } from "../support/MinoProcess.js"
import { answer, call } from "../support/SavedItems.js"

const sessions = (home: string) => Path.join(home, ".mino", "sessions")

/** A record's line exactly as Mino writes it. */
const line = (record: SessionRecord): string => Either.getOrThrow(Records.encode(record, (text) => text))


/** Opens the store over the real disk on session `name` of `home`, and gives what it said and holds. */
const openNamed = (home: string, name: string) =>
  Effect.scoped(
    Effect.provide(
      Effect.gen(function*() {
        const store = yield* SessionStore
        return { notices: store.notices, records: yield* store.records }
      }),
      SessionStore.layer({ home, sessionId: name }).pipe(Layer.provide(Secrets.layerNone))
    )
  )

const asideFiles = (home: string, name: string) =>
  Fs.readdirSync(sessions(home)).filter((file) => file.startsWith(`${name}.jsonl.set-aside-`)).sort()

// ---------------------------------------------------------------------------

describe("attack: `mino log` and `mino sessions` on a directory of conversations that is not what it claims", () => {
  const ID = "20261203-000000-0000abcd"

  /** Each hostile shape of `~/.mino` or `~/.mino/sessions`, made in `home`; `elsewhere` holds a conversation to be kept unread. */
  const shapes: ReadonlyArray<readonly [string, string, (home: string, elsewhere: string) => void]> = [
    ["sessions is a symlink to a directory of conversations", "sessions is a symbolic link", (home, elsewhere) => {
      Fs.mkdirSync(Path.join(home, ".mino"), { mode: 0o700 })
      Fs.symlinkSync(elsewhere, sessions(home))
    }],
    ["~/.mino is a symlink to a directory whose sessions holds conversations", ".mino is a symbolic link", (home, elsewhere) => {
      const mino = Path.join(Path.dirname(elsewhere), "other-mino")
      Fs.mkdirSync(mino, { mode: 0o700 })
      Fs.symlinkSync(elsewhere, Path.join(mino, "sessions"))
      Fs.symlinkSync(mino, Path.join(home, ".mino"))
    }],
    ["sessions is a regular file", "sessions is a regular file", (home) => {
      Fs.mkdirSync(Path.join(home, ".mino"), { mode: 0o700 })
      Fs.writeFileSync(sessions(home), "not a directory\n")
    }],
    ["sessions is a FIFO", "sessions is a FIFO", (home) => {
      Fs.mkdirSync(Path.join(home, ".mino"), { mode: 0o700 })
      execFileSync("mkfifo", [sessions(home)])
    }]
  ]

  for (const [name, says, make] of shapes) {
    it.scopedLive(`${name}: each command is refused in one line, exit 1, no stack trace, and nothing of the target is shown`, () =>
      Effect.gen(function*() {
        const box = yield* sandbox
        const elsewhere = Path.join(Path.dirname(box.home), "elsewhere")
        Fs.mkdirSync(elsewhere, { mode: 0o700 })
        Fs.writeFileSync(
          Path.join(elsewhere, `${ID}.jsonl`),
          Conversations.headerLine(box.cwd, "2026-12-03T00:00:00.000Z") + line({ type: "user_input", turn_id: "t1", text: "secret-from-elsewhere" }),
          { mode: 0o600 }
        )
        make(box.home, elsewhere)
        const env = environment(box, "http://127.0.0.1:9/v1")
        for (const args of [["sessions"], ["log"], ["log", ID], ["log", "--json", ID], ["log", "--unknown", ID]]) {
          const run = yield* runPlain(args, env, box.cwd)
          const shown = `${args.join(" ")}: ${JSON.stringify(run)}`
          expect(run.code, shown).toBe(1)
          expect(run.stdout, shown).toBe("")
          expect(run.stderr.split("\n"), shown).toEqual([expect.stringMatching(/^mino: .*not a real directory; Mino does not follow it$/), ""])
          expect(run.stderr, shown).toContain(says)
          expect(run.stderr, shown).not.toContain("secret-from-elsewhere")
          expect(run.stderr, shown).not.toMatch(/\n\s+at /)
        }
      }))
  }
})

describe("attack: a header an editor gave a byte order mark", () => {
  it.live("still names its directory: listed there, continued there, and `mino sessions` says so", () =>
    Effect.gen(function*() {
      const home = tempDir("session-attack")
      const cwd = Fs.realpathSync(tempDir("session-attack-cwd"))
      Fs.mkdirSync(sessions(home), { recursive: true, mode: 0o700 })
      const id = "20261203-000000-0000abcd"
      const file = Path.join(sessions(home), `${id}.jsonl`)
      const turn = [
        line({ type: "user_input", turn_id: "t1", text: "q" }),
        line({ type: "model_response", turn_id: "t1", output: [answer("a")] }),
        line({ type: "turn_end", turn_id: "t1", status: "completed" })
      ].join("")
      Fs.writeFileSync(file, "\uFEFF" + Conversations.headerLine(cwd, "2026-12-03T00:00:00.000Z") + turn, { mode: 0o600 })
      expect(Conversations.origin(file)).toEqual({ _tag: "Started", cwd, time: "2026-12-03T00:00:00.000Z" })
      expect(Conversations.newestStartedIn(sessions(home), cwd)?.id).toBe(id)
      expect(Conversations.summaries(sessions(home))[0]?.origin).toEqual({ _tag: "Started", cwd, time: "2026-12-03T00:00:00.000Z" })
      const opened = yield* Effect.scoped(Effect.provide(
        Effect.map(SessionStore, (store) => ({ info: store.info, notices: store.notices })),
        SessionStore.layer({ home, directory: cwd }).pipe(Layer.provide(Secrets.layerNone))
      ))
      expect(opened.info.id).toBe(id)
      expect(opened.info.continued).toBe(true)
      expect(opened.info.turns).toBe(1)
      expect(opened.notices).toEqual([])
    }))
})

// ---------------------------------------------------------------------------

describe("attack: SIGKILL mid-write, the file cut at every byte of a tool turn's records", () => {
  const done: ReadonlyArray<SessionRecord> = [
    { type: "user_input", turn_id: "t1", text: "hello" },
    { type: "model_response", turn_id: "t1", output: [answer("hi")] },
    { type: "turn_end", turn_id: "t1", status: "completed" }
  ]
  const toolTurn: ReadonlyArray<SessionRecord> = [
    { type: "user_input", turn_id: "t2", text: "deploy it" },
    { type: "model_response", turn_id: "t2", output: [call("c1", "make deploy")] },
    { type: "tool_start", turn_id: "t2", call_id: "c1", name: "bash" },
    { type: "tool_result", turn_id: "t2", call_id: "c1", name: "bash", result: { status: "completed", output: "ok\n", exit_code: 0 } },
    { type: "model_response", turn_id: "t2", output: [call("c2", "rm -rf /tmp/x")] },
    { type: "tool_start", turn_id: "t2", call_id: "c2", name: "bash" },
    { type: "tool_result", turn_id: "t2", call_id: "c2", name: "bash", result: { status: "completed", output: "", exit_code: 0 } },
    { type: "model_response", turn_id: "t2", output: [answer("done")] },
    { type: "turn_end", turn_id: "t2", status: "completed" }
  ]
  const committed = Buffer.from(done.map(line).join(""))
  const lines = toolTurn.map((record) => Buffer.from(line(record)))
  const full = Buffer.concat([committed, ...lines])

  // Every byte from the second call's request to the end (asked, started, finished, answered, ended), and around every
  // line boundary before it (each cut costs two opens with their fsyncs).
  const from = committed.length + lines.slice(0, 4).reduce((sum, bytes) => sum + bytes.length, 0)
  const boundaries = lines.slice(0, 4).map((_, i) => committed.length + lines.slice(0, i).reduce((sum, bytes) => sum + bytes.length, 0))
  const cuts = [...new Set([...boundaries.flatMap((at) => [at - 1, at, at + 1, at + 2]), ...Array.from({ length: full.length - from + 1 }, (_, i) => from + i)])]
    .filter((cut) => cut >= committed.length && cut <= full.length)
    .sort((a, b) => a - b)

  it.live(`every cut of the last four records, and around each line before (${cuts.length} files): opens, loses no committed byte, closes the turn once, re-runs nothing`, () =>
    Effect.gen(function*() {
      console.log(`SIGKILL cut sweep: ${cuts.length} files, each opened twice`)
      const home = tempDir("session-attack")
      Fs.mkdirSync(sessions(home), { recursive: true, mode: 0o700 })
      for (const cut of cuts) {
        const name = `cut${cut}`
        const path = Path.join(sessions(home), `${name}.jsonl`)
        const bytes = full.subarray(0, cut)
        Fs.writeFileSync(path, bytes, { mode: 0o600 })
        // The whole lines the cut left, and the bytes of a last line it cut short.
        const whole = bytes.lastIndexOf(0x0a) + 1
        const torn = bytes.subarray(whole)
        const first = yield* openNamed(home, name)
        const after = Fs.readFileSync(path)
        const where = `cut at byte ${cut}: ${JSON.stringify(first.notices)}\n${after.toString()}`
        for (const notice of first.notices) expect(notice, where).not.toContain("\n")
        // Every committed byte kept as it was, the torn bytes set aside exactly.
        expect(after.subarray(0, whole).equals(bytes.subarray(0, whole)), where).toBe(true)
        const aside = asideFiles(home, name)
        if (torn.length === 0) expect(aside, where).toEqual([])
        else {
          expect(aside.length, where).toBe(1)
          expect(Fs.readFileSync(Path.join(sessions(home), aside[0]!)).equals(torn), where).toBe(true)
          expect(first.notices[0], where).toContain("cut short by a crash")
        }
        // What recovery appended: a result for each call left open, then one `turn_end` interrupted; nothing when the turn had ended.
        const appended = after.subarray(whole).toString().split("\n").filter((text) => text.length > 0).map((text) => JSON.parse(text) as SessionRecord)
        const kept = bytes.subarray(0, whole).toString()
        const ended = kept.includes("\"type\":\"turn_end\",\"turn_id\":\"t2\"")
        if (ended || !kept.includes("\"turn_id\":\"t2\"")) expect(appended, where).toEqual([])
        else {
          expect(appended.at(-1), where).toMatchObject({ type: "turn_end", turn_id: "t2", status: "interrupted" })
          expect(appended.slice(0, -1).every((record) => record.type === "tool_result"), where).toBe(true)
          for (const callId of ["c1", "c2"]) {
            const closing = appended.filter((record) => record.type === "tool_result" && record.call_id === callId)
            const started = kept.includes(`"type":"tool_start","turn_id":"t2","call_id":"${callId}"`)
            const finished = kept.includes(`"type":"tool_result","turn_id":"t2","call_id":"${callId}"`)
            const asked = kept.includes(`"call_id":"${callId}","name":"bash"`)
            if (finished || !asked && !started) expect(closing, where).toEqual([])
            else {
              expect(closing.length, where).toBe(1)
              const status = closing[0]!.type === "tool_result" ? closing[0]!.result.status : undefined
              // A start on disk, or a cut line that may have been one: it may have run, so never `not_executed`.
              if (started || torn.length > 0) expect(status, where).toBe("unknown")
              else expect(status, where).toBe("not_executed")
            }
          }
          expect(first.notices.some((notice) => notice.startsWith("An interrupted")), where).toBe(true)
        }
        // A second start has nothing left to do.
        const second = yield* openNamed(home, name)
        expect(second.notices, where).toEqual([])
        expect(Fs.readFileSync(path).equals(after), where).toBe(true)
        Fs.rmSync(path)
        for (const file of asideFiles(home, name)) Fs.rmSync(Path.join(sessions(home), file))
      }
    }), 120_000)
})

// ---------------------------------------------------------------------------

const RUNS = Number(process.env["MINO_ATTACK_RUNS"] ?? 150)

/** Few ids, so turns and calls collide: with each other, with the prototype's names, with the empty string. */
const turnId = fc.constantFrom("a", "b", "__proto__", "")
const callId = fc.constantFrom("c", "d", "constructor")
const time = fc.oneof(
  fc.constant(undefined),
  fc.constantFrom("2026-12-03T00:00:00.000Z", "+275760-09-13T00:00:00.000Z", "not a time", "\u001b[2J", "x".repeat(70_000))
)
const withTime = <A extends object>(record: A, at: string | undefined): A => (at === undefined ? record : { ...record, time: at })

/** One line of a hostile file: a record (ids colliding), or a line Mino cannot use. */
const entry: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.tuple(turnId, fc.string({ maxLength: 8 }), time).map(([t, text, at]) => line(withTime({ type: "user_input", turn_id: t, text }, at))) },
  {
    weight: 4,
    arbitrary: fc.tuple(turnId, fc.array(fc.oneof(callId.map((c) => call(c, `echo ${c}`)), fc.constant(answer("ok"))), { maxLength: 3 }), time)
      .map(([t, output, at]) => line(withTime({ type: "model_response", turn_id: t, output }, at)))
  },
  { weight: 4, arbitrary: fc.tuple(turnId, callId, time).map(([t, c, at]) => line(withTime({ type: "tool_start", turn_id: t, call_id: c, name: "bash" }, at))) },
  {
    weight: 3,
    arbitrary: fc.tuple(turnId, callId, fc.constantFrom("completed", "failed", "denied", "unknown", "not_executed" as const))
      .map(([t, c, status]) => line({ type: "tool_result", turn_id: t, call_id: c, name: "bash", result: { status, output: "" } }))
  },
  { weight: 3, arbitrary: fc.tuple(turnId, fc.constantFrom("completed", "failed", "cancelled", "interrupted" as const)).map(([t, status]) => line({ type: "turn_end", turn_id: t, status })) },
  {
    weight: 2,
    arbitrary: fc.tuple(turnId, fc.constantFrom<ReadonlyArray<unknown>>([42], [{ a: 1 }], [null], [true])).map(([t, [at]]) =>
      // A known record whose time is no string: unreadable, yet it names its turn.
      JSON.stringify({ type: "tool_start", turn_id: t, call_id: "c", time: at }) + "\n"
    )
  },
  { weight: 1, arbitrary: fc.constantFrom("garbage\n", "\u0000\u0000\n", "{\"type\":\"note\",\"turn_id\":\"a\"}\n", "[1,2]\n", "{\"type\":42}\n", "\uFEFF" + "{\"type\":\"turn_end\",\"turn_id\":\"b\",\"status\":\"completed\"}\n") },
  {
    weight: 1,
    // A key twice: the record is what the last says.
    arbitrary: turnId.map((t) => `{"type":"tool_start","turn_id":"zz","call_id":"c","turn_id":${JSON.stringify(t)},"name":"bash"}\n`)
  }
)

interface Parsed {
  readonly type: string
  readonly turn_id: string
  readonly call_id?: string
}

/** The lines of `text` a start can read (as `SessionReader` classes them), each parsed; undefined for one it cannot. */
const readable = (text: string): Parsed | undefined => {
  try {
    const json = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text) as unknown
    if (typeof json !== "object" || json === null || Array.isArray(json) || typeof (json as { type?: unknown }).type !== "string") return undefined
    const value = json as { readonly type: string }
    if (!Records.KNOWN_TYPES.has(value.type)) return { type: value.type, turn_id: "" }
    return Records.isRecord(value) ? (value as unknown as Parsed) : undefined
  } catch {
    return undefined
  }
}

describe(`attack: generated files whose turns and calls collide (${RUNS} files)`, () => {
  it.live("each opens; every turn left open is closed once, a started call `unknown`; every line kept or set aside; a second start does nothing", () =>
    Effect.gen(function*() {
      console.log(`collision sweep: ${RUNS} generated files, each opened twice`)
      const home = tempDir("session-attack")
      Fs.mkdirSync(sessions(home), { recursive: true, mode: 0o700 })
      const samples = fc.sample(fc.array(entry, { minLength: 1, maxLength: 14 }), { numRuns: RUNS, seed: 20261205 })
      let index = 0
      for (const entries of samples) {
        const name = `gen${index++}`
        const path = Path.join(sessions(home), `${name}.jsonl`)
        const original = entries.join("")
        Fs.writeFileSync(path, original, { mode: 0o600 })
        const where = `file ${name}:\n${original.slice(0, 4000)}`
        const exit = yield* Effect.exit(openNamed(home, name))
        expect(Exit.isSuccess(exit), `${where}\n${String(exit)}`).toBe(true)
        if (!Exit.isSuccess(exit)) continue
        const first = exit.value
        for (const notice of first.notices) expect(notice, where).not.toContain("\n")
        const after = Fs.readFileSync(path, "utf8")
        const aside = asideFiles(home, name)

        // Lines: the readable ones stay, in order, byte for byte; the unreadable ones are in the set-aside file, in order.
        const good = entries.filter((text) => readable(text.slice(0, -1)) !== undefined)
        const bad = entries.filter((text) => readable(text.slice(0, -1)) === undefined)
        const setAside = aside.map((file) => Fs.readFileSync(Path.join(sessions(home), file), "utf8")).join("")
        if (good.length === 0) {
          // Nothing readable: the whole file went aside, and the conversation starts empty.
          expect(setAside, where).toBe(original)
          expect(Fs.existsSync(path) ? Fs.readFileSync(path, "utf8") : "", where).toBe("")
          continue
        }
        expect(setAside, where).toBe(bad.join(""))
        const afterLines = after.split(/(?<=\n)/)
        const keptLines = afterLines.filter((text) => !text.startsWith(`{"type":"${Records.SET_ASIDE_TYPE}"`))
        expect(keptLines.slice(0, good.length), where).toEqual(good)

        // What recovery appended: for each turn left open, a result per open call, then its `turn_end` interrupted.
        const appended = keptLines.slice(good.length).map((text) => JSON.parse(text) as SessionRecord)
        const records = good.map((text) => readable(text.slice(0, -1))!).filter((record) => Records.KNOWN_TYPES.has(record.type))
        // An oracle apart from the code: a turn id is open when a record of it comes after its last `turn_end`.
        const open = new Map<string, Array<Parsed>>()
        for (const record of records) {
          if (record.type === "turn_end") open.delete(record.turn_id)
          else open.set(record.turn_id, [...(open.get(record.turn_id) ?? []), record])
        }
        const ends = appended.filter((record) => record.type === "turn_end")
        expect(ends.map((record) => record.turn_id).sort(), where).toEqual([...open.keys()].sort())
        for (const record of ends) expect(record, where).toMatchObject({ type: "turn_end", status: "interrupted" })
        for (const record of appended) expect(open.has(record.turn_id), where).toBe(true)
        for (const [turn, held] of open) {
          const closing = appended.filter((record) => record.turn_id === turn && record.type === "tool_result")
          const ids = closing.map((record) => record.type === "tool_result" ? record.call_id : "")
          expect(new Set(ids).size, where).toBe(ids.length)
          for (const record of closing) {
            if (record.type !== "tool_result") continue
            expect(["unknown", "not_executed"], where).toContain(record.result.status)
            expect(held.some((r) => r.type === "tool_result" && r.call_id === record.call_id), where).toBe(false)
          }
          // A call started in the open turn and without a result there gets one, and it is `unknown`: it may have run.
          for (const started of held.filter((r) => r.type === "tool_start")) {
            if (held.some((r) => r.type === "tool_result" && r.call_id === started.call_id)) continue
            const result = closing.find((record) => record.type === "tool_result" && record.call_id === started.call_id)
            expect(result, where).toMatchObject({ result: { status: "unknown" } })
          }
        }
        if (open.size > 0) expect(first.notices.some((notice) => notice.startsWith("An interrupted")), where).toBe(true)

        // A second start finds nothing left to do and changes nothing.
        const second = yield* openNamed(home, name)
        expect(second.notices.filter((notice) => !notice.startsWith("A completed turn") && !/^\d+ completed turns/.test(notice)), where).toEqual([])
        expect(Fs.readFileSync(path, "utf8"), where).toBe(after)
        expect(asideFiles(home, name), where).toEqual(aside)
      }
    }), 240_000)
})

describe("attack: a directory of conversations crowded with names that are not conversations", () => {
  it("3,000 names with control characters, look-alike ids, links and FIFOs beside 20 conversations: only the conversations are listed, each named safely", () => {
    const home = tempDir("session-attack")
    const dir = sessions(home)
    Fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
    const cwd = Fs.realpathSync(tempDir("session-attack-cwd"))
    const real = Array.from({ length: 20 }, (_, i) => `20261203-0000${String(i).padStart(2, "0")}-0000abcd`)
    for (const id of real) {
      Fs.writeFileSync(Path.join(dir, `${id}.jsonl`), Conversations.headerLine(cwd, "2026-12-03T00:00:00.000Z") + line({ type: "user_input", turn_id: "t", text: `q ${id}` }), { mode: 0o600 })
    }
    // Names a start must pass over: ids that almost match, with control characters, an escape sequence, a newline after `.jsonl`.
    const junk = Array.from({ length: 3_000 }, (_, i) => {
      const id = `20261203-0000${String(i % 60).padStart(2, "0")}-${(i + 0x1000).toString(16).padStart(8, "0")}`
      return [`${id}.jsonl\n`, `${id}\u001b[2J.jsonl`, `${id}.jsonl.bak`, `x${id}.jsonl`, `${id.toUpperCase()}X.jsonl`, `${id}\r.jsonl`][i % 6]!
    })
    for (const name of junk) Fs.writeFileSync(Path.join(dir, name), Conversations.headerLine(cwd, "2026-12-03T00:00:00.000Z"))
    Fs.symlinkSync(Path.join(dir, `${real[0]}.jsonl`), Path.join(dir, "20261203-235959-ffffffff.jsonl"))
    execFileSync("mkfifo", [Path.join(dir, "20261203-235958-ffffffff.jsonl")])
    console.log(`crowded directory: ${junk.length + real.length + 2} entries`)
    expect(Conversations.ids(dir)).toEqual([...real, "20261203-235958-ffffffff", "20261203-235959-ffffffff"])
    // The newest started here is the newest real file: the link and the FIFO after it are passed over, never opened as one.
    expect(Conversations.newestStartedIn(dir, cwd)?.id).toBe(real.at(-1))
    const summaries = Conversations.summaries(dir)
    expect(summaries.map((summary) => summary.id)).toEqual(["20261203-235959-ffffffff", "20261203-235958-ffffffff", ...[...real].reverse()])
    expect(summaries.slice(0, 2).map((summary) => summary.origin._tag)).toEqual(["Unreadable", "Unreadable"])
    expect(summaries.slice(2).every((summary) => summary.turns === 1 && summary.lastQuestion === `q ${summary.id}`)).toBe(true)
  })
})

describe("attack: a file that holds the key now in use (saved while another key was in use, or typed into a question)", () => {
  const KEY = "sk-proj-Zq7vW2nE9xKp4LmR8tYb3HcJ"
  /** The key spelled in the file's JSON: as it is, each character \u-escaped, or only some. */
  const spellings: ReadonlyArray<readonly [string, (key: string) => string]> = [
    ["as it is", (key) => key],
    ["every character \\u-escaped", (key) => [...key].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join("")],
    ["its first and last characters \\u-escaped", (key) => `\\u${key.charCodeAt(0).toString(16).padStart(4, "0")}${key.slice(1, -1)}\\u${key.charCodeAt(key.length - 1).toString(16).padStart(4, "0")}`]
  ]
  /** Where the key sits: each place a record of a tool turn left open can hold it. */
  const PLACES = ["question", "answer", "result", "turn id", "call id", "call name", "reason"] as const
  type Place = typeof PLACES[number]

  /** A completed tool turn, then a turn left open after its call started, the key at `place` (in both turns' ids); each line as Mino writes it. */
  const file = (place: Place): string => {
    const at = (here: Place, text: string) => (place === here ? `${text} ${KEY} ${text}` : text)
    const done = at("turn id", "t1")
    const open = at("turn id", "t2")
    const callId = at("call id", "c1")
    const openCall = at("call id", "c2")
    const records: ReadonlyArray<SessionRecord> = [
      { type: "user_input", turn_id: done, text: at("question", "list it") },
      { type: "model_response", turn_id: done, output: [{ ...call(callId, "ls"), name: at("call name", "bash") }] },
      { type: "tool_start", turn_id: done, call_id: callId, name: "bash" },
      { type: "tool_result", turn_id: done, call_id: callId, name: "bash", result: { status: "completed", output: at("result", "a b"), exit_code: 0 } },
      { type: "model_response", turn_id: done, output: [answer(at("answer", "done"))] },
      { type: "turn_end", turn_id: done, status: "completed", ...(place === "reason" ? { reason: at("reason", "ok") } : {}) },
      { type: "user_input", turn_id: open, text: "again" },
      { type: "model_response", turn_id: open, output: [call(openCall, "ls")] },
      { type: "tool_start", turn_id: open, call_id: openCall, name: "bash" }
    ]
    return records.map(line).join("")
  }

  const openWithKey = (home: string, name: string) =>
    Effect.scoped(
      Effect.provide(
        Effect.gen(function*() {
          const store = yield* SessionStore
          const questions = yield* store.questions
          return {
            notices: store.notices,
            context: JSON.stringify(yield* store.context),
            questions: Array.from({ length: questions.length }, (_, i) => questions.at(i)).join("\n"),
            records: JSON.stringify(yield* store.records)
          }
        }),
        SessionStore.layer({ home, sessionId: name }).pipe(Layer.provide(Secrets.layer(KEY)))
      )
    )

  it.live(`is read with the key redacted: never in what the model is sent, ↑, the records or what Mino writes; the open turn closes once (${PLACES.length} places × ${spellings.length} spellings)`, () =>
    Effect.gen(function*() {
      const home = tempDir("session-attack")
      let cases = 0
      for (const place of PLACES) {
        for (const [spelling, spell] of spellings) {
          const name = `key-${cases++}`
          const written = file(place).replaceAll(KEY, spell(KEY))
          Fs.mkdirSync(sessions(home), { recursive: true, mode: 0o700 })
          Fs.writeFileSync(Path.join(sessions(home), `${name}.jsonl`), written, { mode: 0o600 })
          const first = yield* openWithKey(home, name)
          const what = { place, spelling }
          for (const [part, text] of [["context", first.context], ["questions", first.questions], ["records", first.records]] as const) {
            expect({ ...what, part, holds: text.includes(KEY) }).toEqual({ ...what, part, holds: false })
          }
          // The turn left open is closed, its started call's outcome unknown; what Mino appended holds no key, however spelled.
          expect({ ...what, notices: first.notices }).toEqual({ ...what, notices: [expect.stringContaining("interrupted"), "Outcome unknown: \"ls\""] })
          const after = Fs.readFileSync(Path.join(sessions(home), `${name}.jsonl`), "utf8")
          expect(after.startsWith(written)).toBe(true)
          const appended = after.slice(written.length)
          expect({ ...what, appended: appended.includes(KEY) || appended.includes(spell(KEY)) }).toEqual({ ...what, appended: false })
          // A second and third start find the turn closed: nothing said, nothing written.
          for (let again = 0; again < 2; again++) {
            const next = yield* openWithKey(home, name)
            expect({ ...what, again, notices: next.notices }).toEqual({ ...what, again, notices: [] })
            expect(Fs.readFileSync(Path.join(sessions(home), `${name}.jsonl`), "utf8")).toBe(after)
          }
        }
      }
      console.log(`a file holding the key in use: ${cases} files (${PLACES.length} places × ${spellings.length} spellings), each opened three times`)
    }), 60_000)
})

describe("attack: the key in use in the id of a turn left open that a line of it could not be read", () => {
  const KEY = "sk-proj-Zq7vW2nE9xKp4LmR8tYb3HcJ"
  it.live("the unreadable line counts for that turn: a call it may have started is `unknown`, and the set-aside marker names the turn without the key", () =>
    Effect.gen(function*() {
      const home = tempDir("session-attack")
      const turn = `t-${KEY}`
      const written = [
        line({ type: "user_input", turn_id: turn, text: "two" }),
        line({ type: "model_response", turn_id: turn, output: [call("c1", "ls"), call("c2", "pwd")] }),
        // Valid JSON naming the turn, but no record (a call id that is a number): it may be c2's start.
        `${JSON.stringify({ type: "tool_start", turn_id: turn, call_id: 2, name: "bash" })}\n`,
        line({ type: "tool_start", turn_id: turn, call_id: "c1", name: "bash" })
      ].join("")
      Fs.mkdirSync(sessions(home), { recursive: true, mode: 0o700 })
      const file = Path.join(sessions(home), "held.jsonl")
      Fs.writeFileSync(file, written, { mode: 0o600 })
      const opened = yield* Effect.scoped(Effect.provide(
        Effect.map(SessionStore, (store) => store.notices),
        SessionStore.layer({ home, sessionId: "held" }).pipe(Layer.provide(Secrets.layer(KEY)))
      ))
      expect(opened).toEqual([expect.stringContaining("1 in the middle of the file"), expect.stringContaining("interrupted"), "Outcome unknown: \"ls\"", "Outcome unknown: \"pwd\""])
      const after = Fs.readFileSync(file, "utf8").split("\n").filter((text) => text.length > 0).map((text) => JSON.parse(text) as Record<string, unknown>)
      const results = after.filter((record) => record["type"] === "tool_result").map((record) => [record["call_id"], (record["result"] as { status: string }).status])
      expect(results).toEqual([["c1", "unknown"], ["c2", "unknown"]])
      // The marker left where the line was names the turn as the conversation does; no key in what Mino wrote.
      const marker = after.find((record) => record["type"] === "set_aside")
      expect(marker?.["turn_id"]).toBe("t-[redacted]")
      const mino = [after[2], ...after.slice(4)]
      expect(mino.map((record) => record?.["type"])).toEqual(["set_aside", "tool_result", "tool_result", "turn_end"])
      expect(mino.some((record) => JSON.stringify(record).includes(KEY))).toBe(false)
    }))
})
