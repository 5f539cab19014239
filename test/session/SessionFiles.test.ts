/**
 * Files are what they claim to be, and any state opens: the session's
 * directories and file are refused with one line when they are a symlink, a FIFO
 * or a device (without hanging), modes are tightened every start, HOME must be
 * absolute; a file that is torn, garbage or NULs opens, unreadable lines are set
 * aside with a notice that tells a torn write from damage in the middle, a
 * record of a known type that fails its schema is set aside (and its turn's
 * calls become `unknown`), and unknown record types are kept.
 */
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Exit from "effect/Exit"
import * as fc from "fast-check"
import { INTERRUPTED_NOTICE, INTERRUPTED_TEXT_NOTICE } from "../../src/session/conversation/Recovery.js"
import type { SessionRecord } from "../../src/session/records/Records.js"
import * as SessionReader from "../../src/session/records/SessionReader.js"
import { SessionStore } from "../../src/session/SessionStore.js"
import { sessionLines, tempDir } from "../support/Harness.js"
import { Secrets } from "../../src/security/Secrets.js"

const open = <A, E>(home: string | undefined, use: Effect.Effect<A, E, SessionStore>, sessionId?: string) =>
  Effect.scoped(Effect.provide(use, SessionStore.layer({ home, ...(sessionId === undefined ? {} : { sessionId }) }).pipe(Layer.provide(Secrets.layerNone))))

const opened = (home: string, sessionId?: string) =>
  open(home, Effect.map(SessionStore, (store) => ({ notices: store.notices, path: store.path })), sessionId)

/** The one line an open that must fail reports. */
const refusal = (home: string | undefined, sessionId?: string) =>
  Effect.gen(function*() {
    const exit = yield* Effect.exit(open(home, Effect.void, sessionId)).pipe(Effect.timeout("10 seconds"))
    expect(Exit.isFailure(exit)).toBe(true)
    const failure = Exit.isFailure(exit) ? exit.cause : undefined
    const error = failure?._tag === "Fail" ? failure.error : undefined
    expect(error).toBeDefined()
    const message = (error as { message: string }).message
    expect(message).not.toContain("\n")
    return { tag: (error as { _tag: string })._tag, message }
  })

const sessions = (home: string) => Path.join(home, ".mino", "sessions")

const line = (record: SessionRecord) => JSON.stringify(record) + "\n"

const completed = (turnId: string, text: string) =>
  [
    line({ type: "user_input", turn_id: turnId, text }),
    line({ type: "model_response", turn_id: turnId, output: [{ type: "message", role: "assistant", content: [{ type: "output_text", text: `re ${text}` }] }] }),
    line({ type: "turn_end", turn_id: turnId, status: "completed" })
  ].join("")

/** A home whose session `demo` holds `content` as written by hand. */
const homeWith = (content: string | Buffer) => {
  const home = tempDir("files")
  Fs.mkdirSync(sessions(home), { recursive: true, mode: 0o700 })
  Fs.writeFileSync(Path.join(sessions(home), "demo.jsonl"), content, { mode: 0o600 })
  return home
}

const asideFiles = (home: string) => Fs.readdirSync(sessions(home)).filter((name) => name.includes(".set-aside-"))

