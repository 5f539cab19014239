/**
 * The model client: one streamed Responses request per call, over the openai SDK
 * and Mino's `node:http` transport (HttpTransport.ts). This file is the shell: it
 * sends, waits, reads and redacts; the decisions are pure cores beside it. What a
 * streamed event does to the response so far, and what the stream's end means, is
 * stream/ResponseInProgress.ts (StreamEvents.ts decodes the wire for it); what a
 * failure is, Failures.ts; whether a refused request is adapted, retried or
 * failed, and what the client remembers of it, Resending.ts.
 *
 * Text deltas are display events; only a successful `response.completed` (status
 * `completed`, no error) yields the output items, verbatim, for the Agent to
 * validate and save. Text that arrived only in `output_item.done` or in
 * `response.completed` is shown then. Every way a stream can end without it
 * (HTTP error, refused connection, drop, `error` event, failed or incomplete
 * response, a non-streaming reply, malformed data, silence, a clean end too
 * early) is a ModelError whose message is one line that never contains the key.
 *
 * A request that fails before its stream starts (HTTP 429 or 5xx, a failed
 * connection) is sent again at most `maxRetries` times, each announced as a
 * `Retrying` event, each wait at most `retryWaitCapMs` whatever `retry-after` says.
 * A refusal that Adaptation.ts names is sent again once, changed, announced as an
 * `Adapted` event. Headers of the configuration (`MINO_HEADERS`) go with every
 * request, after Mino's own and before the key's. Every request ends: no event for `idleTimeoutMs`, or no
 * `response.completed` within `requestTimeoutMs` of sending it, fails it.
 *
 * Endpoint.ts says how the URL is built (a query stays a query), which header
 * carries the key on Azure, and how earlier items go back to the endpoint.
 */
import type * as OpenAISdk from "openai"
import { VERSION as SDK_VERSION } from "openai/version"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import { REDACTED, redactStrings, Secrets, type SecretsShape } from "../security/Secrets.js"
import * as Endpoint from "./Endpoint.js"
import * as GatewayHeaders from "./GatewayHeaders.js"
import * as Json from "../Json.js"
import * as Failures from "./Failures.js"
import { VERSION } from "../version.js"
import * as HttpTransport from "./transport/HttpTransport.js"
import * as RequestBody from "./request/RequestBody.js"
import type { ModelRequest } from "./request/RequestBody.js"
import * as Resending from "./Resending.js"
import * as EventFrames from "./stream/EventFrames.js"
import * as ResponseInProgress from "./stream/ResponseInProgress.js"
import * as SseMessages from "./stream/SseMessages.js"
import * as StreamEvents from "./stream/StreamEvents.js"

import { ModelError, type ModelEvent } from "../protocol/ModelEvent.js"

export { CONTEXT_WINDOW_MESSAGE } from "./ErrorBody.js"
export { type ModelRequest, requestItems } from "./request/RequestBody.js"
export { type CompletedResponse, ModelError, type ModelEvent } from "../protocol/ModelEvent.js"

/** How to reach the model. The key is not here: the client takes it from the `Secrets` service. */
export interface ModelClientConfig {
  /** A Responses-compatible endpoint; the SDK's default when absent. */
  readonly baseURL?: string | undefined
  /** Fail when no event arrives for this long (default 120 s). */
  readonly idleTimeoutMs?: number
  /**
   * Fail a request whose `response.completed` has not arrived this long after it
   * was sent, however busy the stream (default 15 min: long reasoning stays well
   * inside it; a server that sends `response.in_progress` forever does not).
   */
  readonly requestTimeoutMs?: number
  /**
   * How many times a request that failed before its stream started (HTTP 429 or
   * 5xx, a failed connection) is sent again, each announced (default 2).
   */
  readonly maxRetries?: number
  /** The longest wait before a retry, whatever `retry-after` asks (default 10 s). */
  readonly retryWaitCapMs?: number
  /** Classify the endpoint as if `baseURL`'s host were this one (Endpoint.ts; tests stand a loopback server in for a host). */
  readonly hostAs?: string
  /**
   * Headers added to every request (a gateway's own authentication: `MINO_HEADERS`,
   * checked by GatewayHeaders.ts). Their values are secrets: whoever builds the
   * client registers them with `Secrets` too, so they are redacted like the key.
   */
  readonly headers?: ReadonlyArray<readonly [string, string]>
}

