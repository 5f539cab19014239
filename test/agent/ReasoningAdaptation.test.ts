/**
 * When the endpoint cannot verify the encrypted reasoning of earlier turns
 * (`invalid_encrypted_content`, after a proxy or organisation change), the
 * request is sent once more without it, and from then on only the reasoning of
 * the turns before that point is left out: turns answered afterwards keep
 * theirs. The file keeps every item. After a restart the point is not known: the
 * first request is refused once more and adapts again (one line each time).
 */
import * as Fs from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import * as EchoTool from "../support/EchoTool.js"
import { inputOf, sessionFile, tempDir, turn, withAgent } from "../support/Harness.js"

const reasoningOf = (request: ResponsesServer.Request): Array<unknown> =>
  inputOf(request).filter((item) => item["type"] === "reasoning").map((item) => item["encrypted_content"])

const lastQuestion = (request: ResponsesServer.Request): unknown =>
  (inputOf(request).findLast((item) => item["role"] === "user")?.["content"] as Array<{ text: string }> | undefined)?.[0]?.text

const unverifiable: ResponsesServer.HttpError = {
  status: 400,
  body: { error: { message: "The encrypted content gAAA...ng== could not be verified.", type: "invalid_request_error", param: null, code: "invalid_encrypted_content" } }
}

describe("reasoning the endpoint cannot verify", () => {
  it.live("is left out from the turns before the refusal only; later turns keep theirs; a restart adapts again", () =>
    Effect.gen(function*() {
      const home = tempDir("reasoning")
      // The "new" endpoint: it refuses reasoning it did not make (OLD-), answers with its own (NEW-).
      const server = yield* ResponsesServer.make((request) => {
        const question = lastQuestion(request)
        const reasoning = reasoningOf(request)
        if (question !== "one" && reasoning.some((content) => String(content).startsWith("OLD-"))) return Effect.succeed(unverifiable)
        const results = inputOf(request).slice(inputOf(request).findLastIndex((item) => item["role"] === "user")).filter((item) => item["type"] === "function_call_output")
        if (results.length > 0) return Effect.succeed(ResponsesServer.textResponse(`answered ${String(question)}`))
        return Effect.succeed(ResponsesServer.toolCallResponse(
          [{ call_id: `call_${String(question)}`, name: "echo", arguments: JSON.stringify({ text: String(question) }) }],
          { reasoning: { encrypted_content: `${question === "one" ? "OLD" : "NEW"}-${String(question)}` } }
        ))
      })
      const tools = [EchoTool.make()]
      const first = yield* withAgent({ home, url: server.url, tools }, Effect.gen(function*() {
        const turns = []
        for (const question of ["one", "two", "three"]) turns.push(yield* turn(question))
        return turns
      }))
      expect(first.map(({ outcome }) => outcome.status)).toEqual(["completed", "completed", "completed"])
      expect(first[1]!.events.filter((event) => event._tag === "ModelAdapted")).toHaveLength(1)
      expect(first[2]!.events.filter((event) => event._tag === "ModelAdapted")).toHaveLength(0)
      const requests = yield* server.requests
      // one: 2 requests; two: refused, adapted, result; three: 2 requests.
      expect(requests.map(lastQuestion)).toEqual(["one", "one", "two", "two", "two", "three", "three"])
      expect(reasoningOf(requests[2]!)).toEqual(["OLD-one"])
      expect(reasoningOf(requests[3]!)).toEqual([])
      expect(reasoningOf(requests[4]!)).toEqual(["NEW-two"])
      // Turn three: turn two's reasoning is sent, turn one's is not.
      expect(reasoningOf(requests[5]!)).toEqual(["NEW-two"])
      expect(reasoningOf(requests[6]!)).toEqual(["NEW-two", "NEW-three"])
      // The file keeps every item verbatim.
      const saved = Fs.readFileSync(sessionFile(home)!, "utf8")
      for (const content of ["OLD-one", "NEW-two", "NEW-three"]) expect(saved).toContain(content)

      // A restart does not know the point: refused once, adapted once, then as before.
      const second = yield* withAgent({ home, url: server.url, tools }, turn("four"))
      expect(second.outcome.status).toBe("completed")
      expect(second.events.filter((event) => event._tag === "ModelAdapted")).toHaveLength(1)
      const after = (yield* server.requests).slice(requests.length)
      expect(reasoningOf(after[0]!)).toEqual(["OLD-one", "NEW-two", "NEW-three"])
      expect(reasoningOf(after[1]!)).toEqual([])
    }).pipe(Effect.scoped))
})
