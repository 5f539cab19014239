/**
 * Runs one approved command: `/bin/bash --noprofile --norc -c <command>` in its
 * own process group, with exactly the given environment, stdin from /dev/null,
 * and stdout and stderr captured into one bounded buffer. It is started by the
 * `Lifeline`, and runs only once the lifeline's watcher holds its deadline.
 *
 * Not `@effect/platform`'s Command, which stops a child without SIGKILL, waits
 * for it without limit and leaves its background children running. Here every
 * way out kills the whole group:
 *
 * - output overflow: keep the first `outputLimitBytes`, mark `truncated`, SIGKILL;
 * - timeout: SIGKILL, `timed_out`, and the output says so;
 * - bash exits: SIGKILL whatever is left of its group, then wait at most
 *   `PIPE_DRAIN_MS` for descendants that left the group but hold the pipes;
 * - cancellation (Ctrl+C, a signal to Mino): SIGKILL, and the result keeps the
 *   output captured so far and names the cause;
 * - interruption or scope close: SIGKILL.
 *
 * After a kill Mino waits at most `KILL_WAIT_MS` for bash to be reaped, then
 * settles with what it has: nothing a command does holds the turn. Those all
 * live in Mino's event loop; the `Lifeline` holds the deadline and kills the
 * group when Mino itself is stopped or gone. What the result says is
 * `Outcome.outcome`'s rule.
 *
 * A descendant that leaves the group (`setsid`) can still escape; only the
 * wait for its output is bounded.
 */
import type { Socket } from "node:net"
import { StringDecoder } from "node:string_decoder"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { Secrets, type SecretsShape } from "../../security/Secrets.js"
import type { Cancellation } from "../Tool.js"
import type { ToolResult } from "../ToolResult.js"
import * as Lifeline from "./Lifeline.js"
import { type End, type Kill, outcome } from "./Outcome.js"

export { formatBytes, formatDuration } from "./Outcome.js"

/** Exactly what runs: the command and every input it runs with. */
export interface BashOperation {
  readonly command: string
  /** The startup directory; every invocation starts here. */
  readonly cwd: string
  /** The complete child environment; nothing is inherited. */
  readonly env: Readonly<Record<string, string>>
  readonly timeoutMs: number
  /** One limit shared by stdout and stderr. */
  readonly outputLimitBytes: number
}

export const DEFAULT_TIMEOUT_MS = 30_000
export const DEFAULT_OUTPUT_LIMIT_BYTES = 64 * 1024
/** After bash exits, the longest wait for descendants that still hold its output pipes. */
export const PIPE_DRAIN_MS = 250
/** After a SIGKILL, the longest wait for bash to be reaped before the result is settled without it. */
export const KILL_WAIT_MS = 1_000

export class BashRunner extends Context.Tag("mino/BashRunner")<
  BashRunner,
  {
    /**
     * Runs the operation to its end; the process group never outlives the scope.
     * When `cancel` says to stop (with its cause, "Cancelled by SIGTERM"), the
     * group is killed and the result keeps the output captured so far.
     */
    readonly run: (operation: BashOperation, cancel?: Cancellation) => Effect.Effect<ToolResult, never, Scope.Scope>
  }
>() {
  /** The runner and its lifeline watcher, which ends with the layer's scope. */
  static readonly layer: Layer.Layer<BashRunner, never, Secrets> = Layer.scoped(
    BashRunner,
    Effect.gen(function*() {
      // A capture cut at the limit can end inside the key: the cut is redacted where it is made.
      const secrets = yield* Secrets
      const lifeline = yield* Lifeline.make
      return BashRunner.of({ run: (operation, cancel) => run(operation, lifeline, secrets, cancel) })
    })
  )
}

/** The output kept so far: at most `limit` bytes. */
export interface Capture {
  readonly limit: number
  readonly chunks: Array<Buffer>
  bytes: number
  /** The limit was reached: the rest was dropped. */
  truncated: boolean
}

export const emptyCapture = (limit: number): Capture => ({ limit, chunks: [], bytes: 0, truncated: false })

/** Keeps what fits of `chunk`; true when this chunk reached the limit (the group must then be killed). */
export const append = (capture: Capture, chunk: Buffer): boolean => {
  if (capture.truncated) return false
  const room = capture.limit - capture.bytes
  const kept = chunk.length <= room ? chunk : chunk.subarray(0, room)
  capture.chunks.push(kept)
  capture.bytes += kept.length
  capture.truncated = chunk.length > room
  return capture.truncated
}

