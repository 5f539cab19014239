/**
 * What a command's result says, from how it ended: one pure function, so that
 * the precedence is a table, not the order timers happened to fire in.
 *
 * In this order: bash exited by itself (`exit_code`; never `timed_out`, however
 * late Mino noticed), cancelled, killed at the deadline (`timed_out`, by Mino or
 * by the lifeline while Mino was stopped), killed on overflow (`truncated`),
 * killed because the watcher that bounded it ended, killed by another signal.
 */
import { finish as finishOutput, type ToolResult } from "../ToolResult.js"

/** Why Mino killed the group, the first time it did. */
export type Kill = "overflow" | "timeout" | "cancel"

/** How bash ended, as far as Mino knows when the result is made. */
export type End =
  /** It ended (by itself: `code`; or by `signal`) and was reaped. */
  | { readonly _tag: "Exited"; readonly code: number | null; readonly signal: NodeJS.Signals | null }
  /** The watcher that bounded it ended, so Mino killed its group (`reason`, one line). */
  | { readonly _tag: "Lost"; readonly reason: string }
  /** Killed, and not reaped within the bound Mino waits (a process stuck in the kernel, say). */
  | { readonly _tag: "Unreaped" }

export interface Ending {
  readonly end: End
  readonly killedFor: Kill | undefined
  /** What cancelled it ("Cancelled by SIGTERM"), when `killedFor` is `"cancel"`. */
  readonly cancelCause: string
  /** The capture reached its limit. */
  readonly truncated: boolean
  /** From the start to the end, on a clock that counts while Mino is stopped. */
  readonly elapsedMs: number
}

export interface Bounds {
  readonly timeoutMs: number
  readonly outputLimitBytes: number
}

/** `30000` → `"30 s"`, `300` → `"0.3 s"`. */
export const formatDuration = (ms: number): string => `${Number((ms / 1000).toFixed(3))} s`

/** `65536` → `"64 KiB"`; sizes that are not whole KiB stay in bytes. */
export const formatBytes = (bytes: number): string =>
  bytes >= 1024 && bytes % 1024 === 0 ? `${bytes / 1024} KiB` : `${bytes} bytes`

interface Verdict {
  readonly status: ToolResult["status"]
  readonly note: string | undefined
  readonly fields: Pick<ToolResult, "exit_code" | "cancelled" | "timed_out">
}

/** The status, note and fields of a result, by the precedence in the module comment. */
const verdict = (ending: Ending, signal: NodeJS.Signals | null, bounds: Bounds): Verdict => {
  const { end, killedFor } = ending
  if (end._tag === "Exited" && end.code !== null) {
    return { status: end.code === 0 ? "completed" : "failed", note: undefined, fields: { exit_code: end.code } }
  }
  if (killedFor === "cancel") {
    return { status: "unknown", note: `${ending.cancelCause} while it ran; process group killed. It may have had effects.`, fields: { cancelled: true } }
  }
  const late = signal === "SIGKILL" && end._tag === "Exited" && ending.elapsedMs >= bounds.timeoutMs
  if (killedFor === "timeout" || (killedFor === undefined && late)) {
    return { status: "failed", note: `timed out after ${formatDuration(bounds.timeoutMs)}; process group killed`, fields: { timed_out: true } }
  }
  if (killedFor === "overflow") return { status: "failed", note: overflowNote(bounds), fields: {} }
  if (end._tag === "Lost") return { status: "failed", note: `${end.reason} while it ran; process group killed`, fields: {} }
  return { status: "failed", note: `terminated by signal ${signal ?? "unknown"}`, fields: {} }
}

const overflowNote = (bounds: Bounds): string => `output limit of ${formatBytes(bounds.outputLimitBytes)} reached; process group killed`

/**
 * The result: `text` (the capture, decoded and redacted) within 64 KiB with its
 * note; `redactCut` redacts what a cut leaves of the key.
 */
export const outcome = (ending: Ending, text: string, bounds: Bounds, redactCut: (text: string) => string): ToolResult => {
  const { end } = ending
  const signal = end._tag === "Exited" ? end.signal : end._tag === "Lost" ? "SIGKILL" : null
  const { fields, note, status } = verdict(ending, signal, bounds)
  const overflow = overflowNote(bounds)
  const notes = [...(note === undefined ? [] : [note]), ...(ending.truncated && note !== overflow ? [overflow] : [])]
  const output = finishOutput(text, { notes, cut: ending.truncated }, redactCut)
  return { status, output, ...fields, ...(ending.truncated ? { truncated: true } : {}), ...(signal === null ? {} : { signal }) }
}
