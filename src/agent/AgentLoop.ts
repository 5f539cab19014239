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
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { Approver } from "../approval/Approver.js"
import { type CompletedResponse, ModelClient } from "../model/ModelClient.js"
import type { OpenTurn } from "../session/conversation/ConversationState.js"
import type { SessionRecord, TurnStatus } from "../session/records/Records.js"
import { SessionStore } from "../session/SessionStore.js"
import { Secrets, streamRedactor } from "../security/Secrets.js"
import type { Closing } from "../session/conversation/TurnClosing.js"
import { freeze } from "../tools/Tool.js"
import { ToolRegistry } from "../tools/ToolRegistry.js"
import * as ToolResult from "../tools/ToolResult.js"
import type { AgentEvent } from "./AgentEvent.js"
import { batchRefusal } from "./Limits.js"
import * as Stopping from "./Stopping.js"
import { type FunctionCall, type ResponseItem, validate } from "../protocol/ResponseItem.js"
import { Agent, AgentBusy, type AgentConfig, type TurnOptions, type TurnOutcome } from "./Agent.js"

/** The Agent, as a layer of the services it uses. */
export const layer = (config: AgentConfig) => Layer.effect(Agent, make(config))

/** How a turn ends early: the status and one line for the user and the record. */
class TurnStop extends Data.TaggedError("TurnStop")<{ readonly status: TurnStatus; readonly reason: string }> {}

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

/** The view of a turn with nothing saved yet. */
const emptyTurn = (turnId: string): OpenTurn => ({ turnId, items: [], callIds: new Set(), requests: 0, unfinished: [], toolTurn: false, firstLine: 0 })

