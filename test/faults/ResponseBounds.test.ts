/**
 * An endpoint cannot make Mino hold a response without bound (issue 27, item 3).
 * Played by the real loopback server to the real client and Agent: endless
 * streams of large items, one enormous event, an event with no line end ever,
 * many small items, deltas for ever-new output indexes, one enormous text delta.
 * Each ends the turn `failed` with the one line that names the bound passed,
 * having read little more than the bound; nothing of the response is saved; the
 * next turn works. Keep-alive comments, however many, hold nothing and meet the
 * idle and overall rules, named as such. And the cost of one event grows with its
 * size, through the whole client (a sweep, figures printed, no timing asserted).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { ModelClient, type ModelClientConfig } from "../../src/model/ModelClient.js"
import * as ResponseBudget from "../../src/model/stream/ResponseBudget.js"
import { Secrets } from "../../src/security/Secrets.js"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import * as EchoTool from "../support/EchoTool.js"
import { API_KEY, scriptedModel, sessionLines, tempDir, turn, types, withAgent } from "../support/Harness.js"

const MIB = 1024 * 1024
const KEPT = `the model's response grew past ${ResponseBudget.MAX_KEPT_BYTES / MIB} MiB before it completed, the most Mino keeps of one response`
const ITEMS = `the model's response grew past ${ResponseBudget.MAX_ITEMS} items before it completed, the most Mino keeps of one response`
const EVENT = `the model stream sent more than ${ResponseBudget.MAX_EVENT_BYTES / MIB} MiB without ending an event, the most Mino reads of one event`

const created: ResponsesServer.Step = { type: "response.created", response: { id: "resp_big", status: "in_progress", output: [] } }

/** `count` copies of `steps`, each followed by a tally of what the server has written so far. */
const repeated = (count: number, steps: ReadonlyArray<ResponsesServer.Step>, tally: { bytes: number }, bytes: number): Array<ResponsesServer.Step> =>
  Array.from({ length: count }, (): ReadonlyArray<ResponsesServer.Step> => [...steps, { wait: Effect.sync(() => void (tally.bytes += bytes)) }]).flat()

/** A finished reasoning item whose opaque content is `content` (one string shared by every step). */
const reasoning = (content: string, index: number): ResponsesServer.Step => ({
  type: "response.output_item.done",
  output_index: index,
  item: { id: `rs_${index}`, type: "reasoning", summary: [], encrypted_content: content }
})

interface Attack {
  readonly name: string
  /** The reply, and how many bytes of it the server had written when the client stopped reading. */
  readonly reply: (tally: { bytes: number }) => ResponsesServer.Reply
  readonly reason: string
  /** For a reply that counts what it wrote: the most it may have (the bound, and what sockets and buffers hold beyond it). */
  readonly within?: number
}

const MEGABYTE_OF_X = "x".repeat(MIB)
const MEGABYTE_OF_E = "E".repeat(MIB)
const attacks: ReadonlyArray<Attack> = [
  {
    name: "items of 1 MiB for ever, never completed",
    // One item object sent again and again (the server sends each as its own event).
    reply: (tally) => [created, ...Array.from({ length: 2_000 }, (_, i) => [reasoning(MEGABYTE_OF_E, i), { wait: Effect.sync(() => void (tally.bytes += MIB)) }]).flat()],
    reason: KEPT,
    within: ResponseBudget.MAX_KEPT_BYTES + 16 * MIB
  },
  {
    name: "one event of 200 MiB",
    reply: (tally) => [created, { raw: "event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"item\":{\"type\":\"reasoning\",\"encrypted_content\":\"" }, ...repeated(200, [{ raw: MEGABYTE_OF_X }], tally, MIB), { raw: "\"}}\n\n" }, "stall"],
    reason: EVENT,
    within: ResponseBudget.MAX_EVENT_BYTES + 16 * MIB
  },
  {
    name: "bytes with no line end, for ever",
    reply: (tally) => [created, ...repeated(2_000, [{ raw: MEGABYTE_OF_X }], tally, MIB), "stall"],
    reason: EVENT,
    within: ResponseBudget.MAX_EVENT_BYTES + 16 * MIB
  },
  {
    name: "many small items, never completed",
    reply: () => [created, ...Array.from({ length: ResponseBudget.MAX_ITEMS + 5 }, (_, i) => reasoning("E", i)), "stall"],
    reason: ITEMS
  },
  {
    name: "deltas for ever-new output indexes",
    reply: () => [created, ...Array.from({ length: ResponseBudget.MAX_ITEMS + 5 }, (_, i): ResponsesServer.Step => ({ type: "response.output_text.delta", output_index: i, content_index: 0, delta: "" })), "stall"],
    reason: ITEMS
  },
  {
    name: "one text delta of 20 MiB",
    reply: () => [created, { type: "response.output_text.delta", item_id: "msg_1", output_index: 0, content_index: 0, delta: "y".repeat(20 * MIB) }, "stall"],
    reason: KEPT
  }
]

