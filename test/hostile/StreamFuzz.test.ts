/**
 * Hostile model streams against the real Agent (chapter 03 sections 2.1 and
 * 4.1): valid tool-call replies, mutated by fast-check (events removed,
 * reordered, duplicated, truncated, the socket dropped, raw garbage inserted,
 * the completed response's call ids emptied, duplicated, reused or removed),
 * played by the loopback Responses server to the real ModelClient and Agent.
 *
 * Property: a tool runs only for a well-formed `response.completed` that the
 * client actually received, whose calls have non-empty call ids, unique in the
 * response and unused earlier in the turn. Otherwise nothing runs and the turn
 * ends `failed`. The expected outcome is computed from the mutated step list by
 * an oracle written here, independently of ModelClient and ResponseItem. A response.completed
 * without output takes the output_item.done items received before it (issue #18).
 */
import * as Fs from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fc from "fast-check"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import type { ResponseItem } from "../../src/protocol/ResponseItem.js"
import * as EchoTool from "../support/EchoTool.js"
import { scriptedModel, sessionLines, tempDir, turn, withAgent } from "../support/Harness.js"

type Step = ResponsesServer.Step

// ---------------------------------------------------------------------------
// Raw garbage, each kind with what an SSE client must make of it.

const GARBAGE = [
  "comment", // an SSE comment: ignored
  "noise", // a line that is no SSE field: ignored
  "scalar", // data that is JSON but no event object: ignored
  "badJson", // data that is not JSON: the stream fails
  "done", // `[DONE]`: the stream ends here, without response.completed
  "errorField", // a data object with an `error`: the stream fails
  "errorEvent", // an `error` event: the stream fails
  "failedEvent", // `response.failed`: the stream fails
  "malformedCompleted", // response.completed whose output is no list: the stream fails
  "outputlessCompleted", // response.completed without output: the output is the items finished so far
  "emptyEvent", // an event name without data: the stream fails
  "partial", // half an event, never finished: whatever follows is corrupt
  "forgedCompleted" // a well-formed response.completed, injected: it counts
] as const
type Garbage = (typeof GARBAGE)[number]

const FORGED_CALL: ResponseItem = {
  id: "fc_forged",
  type: "function_call",
  status: "completed",
  call_id: "forged",
  name: "echo",
  arguments: JSON.stringify({ text: "forged" })
}

const garbageText = (kind: Garbage, noise: string): string => {
  switch (kind) {
    case "comment":
      return ": keep-alive\n\n"
    case "noise":
      return `${noise}\n\n`
    case "scalar":
      return "data: 42\n\ndata: [1,2]\n\n"
    case "badJson":
      return "data: {not json\n\n"
    case "done":
      return "data: [DONE]\n\n"
    case "errorField":
      return "data: {\"error\":{\"message\":\"boom\"}}\n\n"
    case "errorEvent":
      return "event: error\ndata: {\"type\":\"error\",\"message\":\"boom\"}\n\n"
    case "failedEvent":
      return "event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"error\":{\"message\":\"no\"}}}\n\n"
    case "malformedCompleted":
      return "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"x\",\"output\":\"nope\"}}\n\n"
    case "outputlessCompleted":
      return "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"x\"}}\n\n"
    case "emptyEvent":
      return "event: response.output_item.added\n\n"
    case "partial":
      return "event: response.output_item.added\ndata: {\"type\":"
    case "forgedCompleted":
      return `event: response.completed\ndata: ${JSON.stringify({
        type: "response.completed",
        response: { id: "resp_forged", status: "completed", output: [FORGED_CALL] }
      })}\n\n`
  }
}

/** What each raw step is; duplicated steps share the object, so they share the kind. */
const garbageKinds = new WeakMap<object, Garbage>()

const garbageStep = (kind: Garbage, noise: string): Step => {
  const step = { raw: garbageText(kind, noise) }
  garbageKinds.set(step, kind)
  return step
}

// ---------------------------------------------------------------------------
// Mutations of one reply's steps.

type IdMode = "empty" | "duplicate" | "reuse" | "missing" | "number" | "fresh"

