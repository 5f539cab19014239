/**
 * The model client: one streamed Responses request per call, over the openai SDK.
 *
 * Text deltas are display events; only `response.completed` yields the output
 * items, verbatim, for the Agent to validate and save. Every way a stream can end
 * without it (HTTP error, refused connection, drop, `error` event, failed or
 * incomplete response, malformed data, silence, a clean end too early) is a
 * ModelError whose message is one line that never contains the API key.
 */
import type * as OpenAISdk from "openai"
import type { ResponseInput } from "openai/resources/responses/responses"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Secrets from "../security/Secrets.js"
import type { ToolDefinition } from "../tools/Tool.js"

export interface ModelRequest {
  readonly model: string
  readonly instructions: string
  /** Input items, sent as given (earlier output items verbatim, results, user text). */
  readonly input: ReadonlyArray<unknown>
  readonly tools: ReadonlyArray<ToolDefinition>
}

/** The output items of one `response.completed`, exactly as received. */
export interface CompletedResponse {
  readonly id: string
  readonly output: ReadonlyArray<Record<string, unknown>>
}

export type ModelEvent =
  | { readonly _tag: "TextDelta"; readonly text: string }
  | { readonly _tag: "Completed"; readonly response: CompletedResponse }

export class ModelError extends Data.TaggedError("ModelError")<{
  readonly reason: "http" | "connection" | "dropped" | "incomplete" | "failed" | "timeout" | "protocol"
  /** One line for the user; never contains the API key. */
  readonly message: string
  readonly status?: number
}> {}

export interface ModelClientConfig {
  readonly apiKey: string
  /** A Responses-compatible endpoint; the SDK's default when absent. */
  readonly baseURL?: string | undefined
  /** Fail when no event arrives for this long (default 120 s). */
  readonly idleTimeoutMs?: number
  /** SDK retries, which happen only before response headers (default 2). */
  readonly maxRetries?: number
}

type Sdk = typeof OpenAISdk

// Loaded on first request so that start-up does not pay for the SDK.
let sdkModule: Promise<Sdk> | undefined
const loadSdk = (): Promise<Sdk> => (sdkModule ??= import("openai"))

const OutputItems = Schema.Array(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
const Typed = Schema.Struct({ type: Schema.String })
const Delta = Schema.Struct({ delta: Schema.String })
const Completed = Schema.Struct({ response: Schema.Struct({ id: Schema.String, output: OutputItems }) })
const Failed = Schema.Struct({
  response: Schema.Struct({ error: Schema.optional(Schema.NullOr(Schema.Struct({ message: Schema.String }))) })
})
const Incomplete = Schema.Struct({
  response: Schema.Struct({
    incomplete_details: Schema.optional(Schema.NullOr(Schema.Struct({ reason: Schema.optional(Schema.NullOr(Schema.String)) })))
  })
})
const ErrorEvent = Schema.Struct({ message: Schema.optional(Schema.NullOr(Schema.String)) })
const ErrorBody = Schema.Struct({ message: Schema.String })

// Built once: a decoder per event would be rebuilt for every streamed token.
const decodeTyped = Schema.decodeUnknownOption(Typed)
const decodeDelta = Schema.decodeUnknownOption(Delta)
const decodeCompleted = Schema.decodeUnknownOption(Completed)
const decodeFailed = Schema.decodeUnknownOption(Failed)
const decodeIncomplete = Schema.decodeUnknownOption(Incomplete)
const decodeErrorEvent = Schema.decodeUnknownOption(ErrorEvent)
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

/** The innermost message of an error chain (`fetch failed` → `connect ECONNREFUSED …`). */
const rootMessage = (cause: unknown): string => {
  let message = String(cause)
  let current = cause
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current.message !== "") message = current.message
    current = current.cause
  }
  return message
}

