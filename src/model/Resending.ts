/**
 * When a request that failed before its stream started is sent again, and how:
 * changed (an adaptation its refusal asked for, Adaptation.ts), the same after a
 * wait (HTTP 429 or 5xx, a failed connection: Retry.ts), or not at all. Pure:
 * `ModelClient` sends, waits and announces; this module decides, over the named
 * states below, and says what the client remembers of it.
 *
 * Each adaptation is tried at most once per request, and only when it can change
 * what is sent; an adaptation is chosen before a retry. Retries number at most
 * `maxRetries`; the failure that ends them says how many there were.
 */
import type { Adaptation } from "./Adaptation.js"
import * as AdaptationRules from "./Adaptation.js"
import type { ModelRequest, Shape as BodyShape } from "./request/RequestBody.js"
import * as Retry from "./transport/Retry.js"

/** How one request is sent, after the adaptations made so far. */
export interface Shape extends BodyShape {
  /** The adaptations already made for this request: each is tried once. */
  readonly adapted: ReadonlySet<Adaptation>
}

/** One sending of a request: its number (from 1; retries count, adaptations do not) and its shape. */
export interface Attempt {
  readonly number: number
  readonly shape: Shape
}

/** What a client remembers of the endpoint's refusals while it lives. */
export interface Memory {
  /** `endpoint model` pairs that refused `include`. */
  readonly withoutInclude: ReadonlySet<string>
  /** The endpoint refused reasoning items in its input. */
  readonly reasoningRefused: boolean
  /** The endpoint took a request only without the optional fields. */
  readonly optionalRefused: boolean
}

export const forgetful: Memory = { withoutInclude: new Set(), reasoningRefused: false, optionalRefused: false }

/** How the client's retries are bounded. */
export interface Policy {
  readonly maxRetries: number
  readonly retryWaitCapMs: number
}

/** What a refusal allows: a retry (what it names, what `retry-after` asked), the adaptations it asks for (the likelier first). */
export interface Refused {
  readonly retry?: { readonly what: string; readonly afterMs: number | undefined } | undefined
  readonly adapt?: ReadonlyArray<Adaptation> | undefined
}

export type Next =
  /** Send again as `attempt`, after announcing `message`; `memory` is what the client remembers now. */
  | { readonly _tag: "Adapt"; readonly adaptation: Adaptation; readonly message: string; readonly attempt: Attempt; readonly memory: Memory }
  /** Wait `waitMs`, announcing `message`, then send again as `attempt`. */
  | { readonly _tag: "Retry"; readonly waitMs: number; readonly message: string; readonly attempt: Attempt }
  /** Give up: the failure's line ends with `suffix` (how many retries there were). */
  | { readonly _tag: "Fail"; readonly suffix: string }

/** The first attempt of `request` (`memoryKey`: its endpoint and model), as the client's memory shapes it. */
export const first = (memory: Memory, memoryKey: string, request: ModelRequest): Attempt => ({
  number: 1,
  shape: {
    include: !memory.withoutInclude.has(memoryKey),
    withoutReasoningBefore: request.withoutReasoningBefore ?? 0,
    reasoning: !memory.reasoningRefused,
    optional: !memory.optionalRefused,
    adapted: new Set()
  }
})

/** The memory once a request sent as `shape` was taken: sent without the optional fields, so it goes from now on. */
export const taken = (memory: Memory, shape: Shape): Memory =>
  shape.optional === false && !memory.optionalRefused ? { ...memory, optionalRefused: true } : memory

/** Whether sending the request again with `adaptation` can change the endpoint's answer. */
export const worthAdapting = (request: ModelRequest, shape: Shape, adaptation: Adaptation): boolean => {
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

/** `shape` changed by `adaptation`. */
export const adapted = (request: ModelRequest, shape: Shape, adaptation: Adaptation): Shape => {
  const made = new Set([...shape.adapted, adaptation])
  switch (adaptation) {
    case "without_include":
      return { ...shape, include: false, adapted: made }
    case "without_reasoning":
      return { ...shape, reasoning: false, adapted: made }
    case "without_optional":
      return { ...shape, optional: false, adapted: made }
    case "without_earlier_reasoning":
      return { ...shape, withoutReasoningBefore: request.history?.turns ?? 0, adapted: made }
  }
}

/** What the client remembers once it made `adaptation` (`without_optional` only once a request so sent is taken: `taken`). */
export const remember = (memory: Memory, memoryKey: string, adaptation: Adaptation): Memory =>
  adaptation === "without_include"
    ? { ...memory, withoutInclude: new Set([...memory.withoutInclude, memoryKey]) }
    : adaptation === "without_reasoning"
    ? { ...memory, reasoningRefused: true }
    : memory

/** What follows a refusal of `request` sent as `attempt`. */
export const next = (request: ModelRequest, memoryKey: string, memory: Memory, attempt: Attempt, refused: Refused, policy: Policy): Next => {
  const adaptation = refused.adapt?.find((candidate) => worthAdapting(request, attempt.shape, candidate))
  if (adaptation !== undefined) {
    return {
      _tag: "Adapt",
      adaptation,
      message: AdaptationRules.announcement(adaptation, request.model),
      attempt: { number: attempt.number, shape: adapted(request, attempt.shape, adaptation) },
      memory: remember(memory, memoryKey, adaptation)
    }
  }
  const retry = refused.retry
  if (retry !== undefined && attempt.number <= policy.maxRetries) {
    const waitMs = Retry.waitMs(retry.afterMs, attempt.number, policy.retryWaitCapMs)
    return {
      _tag: "Retry",
      waitMs,
      message: Retry.announcement(retry.what, waitMs, attempt.number, policy.maxRetries),
      attempt: { number: attempt.number + 1, shape: attempt.shape }
    }
  }
  const retries = attempt.number - 1
  return { _tag: "Fail", suffix: retries > 0 ? ` (after ${retries} ${retries === 1 ? "retry" : "retries"})` : "" }
}
