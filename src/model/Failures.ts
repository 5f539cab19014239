/**
 * How a failure of the model client is classified: what the error says (its
 * reason and line, before the client redacts it), and, for a failure before the
 * stream started, whether it is worth sending again (a retry, an adaptation).
 * Pure: every input is passed in (the loaded SDK, whose error classes are
 * compared; the raw error bodies the transport kept; the client's limits).
 */
import type * as OpenAISdk from "openai"
import { describe } from "../Described.js"
import * as Adaptation from "./Adaptation.js"
import * as ErrorBody from "./ErrorBody.js"
import type { ModelError } from "../protocol/ModelEvent.js"
import type { Refused } from "./Resending.js"
import * as HttpTransport from "./transport/HttpTransport.js"
import * as Retry from "./transport/Retry.js"
import * as EventFrames from "./stream/EventFrames.js"

/** A failure, before the client makes it one redacted line. */
export interface Failure {
  readonly reason: ModelError["reason"]
  readonly message: string
  readonly status?: number | undefined
}

/** A failure before the stream started, and what it allows. */
export interface Refusal extends Refused {
  readonly failure: Failure
}

/** Raised when no event arrives in time. */
export class Idle {}

/** Raised when the request's overall limit is reached. */
export class Overdue {}

/** The client's time limits, for the lines that name them. */
export interface Limits {
  readonly idleTimeoutMs: number
  readonly requestTimeoutMs: number
}

/** What the classification reads besides the error: the SDK's classes, the endpoint, the refused request. */
export interface Seen {
  readonly sdk: typeof OpenAISdk
  readonly baseURL: string
  /** The raw body of an error response, by the Headers object the SDK keeps on its error. */
  readonly body: (headers: Headers) => string | undefined
  /** The type of the refused request's input item at an index. */
  readonly typeAt: (index: number) => string | undefined
}

export const formatMs = (ms: number): string =>
  ms % 60_000 === 0 ? `${ms / 60_000} min` : ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`

/** The innermost message of an error chain (`Connection error.` → `connect ECONNREFUSED …`). */
export const rootMessage = (cause: unknown): string => {
  let message = describe(cause)
  let current = cause
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (typeof current.message === "string" && current.message !== "") message = current.message
    current = current.cause
  }
  return message
}

/** The innermost error of a chain, for its class or its `code`. */
export const rootCause = (cause: unknown): unknown => {
  let current = cause
  for (let depth = 0; depth < 5 && current instanceof Error && current.cause !== undefined; depth++) current = current.cause
  return current
}

const failure = (reason: Failure["reason"], message: string, status?: number): Failure =>
  status === undefined ? { reason, message } : { reason, message, status }

/** The request's overall limit, reached. */
export const overdue = (limits: Limits): Failure =>
  failure("timeout", `model request stopped after ${formatMs(limits.requestTimeoutMs)}, the limit for one request, without response.completed`)

/** A failure before the stream started: a limit, the HTTP status, the connection, the SDK's timeout. */
export const opening = (cause: unknown, seen: Seen, limits: Limits): Refusal => {
  if (cause instanceof Idle) return { failure: failure("timeout", `model request timed out: no response for ${formatMs(limits.idleTimeoutMs)}`) }
  if (cause instanceof Overdue) return { failure: overdue(limits) }
  const { sdk } = seen
  if (cause instanceof sdk.APIConnectionTimeoutError) return { failure: failure("timeout", "model request timed out before the response started") }
  const root = rootCause(cause)
  if (root instanceof HttpTransport.UnusableAnswer) return { failure: failure("protocol", `model request failed: ${root.message}`) }
  if (cause instanceof sdk.APIConnectionError) {
    const code = root instanceof Error && "code" in root && typeof root.code === "string" ? root.code : rootMessage(cause)
    return {
      failure: failure("connection", `model request failed: cannot connect to ${seen.baseURL}: ${rootMessage(cause)}`),
      retry: { what: `cannot connect to the model endpoint (${code})`, afterMs: undefined }
    }
  }
  if (cause instanceof sdk.APIError && cause.status !== undefined) return refusedWith(cause, cause.status, seen)
  return { failure: failure("connection", `model request failed: ${rootMessage(cause)}`) }
}

/** An HTTP error status: the context window, a retry (429, 5xx), or the adaptations its body asks for. */
const refusedWith = (cause: OpenAISdk.APIError, status: number, seen: Seen): Refusal => {
  const said = ErrorBody.said(cause.error, cause.headers === undefined ? undefined : seen.body(cause.headers))
  const detail = said.message ?? (said.code === undefined || said.code === null ? "the endpoint gave no reason" : String(said.code))
  if (status < 500 && ErrorBody.isContextWindow(said)) {
    return { failure: failure("context_window", `model request failed: HTTP ${status}: ${ErrorBody.CONTEXT_WINDOW_MESSAGE}`, status) }
  }
  const refused = failure("http", `model request failed: HTTP ${status}: ${detail}`, status)
  const adapt = Adaptation.asks(status, said, seen.typeAt)
  return status === 429 || status >= 500
    ? { failure: refused, retry: { what: `HTTP ${status} from the model endpoint`, afterMs: Retry.retryAfterMs(cause.headers) } }
    : adapt.length === 0 ? { failure: refused } : { failure: refused, adapt }
}

/** A failure while the stream is read: a limit, an error event the SDK threw, an event too large, malformed data, a drop. */
export const reading = (cause: unknown, sdk: typeof OpenAISdk, limits: Limits): Failure => {
  if (cause instanceof Idle) return failure("timeout", `model stream timed out: no event for ${formatMs(limits.idleTimeoutMs)}`)
  if (cause instanceof Overdue) return overdue(limits)
  // The SDK throws APIError for a data object with an `error` field.
  if (cause instanceof sdk.APIError) {
    const said = ErrorBody.said(cause.error, undefined)
    return ErrorBody.isContextWindow(said)
      ? failure("context_window", `model stream error: ${ErrorBody.CONTEXT_WINDOW_MESSAGE}`)
      : failure("failed", `model stream error: ${said.message ?? cause.message}`)
  }
  if (cause instanceof EventFrames.EventTooLarge) return failure("too_large", cause.message)
  // Never V8's message: it quotes the data, and the quote could cut the key anywhere.
  if (cause instanceof SyntaxError) return failure("protocol", "model stream sent malformed data: an event whose data is not JSON")
  return failure("dropped", `model stream dropped before response.completed: ${rootMessage(cause)}`)
}
