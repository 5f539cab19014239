/**
 * How Mino is asked to stop: Ctrl+C, SIGTERM, SIGHUP (the terminal closed) and
 * SIGQUIT (Ctrl+\) all take one path. A running turn is cancelled with the cause
 * as its reason (the running command's group killed, its output so far kept),
 * then Mino exits with the request's code: 130 for Ctrl+C, 128+N for signal N.
 *
 * Anything may request a stop, synchronously, with a description: the process
 * signal handlers installed by `layerProcess`, or a key read in raw mode
 * (`request(fromSignal("SIGINT"))` for Ctrl+C, `"SIGQUIT"` for Ctrl+\).
 * The first request wins; a second one exits at once.
 *
 * Handling SIGQUIT also means it never dumps a core (which would hold the key).
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

export interface StopRequest {
  /** The cause, as the turn's reason and the running result's note: "Cancelled by SIGTERM". */
  readonly description: string
  /** Mino's exit code once the turn is closed. */
  readonly exitCode: number
}

export interface StopSignalsShape {
  /** Asks Mino to stop; callable from a signal handler or a key handler. */
  readonly request: (stop: StopRequest) => void
  /** Completes with the first request. */
  readonly requested: Effect.Effect<StopRequest>
  /** The first request, if one was made. */
  readonly poll: Effect.Effect<Option.Option<StopRequest>>
}

/** The signals handled like Ctrl+C. */
export const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"] as const
export type StopSignal = (typeof SIGNALS)[number]

/** The request a signal (or the key that sends it) makes. */
export const fromSignal = (signal: StopSignal): StopRequest => ({
  description: signal === "SIGINT" ? "Cancelled by Ctrl+C" : `Cancelled by ${signal}`,
  exitCode: 128 + Os.constants.signals[signal]
})

/** Once a stop is requested, the longest Mino waits for the turn to close before it exits anyway. */
export const EXIT_DEADLINE_MS = 5_000

export class StopSignals extends Context.Tag("mino/StopSignals")<StopSignals, StopSignalsShape>() {
  /** Requests only through `request`: for tests and library use. */
  static readonly layer: Layer.Layer<StopSignals> = Layer.effect(StopSignals, Effect.map(Deferred.make<StopRequest>(), make))

  /**
   * The process's signals, handled until the scope closes. A second request, or a
   * turn that has not closed within `EXIT_DEADLINE_MS`, exits at once with the
   * first request's code: the lifeline still kills the running group.
   */
  static readonly layerProcess: Layer.Layer<StopSignals> = Layer.scoped(
    StopSignals,
    Effect.gen(function*() {
      const stops = make(yield* Deferred.make<StopRequest>())
      let first: StopRequest | undefined
      const request = (stop: StopRequest): void => {
        if (first !== undefined) return process.exit(first.exitCode)
        first = stop
        setTimeout(() => process.exit(stop.exitCode), EXIT_DEADLINE_MS).unref()
        stops.request(stop)
      }
      const handlers = SIGNALS.map((signal) => {
        const handler = () => {
          if (signal === "SIGHUP") hungUp()
          request(fromSignal(signal))
        }
        process.on(signal, handler)
        return [signal, handler] as const
      })
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          for (const [signal, handler] of handlers) process.removeListener(signal, handler)
        })
      )
      return { ...stops, request }
    })
  )
}

/**
 * The terminal is gone. Writing to it can only fail, and must not crash the
 * closing of the turn. And at exit Node restores the terminal's modes on the
 * standard descriptors and aborts (SIGABRT, a core file) when that fails with
 * EIO, as it does after a hangup; it skips descriptors that are closed.
 */
const hungUp = (): void => {
  for (const stream of [process.stdin, process.stdout, process.stderr]) stream.on("error", () => {})
  process.once("exit", () => {
    for (const fd of [0, 1, 2]) {
      try {
        Fs.closeSync(fd)
      } catch {
        // Already closed.
      }
    }
  })
}

function make(requested: Deferred.Deferred<StopRequest>): StopSignalsShape {
  return {
    request: (stop) => void Deferred.unsafeDone(requested, Effect.succeed(stop)),
    requested: Deferred.await(requested),
    poll: Effect.flatMap(Deferred.poll(requested), Option.match({
      onNone: () => Effect.succeed(Option.none<StopRequest>()),
      onSome: (stop) => Effect.map(stop, Option.some)
    }))
  }
}
