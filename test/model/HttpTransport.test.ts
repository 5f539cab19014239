/**
 * The wire under the SDK: Mino's `node:http` fetch. It names Mino in the
 * User-Agent, keeps connections alive, streams with back-pressure, closes the
 * socket at once on interruption, and never follows a redirect to another origin.
 */
import * as Http from "node:http"
import type * as Net from "node:net"
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import { VERSION as SDK_VERSION } from "openai/version"
import * as HttpTransport from "../../src/model/transport/HttpTransport.js"
import { ModelClient, type ModelClientConfig } from "../../src/model/ModelClient.js"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import { VERSION } from "../../src/version.js"
import { Secrets } from "../../src/security/Secrets.js"

const KEY = "sk-test-0123456789abcdef"

const request = { model: "m", instructions: "i", input: [{ role: "user", content: "hi" }], tools: [] }

const run = (url: string, config: Partial<ModelClientConfig> = {}) =>
  Effect.gen(function*() {
    const client = yield* ModelClient
    return yield* Effect.either(Stream.runCollect(client.respond(request)))
  }).pipe(Effect.provide(ModelClient.layer({ baseURL: url, maxRetries: 0, ...config }).pipe(Layer.provide(Secrets.layer(KEY)))))

/** A plain HTTP server for what the Responses server does not do; the scope closes it. */
const plainServer = (handler: Http.RequestListener) =>
  Effect.acquireRelease(
    Effect.async<{ readonly server: Http.Server; readonly url: string }>((resume) => {
      const server = Http.createServer(handler)
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as Net.AddressInfo
        resume(Effect.succeed({ server, url: `http://127.0.0.1:${port}` }))
      })
    }),
    ({ server }) => Effect.sync(() => server.closeAllConnections()).pipe(Effect.zipRight(Effect.promise(() => new Promise((resolve) => server.close(resolve)))))
  )