const make = (config: AgentConfig) =>
  Effect.gen(function*() {
    const model = yield* ModelClient
    // What the Agent tells the screen is redacted here, raw, before anything escapes it for display.
    const secrets = yield* Secrets
    const store = yield* SessionStore
    const tools = yield* ToolRegistry
    const approver = yield* Approver
    const lock = yield* Effect.makeSemaphore(1)
    // How many first turns of the history go without their reasoning: set when the endpoint could
    // not use it (Adaptation.ts), to the turns sent then; later turns keep theirs.
    let withoutReasoningBefore = 0

    const runTurn = (input: string, emit: (event: AgentEvent) => Effect.Effect<void>, options: TurnOptions) =>
      Effect.gen(function*() {
        const turnId = crypto.randomUUID()
        const stopping = Stopping.make()
        /** Waiting (for the model, for a decision) begins only if no stop has been requested; a stop interrupts it. */
        const unlessStopped = <A, E>(effect: Effect.Effect<A, E>) => Effect.zipRight(stopping.check, effect)
        // The turn as saved so far: the Conversation owns it; nothing here mirrors it.
        const saved = Effect.map(store.openTurn(turnId), (turn) => turn ?? emptyTurn(turnId))
        // A save lands or fails: a stop waits for it.
        const save = (record: SessionRecord) =>
          Effect.uninterruptible(store.append(record)).pipe(
            Effect.catchTag("RecordRejected", (e) => new TurnStop({ status: "failed", reason: e.message }))
          )

        const saveResult = (call: { readonly call_id: string; readonly name: string }, result: ToolResult.ToolResult) =>
          Effect.gen(function*() {
            yield* save({ type: "tool_result", turn_id: turnId, call_id: call.call_id, name: call.name, result })
            yield* emit({ _tag: "ToolFinished", callId: call.call_id, name: call.name, result })
          })

        const end = (status: TurnStatus, reason?: string) =>
          Effect.gen(function*() {
            // A reason can quote the model (a call id, an item type): redacted as it is, before it is shown.
            const why = reason === undefined ? {} : { reason: secrets.redact(reason) }
            yield* emit({ _tag: "TurnEnded", status, ...why })
            return { turnId, status, ...why } satisfies TurnOutcome
          })

        // A turn that stops early: its unfinished calls are closed the one way recovery closes them too.
        const close = (closing: Closing) =>
          Effect.gen(function*() {
            const turn = yield* saved
            yield* store.closeTurn(turnId, closing)
            for (const call of turn.unfinished) {
              const result = call.started ? closing.started : closing.unstarted
              yield* emit({ _tag: "ToolFinished", callId: call.callId, name: call.name ?? "tool", result })
            }
            return yield* end(closing.status, closing.reason)
          }).pipe(Effect.uninterruptible)

        const runCall = (call: FunctionCall) =>
          Effect.gen(function*() {
            yield* stopping.check
            const prepared = yield* Effect.either(tools.prepare(call.name, call.arguments))
            if (Either.isLeft(prepared)) return yield* saveResult(call, prepared.left.result)
            // Frozen, not copied: the approver can read the display, not change what the screen shows of it.
            const display = freeze(prepared.right.display)
            const decision = yield* unlessStopped(approver.decide(display))
            if (!decision.approved) {
              if (decision.endTurn === true) return yield* new TurnStop({ status: "cancelled", reason: decision.reason })
              return yield* saveResult(call, ToolResult.make("denied", decision.reason))
            }
            yield* save({ type: "tool_start", turn_id: turnId, call_id: call.call_id, name: call.name })
            yield* emit({ _tag: "ToolRunning", callId: call.call_id, display })
            // A stop makes the tool end the call and return what it has; one that does not is cut off.
            const result = yield* unlessStopped(stopping.executing((cancel) => Effect.scoped(prepared.right.execute(cancel))))
            yield* saveResult(call, result)
          })

        /** The turn's steps, to the completed response that asks for nothing more; every way to end early is an error. */
        const steps = Effect.gen(function*() {
          yield* save({ type: "user_input", turn_id: turnId, text: input })
          while (true) {
            const before = yield* saved
            const response = yield* unlessStopped(request(before.items, emit))
            const batch = validate(response.output, before.callIds)
            // Validated, then saved (chapter 3 §4.1): a response the Agent refuses is no model_response;
            // the turn_end that fails the turn says why.
            if (Either.isLeft(batch)) {
              yield* emit({ _tag: "ModelResponded" })
              return yield* new TurnStop({ status: "failed", reason: `invalid response: ${batch.left}` })
            }
            yield* save({ type: "model_response", turn_id: turnId, response_id: response.id, output: response.output })
            yield* emit({ _tag: "ModelResponded" })
            if (batch.right.length === 0) return
            // Every call of an accepted batch counts, whether it ran, was denied or was invalid.
            const refusal = batchRefusal(before.requests + 1, before.callIds.size, batch.right.length)
            if (refusal !== undefined) return yield* new TurnStop({ status: "failed", reason: refusal })
            for (const call of batch.right) yield* runCall(call)
          }
        })

        /** How interrupted steps close the turn: with the stop's cause, if one was requested. */
        const interruption = () => {
          const cause = stopping.cause()
          return cause === undefined ? interruptedTurn : cancelledTurn(cause)
        }

        // The steps run in a fiber of their own, so that a stop can interrupt them and this fiber still closes the turn.
        const running = yield* Effect.fork(steps)
        if (options.cancel !== undefined) yield* Effect.forkScoped(stopping.watch(options.cancel, running))
        const exit = yield* Fiber.await(running).pipe(
          Effect.onInterrupt(() => Effect.ignore(Effect.zipRight(Fiber.interrupt(running), Effect.suspend(() => close(interruption())))))
        )
        if (Exit.isSuccess(exit)) {
          // A save point like any other: a failed write or sync is the typed SessionWriteError that stops
          // the chat (a turn_end holds nothing a secret or a cap could reject, so no RecordRejected).
          yield* Effect.uninterruptible(store.append({ type: "turn_end", turn_id: turnId, status: "completed" })).pipe(
            Effect.catchTag("RecordRejected", (e) => Effect.dieMessage(`a turn_end was refused: ${e.message}`))
          )
          return yield* end("completed")
        }
        const failure = Cause.failureOption(exit.cause)
        if (Option.isSome(failure)) {
          const error = failure.value
          if (error._tag === "TurnStop") return yield* close(stopped(error.status, error.reason))
          if (error._tag === "ModelError") return yield* close(stopped("failed", error.message))
          return yield* error
        }
        if (Cause.isInterruptedOnly(exit.cause)) return yield* close(interruption())
        // A defect: as it would have without the fiber.
        return yield* Effect.die(Cause.squash(exit.cause))
      }).pipe(Effect.scoped)

    /** One model request: the earlier completed turns (kept serialised by the store), then this turn so far. */
    const request = (current: ReadonlyArray<ResponseItem>, emit: (event: AgentEvent) => Effect.Effect<void>) =>
      Effect.gen(function*() {
        yield* emit({ _tag: "ModelWaiting" })
        const sentTurns = store.history.turns
        const events = model.respond({
          model: config.model,
          instructions: config.instructions,
          history: store.history,
          input: current,
          withoutReasoningBefore,
          tools: tools.definitions
        })
        // Text is shown as it streams, redacted as it streams: a piece that could begin the key waits
        // for the next (or the item's end); only the completed response is acted on.
        const text = streamRedactor(secrets)
        let heldFor: { readonly item?: string; readonly refusal?: boolean } | undefined
        const flushWith = (ending: (rest: string) => string) => Effect.suspend(() => {
          const rest = ending(text.flush())
          const at = heldFor
          heldFor = undefined
          return rest.length > 0 && at !== undefined ? emit({ _tag: "TextDelta", ...at, text: rest }) : Effect.void
        })
        const flush = flushWith((rest) => rest)
        const completed = yield* Stream.runFoldEffect(events, Option.none<CompletedResponse>(), (done, event) => {
          switch (event._tag) {
            case "TextDelta": {
              const { _tag, text: piece, ...at } = event
              const before = heldFor !== undefined && (heldFor.item !== at.item || heldFor.refusal !== at.refusal) ? flush : Effect.void
              return Effect.zipRight(before, Effect.suspend(() => {
                heldFor = at
                const shown = text.push(piece)
                return Effect.as(shown.length > 0 ? emit({ _tag, ...at, text: shown }) : Effect.void, done)
              }))
            }
            case "Retrying":
              return Effect.as(emit({ _tag: "ModelRetrying", message: secrets.redact(event.message) }), done)
            case "Adapted":
              if (event.adaptation === "without_earlier_reasoning") withoutReasoningBefore = sentTurns
              return Effect.as(emit({ _tag: "ModelAdapted", message: secrets.redact(event.message) }), done)
            case "Completed":
              return Effect.as(flush, Option.some(event.response))
          }
        }).pipe(
          // A stream that fails or is stopped still shows the text it held back, by the rule for a cut
          // (Secrets.redactCut): a beginning of the key of 4 or more characters is redacted.
          Effect.ensuring(flushWith(secrets.redactCut))
        )
        return yield* Option.match(completed, {
          onNone: () => Effect.fail(new TurnStop({ status: "failed", reason: "the model stream ended without response.completed" })),
          onSome: Effect.succeed
        })
      })

    return Agent.of({
      notices: store.notices,
      questions: store.questions,
      turn: (input, emit, options = {}) =>
        lock.withPermitsIfAvailable(1)(runTurn(input, emit, options)).pipe(
          Effect.flatMap(Option.match({
            onNone: () => Effect.fail(new AgentBusy({ message: "busy: a turn is already running on this session" })),
            onSome: Effect.succeed
          }))
        )
    })
  })


