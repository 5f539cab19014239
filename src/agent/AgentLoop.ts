/**
 * The Agent loop (chapter 2 and 4.1). One user turn:
 *
 *   save input → request → validate the completed response → save it →
 *   for each call: prepare → approve → save start → execute → save result →
 *   next request, or end the turn.
 *
 * Every save point is an `append` that fsyncs before the loop takes its next
 * step; a failed save is a `SessionWriteError` that ends the turn and stops the
 * chat. Model failures and protocol violations end the turn `failed`, executing
 * nothing. The turn's `cancel` option (Ctrl+C, a signal, closed output) stops
 * what it waits for, has a running command stopped with its output kept, and
 * ends it `cancelled` with the cause; interrupting the fiber also ends it
 * `cancelled`, without the output.
 *
 * The turn's state is the session's: each request is built from the store's view
 * of the open turn (its items, call ids, unfinished calls), which advances only
 * when a record is on disk, and a turn that stops early is closed by the same
 * `TurnClosing` that recovery uses on restart.
 */
import * as Cause from "effect/Cause"
import type * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Approver } from "../approval/Approver.js"
import { type CompletedResponse, ModelClient, ModelError, type ModelEvent } from "../model/ModelClient.js"
import type { OpenTurn } from "../session/conversation/ConversationState.js"
import type { SessionWriteError } from "../session/conversation/DurableFile.js"
import type { SessionRecord, TurnStatus } from "../session/records/Records.js"
import { SessionStore } from "../session/SessionStore.js"
import { afterHeld, Secrets, streamRedactor } from "../security/Secrets.js"
import type { Closing } from "../session/conversation/TurnClosing.js"
import { freeze } from "../tools/Tool.js"
import { ToolRegistry } from "../tools/ToolRegistry.js"
import * as ToolResult from "../tools/ToolResult.js"
import type { AgentEvent } from "./AgentEvent.js"
import { batchOverLimit } from "./Limits.js"
import * as Stopping from "./Stopping.js"
import { type FunctionCall, type ResponseItem, validate } from "../protocol/ResponseItem.js"
import { Agent, AgentBusy, type AgentConfig, type TurnOptions, type TurnOutcome } from "./Agent.js"

/** The Agent, as a layer of the services it uses. */
export const layer = (config: AgentConfig) => Layer.effect(Agent, make(config))

/** How a turn ends early: the status and one line for the user and the record. */
export class TurnEndsEarly extends Data.TaggedError("TurnEndsEarly")<{ readonly status: TurnStatus; readonly reason: string }> {}

/** What the calls of a turn that stops early become (see `TurnClosing`). */
const stopped = (status: TurnStatus, reason: string): Closing => ({
  status,
  reason,
  started: ToolResult.make("unknown", "The turn stopped while this command was running; its outcome is unknown."),
  unstarted: ToolResult.make("not_executed", "The turn stopped before this call was executed.")
})

/** A turn stopped by a cancel: a call still running was cut off (a tool that stops by itself returns its own result). */
const cancelledTurn = (cause: string): Closing => ({
  status: "cancelled",
  reason: cause,
  started: { ...ToolResult.make("unknown", `${cause} while it ran; the tool was stopped. It may have had effects.`), cancelled: true },
  unstarted: ToolResult.make("not_executed", "The turn stopped before this call was executed.")
})

/** A turn whose fiber is interrupted: the running call's group was killed with it. */
const interruptedTurn: Closing = {
  status: "cancelled",
  reason: "the turn was interrupted",
  started: { ...ToolResult.make("unknown", "Interrupted while running; the process group was killed. It may have had effects."), cancelled: true },
  unstarted: ToolResult.make("not_executed", "The turn stopped before this call was executed.")
}

/** A completed response as saved: its items verbatim, and the tokens the endpoint reported for it, if any. */
const responseRecord = (turnId: string, response: CompletedResponse): SessionRecord => ({
  type: "model_response",
  turn_id: turnId,
  response_id: response.id,
  output: response.output,
  ...(response.usage === undefined ? {} : { usage: response.usage })
})

/** The view of a turn with nothing saved yet. */
const emptyTurn = (turnId: string): OpenTurn => ({ turnId, items: [], callIds: new Set(), requests: 0, unfinished: [], toolTurn: false, firstLine: 0 })

/**
 * How a turn's steps ended, pure: completed; closed early with a `Closing` (a
 * `TurnEndsEarly`, a model failure, an interruption, with the stop's cause when
 * one was requested); or an error or defect that is not the turn's to close.
 */