type Sdk = typeof OpenAISdk

/** The endpoint when none is configured (the SDK's own default, given so that it reads no variable). */
export const DEFAULT_BASE_URL = "https://api.openai.com/v1"

/** Mino, named first beside the SDK's own token. */
const USER_AGENT = `Mino/${VERSION} OpenAI/JS ${SDK_VERSION}`

// Loaded on first request so that start-up does not pay for the SDK.
let sdkModule: Promise<Sdk> | undefined
const loadSdk = (): Promise<Sdk> => (sdkModule ??= import("openai"))

/**
 * `promise`, or a rejection with `Idle` if it takes longer than `ms`, or with
 * `Overdue` if the request's `deadline` (a `Date.now()` value) comes first. A plain
 * timer per read: an Effect timeout per streamed event would fork a fiber each.
 */
const bounded = <A>(promise: Promise<A>, ms: number, deadline: number): Promise<A> =>
  new Promise<A>((resolve, reject) => {
    const left = deadline - Date.now()
    const timer = setTimeout(() => reject(left <= ms ? new Failures.Overdue() : new Failures.Idle()), Math.max(0, Math.min(ms, left)))
    promise.then(
      (value) => {
        clearTimeout(timer)
        resolve(value)
      },
      (cause: unknown) => {
        clearTimeout(timer)
        reject(cause)
      }
    )
  })

/** How much of an error body is read (it is shown as one line). */
const ERROR_BODY_LIMIT = 64 * 1024

/** Where an error line is cut, in characters. */
const LINE_LIMIT = 300

/**
 * The first `limit` bytes of a body, as text without a character broken at the
 * end, and whether it was cut there; the rest is not read.
 */
const readCapped = async (response: Response, limit: number): Promise<{ readonly text: string; readonly cut: boolean }> => {
  if (response.body === null) return { text: "", cut: false }
  const reader = response.body.getReader()
  const chunks: Array<Uint8Array> = []
  let size = 0
  try {
    while (size < limit) {
      const { done, value } = await reader.read()
      if (done) break
      chunks.push(value)
      size += value.byteLength
    }
  } finally {
    await reader.cancel().catch(() => undefined)
  }
  // A body of exactly `limit` bytes counts as cut. Streaming, the decoder keeps a
  // character cut at the end to itself instead of making it U+FFFD.
  const cut = size >= limit
  return { text: new TextDecoder().decode(Buffer.concat(chunks).subarray(0, limit), { stream: cut }), cut }
}

/**
 * A failure as one line without the key: redacted before its whitespace collapses, again after (a
 * key with a tab in it), and where it is cut, by the rule for cuts (Secrets.redactCut).
 */
const liner = (secrets: SecretsShape) => (failure: Failures.Failure): ModelError => {
  const line = unspelled(secrets, secrets.redact(secrets.redact(failure.message).replace(/\s+/g, " ").trim()))
  return new ModelError({
    reason: failure.reason,
    message: line.length > LINE_LIMIT ? `${secrets.redactCut(line.slice(0, LINE_LIMIT - 3))}...` : line,
    ...(failure.status === undefined ? {} : { status: failure.status })
  })
}

/**
 * A line that still spells the key another way: in other letter cases (a URL's host is
 * lowercased), replaced there; once its JSON escapes are read (`\u0073k-…`, an endpoint's
 * message quoting it escaped), Mino's words before the first colon are kept and the rest
 * is not shown.
 */