/**
 * The capture as text. One cut at the limit can end inside a character: the
 * decoder keeps that part back rather than leaving a U+FFFD the command never wrote.
 */
export const decode = (capture: Capture): string => {
  const bytes = Buffer.concat(capture.chunks)
  return capture.truncated ? new StringDecoder("utf8").write(bytes) : bytes.toString("utf8")
}

/** What the run has heard of so far; a settle in progress is woken by each. */
export interface Signals {
  /** bash ended (or its watcher did, or it never ran). */
  ended: boolean
  pipeClosed: boolean
  /** Cancelled while bash ran. */
  cancelled: boolean
  /** Cancelled while its pipe drained: the result is bash's own, at once. */
  drainCut: boolean
}

/** Everything one run knows, in one record. */
interface RunState {
  readonly capture: Capture
  /** A monotonic clock: it keeps counting while Mino is stopped, as the lifeline's deadline does. */
  readonly startedAt: number
  killedFor: Kill | undefined
  cancelCause: string
  /** How bash ended, once it has. */
  end: End | undefined
  /** Why it never ran, if it did not. */
  notRun: string | undefined
  /** Settled or stopped: no more output is kept and no more kills are sent. */
  released: boolean
  output: Socket | undefined
  readonly signals: Signals
  /** Whoever waits on the run (the settle, or a stop's bounded wait for the end), told of every signal. */
  wake: (() => void) | undefined
}

const signal = (state: RunState, name: keyof Signals): void => {
  state.signals[name] = true
  state.wake?.()
}

const over = (state: RunState): boolean => state.end !== undefined || state.notRun !== undefined

/**
 * Where a settle is: waiting for bash's end (its deadline running), for the end after a kill
 * (a bounded wait), for the pipe to drain after the end (a bounded wait), or settled.
 */
export type Phase = "running" | "killing" | "draining" | "settled"

/** What the settle does next: nothing yet, or kill and wait, go to drain, or settle. */
export type Move =
  | { readonly _tag: "Wait" }
  | { readonly _tag: "Kill"; readonly why: Kill }
  | { readonly _tag: "Drain" }
  | { readonly _tag: "Settle" }

const WAIT: Move = { _tag: "Wait" }
const DRAIN: Move = { _tag: "Drain" }
const SETTLE: Move = { _tag: "Settle" }

/**
 * The settle's rule, pure: given its phase, what it has heard and whether its phase's timer
 * (the deadline; the bounded wait after a kill; the drain's bound) has fired, what it does next.
 * bash's end wins over a cancel or the deadline heard at the same time (a kill would find nothing).
 */
export const move = (phase: Phase, signals: Signals, timerFired: boolean): Move => {
  switch (phase) {
    case "running":
      if (signals.ended) return DRAIN
      if (signals.cancelled) return { _tag: "Kill", why: "cancel" }
      return timerFired ? { _tag: "Kill", why: "timeout" } : WAIT
    case "killing":
      return signals.ended || timerFired ? DRAIN : WAIT
    case "draining":
      return signals.pipeClosed || signals.drainCut || timerFired ? SETTLE : WAIT
    case "settled":
      return WAIT
  }
}

/**
 * Runs one operation: no fiber, race or timer of Effect's per run (a step's command is started
 * many times a turn), one callback wait with plain timers, whose rule is `move`.
 */
const run = (
  operation: BashOperation,
  lifeline: Lifeline.Lifeline,
  secrets: SecretsShape,
  cancel: Cancellation | undefined
): Effect.Effect<ToolResult, never, Scope.Scope> =>
  Effect.suspend(() => {
    const state: RunState = {
      capture: emptyCapture(operation.outputLimitBytes),
      startedAt: performance.now(),
      killedFor: undefined,
      cancelCause: "",
      end: undefined,
      notRun: undefined,
      released: false,
      output: undefined,
      signals: { ended: false, pipeClosed: false, cancelled: false, drainCut: false },
      wake: undefined
    }
    return Effect.acquireRelease(Effect.sync(() => start(operation, lifeline, state)), (launch) => stop(state, launch)).pipe(
      Effect.flatMap((launch) => {
        // No fiber waits for the stop: the kill is a callback.
        cancel?.onCancel((cause) => {
          if (state.released) return
          state.cancelCause = cause
          signal(state, over(state) ? "drainCut" : "cancelled")
        })
        // Interruption kills at once rather than when the caller's scope closes.
        return settle(operation, state, launch).pipe(Effect.onInterrupt(() => stop(state, launch)))
      }),
      Effect.map(() => result(operation, state, secrets))
    )
  })

