/**
 * The Agent service: one user turn at a time, run to its end, with its display
 * events and its outcome. Its implementation, the loop, is `AgentLoop.ts`; this
 * module holds only the tag and its types, so that what waits for a turn (the
 * chat's screen) does not load the loop, the model client or bash to draw the
 * first prompt.
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import type * as Effect from "effect/Effect"
import type { SessionWriteError } from "../session/conversation/DurableFile.js"
import type { TurnStatus } from "../session/records/Records.js"
import type { AgentEvent } from "./AgentEvent.js"
import type { Texts } from "../TextList.js"

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
  readonly questions: Effect.Effect<Texts>
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
  readonly cancel?: Effect.Effect<string>
}

export { CANCEL_GRACE_MS } from "./Stopping.js"

export interface AgentConfig {
  readonly model: string
  readonly instructions: string
}

export class Agent extends Context.Tag("mino/Agent")<Agent, AgentShape>() {}