const formatMs = (ms: number): string => (ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`)

const make = (config: ModelClientConfig) =>
  Effect.gen(function* () {
    const idleTimeoutMs = config.idleTimeoutMs ?? 120_000

    const error = (reason: ModelError["reason"], message: string, status?: number): ModelError => {
      const scrubbed = Secrets.redact(message, [config.apiKey])
      const line = scrubbed.replace(/\s+/g, " ").trim()
      return new ModelError({
        reason,
        message: line.length > 300 ? `${line.slice(0, 297)}...` : line,
        ...(status === undefined ? {} : { status })
      })
    }

    const connect = yield* Effect.cached(
      Effect.tryPromise({
        try: async () => {
          const sdk = await loadSdk()
          const client = new sdk.OpenAI({
            apiKey: config.apiKey,
            baseURL: config.baseURL,
            maxRetries: config.maxRetries ?? 2,
            // The SDK would otherwise log malformed chunks to the user's terminal.
            logLevel: "off"
          })
          return { sdk, client }
        },
        catch: (cause) => error("connection", `model client could not start: ${rootMessage(cause)}`)
      })
    )

    /** Failures before the stream starts: HTTP status, connection, SDK timeout. */
    const requestError = (sdk: Sdk, baseURL: string, cause: unknown): ModelError => {
      if (cause instanceof sdk.APIConnectionTimeoutError) {
        return error("timeout", "model request timed out before the response started")
      }
      if (cause instanceof sdk.APIConnectionError) {
        return error("connection", `model request failed: cannot connect to ${baseURL}: ${rootMessage(cause)}`)
      }
      if (cause instanceof sdk.APIError && cause.status !== undefined) {
        const detail = Option.match(decodeErrorBody(cause.error), {
          onNone: () => cause.message.replace(/^\d{3}\s*/, ""),
          onSome: (body) => body.message
        })
        return error("http", `model request failed: HTTP ${cause.status}: ${detail}`, cause.status)
      }
      return error("connection", `model request failed: ${rootMessage(cause)}`)
    }

    /** Failures while reading the stream. */
    const streamError = (sdk: Sdk, cause: unknown): ModelError => {
      // The SDK throws APIError for a data object with an `error` field.
      if (cause instanceof sdk.APIError) return error("failed", `model stream error: ${cause.message}`)
      if (cause instanceof SyntaxError) return error("protocol", `model stream sent malformed data: ${cause.message}`)
      // undici: `TypeError: terminated`, caused by `other side closed`.
      return error("dropped", `model stream dropped before response.completed: ${rootMessage(cause)}`)
    }

    /** What one streamed event means for the caller; events not listed are progress only. */
    const interpret = (event: unknown): Effect.Effect<Chunk.Chunk<ModelEvent>, ModelError> => {
      const type = Option.match(decodeTyped(event), {
        onNone: () => "",
        onSome: (typed) => typed.type
      })
      switch (type) {
        case "response.output_text.delta":
        case "response.refusal.delta":
          return Option.match(decodeDelta(event), {
            onNone: () => Effect.fail(error("protocol", `model stream sent a malformed ${type} event`)),
            onSome: ({ delta }) => Effect.succeed(Chunk.of<ModelEvent>({ _tag: "TextDelta", text: delta }))
          })
        case "response.completed":
          return Option.match(decodeCompleted(event), {
            onNone: () => Effect.fail(error("protocol", "model stream sent a malformed response.completed event")),
            onSome: ({ response }) =>
              Effect.succeed(Chunk.of<ModelEvent>({ _tag: "Completed", response: { id: response.id, output: response.output } }))
          })
        case "response.failed": {
          const detail = Option.flatMap(decodeFailed(event), (failed) =>
            Option.fromNullable(failed.response.error?.message)
          )
          return Effect.fail(error("failed", `model response failed: ${Option.getOrElse(detail, () => "no reason given")}`))
        }
        case "response.incomplete": {
          const reason = Option.flatMap(decodeIncomplete(event), (incomplete) =>
            Option.fromNullable(incomplete.response.incomplete_details?.reason)
          )
          return Effect.fail(error("incomplete", `model response incomplete: ${Option.getOrElse(reason, () => "no reason given")}`))
        }
        case "error": {
          const message = Option.flatMap(decodeErrorEvent(event), (failure) =>
            Option.fromNullable(failure.message)
          )
          return Effect.fail(error("failed", `model stream error: ${Option.getOrElse(message, () => "no message given")}`))
        }
        default:
          return Effect.succeed(Chunk.empty())
      }
    }

    const respond = (request: ModelRequest): Stream.Stream<ModelEvent, ModelError> =>
      Stream.unwrapScoped(
        Effect.gen(function* () {
          const { sdk, client } = yield* connect
          // Aborting closes the socket at once. Never call the iterator's `return()`:
          // it waits for the pending `next()`, so an interrupted stream would hang.
          const controller = new AbortController()
          yield* Effect.addFinalizer(() => Effect.sync(() => controller.abort()))

          const events = yield* Effect.tryPromise({
            try: () =>
              client.responses.create(
                {
                  model: request.model,
                  instructions: request.instructions,
                  // Items are passed through untouched; their shape is the caller's and the server's.
                  input: request.input as ResponseInput,
                  tools: [...request.tools],
                  store: false,
                  include: ["reasoning.encrypted_content"],
                  parallel_tool_calls: false,
                  stream: true
                },
                { signal: controller.signal }
              ),
            catch: (cause) => requestError(sdk, client.baseURL, cause)
          }).pipe(
            Effect.timeoutFail({
              duration: idleTimeoutMs,
              onTimeout: () => error("timeout", `model request timed out: no response for ${formatMs(idleTimeoutMs)}`)
            })
          )

          const iterator = events[Symbol.asyncIterator]()
          const next = Effect.tryPromise({
            try: () => idle(iterator.next(), idleTimeoutMs),
            catch: (cause) =>
              cause instanceof Idle
                ? error("timeout", `model stream timed out: no event for ${formatMs(idleTimeoutMs)}`)
                : streamError(sdk, cause)
          })

          let completed = false
          const pull = Effect.gen(function* () {
            // After response.completed nothing more is read; the finalizer closes the stream.
            if (completed) return yield* Effect.fail(Option.none())
            const result = yield* Effect.mapError(next, Option.some)
            if (result.done === true) {
              // The SDK ends quietly when the server closes the stream cleanly.
              return yield* Effect.fail(Option.some(error("incomplete", "model stream ended before response.completed")))
            }
            const emitted = yield* Effect.mapError(interpret(result.value), Option.some)
            completed = Chunk.some(emitted, (event) => event._tag === "Completed")
            return emitted
          })
          return Stream.repeatEffectChunkOption(pull)
        })
      )

    return ModelClient.of({ respond })
  })

export class ModelClient extends Context.Tag("mino/ModelClient")<
  ModelClient,
  { readonly respond: (request: ModelRequest) => Stream.Stream<ModelEvent, ModelError> }
>() {
  /** The real client over the openai SDK. */
  static layer(config: ModelClientConfig): Layer.Layer<ModelClient> {
    return Layer.effect(ModelClient, make(config))
  }

  /** A client whose responses come from `respond` (tests, scripted runs). */
  static layerWith(respond: (request: ModelRequest) => Stream.Stream<ModelEvent, ModelError>): Layer.Layer<ModelClient> {
    return Layer.succeed(ModelClient, ModelClient.of({ respond }))
  }
}