const unspelled = (secrets: SecretsShape, line: string): string => {
  if (!secrets.redactable) return line
  const key = Redacted.value(secrets.apiKey).toLowerCase()
  const lower = line.toLowerCase()
  // Lower case keeps each character's place, but for a few letters outside ASCII: such a line is not shown in part.
  const folded = !lower.includes(key) ? line : lower.length === line.length ? replacedAt(line, lower, key) : undefined
  if (folded !== undefined && !secrets.inJson(folded)) return folded
  const colon = line.indexOf(": ")
  return colon === -1 ? REDACTED : `${line.slice(0, colon)}: ${REDACTED}`
}

/** `line` with each span where its lower-case form `lower` holds `key` replaced. */
const replacedAt = (line: string, lower: string, key: string): string => {
  let out = ""
  let from = 0
  for (let at = lower.indexOf(key); at !== -1; at = lower.indexOf(key, from)) {
    out += line.slice(from, at) + REDACTED
    from = at + key.length
  }
  return out + line.slice(from)
}

/**
 * An error body that still spells the key once its JSON escapes are read (`sk-a\"b`, `\u0073k-`):
 * JSON has the key taken out of its strings, as values, and is written again; a body that is
 * not JSON (torn, cut) cannot be shown in part, so none of it is.
 */
const withoutEncodedKey = (secrets: SecretsShape, text: string): string => {
  if (!secrets.inJson(text)) return text
  try {
    const again = JSON.stringify(redactStrings(JSON.parse(text), secrets.redact))
    return secrets.inJson(again) ? REDACTED : again
  } catch {
    return REDACTED
  }
}

/** What the client is started with: what `make` knows of the endpoint and the key, and the SDK's answers. */
interface Wiring {
  readonly config: ModelClientConfig
  readonly endpoint: Endpoint.Endpoint
  readonly secrets: SecretsShape
  /** The raw body of each error response, by the Headers object the SDK keeps on its error. */
  readonly errorBodies: WeakMap<Headers, string>
  /**
   * What Mino's own send of a request got when it was not a stream to read (an error status, a failure
   * to connect), by its body (the one object the SDK hands from `post` to `fetch` as it is): the SDK
   * is given that answer for the same request, and classifies it, without sending it again.
   */
  readonly answers: WeakMap<object, Promise<Response>>
}

/**
 * Mino's headers for every request, checked and built once per client. Every header is Mino's own,
 * value included: the SDK's would carry OPENAI_CUSTOM_HEADERS, which no option switches off, over
 * any of its own (User-Agent, Accept, X-Stainless-...).
 */
const headersFor = (wiring: Wiring, key: string): HttpTransport.PreparedHeaders => {
  const headers = new Headers({ accept: "application/json", "user-agent": USER_AGENT, authorization: `Bearer ${key}`, "content-type": "application/json" })
  for (const [name, value] of wiring.config.headers ?? []) headers.set(name, value)
  Endpoint.authorize(wiring.endpoint, headers, key)
  return new HttpTransport.PreparedHeaders(headers)
}

/**
 * The SDK's `fetch`: what Mino's own send of the same request got (`Wiring.answers`), for the SDK to
 * classify; the SDK sends nothing itself. An error body is kept (redacted).
 */
const fetcher = (wiring: Wiring) => {
  const { secrets } = wiring
  return async (_url: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const sent = init?.body
    const answered = typeof sent === "object" && sent !== null ? wiring.answers.get(sent) : undefined
    if (answered === undefined) throw new Error("the model client sends its requests itself")
    const response = await answered
    if (response.ok) return response
    // The SDK keeps only an error body's `error` key; keep the text for what it said otherwise.
    // Redacted before anything reads it (the SDK too), and where the cap cut it.
    const body = await readCapped(response, ERROR_BODY_LIMIT).catch(() => ({ text: "", cut: false }))
    const text = withoutEncodedKey(secrets, body.cut ? secrets.redactCut(body.text) : secrets.redact(body.text))
    const copy = new Response(text, { status: response.status, statusText: response.statusText, headers: response.headers })
    wiring.errorBodies.set(copy.headers, text)
    return copy
  }
}

