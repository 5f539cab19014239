/**
 * A real stream (reasoning, a message, a tool call) cut cleanly after every one of
 * its events, through the real client and a real local server: before
 * `response.completed` the request fails with the one line for a stream that
 * ended early (ResponseInProgress.end owns it), the text shown so far intact and
 * nothing completed; once it came, the response completes and nothing fails.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { ModelClient, type ModelEvent, type ModelRequest } from "../../src/model/ModelClient.js"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import { Secrets } from "../../src/security/Secrets.js"

const request: ModelRequest = { model: "gpt-test", instructions: "Be brief.", input: [{ role: "user", content: "hi" }], tools: [] }

const full = ResponsesServer.toolCallResponse([{ call_id: "call_1", name: "bash", arguments: "{\"command\":\"ls\"}" }], {
  reasoning: {},
  message: { text: "Let me look at the files here." }
})

const swept = { cuts: 0 }

describe("a stream cut after any event", () => {
  afterAll(() => console.log(`cuts swept through the real client: ${swept.cuts} of a ${full.length}-event stream`))

  it.scopedLive("fails as ended early exactly when response.completed had not come, the text so far intact", () =>
    Effect.gen(function* () {
      let served = 0
      const server = yield* ResponsesServer.make(() => Effect.sync(() => full.slice(0, served++)))
      const client = yield* Effect.provide(ModelClient, ModelClient.layer({ baseURL: server.url, maxRetries: 0 }).pipe(Layer.provide(Secrets.layer("sk-test-0123456789abcdef"))))
      for (let cut = 0; cut <= full.length; cut++) {
        const events: Array<ModelEvent> = []
        const ended = yield* Effect.either(Stream.runForEach(client.respond(request), (event) => Effect.sync(() => void events.push(event))))
        const error = Option.getOrUndefined(Either.getLeft(ended))
        const sent = full.slice(0, cut)
        const streamed = sent.flatMap((step) =>
          typeof step === "object" && "type" in step && step.type === "response.output_text.delta" && typeof step["delta"] === "string" ? [step["delta"]] : []
        ).join("")
        const completed = sent.some((step) => typeof step === "object" && "type" in step && step.type === "response.completed")
        const shown = events.flatMap((event) => (event._tag === "TextDelta" ? [event.text] : [])).join("")
        expect({ cut, completed: events.some((event) => event._tag === "Completed"), error: error?.message }).toEqual({
          cut,
          completed,
          error: completed ? undefined : "model stream ended before response.completed"
        })
        if (completed) expect(shown).toBe("Let me look at the files here.")
        else expect(shown).toBe(streamed)
        swept.cuts += 1
      }
      expect(swept.cuts).toBe(full.length + 1)
    }))
})