type Mutation =
  | { readonly op: "remove"; readonly at: number }
  | { readonly op: "move"; readonly from: number; readonly to: number }
  | { readonly op: "duplicate"; readonly at: number }
  | { readonly op: "truncate"; readonly at: number }
  | { readonly op: "drop"; readonly at: number; readonly flushed: boolean }
  | { readonly op: "garbage"; readonly at: number; readonly kind: Garbage; readonly noise: string }
  | { readonly op: "ids"; readonly which: number; readonly mode: IdMode; readonly pick: number }

const isCompleted = (step: Step): step is ResponsesServer.ServerEvent =>
  typeof step === "object" && "type" in step && step.type === "response.completed"

const withIds = (event: ResponsesServer.ServerEvent, mode: IdMode, pick: number, earlier: ReadonlyArray<string>) => {
  const response = event["response"] as { readonly output: ReadonlyArray<ResponseItem> }
  const output = response.output.map((item) => ({ ...item }))
  const calls = output.filter((item) => item["type"] === "function_call")
  const target = calls[pick % Math.max(1, calls.length)]
  if (target === undefined) return event
  switch (mode) {
    case "empty":
      target["call_id"] = ""
      break
    case "missing":
      delete target["call_id"]
      break
    case "number":
      target["call_id"] = 7
      break
    case "fresh":
      for (const call of calls) call["call_id"] = `${String(call["call_id"])}_fresh`
      break
    case "reuse":
    case "duplicate":
      if (mode === "reuse" && earlier.length > 0) target["call_id"] = earlier[pick % earlier.length]
      else if (calls.length > 1 && target !== calls[0]) target["call_id"] = calls[0]!["call_id"]
      else output.push({ ...target, id: "fc_copy" })
      break
  }
  return { ...event, response: { ...response, output } }
}

const mutate = (base: ReadonlyArray<Step>, mutations: ReadonlyArray<Mutation>, earlier: ReadonlyArray<string>): Array<Step> => {
  let steps = [...base]
  for (const m of mutations) {
    const n = steps.length
    switch (m.op) {
      case "remove":
        if (n > 0) steps.splice(m.at % n, 1)
        break
      case "move":
        if (n > 0) {
          const [step] = steps.splice(m.from % n, 1)
          steps.splice(m.to % n, 0, step!)
        }
        break
      case "duplicate":
        if (n > 0) steps.splice(m.at % n, 0, steps[m.at % n]!)
        break
      case "truncate":
        steps = steps.slice(0, m.at % (n + 1))
        break
      case "drop":
        // A flushed drop lets everything before it reach the client first.
        steps.splice(m.at % (n + 1), 0, ...(m.flushed ? [{ delay: 1 }, "drop" as const] : ["drop" as const]))
        break
      case "garbage":
        steps.splice(m.at % (n + 1), 0, garbageStep(m.kind, m.noise))
        break
      case "ids": {
        const indexes = steps.flatMap((step, i) => (isCompleted(step) ? [i] : []))
        const index = indexes[m.which % Math.max(1, indexes.length)]
        if (index !== undefined) steps[index] = withIds(steps[index] as ResponsesServer.ServerEvent, m.mode, m.pick, earlier)
        break
      }
    }
  }
  return steps
}

// ---------------------------------------------------------------------------
// The oracle.

type StreamOutcome = { readonly kind: "completed"; readonly output: ReadonlyArray<ResponseItem> } | { readonly kind: "failed" }
const FAILED: StreamOutcome = { kind: "failed" }

const isItem = (value: unknown): value is ResponseItem => typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * The output of a response.completed without one (or with an empty one): the
 * items of the output_item.done events received so far, by output_index when each
 * has one, else in arrival order.
 */
const finishedItems = (done: ReadonlyArray<{ readonly item: ResponseItem; readonly index: unknown }>): ReadonlyArray<ResponseItem> =>
  done.every((entry) => typeof entry.index === "number")
    ? [...done].sort((a, b) => (a.index as number) - (b.index as number)).map((entry) => entry.item)
    : done.map((entry) => entry.item)