/** The loaded SDK and its client, and where and how Mino sends a request itself. */
interface Started {
  readonly sdk: Sdk
  readonly client: OpenAISdk.OpenAI
  /** The request's URL, as the SDK builds it, with the endpoint's query. */
  readonly target: string
  readonly headers: HttpTransport.PreparedHeaders
}

const start = async (wiring: Wiring): Promise<Started> => {
  const sdk = await loadSdk()
  const key = Redacted.value(wiring.secrets.apiKey)
  const headers = headersFor(wiring, key)
  // Every option the SDK would otherwise read from the environment is given: Mino reads only the
  // variables it documents (OPENAI_ORG_ID, OPENAI_PROJECT_ID, OPENAI_BASE_URL, OPENAI_LOG... are not).
  const client = new sdk.OpenAI({
    apiKey: key,
    adminAPIKey: null,
    organization: null,
    project: null,
    webhookSecret: null,
    baseURL: wiring.endpoint.baseURL ?? DEFAULT_BASE_URL,
    // Mino retries itself, visibly and with a bounded wait (Resending.ts).
    maxRetries: 0,
    // The SDK would otherwise log malformed chunks to the user's terminal.
    logLevel: "off",
    fetch: fetcher(wiring)
  })
  return { sdk, client, target: Endpoint.withQuery(wiring.endpoint, client.buildURL("/responses", undefined)), headers }
}

/**
 * The SDK is loaded and the client made once, beginning now (the CLI builds the layer while the
 * user types, so the first question does not wait for it). A failure is the first request's to
 * report: it begins again. A plain promise: Effect.cached would take a lock and read the clock on
 * every request.
 */
const starter = (wiring: Wiring, line: (failure: Failures.Failure) => ModelError): Effect.Effect<Started, ModelError> => {
  let started: Promise<Started> | undefined
  // Once started, a request takes it as it is (no wait on a settled promise).
  let ready: Started | undefined
  const begin = () =>
    (started ??= start(wiring).then((value) => (ready = value), (cause: unknown) => {
      started = undefined
      throw cause
    }))
  begin().catch(() => {})
  const starting = Effect.tryPromise({
    try: begin,
    catch: (cause) => line({ reason: "connection", message: `model client could not start: ${Failures.rootMessage(cause)}` })
  })
  return Effect.suspend(() => ready === undefined ? starting : Effect.succeed(ready))
}

/** The type of the sent body's input item at an index, read only when a refusal points at one. */
const typesOf = (sent: RequestBody.Body) => {
  let input: ReadonlyArray<unknown> | undefined
  return (index: number): string | undefined => {
    if (input === undefined) {
      const parsed: unknown = Json.parse(sent.toString("utf8"))
      input = typeof parsed === "object" && parsed !== null && "input" in parsed && Array.isArray(parsed.input) ? parsed.input : []
    }
    const item: unknown = input[index]
    return typeof item === "object" && item !== null && "type" in item && typeof item.type === "string" ? item.type : undefined
  }
}

/** What a request needs of the client that sends it: made once, by `make`. */
interface Client {
  readonly endpoint: Endpoint.Endpoint
  readonly limits: Failures.Limits
  readonly policy: Resending.Policy
  readonly line: (failure: Failures.Failure) => ModelError
  readonly connect: Effect.Effect<Started, ModelError>
  readonly body: (request: ModelRequest, shape: RequestBody.Shape) => RequestBody.Body
  readonly transport: HttpTransport.HttpTransport
  readonly errorBodies: WeakMap<Headers, string>
  readonly answers: WeakMap<object, Promise<Response>>
  /** What the client remembers of the endpoint's refusals while it lives: replaced only by what Resending.ts returns. */
  memory: Resending.Memory
}

