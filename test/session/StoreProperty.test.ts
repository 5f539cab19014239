/**
 * A property test of the whole session store: conversations of every kind of
 * turn (completed with and without tools, denied and invalid calls, failed,
 * cancelled, interrupted and closed, one left open by a crash) are written as
 * Mino writes them, damaged at random (lines dropped, cut, duplicated,
 * swapped, corrupted, given a BOM, NUL runs, huge items), and opened with the
 * real file store. Whatever the file holds:
 *
 * - every replayed `function_call` has exactly one `function_call_output` after
 *   it, and every output its call; every replayed turn starts with its question;
 * - nothing is left pending: a second open closes nothing and sets nothing aside;
 * - every completed turn in the file is either replayed or named in the notice;
 * - the next request's body is valid against the Responses OpenAPI schema (unless an
 *   item's bytes were corrupted: items are replayed verbatim);
 * - restore is deterministic (two copies of the file give the same context,
 *   and the file as recovery left it gives it again), and the memory store given
 *   the same records agrees with the file store (one rule, memory and restart);
 * - an undamaged conversation replays exactly its completed turns, with no notice.
 *
 * The same rule is then checked on the conversation state alone, without files,
 * over many more generated record sequences (dropped, duplicated, reordered).
 *
 * 400 file cases and 10,000 state cases in the suite (a file case opens real
 * files three times and costs about as much as 25 state cases); MINO_PROPERTY_RUNS=N
 * runs N file cases and 25N state cases.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fc from "effect/FastCheck"
import * as RequestBody from "../../src/model/request/RequestBody.js"
import type { ResponseItem } from "../../src/protocol/ResponseItem.js"
import { Secrets } from "../../src/security/Secrets.js"
import { INTERRUPTED_NOTICE, INTERRUPTED_TEXT_NOTICE } from "../../src/session/conversation/Recovery.js"
import type { SessionRecord } from "../../src/session/records/Records.js"
import { committed, ConversationState } from "../../src/session/conversation/ConversationState.js"
import { SessionDisk } from "../../src/session/conversation/SessionDisk.js"
import { SessionStore } from "../../src/session/SessionStore.js"
import type { ToolDefinition } from "../../src/tools/Tool.js"
import { tempDir } from "../support/Harness.js"
import { validateRequestBody } from "../support/ResponsesSchema.js"

const RUNS = Number(process.env["MINO_PROPERTY_RUNS"] ?? 400)

/** Waits for one turn of the event loop (a `setImmediate`). */
const macrotask = Effect.async<void>((resume) => {
  setImmediate(() => resume(Effect.void))
})

// ---------------------------------------------------------------------------
// Conversations as Mino writes them

type Fate = "ran" | "denied" | "invalid" | "started"
interface Call {
  readonly fate: Fate
  readonly command: string
}
type Turn =
  | { readonly kind: "text"; readonly question: string; readonly answer: string }
  | { readonly kind: "tools"; readonly question: string; readonly rounds: ReadonlyArray<ReadonlyArray<Call>>; readonly answer: string; readonly reasoning: boolean }
  | { readonly kind: "failed"; readonly question: string; readonly rounds: ReadonlyArray<ReadonlyArray<Call>> }
  | { readonly kind: "cancelled"; readonly question: string; readonly command: string }
  | { readonly kind: "interrupted"; readonly question: string; readonly rounds: ReadonlyArray<ReadonlyArray<Call>> }

const text = fc.string({ unit: "grapheme", minLength: 1, maxLength: 12 })
const callArb = fc.record({ fate: fc.constantFrom<Fate>("ran", "ran", "denied", "invalid"), command: text })
const rounds = fc.array(fc.array(callArb, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 2 })
const turnArb: fc.Arbitrary<Turn> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("text" as const), question: text, answer: text }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("tools" as const), question: text, rounds, answer: text, reasoning: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("failed" as const), question: text, rounds }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("cancelled" as const), question: text, command: text }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("interrupted" as const), question: text, rounds }) }
)

const message = (words: string): ResponseItem => ({
  id: `msg_${words.length}`,
  type: "message",
  role: "assistant",
  status: "completed",
  content: [{ type: "output_text", text: words, annotations: [], logprobs: [] }]
})