describe("files are what they claim to be", () => {
  it.live("HOME unset, empty or relative is one clear error, and nothing is created", () =>
    Effect.gen(function*() {
      const cwd = process.cwd()
      for (const [home, words] of [[undefined, "HOME is not set"], ["", "HOME is empty"], ["relative/home", "HOME is not an absolute path"]] as const) {
        const { tag, message } = yield* refusal(home)
        expect(tag).toBe("SessionHomeError")
        expect(message).toContain(words)
      }
      expect(Fs.existsSync(Path.join(cwd, ".mino"))).toBe(false)
      expect(Fs.existsSync(Path.join(cwd, "relative"))).toBe(false)
    }))

  it.live("modes are tightened to 0700 / 0600 on every start", () =>
    Effect.gen(function*() {
      const home = tempDir("files")
      yield* open(home, Effect.flatMap(SessionStore, (store) => store.append({ type: "user_input", turn_id: "t1", text: "makes the file" })))
      const file = Fs.readdirSync(sessions(home)).find((name) => name.endsWith(".jsonl"))!
      Fs.chmodSync(Path.join(home, ".mino"), 0o777)
      Fs.chmodSync(sessions(home), 0o777)
      Fs.chmodSync(Path.join(sessions(home), file), 0o666)
      yield* opened(home)
      expect(Fs.statSync(Path.join(home, ".mino")).mode & 0o777).toBe(0o700)
      expect(Fs.statSync(sessions(home)).mode & 0o777).toBe(0o700)
      expect(Fs.statSync(Path.join(sessions(home), file)).mode & 0o777).toBe(0o600)
    }))

  it.live("a symlinked session file is refused, and its target is neither read nor appended to", () =>
    Effect.gen(function*() {
      const home = tempDir("files")
      Fs.mkdirSync(sessions(home), { recursive: true, mode: 0o700 })
      const target = Path.join(home, "elsewhere.txt")
      Fs.writeFileSync(target, "not a session\n")
      Fs.symlinkSync(target, Path.join(sessions(home), "demo.jsonl"))
      const { tag, message } = yield* refusal(home, "demo")
      expect(tag).toBe("SessionOpenError")
      expect(message).toMatch(/demo\.jsonl is a symbolic link/)
      expect(Fs.readFileSync(target, "utf8")).toBe("not a session\n")
    }))

  it.live("a FIFO session file is refused at once, without hanging", () =>
    Effect.gen(function*() {
      const home = tempDir("files")
      Fs.mkdirSync(sessions(home), { recursive: true, mode: 0o700 })
      execFileSync("mkfifo", [Path.join(sessions(home), "demo.jsonl")])
      const { message } = yield* refusal(home, "demo")
      expect(message).toMatch(/demo\.jsonl is a FIFO, not a regular file/)
    }))

  it.live.skipIf(process.getuid?.() !== 0)("a device as the session file is refused", () =>
    Effect.gen(function*() {
      const home = tempDir("files")
      Fs.mkdirSync(sessions(home), { recursive: true, mode: 0o700 })
      execFileSync("mknod", [Path.join(sessions(home), "demo.jsonl"), "c", "1", "5"]) // like /dev/zero
      const { message } = yield* refusal(home, "demo")
      expect(message).toMatch(/demo\.jsonl is a device, not a regular file/)
    }))

  it.live("~/.mino or sessions/ as a symlink is refused, never followed", () =>
    Effect.gen(function*() {
      const home = tempDir("files")
      const elsewhere = tempDir("files-elsewhere")
      Fs.symlinkSync(elsewhere, Path.join(home, ".mino"))
      expect((yield* refusal(home)).message).toMatch(/\.mino is a symbolic link, not a real directory/)
      expect(Fs.readdirSync(elsewhere)).toEqual([])

      const second = tempDir("files")
      Fs.mkdirSync(Path.join(second, ".mino"), { mode: 0o700 })
      Fs.symlinkSync(elsewhere, sessions(second))
      expect((yield* refusal(second)).message).toMatch(/sessions is a symbolic link, not a real directory/)
      expect(Fs.readdirSync(elsewhere)).toEqual([])
    }))
})

