/**
 * Verbatim means verbatim: output items are saved and replayed exactly as the
 * model sent them, keys such as `__proto__` and `constructor` included; an item
 * that cannot be saved (nested too deep, larger than 16 MiB) fails the turn with
 * one clear line and leaves nothing of it in the file, and the chat goes on.
 */
import * as Fs from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import { SessionStore } from "../../src/session/SessionStore.js"
import * as EchoTool from "../support/EchoTool.js"
import { inputOf, scriptedModel, sessionFile, sessionLines, tempDir, turn, types, withAgent } from "../support/Harness.js"
import { Secrets } from "../../src/security/Secrets.js"

/** A completed response whose output is `items`, given as JSON text and sent as is. */
const rawResponse = (id: string, items: ReadonlyArray<string>): ResponsesServer.Reply => [
  { type: "response.created", response: { id, object: "response", status: "in_progress", output: [] } },
  {
    raw: `event: response.completed\ndata: {"type":"response.completed","sequence_number":1,"response":{"id":"${id}","object":"response","status":"completed","output":[${
      items.join(",")
    }]}}\n\n`
  }
]

const PROTO_REASONING = "{\"id\":\"rs_1\",\"type\":\"reasoning\",\"__proto__\":{\"polluted\":\"yes\"},\"constructor\":{\"prototype\":{\"x\":1}},\"summary\":[],\"encrypted_content\":\"gAAAA\"}"
const PROTO_CALL = "{\"type\":\"function_call\",\"id\":\"fc_1\",\"call_id\":\"c1\",\"name\":\"echo\",\"arguments\":\"{\\\"text\\\":\\\"hi\\\"}\",\"__proto__\":null,\"constructor\":\"x\"}"

describe("verbatim output items", () => {
  it.scopedLive("__proto__ and constructor keys are saved, sent back and replayed byte for byte", () =>
    Effect.gen(function*() {
      const home = tempDir("verbatim")
      const ran: Array<string> = []
      const server = yield* scriptedModel([
        rawResponse("resp_1", [PROTO_REASONING, PROTO_CALL]),
        ResponsesServer.textResponse("done"),
        ResponsesServer.textResponse("again")
      ])
      const tools = [EchoTool.make((text) => void ran.push(text))]
      const first = yield* withAgent({ home, url: server.url, tools }, turn("go"))
      expect(first.outcome.status).toBe("completed")
      expect(ran).toEqual(["hi"])
      // On disk: the items exactly as received.
      const text = Fs.readFileSync(sessionFile(home)!, "utf8")
      expect(text).toContain(`"output":[${PROTO_REASONING},${PROTO_CALL}]`)
      // Sent back within the turn, exactly.
      const within = inputOf((yield* server.requests)[1]!).map((item) => JSON.stringify(item))
      expect(within.slice(1, 3)).toEqual([PROTO_REASONING, PROTO_CALL])
      expect(Object.getPrototypeOf(inputOf((yield* server.requests)[1]!)[1])).toBe(Object.prototype)

      // Replayed after a restart, exactly.
      yield* withAgent({ home, url: server.url, tools }, turn("next"))
      const replayed = inputOf((yield* server.requests)[2]!).map((item) => JSON.stringify(item))
      expect(replayed.slice(1, 3)).toEqual([PROTO_REASONING, PROTO_CALL])
      expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined()
    }))

  const unsaveable: ReadonlyArray<readonly [string, () => string, RegExp]> = [
    [
      "nested 100,000 levels deep",
      // A valid answer (it has text), so it reaches the save and its cap.
      () => `{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hi"}],"deep":${"{\"a\":".repeat(100_000)}1${"}".repeat(100_000)}}`,
      /^cannot save the model response: it is nested more than 1000 levels deep; nothing of it was written$/
    ],
  ]
  for (const [name, item, reason] of unsaveable) {
    it.scopedLive(`an item ${name} fails the turn with one line; nothing of it is written; the chat goes on`, () =>
      Effect.gen(function*() {
        const home = tempDir("verbatim")
        const server = yield* scriptedModel([rawResponse("resp_big", [item()]), ResponsesServer.textResponse("fine")])
        const result = yield* withAgent({ home, url: server.url, tools: [EchoTool.make()] }, Effect.gen(function*() {
          const failed = yield* turn("one")
          const next = yield* turn("two")
          return { failed, next }
        }))
        expect(result.failed.outcome.status).toBe("failed")
        expect(result.failed.outcome.reason).toMatch(reason)
        expect(result.next.outcome.status).toBe("completed")
        const lines = sessionLines(home)
        expect(types(lines)).toEqual(["user_input", "turn_end", "user_input", "model_response", "turn_end"])
        expect(lines[1]).toMatchObject({ status: "failed" })
        expect(Fs.statSync(sessionFile(home)!).size).toBeLessThan(4096)
      }), 60_000)
  }

  it.live("a record over 16 MiB is refused with one line and the file is left byte for byte as it was", () =>
    Effect.gen(function*() {
      const home = tempDir("verbatim")
      const outcome = yield* Effect.scoped(Effect.gen(function*() {
        const store = yield* SessionStore
        yield* store.append({ type: "user_input", turn_id: "t1", text: "hello" })
        const before = Fs.readFileSync(store.path)
        const big = { type: "message", role: "assistant", content: [{ type: "output_text", text: "x".repeat(17 * 1024 * 1024) }] }
        const refused = yield* Effect.flip(store.append({ type: "model_response", turn_id: "t1", output: [big] }))
        return { refused, before, after: Fs.readFileSync(store.path), turn: yield* store.openTurn("t1") }
      })).pipe(Effect.provide(SessionStore.layer({ home }).pipe(Layer.provide(Secrets.layerNone))))
      expect(outcome.refused._tag).toBe("RecordRejected")
      expect(outcome.refused.message).toBe("cannot save the model response: it is larger than 16 MiB; nothing of it was written")
      expect(outcome.after.equals(outcome.before)).toBe(true)
      // Memory did not advance either.
      expect(outcome.turn?.requests).toBe(0)
    }))
})