/** What a client makes of steps that all reach it, in order, then the end or a drop. */
const readStream = (steps: ReadonlyArray<Step>): StreamOutcome => {
  const done: Array<{ readonly item: ResponseItem; readonly index: unknown }> = []
  for (const step of steps) {
    if (step === "drop" || step === "stall") return FAILED
    if ("delay" in step || "wait" in step) continue
    if ("raw" in step) {
      const kind = garbageKinds.get(step)
      if (kind === "comment" || kind === "noise" || kind === "scalar") continue
      if (kind === "forgedCompleted") return { kind: "completed", output: [FORGED_CALL] }
      if (kind === "outputlessCompleted") return { kind: "completed", output: finishedItems(done) }
      return FAILED
    }
    switch (step.type) {
      case "response.output_item.done": {
        const item = step["item"]
        if (isItem(item)) done.push({ item, index: step["output_index"] })
        continue
      }
      case "response.completed": {
        const response = step["response"]
        if (!isItem(response)) return FAILED
        const id = response["id"]
        if (id !== undefined && id !== null && typeof id !== "string") return FAILED
        const output = response["output"]
        if (output === undefined || output === null || (Array.isArray(output) && output.length === 0)) {
          return { kind: "completed", output: finishedItems(done) }
        }
        if (!Array.isArray(output) || !output.every(isItem)) return FAILED
        return { kind: "completed", output }
      }
      case "response.failed":
      case "response.incomplete":
      case "error":
        return FAILED
      case "response.output_text.delta":
      case "response.refusal.delta":
        if (typeof step["delta"] !== "string") return FAILED
        continue
      default:
        continue
    }
  }
  return FAILED // ended without response.completed
}

/**
 * Every outcome the client may see. After a flushed point (a delay) everything
 * written has left the server; steps written in the same tick as an unflushed
 * drop may be lost with the socket, so any prefix since the last flush may arrive.
 */
const possibleStreams = (steps: ReadonlyArray<Step>): ReadonlyArray<StreamOutcome> => {
  const drop = steps.indexOf("drop")
  if (drop === -1) return [readStream(steps)]
  let flushed = drop
  while (flushed > 0 && !(typeof steps[flushed - 1] === "object" && "delay" in (steps[flushed - 1] as object))) flushed -= 1
  const outcomes: Array<StreamOutcome> = []
  for (let cut = flushed; cut <= drop; cut++) outcomes.push(readStream([...steps.slice(0, cut), "drop"]))
  return outcomes
}

interface TurnResult {
  readonly status: string
  /** The echo texts executed, in order. */
  readonly ran: ReadonlyArray<string>
  /** How many completed responses were received, valid and saved (a refused one is not saved). */
  readonly responses: number
}

const hasText = (item: ResponseItem): boolean =>
  item["type"] === "message" && Array.isArray(item["content"]) &&
  item["content"].some((part) => isItem(part) && part["type"] === "output_text" && typeof part["text"] === "string" && part["text"] !== "")

/** The spec's validity of a completed response's calls (a response with no text and no call is invalid too). */
const validCalls = (output: ReadonlyArray<ResponseItem>, used: ReadonlySet<string>): ReadonlyArray<ResponseItem> | undefined => {
  const calls = output.filter((item) => item["type"] === "function_call")
  if (calls.length === 0 && !output.some(hasText)) return undefined
  const ids = calls.map((call) => call["call_id"])
  if (!ids.every((id): id is string => typeof id === "string" && id !== "")) return undefined
  if (new Set(ids).size !== ids.length || ids.some((id) => used.has(id))) return undefined
  if (!calls.every((call) => typeof call["name"] === "string" && typeof call["arguments"] === "string")) return undefined
  return calls
}

const echoText = (call: ResponseItem): string => (JSON.parse(String(call["arguments"])) as { text: string }).text

/** Every turn result the replies allow; the scripted model repeats its last reply. */
const expectedTurns = (replies: ReadonlyArray<ReadonlyArray<Step>>): ReadonlyArray<TurnResult> => {
  const results: Array<TurnResult> = []
  const go = (request: number, used: ReadonlySet<string>, ran: ReadonlyArray<string>, responses: number) => {
    const reply = replies[Math.min(request, replies.length - 1)]!
    for (const stream of possibleStreams(reply)) {
      if (stream.kind === "failed") {
        results.push({ status: "failed", ran, responses })
        continue
      }
      const calls = validCalls(stream.output, used)
      if (calls === undefined) {
        // Refused: not saved as a model_response (chapter 3 §4.1: validated, then saved).
        results.push({ status: "failed", ran, responses })
        continue
      }
      if (calls.length === 0) {
        results.push({ status: "completed", ran, responses: responses + 1 })
        continue
      }
      // The generated turns stay far below the limits of 8 requests and 16 calls.
      expect(request + 1).toBeLessThan(8)
      expect(ran.length + calls.length).toBeLessThanOrEqual(16)
      go(
        request + 1,
        new Set([...used, ...calls.map((call) => String(call["call_id"]))]),
        [...ran, ...calls.map(echoText)],
        responses + 1
      )
    }
  }
  go(0, new Set(), [], 0)
  return results
}