describe("any state opens", () => {
  const unreadableOnly: ReadonlyArray<readonly [string, string | Buffer]> = [
    ["a torn first record (a crash during the first write)", "{\"type\":\"user_input\",\"turn_id\":\"t1\",\"te"],
    ["only garbage", "garbage\nmore garbage\n\u0001\u0002\n"],
    ["only NUL bytes", Buffer.alloc(4096)]
  ]
  for (const [name, content] of unreadableOnly) {
    it.live(`${name}: a new, empty conversation; the bytes are kept aside and the user told where`, () =>
      Effect.gen(function*() {
        const home = homeWith(content)
        const first = yield* opened(home, "demo")
        expect(first.notices).toHaveLength(1)
        expect(first.notices[0]).toMatch(/^The session file could not be read \(\d+ unreadable line\(s\)\); its bytes were moved to (\S+) and a new, empty conversation was started\.$/)
        const aside = asideFiles(home)
        expect(aside).toHaveLength(1)
        expect(first.notices[0]).toContain(Path.join(sessions(home), aside[0]!))
        expect(Fs.readFileSync(Path.join(sessions(home), aside[0]!))).toEqual(Buffer.from(content))
        expect(Fs.readFileSync(first.path, "utf8")).toBe("")
        // It works from then on, and leaves no stray file behind.
        yield* open(home, Effect.flatMap(SessionStore, (store) => store.append({ type: "user_input", turn_id: "t9", text: "hello" })), "demo")
        const again = yield* opened(home, "demo")
        expect(again.notices).toEqual([INTERRUPTED_TEXT_NOTICE])
        expect(asideFiles(home)).toHaveLength(1)
        expect(Fs.readdirSync(sessions(home)).filter((name) => !name.includes(".set-aside-")).sort()).toEqual(["demo.jsonl", "demo.lock"])
      }))
  }

  it.live("a torn last write is told apart from damage in the middle", () =>
    Effect.gen(function*() {
      const torn = homeWith(completed("t1", "one") + "{\"type\":\"user_in")
      const tornNotice = (yield* opened(torn, "demo")).notices
      expect(tornNotice).toEqual([expect.stringMatching(/^The last record of the session file was cut short by a crash while it was being written; it was set aside in \S+\. Every complete record was kept\.$/)])
      expect(sessionLines(torn)).toHaveLength(3)

      const damaged = homeWith(completed("t1", "one") + "\u0000\u0000garbage\n" + completed("t2", "two"))
      const damageNotice = (yield* opened(damaged, "demo")).notices
      expect(damageNotice).toEqual([expect.stringMatching(/^Set aside 1 unreadable line\(s\) of the session file in \S+: 1 in the middle of the file \(damage, not a write cut short by a crash\)\. Every readable record was kept\.$/)])
      expect(sessionLines(damaged).map((r) => r["turn_id"])).toEqual(["t1", "t1", "t1", "t2", "t2", "t2"])
      const context = yield* open(damaged, Effect.flatMap(SessionStore, (store) => store.context), "demo")
      expect(context).toHaveLength(4)
    }))

  it.live("a mistyped tool_start (call_id 42) is set aside and reported; its call is closed `unknown`, not `not_executed`", () =>
    Effect.gen(function*() {
      const home = homeWith(
        line({ type: "user_input", turn_id: "t1", text: "run it" }) +
          line({ type: "model_response", turn_id: "t1", output: [{ type: "function_call", call_id: "c1", name: "bash", arguments: "{\"command\":\"make deploy\"}" }] }) +
          "{\"type\":\"tool_start\",\"turn_id\":\"t1\",\"call_id\":42,\"name\":\"bash\"}\n"
      )
      const { notices } = yield* opened(home, "demo")
      expect(notices).toHaveLength(3)
      expect(notices[0]).toMatch(/^Set aside 1 unreadable line\(s\) from the end of the session file in \S+; every readable record was kept\.$/)
      expect(notices[1]).toBe(INTERRUPTED_NOTICE)
      expect(notices[2]).toBe("Outcome unknown: \"make deploy\"")
      const records = sessionLines(home)
      expect(records.slice(2)).toMatchObject([
        { type: "tool_result", call_id: "c1", result: { status: "unknown" } },
        { type: "turn_end", status: "interrupted" }
      ])
      expect(Fs.readFileSync(Path.join(sessions(home), asideFiles(home)[0]!), "utf8")).toContain("\"call_id\":42")
    }))

  it.live("records of unknown types are kept in the file and tolerated", () =>
    Effect.gen(function*() {
      const header = "{\"type\":\"header\",\"version\":2}\n"
      const home = homeWith(header + completed("t1", "one") + "{\"type\":\"bookmark\",\"turn_id\":\"t1\",\"note\":\"x\"}\n")
      const result = yield* open(home, Effect.map(SessionStore, (store) => store.notices), "demo")
      expect(result).toEqual([])
      expect(Fs.readFileSync(Path.join(sessions(home), "demo.jsonl"), "utf8").startsWith(header + completed("t1", "one"))).toBe(true)
      const context = yield* open(home, Effect.flatMap(SessionStore, (store) => store.context), "demo")
      expect(context).toHaveLength(2)
    }))

  it.live("a text-only turn that was interrupted gets its own notice", () =>
    Effect.gen(function*() {
      const home = homeWith(completed("t0", "zero") + line({ type: "user_input", turn_id: "t1", text: "hello" }))
      expect((yield* opened(home, "demo")).notices).toEqual([INTERRUPTED_TEXT_NOTICE])
    }))

  it.live("a command whose outcome is unknown is listed escaped, on one line", () =>
    Effect.gen(function*() {
      const command = "printf '\\033[2J'; rm -rf build\nreboot \u202e"
      const home = homeWith(
        line({ type: "user_input", turn_id: "t1", text: "x" }) +
          line({ type: "model_response", turn_id: "t1", output: [{ type: "function_call", call_id: "c1", name: "bash", arguments: JSON.stringify({ command }) }] }) +
          line({ type: "tool_start", turn_id: "t1", call_id: "c1", name: "bash" })
      )
      const { notices } = yield* opened(home, "demo")
      expect(notices).toHaveLength(2)
      expect(notices[1]).toBe("Outcome unknown: \"printf '\\\\033[2J'; rm -rf build\\nreboot \\u202e\"")
      expect(notices[1]).not.toMatch(/[\u0000-\u001f\u202e]/)
    }))
})

