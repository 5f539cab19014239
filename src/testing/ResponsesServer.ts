/**
 * A loopback HTTP server that speaks the OpenAI Responses streaming protocol
 * (`POST /v1/responses`, Server-Sent Events). Tests script it to reproduce what a
 * real endpoint does, failures included; `mino --demo` uses it as its model.
 *
 * A handler turns each request into a Reply: an HTTP error, or a script of steps
 * played one after another on the open SSE response.
 */
import * as Http from "node:http"
import type * as Net from "node:net"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as Json from "../Json.js"
import type { ResponseItem } from "../protocol/ResponseItem.js"

/** One Responses streaming event; it is sent with `event: <type>` and a `sequence_number`. */
export interface ServerEvent {
  readonly type: string
  readonly [field: string]: unknown
}

/** One step of a reply script. */
export type Step =
  | ServerEvent
  /** Wait this many milliseconds. */
  | { readonly delay: number }
  /** Wait until this effect completes (a latch a test controls). */
  | { readonly wait: Effect.Effect<void> }
  /** Write this text as is (malformed SSE or JSON). */
  | { readonly raw: string }
  /** Destroy the socket mid-stream. */
  | "drop"
  /** Send nothing more and keep the socket open. */
  | "stall"

export interface HttpError {
  readonly status: number
  /** Sent as JSON, unless `raw` is given. */
  readonly body: unknown
  /** The body as is (plain text, HTML, a torn JSON), with the `content-type` of `headers` or `text/plain`. */
  readonly raw?: string
  readonly headers?: Readonly<Record<string, string>>
}

export type Reply = HttpError | ReadonlyArray<Step>

export interface Request {
  /** The parsed JSON body. */
  readonly body: unknown
  readonly headers: Http.IncomingHttpHeaders
  /** The request's path and query, as sent (`/v1/responses`, `/openai/responses?api-version=...`). */
  readonly url: string
}

export type Handler = (request: Request) => Effect.Effect<Reply>

export interface LoggedRequest extends Request {
  /** Completes when the reply has finished or its connection has closed. */
  readonly closed: Effect.Effect<void>
}

export interface ResponsesServer {
  /** The base URL to give the SDK, e.g. `http://127.0.0.1:54321/v1`. */
  readonly url: string
  readonly port: number
  /** Every request received on the Responses path, in arrival order. */
  readonly requests: Effect.Effect<ReadonlyArray<LoggedRequest>>
  /** Sockets currently open, idle keep-alive ones included. */
  readonly openConnections: Effect.Effect<number>
}

const isScript = (reply: Reply): reply is ReadonlyArray<Step> => Array.isArray(reply)

/** Any path that ends in `/responses` (`/v1/responses`, Azure's `/openai/responses`, a proxy's prefix). */
const isResponsesPath = (url: string | undefined): boolean => {
  const path = (url ?? "").split("?")[0] ?? ""
  return path === "/responses" || path.endsWith("/responses")
}

const readBody = (request: Http.IncomingMessage): Effect.Effect<string> =>
  Effect.async<string>((resume) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => resume(Effect.succeed(Buffer.concat(chunks).toString("utf8"))))
    request.on("error", () => resume(Effect.succeed("")))
  })

const sendJson = (response: Http.ServerResponse, status: number, body: unknown, headers?: Readonly<Record<string, string>>) => {
  response.writeHead(status, { ...headers, "content-type": "application/json" })
  response.end(JSON.stringify(body))
}

/**
 * Writes `text`, then waits while the socket's buffer is full: a script of
 * hundreds of megabytes (an endless stream) is sent as the client reads it, not
 * held in this process.
 */
const send = (response: Http.ServerResponse, text: string): Effect.Effect<void> =>
  response.write(text) || response.writableEnded || response.destroyed
    ? Effect.void
    : Effect.async<void>((resume) => {
      const done = () => {
        response.off("drain", done)
        response.off("close", done)
        resume(Effect.void)
      }
      response.on("drain", done)
      response.on("close", done)
    })

const playScript = (
  request: Http.IncomingMessage,
  response: Http.ServerResponse,
  steps: ReadonlyArray<Step>
): Effect.Effect<void> =>
  Effect.gen(function* () {
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
    response.flushHeaders()
    let sequence = 0
    for (const step of steps) {
      // The client went away: the rest of a long script is not even built.
      if (response.destroyed) return
      if (step === "drop") {
        // Let what was written reach the socket first: a drop cuts the stream, not the past.
        yield* Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))
        request.socket.destroy()
        return
      }
      if (step === "stall") {
        return yield* Effect.never
      }
      if ("type" in step) {
        const data = JSON.stringify({ ...step, sequence_number: sequence++ })
        yield* send(response, `event: ${step.type}\ndata: ${data}\n\n`)
      } else if ("delay" in step) {
        yield* Effect.sleep(step.delay)
      } else if ("wait" in step) {
        yield* step.wait
      } else {
        yield* send(response, step.raw)
      }
    }
    response.end()
  })

