/**
 * Runs one approved command: `/bin/bash --noprofile --norc -c <command>` in its
 * own process group, with exactly the given environment, stdin from /dev/null,
 * and stdout and stderr captured into one bounded buffer. It is started by the
 * `Lifeline`'s small spawner (not by forking Mino's heap), and runs only once the
 * lifeline's watcher holds its deadline.
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
 * Those all live in Mino's event loop; the `Lifeline` holds the deadline and
 * kills the group when Mino itself is stopped or gone.
 *
 * The result says what happened, in this order of precedence: bash exited by
 * itself (`exit_code`; never `timed_out`, however late Mino noticed), cancelled,
 * killed at the deadline (`timed_out`), killed on overflow (`truncated`), killed
 * because its status was lost (its parent, the spawner, was killed), killed by
 * another signal (`signal`).
 *
 * A descendant that leaves the group (`setsid`) can still escape; only the
 * wait for its output is bounded.
 */
import type { Socket } from "node:net"
import { StringDecoder } from "node:string_decoder"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { Secrets, type SecretsShape } from "../../security/Secrets.js"
import type { Cancellation } from "../Tool.js"
import { finish as finishOutput, type ToolResult } from "../ToolResult.js"
import * as Lifeline from "./Lifeline.js"

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
/** After a SIGKILL on interruption or cancellation, the longest wait for bash to be reaped. */
const KILL_WAIT_MS = 1_000

/** `30000` → `"30 s"`, `300` → `"0.3 s"`. */
export const formatDuration = (ms: number): string => `${Number((ms / 1000).toFixed(3))} s`

/** `65536` → `"64 KiB"`; sizes that are not whole KiB stay in bytes. */
export const formatBytes = (bytes: number): string =>
  bytes >= 1024 && bytes % 1024 === 0 ? `${bytes / 1024} KiB` : `${bytes} bytes`

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

const run = Effect.fn("BashRunner.run")(function*(
  operation: BashOperation,
  lifeline: Lifeline.Lifeline,
  secrets: SecretsShape,
  cancel: Cancellation | undefined
) {
  const done = yield* Deferred.make<ToolResult>()
  const exited = yield* Deferred.make<void>()
  const execution = yield* Effect.acquireRelease(
    Effect.sync(() => start(operation, lifeline, secrets, done, exited)),
    (execution) => execution.stop
  )
  // No fiber waits for the stop: the kill is a callback.
  if (cancel !== undefined) cancel.onCancel(execution.cancel)
  // Interruption kills at once rather than when the caller's scope closes.
  return yield* Deferred.await(done).pipe(Effect.onInterrupt(() => execution.stop))
})

interface Execution {
  /** Kills the group and settles with what was captured, naming `cause`. */
  readonly cancel: (cause: string) => void
  /** Kills the group unless bash has been reaped, releases timers and pipes; idempotent. */
  readonly stop: Effect.Effect<void>
}

/** Why Mino killed the group, the first time it did. */
type Kill = "overflow" | "timeout" | "cancel"

