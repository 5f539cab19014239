/**
 * The model client: one streamed Responses request per call, over the openai SDK
 * and Mino's `node:http` transport (HttpTransport.ts). What each streamed event
 * means is StreamEvents.ts; how long a retry waits is Retry.ts.
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
import type { Stream as SdkStream } from "openai/core/streaming"
import type { ResponseStreamEvent } from "openai/resources/responses/responses"
import { VERSION as SDK_VERSION } from "openai/version"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Redacted from "effect/Redacted"
import { REDACTED, redactStrings, Secrets } from "../security/Secrets.js"
import * as Adaptation from "./Adaptation.js"
import * as Endpoint from "./Endpoint.js"
import * as GatewayHeaders from "./GatewayHeaders.js"
import * as Json from "../Json.js"
import * as ErrorBody from "./ErrorBody.js"
import { VERSION } from "../version.js"
import * as HttpTransport from "./transport/HttpTransport.js"
import * as RequestBody from "./request/RequestBody.js"
import type { ModelRequest } from "./request/RequestBody.js"
import * as Retry from "./transport/Retry.js"
import * as EventFrames from "./stream/EventFrames.js"
import * as StreamEvents from "./stream/StreamEvents.js"
import * as ThreadEvents from "./stream/ThreadEvents.js"

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

/** Raised inside `bounded` when no event arrives in time. */
class Idle {}

/** Raised inside `bounded` when the request's overall limit is reached. */
class Overdue {}

/**
 * `promise`, or a rejection with `Idle` if it takes longer than `ms`, or with
 * `Overdue` if the request's `deadline` (a `Date.now()` value) comes first. A plain
 * timer per read: an Effect timeout per streamed event would fork a fiber each.
 */
const bounded = <A>(promise: Promise<A>, ms: number, deadline: number): Promise<A> =>
  new Promise<A>((resolve, reject) => {
    const left = deadline - Date.now()
    const timer = setTimeout(() => reject(left <= ms ? new Overdue() : new Idle()), Math.max(0, Math.min(ms, left)))
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

/** The innermost message of an error chain (`Connection error.` → `connect ECONNREFUSED …`). */
const rootMessage = (cause: unknown): string => {
  let message = String(cause)
  let current = cause
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current.message !== "") message = current.message
    current = current.cause
  }
  return message
}

/** The innermost error of a chain, for its class or its `code`. */
const rootCause = (cause: unknown): unknown => {
  let current = cause
  for (let depth = 0; depth < 5 && current instanceof Error && current.cause !== undefined; depth++) current = current.cause
  return current
}

