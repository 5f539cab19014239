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
 * nothing; Ctrl+C (fiber interruption) kills a running command and ends it
 * `cancelled`.
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { Approver } from "../approval/Approver.js"
import { type CompletedResponse, ModelClient, type ModelError } from "../model/ModelClient.js"
import { contextItems, type ModelResponse, type SessionRecord, type TurnStatus } from "../session/Records.js"
import { SessionStore, type SessionWriteError } from "../session/SessionStore.js"
import type { Cancellation } from "../tools/Tool.js"
import { ToolRegistry } from "../tools/ToolRegistry.js"
import * as ToolResult from "../tools/ToolResult.js"
import type { AgentEvent } from "./AgentEvent.js"
import { batchRefusal } from "./Limits.js"
import { type FunctionCall, validate } from "./Protocol.js"

export class AgentBusy extends Data.TaggedError("AgentBusy")<{ readonly message: string }> {}

export interface TurnOutcome {
  readonly turnId: string
  readonly status: TurnStatus
  readonly reason?: string
}

export interface AgentShape {
  /** Notices from opening the session (recovery), for the user before the banner. */
  readonly notices: ReadonlyArray<string>
  /** The conversation's questions so far, oldest first (for the prompt's history); read-only. */
  readonly questions: Effect.Effect<ReadonlyArray<string>>
  /**
   * Runs one user turn to its end. `emit` receives display events in order and
   * the loop waits for each. Fails only when the session cannot be saved
   * (the chat must stop) or another turn is running.
   */
  readonly turn: (
    input: string,
    emit: (event: AgentEvent) => Effect.Effect<void>,
    options?: TurnOptions
  ) => Effect.Effect<TurnOutcome, SessionWriteError | AgentBusy>
}

export interface TurnOptions {
  /**
   * Completes, with its cause ("Cancelled by SIGTERM"), when the turn must stop.
   * A running call is stopped and its result saved with the output captured so
   * far; the rest of the batch is `not_executed`; the turn ends `cancelled` with
   * the cause as its reason. Nothing more is sent to the model.
   */
  readonly cancel?: Cancellation
}

/** How long a tool that ignores its cancellation gets before it is interrupted. */
export const CANCEL_GRACE_MS = 2_000

export interface AgentConfig {
  readonly model: string
  readonly instructions: string
}

export class Agent extends Context.Tag("mino/Agent")<Agent, AgentShape>() {
  static readonly layer = (config: AgentConfig) => Layer.effect(Agent, make(config))
}

type Item = Readonly<Record<string, unknown>>

/** How a turn ends early: the status and one line for the user and the record. */
class TurnStop extends Data.TaggedError("TurnStop")<{ readonly status: TurnStatus; readonly reason: string }> {}