/** Starts bash and wires its events; the outcome arrives in `done`, bash's reaping in `exited`. */
const start = (
  operation: BashOperation,
  lifeline: Lifeline.Lifeline,
  secrets: SecretsShape,
  done: Deferred.Deferred<ToolResult>,
  exited: Deferred.Deferred<void>
): Execution => {
  const chunks: Array<Buffer> = []
  let captured = 0
  let truncated = false
  let killedFor: Kill | undefined
  let cancelCause = ""
  // Once bash is reaped its pid may be reused, so its group is signalled only once more, at exit.
  let reaped = false
  let stopped = false
  let openPipes = 0
  let exitCode: number | null = null
  let exitSignal: NodeJS.Signals | null = null
  let timeoutTimer: NodeJS.Timeout | undefined
  let drainTimer: NodeJS.Timeout | undefined
  let output: Socket | undefined
  /** Why bash's status is unknown, when the spawner was killed. */
  let lost: string | undefined
  // A monotonic clock: it keeps counting while Mino is stopped, as the lifeline's deadline does.
  const startedAt = performance.now()

  const release = (): void => {
    stopped = true
    clearTimeout(timeoutTimer)
    clearTimeout(drainTimer)
    output?.destroy()
  }

  const settle = (result: ToolResult): void => {
    if (stopped) return
    release()
    Deferred.unsafeDone(done, Exit.succeed(result))
  }

  const kill = (why: Kill): void => {
    killedFor ??= why
    if (!reaped) launch.kill()
  }

  const finish = (): void => {
    if (stopped) return
    const captured = Buffer.concat(chunks)
    // A capture cut at the limit can end inside a character: the decoder keeps that part back
    // rather than leaving a U+FFFD the command never wrote.
    const text = truncated ? new StringDecoder("utf8").write(captured) : captured.toString("utf8")
    settle(outcome(secrets.redact(text)))
  }

  /** What happened, by the precedence in the module comment. */
  const outcome = (text: string): ToolResult => {
    const flags = { ...(truncated ? { truncated: true } : {}), ...(exitSignal === null ? {} : { signal: exitSignal }) }
    const overflow = `output limit of ${formatBytes(operation.outputLimitBytes)} reached; process group killed`
    // The output sent and saved, within 64 KiB with its note; what a cut leaves of the key is redacted.
    const output = (note: string | undefined) =>
      finishOutput(text, {
        notes: [...(note === undefined ? [] : [note]), ...(truncated && note !== overflow ? [overflow] : [])],
        cut: truncated
      }, secrets.redactCut)
    if (exitCode !== null) return { status: exitCode === 0 ? "completed" : "failed", output: output(undefined), exit_code: exitCode, ...flags }
    if (killedFor === "cancel") {
      return {
        status: "unknown",
        output: output(`${cancelCause} while it ran; process group killed. It may have had effects.`),
        cancelled: true,
        ...flags
      }
    }
    // Killed at the deadline by Mino, or by the lifeline while Mino was stopped.
    const late = exitSignal === "SIGKILL" && performance.now() - startedAt >= operation.timeoutMs
    if (killedFor === "timeout" || (killedFor === undefined && late)) {
      return {
        status: "failed",
        output: output(`timed out after ${formatDuration(operation.timeoutMs)}; process group killed`),
        timed_out: true,
        ...flags
      }
    }
    if (killedFor === "overflow") return { status: "failed", output: output(overflow), ...flags }
    if (lost !== undefined) return { status: "failed", output: output(`${lost} while it ran; process group killed`), ...flags }
    return { status: "failed", output: output(`terminated by signal ${exitSignal ?? "unknown"}`), ...flags }
  }

  const onData = (chunk: Buffer): void => {
    if (truncated || stopped) return
    const room = operation.outputLimitBytes - captured
    if (chunk.length <= room) {
      chunks.push(chunk)
      captured += chunk.length
      return
    }
    chunks.push(chunk.subarray(0, room))
    captured += room
    truncated = true
    kill("overflow")
  }

  const onPipeClosed = (): void => {
    openPipes -= 1
    if (reaped && openPipes === 0) finish()
  }

  /** bash has ended (or its status is lost), and what was left of its group is killed: wait a bounded time for the pipe. */
  const onEnd = (): void => {
    reaped = true
    Deferred.unsafeDone(exited, Exit.void)
    if (stopped) return
    clearTimeout(timeoutTimer)
    clearTimeout(drainTimer)
    if (openPipes === 0) finish()
    else drainTimer = setTimeout(finish, PIPE_DRAIN_MS)
  }

  const launch = lifeline.launch(operation, {
    running: (_group, stream) => {
      output = stream
      if (stopped) return void stream.destroy()
      openPipes += 1
      stream.on("data", onData)
      stream.on("close", onPipeClosed)
      stream.on("error", () => {}) // a pipe error ends the capture; "close" follows
    },
    exited: (code, signal) => {
      exitCode = code
      exitSignal = signal
      onEnd()
    },
    lost: (reason) => {
      lost = reason
      exitSignal = "SIGKILL"
      onEnd()
    },
    failed: (message) => {
      settle({ status: "failed", output: message })
      reaped = true
      Deferred.unsafeDone(exited, Exit.void)
    }
  })

  // Killed at the deadline, the command's end is normally reported at once; if the helper
  // cannot report it (a command stopped it), the result is settled anyway and the helper replaced.
  const killThenSettle = (why: Kill): void => {
    kill(why)
    clearTimeout(drainTimer)
    drainTimer = setTimeout(() => {
      launch.abandon()
      finish()
    }, KILL_WAIT_MS)
  }

  if (!stopped) timeoutTimer = setTimeout(() => killThenSettle("timeout"), operation.timeoutMs)

  return {
    cancel: (cause) => {
      if (stopped) return
      cancelCause = cause
      if (reaped) return finish() // only the drain was left: the result is bash's own
      // Settle with what was captured even if bash is not reaped in time.
      killThenSettle("cancel")
    },
    stop: Effect.suspend(() => {
      if (stopped) return Effect.void
      const running = !reaped
      if (running) launch.kill()
      release()
      return running ? Effect.ignore(Effect.timeout(Deferred.await(exited), KILL_WAIT_MS)) : Effect.void
    })
  }
}