export type Ending<E> =
  | { readonly _tag: "Completed" }
  | { readonly _tag: "Closed"; readonly closing: Closing }
  | { readonly _tag: "Failed"; readonly error: E }
  | { readonly _tag: "Defect"; readonly defect: unknown }

export const howItEnded = <E>(exit: Exit.Exit<void, E | TurnEndsEarly | ModelError>, stopCause: string | undefined): Ending<E> => {
  if (Exit.isSuccess(exit)) return { _tag: "Completed" }
  const failure = Cause.failureOption(exit.cause)
  if (Option.isSome(failure)) {
    const error = failure.value
    if (error instanceof TurnEndsEarly) return { _tag: "Closed", closing: stopped(error.status, error.reason) }
    if (error instanceof ModelError) return { _tag: "Closed", closing: stopped("failed", error.message) }
    return { _tag: "Failed", error }
  }
  if (Cause.isInterruptedOnly(exit.cause)) return { _tag: "Closed", closing: interruption(stopCause) }
  // A defect: as it would have without the fiber.
  return { _tag: "Defect", defect: Cause.squash(exit.cause) }
}

/** How interrupted steps close the turn: with the stop's cause, if one was requested. */
const interruption = (stopCause: string | undefined): Closing => stopCause === undefined ? interruptedTurn : cancelledTurn(stopCause)

/** The services a turn uses, and what the Agent remembers between turns. */
interface Parts {
  readonly config: AgentConfig
  readonly model: Context.Tag.Service<ModelClient>
  readonly store: Context.Tag.Service<SessionStore>
  readonly tools: Context.Tag.Service<ToolRegistry>
  readonly approver: Context.Tag.Service<Approver>
  /** What the Agent tells the screen is redacted here, raw, before anything escapes it for display. */
  readonly secrets: Context.Tag.Service<Secrets>
  /**
   * How many first turns of the history go without their reasoning: set when the endpoint could
   * not use it (Adaptation.ts), to the turns sent then; later turns keep theirs.
   */
  readonly reasoning: { withoutBefore: number }
}

type Emit = (event: AgentEvent) => Effect.Effect<void>

/** One turn's means of acting: its id, how it stops, how it reports and saves. */
interface Turn {
  readonly turnId: string
  readonly stopping: Stopping.Stopping
  readonly emit: Emit
  /** Saves a record: it lands or fails, and a stop waits for it. */
  readonly save: (record: SessionRecord) => Effect.Effect<void, TurnEndsEarly | SessionWriteError>
}

/** Waiting (for the model, for a decision) begins only if no stop has been requested; a stop interrupts it. */
const unlessStopped = <A, E>(turn: Turn, effect: Effect.Effect<A, E>) => Effect.zipRight(turn.stopping.check, effect)

const saveResult = (turn: Turn, call: { readonly call_id: string; readonly name: string }, result: ToolResult.ToolResult) =>
  Effect.gen(function*() {
    yield* turn.save({ type: "tool_result", turn_id: turn.turnId, call_id: call.call_id, name: call.name, result })
    yield* turn.emit({ _tag: "ToolFinished", callId: call.call_id, name: call.name, result })
  })

/** One call: prepare → approve → save start → execute → save result. */
const runCall = (parts: Parts, turn: Turn, call: FunctionCall) =>
  Effect.gen(function*() {
    yield* turn.stopping.check
    const prepared = yield* Effect.either(parts.tools.prepare(call.name, call.arguments))
    if (Either.isLeft(prepared)) return yield* saveResult(turn, call, prepared.left.result)
    // Frozen, not copied: the approver can read the display, not change what the screen shows of it.
    const display = freeze(prepared.right.display)
    const decision = yield* unlessStopped(turn, parts.approver.decide(display))
    if (!decision.approved) {
      if (decision.endTurn === true) return yield* new TurnEndsEarly({ status: "cancelled", reason: decision.reason })
      return yield* saveResult(turn, call, ToolResult.make("denied", decision.reason))
    }
    yield* turn.save({ type: "tool_start", turn_id: turn.turnId, call_id: call.call_id, name: call.name })
    yield* turn.emit({ _tag: "ToolRunning", callId: call.call_id, display })
    // A stop makes the tool end the call and return what it has; one that does not is cut off.
    const result = yield* unlessStopped(turn, turn.stopping.executing((cancel) => Effect.scoped(prepared.right.execute(cancel))))
    yield* saveResult(turn, call, result)
  })

