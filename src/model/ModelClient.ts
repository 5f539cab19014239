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
 */
import type * as OpenAISdk from "openai"
import type { ResponseInput } from "openai/resources/responses/responses"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Redacted from "effect/Redacted"
import { Secrets } from "../security/Secrets.js"
import type { ToolDefinition } from "../tools/Tool.js"
import { VERSION } from "../version.js"
import * as HttpTransport from "./HttpTransport.js"
import * as ResponseItem from "./ResponseItem.js"
import * as Retry from "./Retry.js"
import * as StreamEvents from "./StreamEvents.js"

import { ModelError, type ModelEvent } from "./ModelEvent.js"

export { CONTEXT_WINDOW_MESSAGE } from "./StreamEvents.js"
export { type CompletedResponse, ModelError, type ModelEvent } from "./ModelEvent.js"

export interface ModelRequest {
  readonly model: string
  readonly instructions: string
  /** Input items, sent as given (earlier output items verbatim, results, user text). */
  readonly input: ReadonlyArray<unknown>
  readonly tools: ReadonlyArray<ToolDefinition>
}

/** How to reach the model. The key is not here: the client takes it from the `Secrets` service. */
export interface ModelClientConfig {
  /** A Responses-compatible endpoint; the SDK's default when absent. */
  readonly baseURL?: string | undefined
  /** Fail when no event arrives for this long (default 120 s). */
  readonly idleTimeoutMs?: number
  /**
   * How many times a request that failed before its stream started (HTTP 429 or
   * 5xx, a failed connection) is sent again, each announced (default 2).
   */
  readonly maxRetries?: number
  /** The longest wait before a retry, whatever `retry-after` asks (default 10 s). */
  readonly retryWaitCapMs?: number
}

type Sdk = typeof OpenAISdk

// Loaded on first request so that start-up does not pay for the SDK.
let sdkModule: Promise<Sdk> | undefined
const loadSdk = (): Promise<Sdk> => (sdkModule ??= import("openai"))

const ErrorBody = Schema.Struct({ message: Schema.String, code: Schema.optional(Schema.NullOr(Schema.String)) })

const decodeErrorBody = Schema.decodeUnknownOption(ErrorBody)

/** Raised inside `idle` when no event arrives in time. */
class Idle {}

/**
 * `promise`, or a rejection with `Idle` if it takes longer than `ms`. A plain
 * timer per read: an Effect timeout per streamed event would fork a fiber each.
 */
const idle = <A>(promise: Promise<A>, ms: number): Promise<A> =>
  new Promise<A>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Idle()), ms)
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

