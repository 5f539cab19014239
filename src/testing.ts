/**
 * `mino-agent/testing`: what tests of a program built on Mino need, kept out of the
 * main entry. `ResponsesServer` is a loopback HTTP server that speaks the
 * Responses SSE protocol, so a turn runs for real with no key and no network:
 *
 * ```ts
 * const server = yield* scriptedServer([
 *   ResponsesServer.toolCallResponse([{ call_id: "c1", name: "shout", arguments: "{\"text\":\"hi\"}" }]),
 *   ResponsesServer.textResponse("It says HI.")
 * ])
 * // then: Mino.layer({ apiKey: "test", endpoint: { baseURL: server.url }, ... })
 * ```
 */
import * as Effect from "effect/Effect"
import * as ResponsesServer from "./testing/ResponsesServer.js"

export { ResponsesServer }

/**
 * A server on 127.0.0.1 that answers the n-th request with `replies[n]`, and any
 * request past the last with HTTP 500; the scope closes it.
 */
export const scriptedServer = (replies: ReadonlyArray<ResponsesServer.Reply>) =>
  Effect.suspend(() => {
    let next = 0
    return ResponsesServer.make(() =>
      Effect.sync(() => replies[next++] ?? ResponsesServer.httpError(500, "no reply was scripted for this request"))
    )
  })