/** The records of one turn; `open` cuts an interrupted turn where a crash would have, leaving it for recovery. */
const records = (turn: Turn, index: number, open: number | undefined): Array<SessionRecord> => {
  const turnId = `turn-${index}`
  let calls = 0
  const out: Array<SessionRecord> = [{ type: "user_input", turn_id: turnId, text: turn.question }]
  const round = (batch: ReadonlyArray<Call>, reasoning: boolean) => {
    const ids = batch.map(() => `call_${index}_${calls++}`)
    out.push({
      type: "model_response",
      turn_id: turnId,
      response_id: `resp_${index}_${calls}`,
      output: [
        ...(reasoning ? [{ id: `rs_${index}`, type: "reasoning", summary: [], encrypted_content: "gAAAAB" + "x".repeat(8) }] : []),
        ...batch.map((call, i) => ({ id: `fc_${ids[i]}`, type: "function_call", status: "completed", call_id: ids[i]!, name: "bash", arguments: JSON.stringify({ command: call.command }) }))
      ]
    })
    batch.forEach((call, i) => {
      const callId = ids[i]!
      if (call.fate === "ran" || call.fate === "started") out.push({ type: "tool_start", turn_id: turnId, call_id: callId, name: "bash" })
      if (call.fate === "started") return
      const status = call.fate === "ran" ? "completed" : call.fate === "denied" ? "denied" : "invalid_arguments"
      out.push({ type: "tool_result", turn_id: turnId, call_id: callId, name: "bash", result: { status, output: `out ${call.command}`, ...(call.fate === "ran" ? { exit_code: 0 } : {}) } })
    })
  }
  switch (turn.kind) {
    case "text":
      out.push({ type: "model_response", turn_id: turnId, response_id: `resp_${index}`, output: [message(turn.answer)] })
      out.push({ type: "turn_end", turn_id: turnId, status: "completed" })
      break
    case "tools":
      for (const batch of turn.rounds) round(batch, turn.reasoning)
      out.push({ type: "model_response", turn_id: turnId, response_id: `resp_${index}_end`, output: [message(turn.answer)] })
      out.push({ type: "turn_end", turn_id: turnId, status: "completed" })
      break
    case "failed":
      for (const batch of turn.rounds) round(batch, false)
      out.push({ type: "turn_end", turn_id: turnId, status: "failed", reason: "the model stream ended without response.completed" })
      break
    case "cancelled":
      round([{ fate: "started", command: turn.command }], false)
      out.push({ type: "tool_result", turn_id: turnId, call_id: `call_${index}_0`, name: "bash", result: { status: "unknown", output: "Cancelled", cancelled: true } })
      out.push({ type: "turn_end", turn_id: turnId, status: "cancelled", reason: "Cancelled by Ctrl+C" })
      break
    case "interrupted":
      for (const batch of turn.rounds) round(batch.map((call) => ({ ...call, fate: call.fate === "ran" ? "started" : call.fate })), false)
      if (open !== undefined) return out.slice(0, 1 + (open % out.length))
      out.push({ type: "turn_end", turn_id: turnId, status: "interrupted", reason: "Mino stopped before the turn ended" })
      break
  }
  return out
}

const records_ = (turn: Turn, index: number) => records(turn, index, undefined)

const lineOf = (record: SessionRecord, n: number) =>
  JSON.stringify({ ...record, time: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString() }) + "\n"

// ---------------------------------------------------------------------------
// Damage

type Damage =
  | { readonly op: "drop" | "duplicate" | "swap" | "bom"; readonly at: number }
  | { readonly op: "cut"; readonly at: number; readonly keep: number; readonly newline: boolean }
  | { readonly op: "corrupt"; readonly at: number; readonly offset: number; readonly byte: string }
  | { readonly op: "nul"; readonly at: number; readonly length: number }
  | { readonly op: "huge"; readonly at: number; readonly items: boolean }

const damageArb: fc.Arbitrary<Damage> = fc.oneof(
  fc.record({ op: fc.constantFrom("drop" as const, "duplicate" as const, "swap" as const, "bom" as const), at: fc.nat() }),
  fc.record({ op: fc.constant("cut" as const), at: fc.nat(), keep: fc.nat(), newline: fc.boolean() }),
  fc.record({ op: fc.constant("corrupt" as const), at: fc.nat(), offset: fc.nat(), byte: fc.constantFrom("}", "\"", "x", "\\", "\u0000", "\n") }),
  fc.record({ op: fc.constant("nul" as const), at: fc.nat(), length: fc.integer({ min: 1, max: 4096 }) }),
  fc.record({ op: fc.constant("huge" as const), at: fc.nat(), items: fc.boolean() })
).filter((d) => d.op !== "huge" || d.at % 8 === 0)