const formatMs = (ms: number): string => (ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`)

/** Why a request failed before its stream started, and whether it is worth sending again. */
interface Refusal {
  readonly error: ModelError
  /** What a retry announcement names (`HTTP 429 from the model endpoint`); absent when not retried. */
  readonly retry?: { readonly what: string; readonly afterMs: number | undefined }
}

const make = (config: ModelClientConfig) =>
  Effect.gen(function* () {
    const idleTimeoutMs = config.idleTimeoutMs ?? 120_000
    const maxRetries = config.maxRetries ?? 2
    const retryWaitCapMs = config.retryWaitCapMs ?? 10_000
    const secrets = yield* Secrets
    const transport = HttpTransport.make()
    yield* Effect.addFinalizer(() => Effect.sync(() => transport.close()))

    const error = (reason: ModelError["reason"], message: string, status?: number): ModelError => {
      const scrubbed = secrets.redact(message)
      const line = scrubbed.replace(/\s+/g, " ").trim()
      return new ModelError({
        reason,
        message: line.length > 300 ? `${line.slice(0, 297)}...` : line,
        ...(status === undefined ? {} : { status })
      })
    }

    const start = async () => {
      const sdk = await loadSdk()
      const client = new sdk.OpenAI({
        apiKey: Redacted.value(secrets.apiKey),
        baseURL: config.baseURL,
        // Mino retries itself, visibly and with a bounded wait (see `send`).
        maxRetries: 0,
        // The SDK would otherwise log malformed chunks to the user's terminal.
        logLevel: "off",
        fetch: (url, init) => {
          // Name Mino first and keep the SDK's own token (`OpenAI/JS 6.49.0`).
          const headers = new Headers(init?.headers)
          headers.set("user-agent", `Mino/${VERSION} ${headers.get("user-agent") ?? ""}`.trim())
          return transport.fetch(url, { ...init, headers })
        }
      })
      return { sdk, client }
    }
    // The SDK is loaded and the client made on the first request, once. A plain
    // promise: Effect.cached would take a lock and read the clock on every request.
    let started: ReturnType<typeof start> | undefined
    const connect = Effect.tryPromise({
      try: () =>
        (started ??= start().catch((cause: unknown) => {
          started = undefined
          throw cause
        })),
      catch: (cause) => error("connection", `model client could not start: ${rootMessage(cause)}`)
    })

    /** Failures before the stream starts: HTTP status, connection, SDK timeout. */
    const requestError = (sdk: Sdk, baseURL: string, cause: unknown): Refusal => {
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
        const body = decodeErrorBody(cause.error)
        const detail = Option.match(body, {
          onNone: () => cause.message.replace(/^\d{3}\s*/, ""),
          onSome: (body) => body.message
        })
        const status = cause.status
        if (status < 500 && Option.exists(body, (body) => StreamEvents.isContextWindow(body.code, body.message))) {
          return { error: error("context_window", `model request failed: HTTP ${status}: ${StreamEvents.CONTEXT_WINDOW_MESSAGE}`, status) }
        }
        const failure = error("http", `model request failed: HTTP ${status}: ${detail}`, status)
        return status === 429 || status >= 500
          ? { error: failure, retry: { what: `HTTP ${status} from the model endpoint`, afterMs: Retry.retryAfterMs(cause.headers) } }
          : { error: failure }
      }
      return { error: error("connection", `model request failed: ${rootMessage(cause)}`) }
    }

    /** Failures while reading the stream. */
    const streamError = (sdk: Sdk, cause: unknown): ModelError => {
      // The SDK throws APIError for a data object with an `error` field.
      if (cause instanceof sdk.APIError) {
        return StreamEvents.isContextWindow(cause.code, cause.message)
          ? error("context_window", `model stream error: ${StreamEvents.CONTEXT_WINDOW_MESSAGE}`)
          : error("failed", `model stream error: ${cause.message}`)
      }
      if (cause instanceof SyntaxError) return error("protocol", `model stream sent malformed data: ${cause.message}`)
      return error("dropped", `model stream dropped before response.completed: ${rootMessage(cause)}`)
    }

    const body = (request: ModelRequest) => ({
      model: request.model,
      instructions: request.instructions,
      // Items are passed through untouched, but for those the API cannot take back.
      input: request.input.filter(ResponseItem.replayable) as ResponseInput,
      tools: [...request.tools],
      store: false as const,
      include: ["reasoning.encrypted_content" as const],
      parallel_tool_calls: false,
      stream: true as const
    })

    /** One request; on a failure before the stream starts, `attempt` more, announced, up to `maxRetries`. */
    const send = (request: ModelRequest, attempt: number): Stream.Stream<ModelEvent, ModelError> =>
      Stream.unwrapScoped(
        Effect.gen(function* () {
          const { sdk, client } = yield* connect
          // Aborting closes the socket at once. Never call the iterator's `return()`:
          // it waits for the pending `next()`, so an interrupted stream would hang.
          const controller = new AbortController()
          yield* Effect.addFinalizer(() => Effect.sync(() => controller.abort()))

          const opened = yield* Effect.tryPromise({
            try: () => idle(client.responses.create(body(request), { signal: controller.signal }).withResponse(), idleTimeoutMs),
            catch: (cause): Refusal =>
              cause instanceof Idle
                ? { error: error("timeout", `model request timed out: no response for ${formatMs(idleTimeoutMs)}`) }
                : requestError(sdk, client.baseURL, cause)
          }).pipe(Effect.either)
          if (Either.isLeft(opened)) {
            const { error: failure, retry } = opened.left
            if (retry !== undefined && attempt <= maxRetries) {
              const waitMs = Retry.waitMs(retry.afterMs, attempt, retryWaitCapMs)
              const announcement: ModelEvent = { _tag: "Retrying", message: Retry.announcement(retry.what, waitMs, attempt, maxRetries) }
              return Stream.make(announcement).pipe(
                Stream.concat(Stream.drain(Stream.fromEffect(Effect.sleep(waitMs)))),
                Stream.concat(send(request, attempt + 1))
              )
            }
            const retried = attempt > 1 ? ` (after ${attempt - 1} ${attempt === 2 ? "retry" : "retries"})` : ""
            return yield* Effect.fail(error(failure.reason, failure.message + retried, failure.status))
          }

          const { data: events, response } = opened.right
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
              const result = await idle(iterator.next(), idleTimeoutMs)
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

    return ModelClient.of({ respond: (request) => send(request, 1) })
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