/** The endpoint and model a refusal of `include` is remembered for. */
const memoryKey = (client: Client, request: ModelRequest) => `${client.endpoint.key} ${request.model}`

/** Why a request's socket is closed when its stream ends: made once (a DOMException per request costs a stack trace). */
const ENDED = new Error("the model stream ended")

/** A request whose reply is a stream to read: its content type, and its messages' data. */
interface Opened {
  readonly contentType: string | undefined
  readonly events: AsyncIterator<unknown>
}

/** The body of a success that has none: it ends at once. */
const NO_BODY: HttpTransport.BodyReads = { read: () => Promise.resolve(undefined), cancel: () => {} }

/**
 * The request sent by Mino's transport, its signal its own (the request's end aborts it: the socket
 * closes at once if the reply had not ended). A successful reply is read by Mino (SseMessages.ts),
 * as whole, bounded events (EventFrames.ts; the SDK's own reader would cost the square of an event's
 * size). Anything else (an error status, a failure to connect) is given to the SDK as the answer to
 * the same request (`Wiring.answers`), so its errors, which Failures.ts classifies, are as they were.
 */
const post = async (client: Client, started: Started, sent: RequestBody.Body, signal: AbortSignal): Promise<Opened> => {
  const sending = client.transport.send(started.target, { method: "POST", headers: started.headers, body: sent, signal })
  const answer = await sending.catch(() => undefined)
  if (answer !== undefined && answer.status >= 200 && answer.status < 300) {
    // The SDK's error for a message that reports one, as its own reader makes it.
    const failure = (error: unknown) => new started.sdk.APIError(undefined, error as object, undefined, HttpTransport.headersOf(answer))
    return {
      contentType: HttpTransport.header(answer, "content-type"),
      events: SseMessages.reader(EventFrames.reads(answer.body ?? NO_BODY), failure)
    }
  }
  client.answers.set(sent, sending.then(HttpTransport.toResponse))
  await started.client.post("/responses", { body: sent, headers: { "content-type": "application/json" }, stream: true })
  throw new Error(`the model endpoint answered HTTP ${answer?.status ?? 0} without an event stream`)
}

/**
 * A reply in progress: an attempt to send (after a wait: a retry's), the attempt being read, or its end.
 * Resending.ts decides what follows a refusal; each adaptation or retry is announced before it is sent.
 */
type Phase =
  | { readonly _tag: "Send"; readonly attempt: Resending.Attempt; readonly waitMs: number }
  | { readonly _tag: "Read"; readonly next: Effect.Effect<ReadonlyArray<ModelEvent> | undefined, ModelError> }

/** A failure while a reply is read, as its line (Failures.ts classifies what is not one already). */
const failed = (client: Client, started: Started) => (cause: unknown): ModelError =>
  cause instanceof ModelError ? cause : client.line(Failures.reading(cause, started.sdk, client.limits))

/** What sending an attempt came to: its refusal, or the first events of its reply (none: it ended). */
type Sent =
  | { readonly _tag: "Refused"; readonly refusal: Failures.Refusal }
  | { readonly _tag: "Read"; readonly events: ReadonlyArray<ModelEvent> | undefined }

/**
 * One request's reply, read a step at a time: each `next` sends, announces or reads, as the reply
 * has come. The socket of the attempt being read closes with the scope, or as the next is sent.
 */