/** One model request: the earlier completed turns (kept serialised by the store), then this turn so far. */
const request = (parts: Parts, current: ReadonlyArray<ResponseItem>, emit: Emit) =>
  Effect.gen(function*() {
    const { config, store, tools, reasoning } = parts
    yield* emit({ _tag: "ModelWaiting" })
    const sentTurns = store.history.turns
    const opening = parts.model.open({
      model: config.model,
      instructions: config.instructions,
      history: store.history,
      input: current,
      withoutReasoningBefore: reasoning.withoutBefore,
      tools: tools.definitions
    })
    // Text is shown as it streams, redacted as it streams: a piece that could begin the key waits
    // for the next (or the item's end); only the completed response is acted on.
    const { secrets } = parts
    const text = streamRedactor(secrets)
    let heldFor: { readonly item?: string; readonly refusal?: boolean } | undefined
    const flushWith = (ending: (rest: string) => string) => Effect.suspend(() => {
      const rest = ending(text.flush())
      const at = heldFor
      heldFor = undefined
      return rest.length > 0 && at !== undefined ? emit({ _tag: "TextDelta", ...at, text: rest }) : Effect.void
    })
    const flush = flushWith((rest) => rest)
    // What the text held back when the reply ended without completing.
    let heldAtEnd = ""
    const shown = (event: ModelEvent): Effect.Effect<Option.Option<CompletedResponse>> => {
      switch (event._tag) {
        case "TextDelta": {
          const { _tag, text: piece, ...at } = event
          const before = heldFor !== undefined && (heldFor.item !== at.item || heldFor.refusal !== at.refusal) ? flush : Effect.void
          return Effect.zipRight(before, Effect.suspend(() => {
            heldFor = at
            const visible = text.push(piece)
            return Effect.as(visible.length > 0 ? emit({ _tag, ...at, text: visible }) : Effect.void, Option.none())
          }))
        }
        case "Retrying":
          return Effect.as(emit({ _tag: "ModelRetrying", message: secrets.redact(event.message) }), Option.none())
        case "Adapted":
          if (event.adaptation === "without_earlier_reasoning") reasoning.withoutBefore = sentTurns
          return Effect.as(emit({ _tag: "ModelAdapted", message: secrets.redact(event.message) }), Option.none())
        case "Completed":
          return Effect.as(flush, Option.some(event.response))
      }
    }
    // The reply read a step at a time until it ends (no stream for each request); its socket closes with the scope.
    const completed = yield* Effect.scoped(Effect.gen(function*() {
      const reply = yield* opening
      let done = Option.none<CompletedResponse>()
      for (let events = yield* reply.next; events !== undefined; events = yield* reply.next) {
        for (const event of events) {
          const response = yield* shown(event)
          if (Option.isSome(response)) done = response
        }
      }
      return done
    })).pipe(
      // A stream that fails or is stopped still shows the text it held back, by the rule for a cut
      // (Secrets.redactCut): a beginning of the key of 4 or more characters is redacted, and so is
      // the rest of the key in the failure's line (Secrets.afterHeld).
      Effect.ensuring(flushWith((rest) => {
        heldAtEnd = rest
        return secrets.redactCut(rest)
      })),
      Effect.mapError((error) =>
        heldAtEnd === "" ? error : new ModelError({ ...error, message: afterHeld(secrets, heldAtEnd, error.message) }))
    )
    return yield* Option.match(completed, {
      onNone: () => Effect.fail(new TurnEndsEarly({ status: "failed", reason: "the model stream ended without response.completed" })),
      onSome: Effect.succeed
    })
  })

/** The turn's steps, to the completed response that asks for nothing more; every way to end early is an error. */
const steps = (parts: Parts, turn: Turn, input: string, saved: Effect.Effect<OpenTurn>) =>
  Effect.gen(function*() {
    yield* turn.save({ type: "user_input", turn_id: turn.turnId, text: input })
    while (true) {
      const before = yield* saved
      const response = yield* unlessStopped(turn, request(parts, before.items, turn.emit))
      const batch = validate(response.output, before.callIds)
      // Validated, then saved (chapter 3 §4.1): a response the Agent refuses is no model_response;
      // the turn_end that fails the turn says why.
      if (Either.isLeft(batch)) {
        yield* turn.emit({ _tag: "ModelResponded" })
        return yield* new TurnEndsEarly({ status: "failed", reason: `invalid response: ${batch.left}` })
      }
      yield* turn.save(responseRecord(turn.turnId, response))
      yield* turn.emit({ _tag: "ModelResponded" })
      if (batch.right.length === 0) return
      // Every call of an accepted batch counts, whether it ran, was denied or was invalid.
      const overLimit = batchOverLimit(before.requests + 1, before.callIds.size, batch.right.length)
      if (overLimit !== undefined) return yield* new TurnEndsEarly({ status: "failed", reason: overLimit })
      for (const call of batch.right) yield* runCall(parts, turn, call)
    }
  })