const make = (config: AgentConfig) =>
  Effect.gen(function*() {
    const model = yield* ModelClient
    const store = yield* SessionStore
    const tools = yield* ToolRegistry
    const approver = yield* Approver
    const lock = yield* Effect.makeSemaphore(1)

    const runTurn = (input: string, emit: (event: AgentEvent) => Effect.Effect<void>, options: TurnOptions) =>
      Effect.gen(function*() {
        const turnId = crypto.randomUUID()
        // The cause, once a stop is requested; saves are never interrupted by it.
        const stop = yield* Deferred.make<string>()
        if (options.cancel !== undefined) {
          yield* Effect.forkScoped(Effect.flatMap(options.cancel, (cause) => Deferred.succeed(stop, cause)))
        }
        const cancel: Cancellation = Deferred.await(stop)
        const cancelled = (reason: string) => new TurnStop({ status: "cancelled", reason })
        /** Waiting (for the model, for a decision) ends when a stop is requested. */
        // Without a cancel option nothing can stop the turn: no race to pay for on every step.
        const cancellable = options.cancel !== undefined
        const unlessStopped = <A, E>(effect: Effect.Effect<A, E>) =>
          cancellable ? Effect.raceFirst(effect, Effect.flatMap(cancel, (cause) => Effect.fail(cancelled(cause)))) : effect
        const checkStop = Effect.flatMap(Deferred.poll(stop), Option.match({
          onNone: () => Effect.void,
          onSome: (cause) => Effect.flatMap(cause, (reason) => Effect.fail(cancelled(reason)))
        }))
        // This turn's items for the next request; they grow only after their record is
        // saved, and from the record as committed: what is sent is what a restart replays.
        const items: Array<Item> = []
        const save = (record: SessionRecord) =>
          Effect.map(store.append(record), (committed) => void items.push(...contextItems(committed)))
        // Calls of the current batch that have no result yet, for cancellation.
        const open = new Map<string, { readonly name: string; started: boolean }>()
        const usedIds = new Set<string>()
        let requests = 0
        // Every call of an accepted batch counts, whether it ran, was denied or was invalid.
        let calls = 0

        const saveResult = (call: { readonly call_id: string; readonly name: string }, result: ToolResult.ToolResult) =>
          Effect.gen(function*() {
            yield* save({ type: "tool_result", turn_id: turnId, call_id: call.call_id, name: call.name, result })
            open.delete(call.call_id)
            yield* emit({ _tag: "ToolFinished", callId: call.call_id, name: call.name, result })
          })

        const end = (status: TurnStatus, reason?: string) =>
          Effect.gen(function*() {
            const why = reason === undefined ? {} : { reason }
            yield* save({ type: "turn_end", turn_id: turnId, status, ...why })
            yield* emit({ _tag: "TurnEnded", status, ...why })
            return { turnId, status, ...why } satisfies TurnOutcome
          })

        const runCall = (call: FunctionCall) =>
          Effect.gen(function*() {
            yield* checkStop
            const prepared = yield* Effect.either(tools.prepare(call.name, call.arguments))
            if (Either.isLeft(prepared)) return yield* saveResult(call, prepared.left.result)
            const decision = yield* unlessStopped(approver.decide(structuredClone(prepared.right.display)))
            if (!decision.approved) {
              if (decision.endTurn === true) return yield* new TurnStop({ status: "cancelled", reason: decision.reason })
              return yield* saveResult(call, ToolResult.make("denied", `The user did not approve this call (${decision.reason}).`))
            }
            yield* save({ type: "tool_start", turn_id: turnId, call_id: call.call_id, name: call.name })
            open.set(call.call_id, { name: call.name, started: true })
            yield* emit({ _tag: "ToolRunning", callId: call.call_id, display: prepared.right.display })
            // A stop makes the tool end the call and return what it has; one that does not is cut off.
            const cutOff = Effect.flatMap(cancel, (cause) =>
              Effect.as(Effect.sleep(CANCEL_GRACE_MS), {
                ...ToolResult.make("unknown", `${cause} while it ran; the tool was stopped. It may have had effects.`),
                cancelled: true
              }))
            const execution = Effect.scoped(prepared.right.execute(cancellable ? cancel : undefined))
            const result = yield* cancellable ? Effect.raceFirst(execution, cutOff) : execution
            yield* saveResult(call, result)
            yield* checkStop
          })

        const loop = Effect.gen(function*() {
          yield* save({ type: "user_input", turn_id: turnId, text: input })
          while (true) {
            requests += 1
            const response = yield* unlessStopped(request(yield* store.context, items, emit))
            const record: ModelResponse = {
              type: "model_response",
              turn_id: turnId,
              response_id: response.id,
              output: response.output
            }
            const batch = validate(response.output, usedIds)
            yield* save(record)
            yield* emit({ _tag: "ModelResponded" })
            if (Either.isLeft(batch)) return yield* new TurnStop({ status: "failed", reason: `invalid response: ${batch.left}` })
            if (batch.right.length === 0) return yield* end("completed")
            for (const call of batch.right) {
              usedIds.add(call.call_id)
              open.set(call.call_id, { name: call.name, started: false })
            }
            const refusal = batchRefusal(requests, calls, batch.right.length)
            if (refusal !== undefined) return yield* new TurnStop({ status: "failed", reason: refusal })
            calls += batch.right.length
            for (const call of batch.right) yield* runCall(call)
          }
        })

        // Calls that never got a result: unstarted ones were not executed; one that
        // was running when the turn was cancelled was killed, its effects unknown.
        const closeOpenCalls = Effect.suspend(() =>
          Effect.forEach([...open], ([callId, { name, started }]) =>
            saveResult(
              { call_id: callId, name },
              started
                ? { ...ToolResult.make("unknown", "Interrupted while running; the process group was killed. It may have had effects."), cancelled: true }
                : ToolResult.make("not_executed", "The turn stopped before this call was executed.")
            ), { discard: true })
        )

        return yield* loop.pipe(
          Effect.catchTag("TurnStop", (stop) => Effect.zipRight(closeOpenCalls, end(stop.status, stop.reason))),
          Effect.catchTag("ModelError", (error: ModelError) => Effect.zipRight(closeOpenCalls, end("failed", error.message))),
          Effect.onInterrupt(() =>
            Effect.ignore(Effect.zipRight(closeOpenCalls, end("cancelled", "the turn was interrupted")))
          )
        )
      }).pipe(Effect.scoped)

    const request = (history: ReadonlyArray<Item>, items: ReadonlyArray<Item>, emit: (event: AgentEvent) => Effect.Effect<void>) =>
      Effect.gen(function*() {
        yield* emit({ _tag: "ModelWaiting" })
        const events = model.respond({
          model: config.model,
          instructions: config.instructions,
          input: [...history, ...items],
          tools: tools.definitions
        })
        // Text is shown as it streams; only the completed response is acted on.
        const completed = yield* Stream.runFoldEffect(events, Option.none<CompletedResponse>(), (done, event) => {
          switch (event._tag) {
            case "TextDelta":
              return Effect.as(emit(event), done)
            case "Retrying":
              return Effect.as(emit({ _tag: "ModelRetrying", message: event.message }), done)
            case "Completed":
              return Effect.succeed(Option.some(event.response))
          }
        })
        return yield* Option.match(completed, {
          onNone: () => Effect.fail(new TurnStop({ status: "failed", reason: "the model stream ended without response.completed" })),
          onSome: Effect.succeed
        })
      })

    return Agent.of({
      notices: store.notices,
      questions: Effect.map(store.records, (records) => records.flatMap((record) => record.type === "user_input" ? [record.text] : [])),
      turn: (input, emit, options = {}) =>
        lock.withPermitsIfAvailable(1)(runTurn(input, emit, options)).pipe(
          Effect.flatMap(Option.match({
            onNone: () => Effect.fail(new AgentBusy({ message: "busy: a turn is already running on this session" })),
            onSome: Effect.succeed
          }))
        )
    })
  })