/** A large but legal version of a model_response line: a long answer, or many small items. */
const huge = (line: string, items: boolean): string => {
  let record: { type?: unknown; output?: unknown }
  try {
    record = JSON.parse(line) as typeof record
  } catch {
    return line
  }
  if (record.type !== "model_response" || !Array.isArray(record.output)) return line
  if (items) record.output = [...Array.from({ length: 5_000 }, () => ({ type: "reasoning", summary: [] })), ...record.output as Array<unknown>]
  else record.output.push(message("long ".repeat(50_000)))
  return JSON.stringify(record) + "\n"
}

const damage = (lines: Array<string>, damages: ReadonlyArray<Damage>): Array<string> => {
  const out = lines.slice()
  for (const d of damages) {
    if (out.length === 0) break
    const at = d.at % out.length
    const line = out[at]!
    switch (d.op) {
      case "drop":
        out.splice(at, 1)
        break
      case "duplicate":
        out.splice(at, 0, line)
        break
      case "swap":
        if (at + 1 < out.length) [out[at], out[at + 1]] = [out[at + 1]!, line]
        break
      case "bom":
        out[at] = "\ufeff" + line
        break
      case "cut": {
        const cut = line.slice(0, d.keep % line.length)
        out[at] = d.newline || at < out.length - 1 ? cut + "\n" : cut
        break
      }
      case "corrupt": {
        const offset = d.offset % line.length
        out[at] = line.slice(0, offset) + d.byte + line.slice(offset + 1)
        break
      }
      case "nul":
        out.splice(at, 0, "\u0000".repeat(d.length) + "\n")
        break
      case "huge":
        out[at] = huge(line, d.items)
        break
    }
  }
  return out
}

// ---------------------------------------------------------------------------
// Opening and checking

const sessions = (home: string) => Path.join(home, ".mino", "sessions")

const homeWith = (content: string) => {
  const home = tempDir("prop")
  Fs.mkdirSync(sessions(home), { recursive: true, mode: 0o700 })
  Fs.writeFileSync(Path.join(sessions(home), "demo.jsonl"), content, { mode: 0o600 })
  return home
}

const QUESTION = "and now?"

interface Opened {
  readonly notices: ReadonlyArray<string>
  readonly history: string
  readonly items: ReadonlyArray<ResponseItem>
  readonly body: string
  readonly records: ReadonlyArray<SessionRecord>
}

const body = RequestBody.writer("openai")

/** The bash tool's definition as Mino sends it (its shape; the words do not matter here). */
const BASH: ToolDefinition = {
  type: "function",
  name: "bash",
  description: "Run a shell command.",
  parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"], additionalProperties: false },
  strict: true
}

const open = <E>(layer: Layer.Layer<SessionStore, E>) =>
  Effect.scoped(Effect.gen(function*() {
    const store = yield* SessionStore
    return {
      notices: store.notices,
      history: store.history.json("openai"),
      items: store.history.items(),
      body: body({
        model: "gpt-test",
        instructions: "Be brief.",
        history: store.history,
        input: [{ type: "message", role: "user", content: [{ type: "input_text", text: QUESTION }] }],
        tools: [BASH]
      }, { include: true, withoutReasoningBefore: 0 }).toString("utf8"),
      records: yield* store.records
    } satisfies Opened
  }).pipe(Effect.provide(layer)))

// Real files, read and written as always; only the fsyncs of saves are skipped (they prove
// nothing here and cost most of a case), through the disk seam the fault tests use.
const writesOnly = Layer.succeed(SessionDisk, {
  write: SessionDisk.layerValue.write,
  sync: () => Effect.void
})
const onDisk = (home: string) =>
  open(SessionStore.layerOnDisk({ home, sessionId: "demo" }).pipe(Layer.provide(Layer.merge(Secrets.layerNone, writesOnly))))
const inMemory = (records: ReadonlyArray<SessionRecord>) => open(SessionStore.layerMemory({ records }).pipe(Layer.provide(Secrets.layerNone)))

/** A notice with the parts that name a place or a time made the same. */
const normal = (notice: string) => notice.replace(/\/\S+\.set-aside-\S+?(?=[:;.]?\s|[:;.]?$)/g, "<aside>")

/** How many completed turns the left-out notice names (0 without one). */
const leftOutCount = (notices: ReadonlyArray<string>): number => {
  for (const notice of notices) {
    if (notice.startsWith("A completed turn is kept")) return 1
    const many = /^(\d+) completed turns are kept/.exec(notice)
    if (many !== null) return Number(many[1])
  }
  return 0
}