// ---------------------------------------------------------------------------
// Scenarios.

const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constant("remove" as const), at: fc.nat(999) }),
  fc.record({ op: fc.constant("move" as const), from: fc.nat(999), to: fc.nat(999) }),
  fc.record({ op: fc.constant("duplicate" as const), at: fc.nat(999) }),
  fc.record({ op: fc.constant("truncate" as const), at: fc.nat(999) }),
  fc.record({ op: fc.constant("drop" as const), at: fc.nat(999), flushed: fc.boolean() }),
  fc.record({
    op: fc.constant("garbage" as const),
    at: fc.nat(999),
    kind: fc.constantFrom(...GARBAGE),
    // No newline, colon, or the letters of "data"/"event": a line no SSE reader acts on.
    noise: fc.string({ unit: fc.constantFrom("x", "y", "z", "#", "!", "?", " ", "0", "1", "9"), maxLength: 12 })
  }),
  fc.record({
    op: fc.constant("ids" as const),
    which: fc.nat(9),
    mode: fc.constantFrom<IdMode>("empty", "duplicate", "reuse", "missing", "number", "fresh"),
    pick: fc.nat(9)
  })
)

const replyMutations = fc.oneof(
  { weight: 2, arbitrary: fc.constant<ReadonlyArray<Mutation>>([]) },
  { weight: 5, arbitrary: fc.array(mutationArb, { minLength: 1, maxLength: 3 }) }
)

interface Scenario {
  readonly batches: ReadonlyArray<number>
  readonly reasoning: boolean
  readonly message: boolean
  readonly mutations: ReadonlyArray<ReadonlyArray<Mutation>>
}

const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  batches: fc.array(fc.integer({ min: 1, max: 3 }), { maxLength: 3 }),
  reasoning: fc.boolean(),
  message: fc.boolean(),
  mutations: fc.array(replyMutations, { minLength: 4, maxLength: 4 })
})

/** The scenario's replies: one tool-call reply per batch, then a text answer, each mutated. */
const repliesOf = (scenario: Scenario): Array<Array<Step>> => {
  const earlier: Array<string> = []
  const replies = scenario.batches.map((size, r) => {
    const calls = Array.from({ length: size }, (_, k) => ({
      call_id: `c${r}_${k}`,
      name: "echo",
      arguments: JSON.stringify({ text: `r${r}k${k}` })
    }))
    const base = ResponsesServer.toolCallResponse(calls, {
      ...(scenario.reasoning ? { reasoning: { encrypted_content: "gAAAA-opaque" } } : {}),
      ...(scenario.message ? { message: { text: `Checking batch ${r} now.`, phase: "commentary" } } : {})
    })
    const mutated = mutate(base, scenario.mutations[r] ?? [], earlier)
    earlier.push(...calls.map((call) => call.call_id))
    return mutated
  })
  const last = scenario.mutations[scenario.batches.length] ?? []
  return [...replies, mutate(ResponsesServer.textResponse("All done."), last, earlier)]
}

const play = (replies: ReadonlyArray<ReadonlyArray<Step>>) =>
  Effect.scoped(
    Effect.gen(function*() {
      const home = tempDir("stream-fuzz")
      const ran: Array<string> = []
      const server = yield* scriptedModel(replies)
      const { outcome } = yield* withAgent({ home, url: server.url, tools: [EchoTool.make((text) => void ran.push(text))] }, turn("go"))
      const lines = sessionLines(home)
      Fs.rmSync(home, { recursive: true, force: true })
      const starts = lines.filter((line) => line["type"] === "tool_start").length
      const result: TurnResult = {
        status: outcome.status,
        ran,
        responses: lines.filter((line) => line["type"] === "model_response").length
      }
      return { result, starts, last: lines.at(-1) }
    })
  )