/** A server listening on 127.0.0.1 while the scope is open: its port, and the sockets it has open. */
export interface Listening {
  readonly port: number
  readonly sockets: ReadonlySet<Net.Socket>
}

/**
 * `server` (an HTTP or a plain TCP server) listening on 127.0.0.1, a free port; the scope closes it
 * and destroys every socket still open, so a client that holds one keeps nothing waiting.
 */
export const listening = (server: Net.Server): Effect.Effect<Listening, never, Scope.Scope> => {
  const sockets = new Set<Net.Socket>()
  server.on("connection", (socket: Net.Socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  return Effect.acquireRelease(
    Effect.async<Listening>((resume) => {
      server.listen(0, "127.0.0.1", () => {
        const address = server.address()
        resume(Effect.succeed({ port: typeof address === "object" && address !== null ? address.port : 0, sockets }))
      })
    }),
    () =>
      Effect.async<void>((resume) => {
        server.close(() => resume(Effect.void))
        for (const socket of sockets) socket.destroy()
      })
  )
}

/** Starts the server on 127.0.0.1 (a free port); the scope closes it and every open socket. */
export const make = (handler: Handler): Effect.Effect<ResponsesServer, never, Scope.Scope> =>
  Effect.gen(function* () {
    const log = yield* Ref.make<ReadonlyArray<LoggedRequest>>([])
    const run = yield* FiberSet.makeRuntime<never>()

    const serve = (request: Http.IncomingMessage, response: Http.ServerResponse) =>
      Effect.gen(function* () {
        const closed = yield* Deferred.make<void>()
        response.on("close", () => Deferred.unsafeDone(closed, Effect.void))
        if (request.method !== "POST" || !isResponsesPath(request.url)) {
          request.resume()
          return sendJson(response, 404, { error: { message: `no route for ${request.method} ${request.url}` } })
        }
        const body = Json.parse(yield* readBody(request))
        if (body === undefined) {
          return sendJson(response, 400, { error: { message: "request body is not JSON" } })
        }
        const logged = { body, headers: request.headers, url: request.url ?? "", closed: Deferred.await(closed) }
        yield* Ref.update(log, (requests) => [...requests, logged])
        const reply = yield* handler(logged)
        if (!isScript(reply)) {
          if (reply.raw === undefined) return sendJson(response, reply.status, reply.body, reply.headers)
          response.writeHead(reply.status, { "content-type": "text/plain", ...reply.headers })
          return response.end(reply.raw)
        }
        // Stop the script as soon as the client goes away.
        yield* Effect.raceFirst(playScript(request, response, reply), Deferred.await(closed))
      })

    const { port, sockets } = yield* listening(Http.createServer((request, response) => run(serve(request, response))))
    return {
      url: `http://127.0.0.1:${port}/v1`,
      port,
      requests: Ref.get(log),
      openConnections: Effect.sync(() => sockets.size)
    }
  })

// ---------------------------------------------------------------------------
// Builders for realistic event sequences. They return plain arrays of steps, so
// a test can truncate, reorder or splice them.

export interface MessageOptions {
  readonly id?: string
  /** The assistant phase (`commentary`, `final_answer`), kept verbatim when present. */
  readonly phase?: string
  /** Extra fields put on the message item, to prove unknown fields are kept. */
  readonly extra?: Readonly<Record<string, unknown>>
}

export interface ResponseOptions {
  readonly id?: string
  readonly model?: string
  /** The tokens `response.completed` reports (default: 10 in, 10 out). */
  readonly usage?: { readonly input_tokens: number; readonly output_tokens: number }
}

export interface ToolCall {
  readonly call_id: string
  readonly name: string
  readonly arguments: string
}

export interface ToolCallOptions extends ResponseOptions {
  /** A reasoning item (opaque encrypted content) before the calls. */
  readonly reasoning?: { readonly id?: string; readonly encrypted_content?: string }
  /** A message before the calls. */
  readonly message?: { readonly text: string } & MessageOptions
}

let counter = 0
const nextId = (prefix: string) => `${prefix}_${(++counter).toString().padStart(4, "0")}`

/** Splits text into word-sized deltas, as a real stream does. */
const deltas = (text: string): ReadonlyArray<string> => text.match(/\s*\S+\s*/g) ?? [text]

const messageItem = (text: string, options: MessageOptions): ResponseItem => ({
  id: options.id ?? nextId("msg"),
  type: "message",
  status: "completed",
  role: "assistant",
  ...(options.phase === undefined ? {} : { phase: options.phase }),
  content: [{ type: "output_text", text, annotations: [], logprobs: [] }],
  ...options.extra
})

const messageEvents = (item: ResponseItem, text: string, output_index: number): ReadonlyArray<ServerEvent> => {
  const item_id = item["id"]
  const where = { item_id, output_index, content_index: 0 }
  const part = { type: "output_text", text, annotations: [], logprobs: [] }
  return [
    { type: "response.output_item.added", output_index, item: { ...item, status: "in_progress", content: [] } },
    { type: "response.content_part.added", ...where, part: { ...part, text: "" } },
    ...deltas(text).map((delta) => ({ type: "response.output_text.delta", ...where, delta, logprobs: [] })),
    { type: "response.output_text.done", ...where, text, logprobs: [] },
    { type: "response.content_part.done", ...where, part },
    { type: "response.output_item.done", output_index, item }
  ]
}

const functionCallItem = (call: ToolCall): ResponseItem => ({
  id: nextId("fc"),
  type: "function_call",
  status: "completed",
  arguments: call.arguments,
  call_id: call.call_id,
  name: call.name
})

const functionCallEvents = (item: ResponseItem, call: ToolCall, output_index: number): ReadonlyArray<ServerEvent> => {
  const where = { item_id: item["id"], output_index }
  return [
    { type: "response.output_item.added", output_index, item: { ...item, status: "in_progress", arguments: "" } },
    ...deltas(call.arguments).map((delta) => ({ type: "response.function_call_arguments.delta", ...where, delta })),
    { type: "response.function_call_arguments.done", ...where, name: call.name, arguments: call.arguments },
    { type: "response.output_item.done", output_index, item }
  ]
}

const wrap = (options: ResponseOptions, output: ReadonlyArray<ResponseItem>, events: ReadonlyArray<ServerEvent>): Array<Step> => {
  const base = {
    id: options.id ?? nextId("resp"),
    object: "response",
    created_at: 1_790_000_000,
    model: options.model ?? "mino-loopback",
    store: false,
    parallel_tool_calls: false
  }
  return [
    { type: "response.created", response: { ...base, status: "in_progress", output: [] } },
    { type: "response.in_progress", response: { ...base, status: "in_progress", output: [] } },
    ...events,
    {
      type: "response.completed",
      response: {
        ...base,
        status: "completed",
        output,
        usage: options.usage === undefined
          ? { input_tokens: 10, output_tokens: 10, total_tokens: 20 }
          : { ...options.usage, total_tokens: options.usage.input_tokens + options.usage.output_tokens }
      }
    }
  ]
}

/** A complete response with one assistant message. */
export const textResponse = (text: string, options: ResponseOptions & MessageOptions = {}): Array<Step> => {
  const item = messageItem(text, options)
  return wrap(options, [item], messageEvents(item, text, 0))
}

/** A complete response with function calls, optionally after a reasoning item and a message. */
export const toolCallResponse = (calls: ReadonlyArray<ToolCall>, options: ToolCallOptions = {}): Array<Step> => {
  const output: Array<ResponseItem> = []
  const events: Array<ServerEvent> = []
  if (options.reasoning !== undefined) {
    const item = {
      id: options.reasoning.id ?? nextId("rs"),
      type: "reasoning",
      encrypted_content: options.reasoning.encrypted_content ?? `gAAAA${nextId("opaque")}`,
      summary: []
    }
    events.push(
      { type: "response.output_item.added", output_index: output.length, item },
      { type: "response.output_item.done", output_index: output.length, item }
    )
    output.push(item)
  }
  if (options.message !== undefined) {
    const item = messageItem(options.message.text, options.message)
    events.push(...messageEvents(item, options.message.text, output.length))
    output.push(item)
  }
  for (const call of calls) {
    const item = functionCallItem(call)
    events.push(...functionCallEvents(item, call, output.length))
    output.push(item)
  }
  return wrap(options, output, events)
}

/** An HTTP error reply with the API's error body. */
export const httpError = (status: number, message: string, headers?: Readonly<Record<string, string>>): HttpError => ({
  status,
  body: { error: { message, type: "invalid_request_error", param: null, code: null } },
  ...(headers === undefined ? {} : { headers })
})
