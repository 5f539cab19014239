/**
 * How a running turn stops (Ctrl+C, a signal, closed output): one watcher fiber
 * per turn, and no race per wait.
 *
 * The turn's steps run in a fiber of their own. Its saves are uninterruptible (a
 * record is written and fsynced, or fails); everything else, waiting for the
 * model or for a decision above all, can be interrupted. When a stop is
 * requested, the watcher records its cause, then:
 *
 * - while a call executes, tells the tool through the `Cancellation` it was given
 *   (bash kills the group and returns the output captured so far); the call's
 *   result is saved and the turn stops there. A tool that registered no way to
 *   stop is interrupted at once, one that has not ended `CANCEL_GRACE_MS` later
 *   is interrupted then;
 * - otherwise interrupts the steps: at once in a wait, or as soon as the save in
 *   progress is on disk.
 *
 * Whoever runs the steps closes the turn with the cause (`TurnClosing`). Nothing
 * is sent to the model after a stop: every step begins with `check`.
 */
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type { Cancellation } from "../tools/Tool.js"

/** How long a tool told to stop gets to end its call before it is interrupted. */
export const CANCEL_GRACE_MS = 2_000

export interface Stopping {
  /** The cause, once a stop has been requested. */
  readonly cause: () => string | undefined
  /** Interrupts the steps here when a stop has been requested. */
  readonly check: Effect.Effect<void>
  /** Runs one call's execution, handing it the call's `Cancellation`. */
  readonly executing: <A, E, R>(execute: (cancel: Cancellation) => Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** The watcher: once `requested` completes with a cause, stops `steps` as above. */
  readonly watch: (requested: Effect.Effect<string>, steps: Fiber.Fiber<unknown, unknown>) => Effect.Effect<void>
}

/** The running call: the way its tool registered to be stopped, if it did. */
interface Running {
  stop: ((cause: string) => void) | undefined
}

export const make = (): Stopping => {
  let cause: string | undefined
  let running: Running | undefined

  const executing = <A, E, R>(execute: (cancel: Cancellation) => Effect.Effect<A, E, R>) =>
    Effect.suspend(() => {
      const call: Running = { stop: undefined }
      running = call
      const cancel: Cancellation = {
        onCancel: (stop) => {
          if (running !== call) return
          call.stop = stop
          // Told before it registered (the stop came as the call began): tell it now.
          if (cause !== undefined) stop(cause)
        }
      }
      return Effect.ensuring(execute(cancel), Effect.sync(() => void (running === call && (running = undefined))))
    })

  const watch = (requested: Effect.Effect<string>, steps: Fiber.Fiber<unknown, unknown>) =>
    Effect.flatMap(requested, (requestedCause) =>
      Effect.suspend(() => {
        cause = requestedCause
        const call = running
        if (call?.stop === undefined) return Fiber.interruptFork(steps)
        call.stop(requestedCause)
        // A call still running after the grace period is cut off.
        return Effect.delay(Effect.suspend(() => (running === call ? Fiber.interruptFork(steps) : Effect.void)), CANCEL_GRACE_MS)
      }))

  return {
    cause: () => cause,
    check: Effect.suspend(() => (cause === undefined ? Effect.void : Effect.interrupt)),
    executing,
    watch
  }
}