/** The settled run's result. */
const result = (operation: BashOperation, state: RunState, secrets: SecretsShape): ToolResult => {
  state.released = true
  state.output?.destroy()
  if (state.notRun !== undefined) return { status: "failed", output: state.notRun } satisfies ToolResult
  const ending = {
    end: state.end ?? { _tag: "Unreaped" },
    killedFor: state.killedFor,
    cancelCause: state.cancelCause,
    truncated: state.capture.truncated,
    elapsedMs: performance.now() - state.startedAt
  } as const
  return outcome(ending, secrets.redact(decode(state.capture)), operation, secrets.redactCut)
}

/** Starts bash and wires its events into the state and its signals. */
const start = (operation: BashOperation, lifeline: Lifeline.Lifeline, state: RunState): Lifeline.Launch => {
  const ended = (end: End | undefined, notRun?: string) => {
    state.end = end
    state.notRun = notRun
    signal(state, "ended")
  }
  const launch: Lifeline.Launch = lifeline.launch(operation, {
    running: (_group, stream) => {
      state.output = stream
      if (state.released) return void stream.destroy()
      stream.on("data", (chunk: Buffer) => {
        if (!state.released && append(state.capture, chunk)) kill(state, launch, "overflow")
      })
      stream.on("close", () => signal(state, "pipeClosed"))
      stream.on("error", () => {}) // a pipe error ends the capture; "close" follows
    },
    exited: (code, signal) => ended({ _tag: "Exited", code, signal }),
    lost: (reason) => ended({ _tag: "Lost", reason }),
    failed: (message) => ended(undefined, message)
  })
  return launch
}

/** Kills the group (unless bash is over), remembering the first reason. */
const kill = (state: RunState, launch: Lifeline.Launch, why: Kill): void => {
  state.killedFor ??= why
  if (!over(state)) launch.kill()
}

/**
 * Until there is a result (`move`'s rule): bash's end, then a bounded drain of its pipe; or the
 * deadline or a cancellation, each a kill and a bounded wait for the end.
 */
const settle = (operation: BashOperation, state: RunState, launch: Lifeline.Launch) =>
  Effect.async<void>((resume) => {
    let phase: Phase = "running"
    let timer: ReturnType<typeof setTimeout> | undefined
    const arm = (ms: number) => {
      clearTimeout(timer)
      timer = setTimeout(() => {
        timer = undefined
        step(true)
      }, ms)
    }
    const step = (timerFired: boolean): void => {
      const next = move(phase, state.signals, timerFired)
      switch (next._tag) {
        case "Wait":
          return
        case "Kill":
          kill(state, launch, next.why)
          phase = "killing"
          arm(KILL_WAIT_MS)
          return step(false)
        case "Drain":
          // Ended without a pipe to drain (never ran, or not yet released): settled now.
          if (state.end === undefined || state.output === undefined) return settled()
          phase = "draining"
          arm(PIPE_DRAIN_MS)
          return step(false)
        case "Settle":
          return settled()
      }
    }
    const settled = () => {
      phase = "settled"
      clearTimeout(timer)
      state.wake = undefined
      resume(Effect.void)
    }
    state.wake = () => step(false)
    arm(operation.timeoutMs)
    step(false)
    return Effect.sync(() => {
      clearTimeout(timer)
      if (phase !== "settled") state.wake = undefined
    })
  })

/** Waits at most `ms` for bash to end. */
const endedWithin = (state: RunState, ms: number) =>
  Effect.async<void>((resume) => {
    if (state.signals.ended) return resume(Effect.void)
    const timer = setTimeout(done, ms)
    function done() {
      clearTimeout(timer)
      state.wake = undefined
      resume(Effect.void)
    }
    state.wake = () => {
      if (state.signals.ended) done()
    }
    return Effect.sync(() => {
      clearTimeout(timer)
      state.wake = undefined
    })
  })

/** Kills the group unless bash is over, and stops keeping output; waits a bounded time for bash. Idempotent. */
const stop = (state: RunState, launch: Lifeline.Launch) =>
  Effect.suspend(() => {
    if (state.released) return Effect.void
    const running = !over(state)
    if (running) launch.kill()
    state.released = true
    state.output?.destroy()
    return running ? endedWithin(state, KILL_WAIT_MS) : Effect.void
  })