const reply = (client: Client, request: ModelRequest): Effect.Effect<ModelReply, never, Scope.Scope> =>
  Effect.gen(function*() {
    let phase: Phase = { _tag: "Send", attempt: Resending.first(client.memory, memoryKey(client, request), request), waitMs: 0 }
    // Aborting closes the socket at once. Never call the iterator's `return()`:
    // it waits for the pending `next()`, so an interrupted reply would hang.
    let controller: AbortController | undefined
    yield* Effect.addFinalizer(() => Effect.sync(() => controller?.abort(ENDED)))

    /** After a refusal: the announcement of what is sent next, or the failure. */
    const refused = (attempt: Resending.Attempt, refusal: Failures.Refusal): Effect.Effect<ReadonlyArray<ModelEvent>, ModelError> => {
      const next = Resending.next(request, memoryKey(client, request), client.memory, attempt, refusal, client.policy)
      switch (next._tag) {
        case "Adapt":
          client.memory = next.memory
          phase = { _tag: "Send", attempt: next.attempt, waitMs: 0 }
          return Effect.succeed([{ _tag: "Adapted", adaptation: next.adaptation, message: next.message }])
        case "Retry":
          phase = { _tag: "Send", attempt: next.attempt, waitMs: next.waitMs }
          return Effect.succeed([{ _tag: "Retrying", message: next.message }])
        case "Fail": {
          const line = client.line(refusal.failure)
          return Effect.fail(client.line({ reason: line.reason, message: line.message + next.suffix, status: line.status }))
        }
      }
    }

    /**
     * Sends `attempt` and reads its reply's first events, in one promise: a refusal is returned
     * (classified, Failures.ts), any other failure is the line that says it.
     */
    const sendAndRead = async (started: Started, attempt: Resending.Attempt): Promise<Sent> => {
      controller?.abort(ENDED)
      controller = new AbortController()
      const deadline = Date.now() + client.limits.requestTimeoutMs
      const sent = client.body(request, attempt.shape)
      let opened: Opened
      try {
        opened = await bounded(post(client, started, sent, controller.signal), client.limits.idleTimeoutMs, deadline)
      } catch (cause) {
        const seen = { sdk: started.sdk, baseURL: started.client.baseURL, body: (headers: Headers) => client.errorBodies.get(headers), typeAt: typesOf(sent) }
        return { _tag: "Refused", refusal: Failures.opening(cause, seen, client.limits) }
      }
      client.memory = Resending.taken(client.memory, attempt.shape)
      const { contentType } = opened
      if (contentType !== undefined && !/^\s*text\/event-stream/i.test(contentType)) {
        throw client.line({
          reason: "protocol",
          message: `the model endpoint did not answer with a Responses event stream: it sent a non-streaming reply (${contentType.split(";")[0]?.trim()})`
        })
      }
      const read = reader(client, opened.events, deadline)
      phase = { _tag: "Read", next: Effect.tryPromise({ try: read, catch: failed(client, started) }) }
      return { _tag: "Read", events: await read() }
    }

    const send = (attempt: Resending.Attempt) =>
      Effect.flatMap(client.connect, (started) =>
        Effect.flatMap(
          Effect.tryPromise({ try: () => sendAndRead(started, attempt), catch: failed(client, started) }),
          (sent) => sent._tag === "Refused" ? refused(attempt, sent.refusal) : Effect.succeed(sent.events)
        ))

    const next = Effect.suspend(() => {
      if (phase._tag === "Read") return phase.next
      const { attempt, waitMs } = phase
      return waitMs > 0 ? Effect.zipRight(Effect.sleep(waitMs), send(attempt)) : send(attempt)
    })
    return { next }
  })

/**
 * The stream's events, read through the response in progress (ResponseInProgress.ts), which
 * decides what each means and what the stream's end means. Reads until an event matters to the
 * caller, so progress events (argument deltas, item added...) cost no Effect step each; after
 * response.completed nothing more is read (the scope closes the socket). Fails with the line.
 */
const reader = (client: Client, iterator: AsyncIterator<unknown>, deadline: number) => {
  let progress = ResponseInProgress.empty
  return async (): Promise<ReadonlyArray<ModelEvent> | undefined> => {
    while (!progress.completed) {
      const result = await bounded(iterator.next(), client.limits.idleTimeoutMs, deadline)
      if (result.done === true) {
        // The stream was closed cleanly.
        const ended = ResponseInProgress.end(progress)
        if (ended !== undefined) throw client.line(ended)
        return undefined
      }
      const step = StreamEvents.read(progress, result.value)
      progress = step.progress
      if (StreamEvents.isFailure(step.interpretation)) throw client.line(step.interpretation)
      if (step.interpretation.length > 0) return step.interpretation
    }
    return undefined
  }
}