/** Completed turns among `records`, grouped as the store groups them (a turn runs from its first record to its turn_end). */
const completedTurns = (records: ReadonlyArray<SessionRecord>): number => {
  const open = new Set<string>()
  let completed = 0
  for (const record of records) {
    if (record.type !== "turn_end") {
      open.add(record.turn_id)
      continue
    }
    if (open.delete(record.turn_id) && record.status === "completed") completed += 1
  }
  return completed
}

const checkPairing = (items: ReadonlyArray<ResponseItem>) => {
  const waiting = new Set<unknown>()
  for (const item of items) {
    if (item["type"] === "function_call") {
      expect(waiting.has(item["call_id"])).toBe(false)
      waiting.add(item["call_id"])
    }
    if (item["type"] === "function_call_output") expect(waiting.delete(item["call_id"])).toBe(true)
    // A turn's question comes only after every call before it has its output.
    if (item["role"] === "user") expect(waiting.size).toBe(0)
  }
  expect(waiting.size).toBe(0)
}

const userQuestions = (items: ReadonlyArray<ResponseItem>) => items.filter((item) => item["role"] === "user").length

const check = (turns: ReadonlyArray<Turn>, crash: number, damages: ReadonlyArray<Damage>) =>
  Effect.gen(function*() {
    const written = turns.flatMap((turn, i) => records(turn, i, i === turns.length - 1 && turn.kind === "interrupted" ? crash : undefined))
    const content = damage(written.map(lineOf), damages).join("")
    const first = homeWith(content)
    const a = yield* onDisk(first)

    // Replay sends whole turns only: calls paired, each turn led by its question.
    checkPairing(a.items)
    if (a.items.length > 0) expect(a.items[0]!["role"]).toBe("user")
    // Every completed turn in the file is replayed or named.
    expect(userQuestions(a.items) + leftOutCount(a.notices)).toBe(completedTurns(a.records))
    // The next request is a valid body: JSON, with the history and the new question last.
    const parsed = JSON.parse(a.body) as { input: Array<ResponseItem> }
    expect(parsed.input).toEqual([...JSON.parse(`[${a.history}]`) as Array<ResponseItem>, parsed.input.at(-1)])
    expect(parsed.input.at(-1)!["role"]).toBe("user")
    // ... and one OpenAI's own schema of POST /responses accepts, unless a byte of an item was
    // corrupted: items are replayed verbatim (a key spelled "annoxations" stays), and the endpoint's refusal is the answer.
    if (!damages.some((d) => d.op === "corrupt")) expect(validateRequestBody(parsed)).toEqual([])
    // Deterministic: the same bytes give the same context and notices (a second copy, every fourth case).
    if (crash % 4 === 0) {
      const b = yield* onDisk(homeWith(content))
      expect(b.history).toBe(a.history)
      expect(b.notices.map(normal)).toEqual(a.notices.map(normal))
    }
    // Nothing left pending: the file recovery left opens with nothing to close or set aside, the same context.
    const again = yield* onDisk(first)
    expect(again.history).toBe(a.history)
    expect(again.notices.filter((n) => n === INTERRUPTED_NOTICE || n === INTERRUPTED_TEXT_NOTICE || n.startsWith("Set aside") || n.startsWith("The "))).toEqual([])
    expect(completedTurns(again.records)).toBe(completedTurns(a.records))
    // One rule in memory and after a restart (where no line was set aside: a turn an unreadable
    // line named is left out on evidence its readable records do not carry).
    const memory = yield* inMemory(a.records)
    if (!a.notices.some((n) => n.startsWith("Set aside") || n.startsWith("The "))) expect(memory.items).toEqual(a.items)
    return { a, undamaged: damages.length === 0 }
  })

const expectedItems = (turns: ReadonlyArray<Turn>): number =>
  turns.reduce((sum, turn) => {
    if (turn.kind === "text") return sum + 2
    if (turn.kind !== "tools") return sum
    const calls = turn.rounds.reduce((n, batch) => n + batch.length, 0)
    return sum + 1 + (turn.reasoning ? turn.rounds.length : 0) + 2 * calls + 1
  }, 0)