describe("a response is bounded before it completes", () => {
  for (const attack of attacks) {
    it.scopedLive(`${attack.name}: the turn fails with the bound's line, nothing of it is saved, the next turn works`, () =>
      Effect.gen(function*() {
        const home = tempDir("bounds")
        const tally = { bytes: 0 }
        const ran: Array<string> = []
        const server = yield* scriptedModel([attack.reply(tally), ResponsesServer.textResponse("recovered")])
        const setup = { home, url: server.url, tools: [EchoTool.make((t) => void ran.push(t))], idleTimeoutMs: 60_000 }
        const started = performance.now()
        const failed = yield* withAgent(setup, turn("first"))
        const ms = performance.now() - started
        expect(failed.outcome.status).toBe("failed")
        expect(failed.outcome.reason).toBe(attack.reason)
        expect(failed.outcome.reason).not.toContain(API_KEY)
        // The client stopped reading and closed the connection: the server wrote little more than the bound.
        yield* (yield* server.requests)[0]!.closed
        if (attack.within !== undefined) {
          expect(tally.bytes).toBeGreaterThan(0)
          expect(tally.bytes).toBeLessThanOrEqual(attack.within)
        }
        const written = tally.bytes > 0 ? `, the server having written ${(tally.bytes / MIB).toFixed(0)} MiB of its large part` : ""
        console.log(`${attack.name}: failed after ${ms.toFixed(0)} ms${written}: ${failed.outcome.reason}`)
        expect(ran).toEqual([])
        expect(types(sessionLines(home))).toEqual(["user_input", "turn_end"])
        expect(sessionLines(home).at(-1)).toMatchObject({ type: "turn_end", status: "failed", reason: attack.reason })

        const next = yield* withAgent(setup, turn("second"))
        expect(next.outcome.status).toBe("completed")
      }), 120_000)
  }
})

const request = { model: "gpt-test", instructions: "Be brief.", input: [{ role: "user", content: "hi" }], tools: [] }

/** Runs one request through the real client to its end: the last event's tag or the error's line, and how long it took. */
const respond = (url: string, config: Partial<ModelClientConfig>) =>
  Effect.gen(function*() {
    const client = yield* ModelClient
    const started = performance.now()
    const result = yield* client.respond(request).pipe(Stream.runLast, Effect.either)
    const ms = performance.now() - started
    return Either.match(result, {
      onLeft: (error) => ({ ms, outcome: `${error.reason}: ${error.message}` }),
      onRight: (last) => ({ ms, outcome: last._tag === "Some" ? last.value._tag : "nothing" })
    })
  }).pipe(Effect.provide(ModelClient.layer({ baseURL: url, maxRetries: 0, ...config }).pipe(Layer.provide(Secrets.layer(API_KEY)))))

describe("keep-alive comments", () => {
  it.scopedLive("a comment every 20 ms and no event: the idle rule ends it, named as no event", () =>
    Effect.gen(function*() {
      const server = yield* ResponsesServer.make(() =>
        Effect.succeed([created, ...Array.from({ length: 10_000 }, (): ReadonlyArray<ResponsesServer.Step> => [{ delay: 20 }, { raw: ": keep-alive\n\n" }]).flat()])
      )
      const { outcome } = yield* respond(server.url, { idleTimeoutMs: 1_000 })
      expect(outcome).toBe("timeout: model stream timed out: no event for 1s")
    }))

  it.scopedLive("a flood of comments (up to 256 MiB) ends as no event, not as too large", () =>
    Effect.gen(function*() {
      const block = ": keep-alive\n\n".repeat(Math.floor(MIB / 14))
      const tally = { bytes: 0 }
      const server = yield* ResponsesServer.make(() => Effect.succeed([created, ...repeated(256, [{ raw: block }], tally, block.length), "stall"]))
      const { outcome, ms } = yield* respond(server.url, { idleTimeoutMs: 2_000 })
      expect(outcome).toBe("timeout: model stream timed out: no event for 2s")
      console.log(`a flood of comments: ${(tally.bytes / MIB).toFixed(0)} MiB read in ${ms.toFixed(0)} ms (2 s of it the idle wait), then: ${outcome}`)
    }), 120_000)

  it.scopedLive("comments and progress events for ever: the overall rule ends it", () =>
    Effect.gen(function*() {
      const progress: ResponsesServer.Step = { type: "response.in_progress", response: { id: "resp_big", status: "in_progress", output: [] } }
      const server = yield* ResponsesServer.make(() =>
        Effect.succeed([created, ...Array.from({ length: 10_000 }, (): ReadonlyArray<ResponsesServer.Step> => [{ delay: 20 }, { raw: ": ping\n\n" }, progress]).flat()])
      )
      const { outcome } = yield* respond(server.url, { idleTimeoutMs: 1_000, requestTimeoutMs: 1_500 })
      expect(outcome).toBe("timeout: model request stopped after 1500ms, the limit for one request, without response.completed")
    }))
})

describe("one event's cost through the client", () => {
  it.scopedLive("a reasoning item of 1 to 15 MiB, then response.completed: completed, at about the same cost per byte (sweep, figures printed)", () =>
    Effect.gen(function*() {
      const sizes = [1, 2, 4, 8, 15].map((mib) => mib * MIB)
      const figures: Array<string> = []
      for (const size of sizes) {
        const item = { id: "rs_1", type: "reasoning", summary: [], encrypted_content: "E".repeat(size - 100) }
        const server = yield* ResponsesServer.make(() =>
          Effect.succeed([
            created,
            { type: "response.output_item.done", output_index: 0, item },
            { type: "response.completed", response: { id: "resp_big", status: "completed", output: [] } }
          ])
        )
        const { outcome, ms } = yield* respond(server.url, { idleTimeoutMs: 60_000 })
        expect(outcome).toBe("Completed")
        figures.push(`${size / MIB} MiB: ${ms.toFixed(0)} ms, ${(ms / (size / MIB)).toFixed(1)} ms/MiB`)
      }
      console.log(`one event through the client (${sizes.length} sizes): ${figures.join("; ")}`)
    }), 120_000)
})