describe("HttpTransport", () => {
  it.scopedLive("the User-Agent names Mino and its version, with the SDK's own token intact", () =>
    Effect.gen(function*() {
      const server = yield* ResponsesServer.make(() => Effect.succeed(ResponsesServer.textResponse("hi")))
      expect(Either.isRight(yield* run(server.url))).toBe(true)
      const [logged] = yield* server.requests
      expect(logged?.headers["user-agent"]).toBe(`Mino/${VERSION} OpenAI/JS ${SDK_VERSION}`)
      expect(logged?.headers.authorization).toBe(`Bearer ${KEY}`)
    }))

  it.scopedLive("requests share one kept-alive connection", () =>
    Effect.gen(function*() {
      const server = yield* ResponsesServer.make(() => Effect.succeed(ResponsesServer.textResponse("again")))
      yield* Effect.gen(function*() {
        const client = yield* ModelClient
        for (let i = 0; i < 3; i++) yield* Stream.runDrain(client.respond(request))
      }).pipe(Effect.provide(ModelClient.layer({ baseURL: server.url, maxRetries: 0 }).pipe(Layer.provide(Secrets.layer(KEY)))))
      expect(yield* server.requests).toHaveLength(3)
      expect(yield* server.openConnections).toBeLessThanOrEqual(1)
    }))

  it.scopedLive("a redirect to another origin is not followed, and the key never reaches it", () =>
    Effect.gen(function*() {
      const elsewhere = yield* ResponsesServer.make(() => Effect.succeed(ResponsesServer.textResponse("stolen")))
      const server = yield* ResponsesServer.make(() =>
        Effect.succeed({ status: 307, body: {}, headers: { location: `${elsewhere.url}/responses` } })
      )
      const result = yield* run(server.url)
      expect(Either.isLeft(result)).toBe(true)
      const error = Either.isLeft(result) ? result.left : undefined
      expect(error?.message).toBe(
        `model request failed: the model endpoint redirected to another origin (${new URL(elsewhere.url).origin}); Mino does not follow it`
      )
      expect(yield* elsewhere.requests).toHaveLength(0)
    }))

  it.scopedLive("a redirect to the same origin (307) is followed with the same request", () =>
    Effect.gen(function*() {
      const same = yield* plainServer((req, res) => {
        if (req.url === "/v1/responses") {
          req.resume()
          return res.writeHead(307, { location: "/v1/moved/responses" }).end()
        }
        // The moved path answers with a stream naming the model it was asked for: the body was replayed.
        const chunks: Array<Buffer> = []
        req.on("data", (chunk: Buffer) => chunks.push(chunk))
        req.on("end", () => {
          const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { model?: string }
          res.writeHead(200, { "content-type": "text/event-stream" })
          let n = 0
          for (const step of ResponsesServer.textResponse(`moved ${body.model ?? "?"}`)) {
            if (typeof step === "object" && "type" in step) res.write(`event: ${step.type}\ndata: ${JSON.stringify({ ...step, sequence_number: n++ })}\n\n`)
          }
          res.end()
        })
      })
      const result = yield* run(`${same.url}/v1`)
      expect(Either.isRight(result)).toBe(true)
      const text = Either.isRight(result)
        ? [...result.right].flatMap((event) => (event._tag === "TextDelta" ? [event.text] : [])).join("")
        : ""
      expect(text).toBe("moved m")
    }))

  it.scopedLive("interrupting before the response starts closes the socket at once", () =>
    Effect.gen(function*() {
      const arrived = yield* Deferred.make<void>()
      const server = yield* ResponsesServer.make(() => Effect.zipRight(Deferred.succeed(arrived, undefined), Effect.never))
      const fiber = yield* Effect.fork(run(server.url))
      yield* Deferred.await(arrived)
      yield* Effect.timeoutFail(Fiber.interrupt(fiber), { duration: "2 seconds", onTimeout: () => "interrupt hung" })
      const [logged] = yield* server.requests
      yield* Effect.timeoutFail(logged!.closed, { duration: "2 seconds", onTimeout: () => "socket still open" })
    }))

  it.scopedLive("a reader that falls behind pauses the socket (back-pressure), and nothing is lost", () =>
    Effect.gen(function*() {
      const total = 64 * 1024 * 1024
      const chunk = Buffer.alloc(64 * 1024, "x")
      let written = 0
      const { url } = yield* plainServer((req, res) => {
        req.resume()
        res.writeHead(200, { "content-type": "application/octet-stream" })
        const pump = () => {
          while (written < total) {
            written += chunk.length
            if (!res.write(chunk)) return void res.once("drain", pump)
          }
          res.end()
        }
        pump()
      })
      const transport = HttpTransport.make()
      yield* Effect.addFinalizer(() => Effect.sync(() => transport.close()))
      const response = yield* Effect.promise(() => transport.send(url, { method: "GET" }).then(HttpTransport.toResponse))
      // Nobody reads for a while: the server must be held back by the socket, not drained into memory.
      yield* Effect.sleep("500 millis")
      expect(written).toBeLessThan(total / 2)
      let received = 0
      yield* Effect.promise(async () => {
        for await (const part of response.body!) received += part.byteLength
      })
      expect(received).toBe(total)
    }), 60_000)

  it.scopedLive("a redirect with an unreadable location fails the request instead of leaving it pending", () =>
    Effect.gen(function*() {
      const { url } = yield* plainServer((req, res) => {
        req.resume()
        res.writeHead(302, { location: "http://[::1" }).end()
      })
      const transport = HttpTransport.make()
      yield* Effect.addFinalizer(() => Effect.sync(() => transport.close()))
      const outcome = yield* Effect.either(Effect.tryPromise(() => transport.send(url, {}).then(HttpTransport.toResponse))).pipe(
        Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => "the request was left pending" })
      )
      expect(Either.isLeft(outcome)).toBe(true)
    }))

  it.scopedLive("a gzip-compressed reply is decoded", () =>
    Effect.gen(function*() {
      const Zlib = yield* Effect.promise(() => import("node:zlib"))
      const { url } = yield* plainServer((req, res) => {
        req.resume()
        res.writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip" })
        res.end(Zlib.gzipSync("hello, compressed"))
      })
      const transport = HttpTransport.make()
      yield* Effect.addFinalizer(() => Effect.sync(() => transport.close()))
      const response = yield* Effect.promise(() => transport.send(url, {}).then(HttpTransport.toResponse))
      expect(yield* Effect.promise(() => response.text())).toBe("hello, compressed")
    }))
})