describe(`the session store, on generated damaged conversations (${RUNS} cases)`, () => {
  it.live.prop(
    "replays whole turns only, names what it leaves out, leaves nothing pending, and is deterministic",
    [fc.array(turnArb, { minLength: 1, maxLength: 6 }), fc.nat(), fc.array(damageArb, { maxLength: 4 })],
    ([turns, crash, damages]) =>
      Effect.gen(function*() {
        // A turn of the event loop per case: a run of cases that only resolve promises would keep
        // the test worker from answering its runner for as long as they take.
        yield* macrotask
        const { a, undamaged } = yield* check(turns, crash, damages)
        if (undamaged) {
          expect(a.notices.filter((n) => n !== INTERRUPTED_NOTICE && n !== INTERRUPTED_TEXT_NOTICE && !n.startsWith("Outcome unknown"))).toEqual([])
          expect(a.items).toHaveLength(expectedItems(turns))
        }
      }),
    { timeout: 600_000, fastCheck: { numRuns: RUNS } }
  )
})

/** Records moved, dropped or repeated as a damaged file's readable lines can be. */
const shuffle = (records: ReadonlyArray<SessionRecord>, moves: ReadonlyArray<readonly [number, number, number]>): Array<SessionRecord> => {
  const out = records.slice()
  for (const [op, from, to] of moves) {
    if (out.length === 0) break
    const i = from % out.length
    const j = to % out.length
    if (op === 0) out.splice(i, 1)
    else if (op === 1) out.splice(j, 0, out[i]!)
    else [out[i], out[j]] = [out[j]!, out[i]!]
  }
  return out
}

const replayed = (records: ReadonlyArray<SessionRecord>) => {
  const state = new ConversationState()
  for (const record of records) {
    const text = JSON.stringify(record)
    state.apply(committed(JSON.parse(text) as SessionRecord, text))
  }
  return state
}

// Five runs of a fifth of the cases each: a property runs synchronously, and the test worker
// answers its runner only between tests.
describe(`the conversation state, on generated record sequences (${25 * RUNS} cases)`, () => {
  for (let part = 1; part <= 5; part++) {
  it.prop(
    `keeps whole turns only, names the others, and gives the same history for the same records (part ${part} of 5)`,
    [
      fc.array(turnArb, { minLength: 1, maxLength: 8 }),
      fc.array(fc.tuple(fc.integer({ min: 0, max: 2 }), fc.nat(), fc.nat()), { maxLength: 6 })
    ],
    ([turns, moves]) => {
      const records = shuffle(turns.flatMap((turn, i) => records_(turn, i)), moves)
      const state = replayed(records)
      const items = state.history.items()
      checkPairing(items)
      if (items.length > 0) expect(items[0]!["role"]).toBe("user")
      expect(state.history.turns + state.leftOut.length).toBe(completedTurns(records))
      expect(userQuestions(items)).toBe(state.history.turns)
      expect(replayed(records).history.json("openai")).toBe(state.history.json("openai"))
      if (moves.length === 0) {
        expect(state.leftOut).toEqual([])
        expect(items).toHaveLength(expectedItems(turns))
      }
    },
    { timeout: 600_000, fastCheck: { numRuns: 5 * RUNS } }
  )
  }

  // A question is kept once: in the history's request text when its turn joins it, apart when the turn is left
  // out, with its turn while the turn is open. ↑ reads all three, and must see every question in order at every step.
  it.prop(
    `gives back every question for ↑, in order, after every record, wherever its turn ended up (${5 * RUNS} cases)`,
    [
      fc.array(fc.tuple(turnArb, fc.string({ unit: "binary", maxLength: 12 })), { minLength: 1, maxLength: 8 }),
      fc.array(fc.tuple(fc.integer({ min: 0, max: 2 }), fc.nat(), fc.nat()), { maxLength: 6 })
    ],
    ([turns, moves]) => {
      // Any code point in a question (astral, lone surrogates), which the history keeps as a string rather than as bytes.
      const records = shuffle(turns.flatMap(([turn, question], i) => records_({ ...turn, question }, i)), moves)
      const state = new ConversationState()
      const asked: Array<string> = []
      for (const record of records) {
        const text = JSON.stringify(record)
        state.apply(committed(JSON.parse(text) as SessionRecord, text))
        if (record.type === "user_input") asked.push(record.text)
        expect(Array.from({ length: state.questions.length }, (_, i) => state.questions.at(i))).toEqual(asked)
        expect(Array.from({ length: asked.length }, (_, i) => state.questions.at(i - asked.length))).toEqual(asked)
        expect([state.questions.at(asked.length), state.questions.at(-asked.length - 1), state.questions.at(0.5)]).toEqual([undefined, undefined, undefined])
      }
    },
    { timeout: 600_000, fastCheck: { numRuns: 5 * RUNS } }
  )
})