const make = (config: ModelClientConfig) =>
  Effect.gen(function* () {
    const secrets = yield* Secrets
    // Headers given by a library user are held to MINO_HEADERS' rules: never the key, no CR/LF.
    const headerProblem = GatewayHeaders.problem(config.headers ?? [], Redacted.value(secrets.apiKey))
    const transport = HttpTransport.make()
    yield* Effect.addFinalizer(() => Effect.sync(() => transport.close()))
    const endpoint = Endpoint.parse(config.baseURL, config.hostAs)
    const line = liner(secrets)
    const errorBodies = new WeakMap<Headers, string>()
    const answers = new WeakMap<object, Promise<Response>>()
    const client: Client = {
      endpoint,
      limits: { idleTimeoutMs: config.idleTimeoutMs ?? 120_000, requestTimeoutMs: config.requestTimeoutMs ?? 15 * 60_000 },
      policy: { maxRetries: config.maxRetries ?? 2, retryWaitCapMs: config.retryWaitCapMs ?? 10_000 },
      line,
      connect: starter({ config, endpoint, secrets, errorBodies, answers }, line),
      body: RequestBody.writer(endpoint.family),
      transport,
      errorBodies,
      answers,
      memory: Resending.forgetful
    }
    const notSent = headerProblem === undefined ? undefined : line({ reason: "protocol", message: `model request not sent: ${headerProblem}` })
    return fromReplies((request) => notSent === undefined ? reply(client, request) : Effect.fail(notSent))
  })

/** A request's reply, read a step at a time, while the scope it was opened in is open. */
export interface ModelReply {
  /** The next events (some, or none yet), or `undefined` once the reply has ended. */
  readonly next: Effect.Effect<ReadonlyArray<ModelEvent> | undefined, ModelError>
}

export interface ModelClientShape {
  /** The reply as one stream of events. */
  readonly respond: (request: ModelRequest) => Stream.Stream<ModelEvent, ModelError>
  /** The reply read a step at a time (the Agent's way: no stream for each request), held by the scope. */
  readonly open: (request: ModelRequest) => Effect.Effect<ModelReply, ModelError, Scope.Scope>
}

/** A client whose replies are read a step at a time (`open`); `respond` streams them. */
export const fromReplies = (open: ModelClientShape["open"]): ModelClientShape => ({
  open,
  respond: (request) =>
    Stream.unwrapScoped(Effect.map(open(request), (opened) =>
      Stream.repeatEffectChunkOption(Effect.flatMap(Effect.mapError(opened.next, Option.some), (events) =>
        events === undefined ? Effect.fail(Option.none()) : Effect.succeed(Chunk.unsafeFromArray(events))))))
})

/** A client whose replies are streams (`respond`); `open` pulls them. */
export const fromStreams = (respond: ModelClientShape["respond"]): ModelClientShape => ({
  respond,
  open: (request) =>
    Effect.map(Stream.toPull(respond(request)), (pull) => ({
      next: Effect.catchAll(Effect.map(pull, Chunk.toReadonlyArray), Option.match({ onNone: () => Effect.succeed(undefined), onSome: Effect.fail }))
    }))
})

export class ModelClient extends Context.Tag("mino/ModelClient")<ModelClient, ModelClientShape>() {
  /** The real client: the openai SDK over Mino's `node:http` transport; its sockets close with the layer. */
  static layer(config: ModelClientConfig = {}): Layer.Layer<ModelClient, never, Secrets> {
    return Layer.scoped(ModelClient, make(config))
  }

  /** A client whose responses come from `respond` (tests, scripted runs). */
  static layerWith(respond: ModelClientShape["respond"]): Layer.Layer<ModelClient> {
    return Layer.succeed(ModelClient, fromStreams(respond))
  }
}