const formatMs = (ms: number): string =>
  ms % 60_000 === 0 ? `${ms / 60_000} min` : ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`

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

/** Why a request failed before its stream started, and whether it is worth sending again. */
interface Refusal {
  readonly error: ModelError
  /** What a retry announcement names (`HTTP 429 from the model endpoint`); absent when not retried. */
  readonly retry?: { readonly what: string; readonly afterMs: number | undefined }
  /** The changes that could make the endpoint take the request, the likelier first (Adaptation.ts). */
  readonly adapt?: ReadonlyArray<Adaptation.Adaptation>
}

/** How one request is sent, after the adaptations made so far. */
interface Shape extends RequestBody.Shape {
  /** The adaptations already made for this request: each is tried once. */
  readonly adapted: ReadonlySet<Adaptation.Adaptation>
}

const make = (config: ModelClientConfig) =>
  Effect.gen(function* () {
    const idleTimeoutMs = config.idleTimeoutMs ?? 120_000
    const requestTimeoutMs = config.requestTimeoutMs ?? 15 * 60_000
    const endpoint = Endpoint.parse(config.baseURL, config.hostAs)
    // Endpoint and model pairs that refused `include`, for as long as the client lives.
    const withoutInclude = new Set<string>()
    // The endpoint refused reasoning items in its input, or the optional fields (Adaptation.ts), while the client lives.
    let reasoningRefused = false
    let optionalRefused = false
    // The raw body of each error response, by the Headers object the SDK keeps on its error.
    const errorBodies = new WeakMap<Headers, string>()
    const maxRetries = config.maxRetries ?? 2
    const retryWaitCapMs = config.retryWaitCapMs ?? 10_000
    const secrets = yield* Secrets
    // Headers given by a library user are held to MINO_HEADERS' rules: never the key, no CR/LF.
    const headerProblem = GatewayHeaders.problem(config.headers ?? [], Redacted.value(secrets.apiKey))
    const transport = HttpTransport.make()
    yield* Effect.addFinalizer(() => Effect.sync(() => transport.close()))

    // One line without the key: redacted before its whitespace collapses, again after (a key with a
    // tab in it), and where it is cut, by the rule for cuts (Secrets.redactCut).
    const error = (reason: ModelError["reason"], message: string, status?: number): ModelError => {
      const line = secrets.redact(secrets.redact(message).replace(/\s+/g, " ").trim())
      return new ModelError({
        reason,
        message: line.length > LINE_LIMIT ? `${secrets.redactCut(line.slice(0, LINE_LIMIT - 3))}...` : line,
        ...(status === undefined ? {} : { status })
      })
    }

    /**
     * An error body that still spells the key once its JSON escapes are read (`sk-a\"b`, `\u0073k-`):
     * JSON has the key taken out of its strings, as values, and is written again; a body that is
     * not JSON (torn, cut) cannot be shown in part, so none of it is.
     */
    const withoutEncodedKey = (text: string): string => {
      if (!secrets.inJson(text)) return text
      try {
        const again = JSON.stringify(redactStrings(JSON.parse(text), secrets.redact))
        return secrets.inJson(again) ? REDACTED : again
      } catch {
        return REDACTED
      }
    }

    const start = async () => {
      const sdk = await loadSdk()
      const key = Redacted.value(secrets.apiKey)
      // Every option the SDK would otherwise read from the environment is given: Mino reads only the
      // variables it documents (OPENAI_ORG_ID, OPENAI_PROJECT_ID, OPENAI_BASE_URL, OPENAI_LOG... are not).
      const client = new sdk.OpenAI({
        apiKey: key,
        adminAPIKey: null,
        organization: null,
        project: null,
        webhookSecret: null,
        baseURL: endpoint.baseURL ?? DEFAULT_BASE_URL,
        // Mino retries itself, visibly and with a bounded wait (see `send`).
        maxRetries: 0,
        // The SDK would otherwise log malformed chunks to the user's terminal.
        logLevel: "off",
        fetch: async (url, init) => {
          // Every header is Mino's own, value included: the SDK's would carry OPENAI_CUSTOM_HEADERS,
          // which no option switches off, over any of its own (User-Agent, Accept, X-Stainless-...).
          const headers = new Headers({ accept: "application/json", "user-agent": USER_AGENT, authorization: `Bearer ${key}` })
          if (init?.body !== undefined && init.body !== null) headers.set("content-type", "application/json")
          for (const [name, value] of config.headers ?? []) headers.set(name, value)
          Endpoint.authorize(endpoint, headers, key)
          const target = Endpoint.withQuery(endpoint, url instanceof Request ? url.url : String(url))
          const response = await transport.fetch(target, { ...init, headers })
          if (response.ok) {
            return response.body === null
              ? response
              // Whole, bounded events (EventFrames.ts): the SDK's own reader would cost the square of an event's size.
              : new Response(EventFrames.framed(ThreadEvents.unnamed(response.body)), { status: response.status, statusText: response.statusText, headers: response.headers })
          }
          // The SDK keeps only an error body's `error` key; keep the text for what it said otherwise.
          // Redacted before anything reads it (the SDK too), and where the cap cut it.
          const body = await readCapped(response, ERROR_BODY_LIMIT).catch(() => ({ text: "", cut: false }))
          const text = withoutEncodedKey(body.cut ? secrets.redactCut(body.text) : secrets.redact(body.text))
          const copy = new Response(text, { status: response.status, statusText: response.statusText, headers: response.headers })
          errorBodies.set(copy.headers, text)
          return copy
        }
      })
      return { sdk, client }
    }
    // The SDK is loaded and the client made once, beginning as the layer is built (the
    // CLI builds it while the user types, so the first question does not wait for it).
    // A plain promise: Effect.cached would take a lock and read the clock on every request.
    let started: ReturnType<typeof start> | undefined
    const begin = () =>
      (started ??= start().catch((cause: unknown) => {
        started = undefined
        throw cause
      }))
    // A failure now is the first request's to report: it begins again.
    begin().catch(() => {})
    const connect = Effect.tryPromise({
      try: begin,
      catch: (cause) => error("connection", `model client could not start: ${rootMessage(cause)}`)
    })

    /** Failures before the stream starts: HTTP status, connection, SDK timeout. */
    const requestError = (sdk: Sdk, baseURL: string, cause: unknown, typeAt: (index: number) => string | undefined): Refusal => {
      if (cause instanceof sdk.APIConnectionTimeoutError) {
        return { error: error("timeout", "model request timed out before the response started") }
      }
      const root = rootCause(cause)
      if (root instanceof HttpTransport.CrossOriginRedirect) {
        return { error: error("protocol", `model request failed: ${root.message}`) }
      }
      if (cause instanceof sdk.APIConnectionError) {
        const code = root instanceof Error && "code" in root && typeof root.code === "string" ? root.code : rootMessage(cause)
        return {
          error: error("connection", `model request failed: cannot connect to ${baseURL}: ${rootMessage(cause)}`),
          retry: { what: `cannot connect to the model endpoint (${code})`, afterMs: undefined }
        }
      }
      if (cause instanceof sdk.APIError && cause.status !== undefined) {
        const said = ErrorBody.said(cause.error, cause.headers === undefined ? undefined : errorBodies.get(cause.headers))
        const detail = said.message ?? (said.code === undefined || said.code === null ? "the endpoint gave no reason" : String(said.code))
        const status = cause.status
        if (status < 500 && ErrorBody.isContextWindow(said)) {
          return { error: error("context_window", `model request failed: HTTP ${status}: ${ErrorBody.CONTEXT_WINDOW_MESSAGE}`, status) }
        }
        const failure = error("http", `model request failed: HTTP ${status}: ${detail}`, status)
        const adapt = Adaptation.asks(status, said, typeAt)
        return status === 429 || status >= 500
          ? { error: failure, retry: { what: `HTTP ${status} from the model endpoint`, afterMs: Retry.retryAfterMs(cause.headers) } }
          : adapt.length === 0 ? { error: failure } : { error: failure, adapt }
      }
      return { error: error("connection", `model request failed: ${rootMessage(cause)}`) }
    }

    /** Failures while reading the stream. */
    const streamError = (sdk: Sdk, cause: unknown): ModelError => {
      // The SDK throws APIError for a data object with an `error` field.
      if (cause instanceof sdk.APIError) {
        const said = ErrorBody.said(cause.error, undefined)
        return ErrorBody.isContextWindow(said)
          ? error("context_window", `model stream error: ${ErrorBody.CONTEXT_WINDOW_MESSAGE}`)
          : error("failed", `model stream error: ${said.message ?? cause.message}`)
      }
      if (cause instanceof EventFrames.EventTooLarge) return error("too_large", cause.message)
      // Never V8's message: it quotes the data, and the quote could cut the key anywhere.
      if (cause instanceof SyntaxError) return error("protocol", "model stream sent malformed data: an event whose data is not JSON")
      return error("dropped", `model stream dropped before response.completed: ${rootMessage(cause)}`)
    }

    const memoryKey = (request: ModelRequest) => `${endpoint.key} ${request.model}`

    const body = RequestBody.writer(endpoint.family)

    /** Whether sending the request again with `adaptation` can change the endpoint's answer. */
    const worthAdapting = (request: ModelRequest, shape: Shape, adaptation: Adaptation.Adaptation): boolean => {
      if (shape.adapted.has(adaptation)) return false
      if (adaptation === "without_include") return shape.include
      if (adaptation === "without_optional") return shape.optional !== false
      const turns = request.history?.turns ?? 0
      if (adaptation === "without_reasoning") {
        return shape.reasoning !== false && shape.optional !== false &&
          (request.input.some((item) => item["type"] === "reasoning") || request.history?.hasReasoning(0, turns) === true)
      }
      return shape.withoutReasoningBefore < turns && request.history?.hasReasoning(shape.withoutReasoningBefore, turns) === true
    }

    /**
     * The type of the sent body's input item at an index, read only when a refusal
     * points at one (at once: the transport may lend a large body's memory again
     * once its request closed, so bytes that no longer parse tell nothing).
     */
    const typesOf = (sent: Buffer) => {
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

    /** One request; on a failure before the stream starts, `attempt` more, announced, up to `maxRetries`. */
    const send = (request: ModelRequest, attempt: number, shape: Shape): Stream.Stream<ModelEvent, ModelError> =>
      Stream.unwrapScoped(
        Effect.gen(function* () {
          const { sdk, client } = yield* connect
          // Aborting closes the socket at once. Never call the iterator's `return()`:
          // it waits for the pending `next()`, so an interrupted stream would hang.
          const controller = new AbortController()
          yield* Effect.addFinalizer(() => Effect.sync(() => controller.abort()))

          const deadline = Date.now() + requestTimeoutMs
          const sent = body(request, shape)
          const overdue = () =>
            error("timeout", `model request stopped after ${formatMs(requestTimeoutMs)}, the limit for one request, without response.completed`)
          const opened = yield* Effect.tryPromise({
            try: () =>
              bounded(
                client.post<SdkStream<ResponseStreamEvent>>("/responses", {
                  // A string body with its content type is sent as it is: the SDK stays the client.
                  body: sent,
                  headers: { "content-type": "application/json" },
                  stream: true,
                  signal: controller.signal
                }).withResponse(),
                idleTimeoutMs,
                deadline
              ),
            catch: (cause): Refusal =>
              cause instanceof Idle
                ? { error: error("timeout", `model request timed out: no response for ${formatMs(idleTimeoutMs)}`) }
                : cause instanceof Overdue
                ? { error: overdue() }
                : requestError(sdk, client.baseURL, cause, typesOf(sent))
          }).pipe(Effect.either)
          if (Either.isLeft(opened)) {
            const { error: failure, retry } = opened.left
            const adapt = opened.left.adapt?.find((candidate) => worthAdapting(request, shape, candidate))
            if (adapt !== undefined) {
              if (adapt === "without_include") withoutInclude.add(memoryKey(request))
              if (adapt === "without_reasoning") reasoningRefused = true
              const announcement: ModelEvent = { _tag: "Adapted", adaptation: adapt, message: Adaptation.announcement(adapt, request.model) }
              const adapted = new Set([...shape.adapted, adapt])
              const next: Shape = adapt === "without_include"
                ? { ...shape, include: false, adapted }
                : adapt === "without_reasoning"
                ? { ...shape, reasoning: false, adapted }
                : adapt === "without_optional"
                ? { ...shape, optional: false, adapted }
                : { ...shape, withoutReasoningBefore: request.history?.turns ?? 0, adapted }
              return Stream.make(announcement).pipe(Stream.concat(send(request, attempt, next)))
            }
            if (retry !== undefined && attempt <= maxRetries) {
              const waitMs = Retry.waitMs(retry.afterMs, attempt, retryWaitCapMs)
              const announcement: ModelEvent = { _tag: "Retrying", message: Retry.announcement(retry.what, waitMs, attempt, maxRetries) }
              return Stream.make(announcement).pipe(
                Stream.concat(Stream.drain(Stream.fromEffect(Effect.sleep(waitMs)))),
                Stream.concat(send(request, attempt + 1, shape))
              )
            }
            const retried = attempt > 1 ? ` (after ${attempt - 1} ${attempt === 2 ? "retry" : "retries"})` : ""
            return yield* Effect.fail(error(failure.reason, failure.message + retried, failure.status))
          }

          const { data: events, response } = opened.right
          // A request sent without the optional fields was taken: so it goes from now on.
          if (shape.optional === false) optionalRefused = true
          const contentType = response.headers.get("content-type")
          if (contentType !== null && !/^\s*text\/event-stream/i.test(contentType)) {
            return yield* Effect.fail(error(
              "protocol",
              `the model endpoint did not answer with a Responses event stream: it sent a non-streaming reply (${contentType.split(";")[0]?.trim()})`
            ))
          }

          const iterator = events[Symbol.asyncIterator]()
          const interpret = StreamEvents.reader()
          // Reads until an event matters to the caller, so progress events (argument
          // deltas, item added...) cost no Effect step each. `undefined`: a clean end.
          const read = async (): Promise<ReadonlyArray<ModelEvent> | undefined> => {
            while (true) {
              const result = await bounded(iterator.next(), idleTimeoutMs, deadline)
              if (result.done === true) return undefined
              const interpreted = interpret(result.value)
              if (StreamEvents.isFailure(interpreted)) throw error(interpreted.reason, interpreted.message)
              if (interpreted.length > 0) return interpreted
            }
          }
          const next = Effect.tryPromise({
            try: read,
            catch: (cause) =>
              cause instanceof ModelError
                ? cause
                : cause instanceof Idle
                ? error("timeout", `model stream timed out: no event for ${formatMs(idleTimeoutMs)}`)
                : cause instanceof Overdue
                ? overdue()
                : streamError(sdk, cause)
          })

          let done = false
          const pull = Effect.gen(function* () {
            // After response.completed nothing more is read; the finalizer closes the stream.
            if (done) return yield* Effect.fail(Option.none())
            const emitted = yield* Effect.mapError(next, Option.some)
            if (emitted === undefined) {
              // The SDK ends quietly when the server closes the stream cleanly.
              return yield* Effect.fail(Option.some(error("incomplete", "model stream ended before response.completed")))
            }
            done = emitted.some((event) => event._tag === "Completed")
            return Chunk.unsafeFromArray(emitted)
          })
          return Stream.repeatEffectChunkOption(pull)
        })
      )

    return ModelClient.of({
      respond: (request) =>
        headerProblem !== undefined ? Stream.fail(error("protocol", `model request not sent: ${headerProblem}`)) : send(request, 1, {
          include: !withoutInclude.has(memoryKey(request)),
          withoutReasoningBefore: request.withoutReasoningBefore ?? 0,
          reasoning: !reasoningRefused,
          optional: !optionalRefused,
          adapted: new Set()
        })
    })
  })

export class ModelClient extends Context.Tag("mino/ModelClient")<
  ModelClient,
  { readonly respond: (request: ModelRequest) => Stream.Stream<ModelEvent, ModelError> }
>() {
  /** The real client: the openai SDK over Mino's `node:http` transport; its sockets close with the layer. */
  static layer(config: ModelClientConfig = {}): Layer.Layer<ModelClient, never, Secrets> {
    return Layer.scoped(ModelClient, make(config))
  }

  /** A client whose responses come from `respond` (tests, scripted runs). */
  static layerWith(respond: (request: ModelRequest) => Stream.Stream<ModelEvent, ModelError>): Layer.Layer<ModelClient> {
    return Layer.succeed(ModelClient, ModelClient.of({ respond }))
  }
}