/** One user turn: the steps in a fiber of their own, so that a stop can interrupt them and this fiber still closes the turn. */
const runTurn = (parts: Parts, input: string, emit: Emit, options: TurnOptions) =>
  Effect.gen(function*() {
    const { store } = parts
    const turnId = crypto.randomUUID()
    const stopping = Stopping.make()
    // The turn as saved so far: the Conversation owns it; nothing here mirrors it.
    const saved = Effect.map(store.openTurn(turnId), (turn) => turn ?? emptyTurn(turnId))
    const save = (record: SessionRecord) =>
      Effect.uninterruptible(store.append(record)).pipe(
        Effect.catchTag("RecordRejected", (e) => new TurnEndsEarly({ status: "failed", reason: e.message }))
      )
    const turn: Turn = { turnId, stopping, emit, save }

    const end = (status: TurnStatus, reason?: string) =>
      Effect.gen(function*() {
        // A reason can quote the model (a call id, an item type): redacted as it is, before it is shown.
        const why = reason === undefined ? {} : { reason: parts.secrets.redact(reason) }
        yield* emit({ _tag: "TurnEnded", status, ...why })
        return { turnId, status, ...why } satisfies TurnOutcome
      })

    // A turn that stops early: its unfinished calls are closed the one way recovery closes them too.
    const close = (closing: Closing) =>
      Effect.gen(function*() {
        const open = yield* saved
        yield* store.closeTurn(turnId, closing)
        for (const call of open.unfinished) {
          const result = call.started ? closing.started : closing.unstarted
          yield* emit({ _tag: "ToolFinished", callId: call.callId, name: call.name ?? "tool", result })
        }
        return yield* end(closing.status, closing.reason)
      }).pipe(Effect.uninterruptible)

    const running = yield* Effect.fork(steps(parts, turn, input, saved))
    if (options.cancel !== undefined) yield* Effect.forkScoped(stopping.watch(options.cancel, running))
    const exit = yield* Fiber.await(running).pipe(
      Effect.onInterrupt(() => Effect.ignore(Effect.zipRight(Fiber.interrupt(running), Effect.suspend(() => close(interruption(stopping.cause()))))))
    )
    const ended = howItEnded(exit, stopping.cause())
    switch (ended._tag) {
      case "Completed":
        // A save point like any other: a failed write or sync is the typed SessionWriteError that stops
        // the chat (a turn_end holds nothing a secret or a cap could reject, so no RecordRejected).
        yield* Effect.uninterruptible(store.append({ type: "turn_end", turn_id: turnId, status: "completed" })).pipe(
          Effect.catchTag("RecordRejected", (e) => Effect.dieMessage(`a turn_end was refused: ${e.message}`))
        )
        return yield* end("completed")
      case "Closed":
        return yield* close(ended.closing)
      case "Failed":
        return yield* ended.error
      case "Defect":
        return yield* Effect.die(ended.defect)
    }
  }).pipe(Effect.scoped)

const make = (config: AgentConfig) =>
  Effect.gen(function*() {
    const parts: Parts = {
      config,
      model: yield* ModelClient,
      store: yield* SessionStore,
      tools: yield* ToolRegistry,
      approver: yield* Approver,
      secrets: yield* Secrets,
      reasoning: { withoutBefore: 0 }
    }
    const lock = yield* Effect.makeSemaphore(1)
    return Agent.of({
      notices: parts.store.notices,
      questions: parts.store.questions,
      turn: (input, emit, options = {}) =>
        lock.withPermitsIfAvailable(1)(runTurn(parts, input, emit, options)).pipe(
          Effect.flatMap(Option.match({
            onNone: () => Effect.fail(new AgentBusy({ message: "busy: a turn is already running on this session" })),
            onSome: Effect.succeed
          }))
        )
    })
  })