const key = (result: TurnResult): string => JSON.stringify(result)

describe("the Agent under mutated model streams", () => {
  it("runs a tool only for a received, well-formed response.completed with valid call ids", async () => {
    const seen = { completed: 0, failed: 0, ranSomething: 0, failedAfterRunning: 0, ambiguous: 0 }
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (scenario) => {
        // A turn of the event loop per case, so the test worker answers its runner meanwhile.
        await new Promise((resolve) => setImmediate(resolve))
        const replies = repliesOf(scenario)
        const expected = expectedTurns(replies)
        const { result, starts, last } = await Effect.runPromise(play(replies))
        const allowed = new Set(expected.map(key))
        if (allowed.size > 1) seen.ambiguous += 1
        if (!allowed.has(key(result))) {
          throw new Error(`got ${key(result)}; the oracle allows ${[...allowed].join(" or ")}`)
        }
        // Every execution was preceded by its saved start; the turn's end is on disk.
        expect(starts).toBe(result.ran.length)
        expect(last).toMatchObject({ type: "turn_end", status: result.status })
        seen[result.status === "completed" ? "completed" : "failed"] += 1
        if (result.ran.length > 0) seen.ranSomething += 1
        if (result.ran.length > 0 && result.status === "failed") seen.failedAfterRunning += 1
      }),
      { numRuns: 200 }
    )
    // The generator reaches every kind of outcome.
    expect(seen.completed).toBeGreaterThan(10)
    expect(seen.failed).toBeGreaterThan(10)
    expect(seen.ranSomething).toBeGreaterThan(10)
    expect(seen.failedAfterRunning).toBeGreaterThan(0)
  }, 120_000)

  it("the oracle agrees with hand-made cases", () => {
    const calls = [
      { call_id: "a", name: "echo", arguments: JSON.stringify({ text: "A" }) },
      { call_id: "b", name: "echo", arguments: JSON.stringify({ text: "B" }) }
    ]
    const tool = ResponsesServer.toolCallResponse(calls)
    const text = ResponsesServer.textResponse("ok")
    const outcome = (replies: ReadonlyArray<ReadonlyArray<Step>>) => expectedTurns(replies).map(key)
    expect(outcome([tool, text])).toEqual([key({ status: "completed", ran: ["A", "B"], responses: 2 })])
    expect(outcome([tool.slice(0, -1), text])).toEqual([key({ status: "failed", ran: [], responses: 0 })])
    expect(outcome([[...tool.slice(0, -1), { delay: 1 }, "drop"], text])).toEqual([key({ status: "failed", ran: [], responses: 0 })])
    expect(outcome([[garbageStep("done", ""), ...tool], text])).toEqual([key({ status: "failed", ran: [], responses: 0 })])
    expect(outcome([[garbageStep("comment", ""), ...tool], text])).toEqual([key({ status: "completed", ran: ["A", "B"], responses: 2 })])
    expect(outcome([[garbageStep("forgedCompleted", ""), ...tool], text])).toEqual([key({ status: "completed", ran: ["forged"], responses: 2 })])
    expect(outcome([mutate(tool, [{ op: "ids", which: 0, mode: "duplicate", pick: 1 }], []), text])).toEqual([
      key({ status: "failed", ran: [], responses: 0 })
    ])
    expect(outcome([tool, mutate(tool, [{ op: "ids", which: 0, mode: "fresh", pick: 0 }], []), text])).toEqual([
      key({ status: "completed", ran: ["A", "B", "A", "B"], responses: 3 })
    ])
    // The second reuses the first's call ids: refused, so not saved.
    expect(outcome([tool, tool, text])).toEqual([key({ status: "failed", ran: ["A", "B"], responses: 1 })])
    // An unflushed drop right after the completed event may or may not lose it.
    expect(new Set(outcome([[...tool, "drop"], text]))).toEqual(
      new Set([key({ status: "failed", ran: [], responses: 0 }), key({ status: "completed", ran: ["A", "B"], responses: 2 })])
    )
  })
})