describe("the reader streams", () => {
  it.live("a file over 2 GiB is read line by line, records past 2 GiB included", () =>
    Effect.sync(() => {
      const dir = tempDir("big")
      const path = Path.join(dir, "big.jsonl")
      const first = line({ type: "user_input", turn_id: "t1", text: "before" })
      const last = line({ type: "user_input", turn_id: "t2", text: "after 2 GiB" })
      // A sparse file: a record, a 2.1 GiB hole (one huge unreadable line), a record.
      const fd = Fs.openSync(path, "w")
      Fs.writeSync(fd, first)
      const hole = Math.floor(2.1 * 1024 ** 3)
      Fs.writeSync(fd, "\n" + last, first.length + hole)
      Fs.closeSync(fd)
      const seen: Array<string> = []
      for (const entry of SessionReader.readFile(path)) {
        seen.push(entry._tag === "Record" ? `${entry.record.turn_id}@${entry.start > 2 ** 31 ? "past-2GiB" : entry.start}` : entry._tag)
      }
      expect(seen).toEqual(["t1@0", "Unreadable", "t2@past-2GiB"])
      Fs.rmSync(dir, { recursive: true })
    }), 120_000)

  it.live("each line's bytes are where the file holds them, whatever characters or stray bytes its lines hold, across chunks of lines", () =>
    Effect.sync(() => {
      const dir = tempDir("spans")
      const path = Path.join(dir, "spans.jsonl")
      // A line: a record whose text is ASCII, multi-byte, astral or has a stray byte (not UTF-8: read as U+FFFD, the line is then
      // still a record), or a line of garbage bytes; some long, so that the lines fill several of the reader's groups (64 KiB).
      const text = fc.oneof(
        fc.string({ maxLength: 40 }),
        fc.string({ unit: "grapheme", maxLength: 40 }),
        fc.constantFrom("é", "€", "😀", "a".repeat(30_000), "é".repeat(20_000))
      )
      const piece = fc.oneof(
        { arbitrary: fc.tuple(fc.string({ maxLength: 8 }), text).map(([id, words]) => Buffer.from(line({ type: "user_input", turn_id: id, text: words }))), weight: 6 },
        { arbitrary: fc.tuple(text, fc.constantFrom([0xff], [0xe2, 0x82], [0xc3], [0xf0, 0x9f, 0x98])).map(([words, stray]) =>
          Buffer.concat([Buffer.from(`{"type":"user_input","turn_id":"t","text":"${words.replace(/[^a-z ]/g, "")}`), Buffer.from(stray), Buffer.from("\"}\n")])), weight: 2 },
        { arbitrary: fc.uint8Array({ maxLength: 30 }).map((bytes) => Buffer.concat([Buffer.from(bytes.filter((byte) => byte !== 0x0a)), Buffer.from("\n")])), weight: 1 }
      )
      let files = 0
      let lines = 0
      fc.assert(fc.property(fc.array(piece, { minLength: 1, maxLength: 60 }), (pieces) => {
        const bytes = Buffer.concat(pieces)
        Fs.writeFileSync(path, bytes)
        // The lines as the file holds them: from one newline to the next, an empty one read as nothing.
        const expected: Array<{ start: number; end: number }> = []
        for (let start = 0; start < bytes.length;) {
          const end = bytes.indexOf(0x0a, start) + 1
          if (end > start + 1) expected.push({ start, end })
          start = end
        }
        const read = [...SessionReader.readFile(path)]
        expect(read.map(({ start, end }) => ({ start, end }))).toEqual(expected)
        for (const entry of read) {
          if (entry._tag === "Record") expect(JSON.stringify(entry.record) + "\n").toBe(bytes.toString("utf8", entry.start, entry.end))
        }
        files += 1
        lines += read.length
      }), { numRuns: 60 })
      console.log(`line spans checked: ${files} files, ${lines} lines`)
      Fs.rmSync(dir, { recursive: true })
    }), 120_000)
})
