/**
 * How a command ended → what its result says: the precedence as a table, with
 * no process and no timer.
 */
import { describe, expect, it } from "@effect/vitest"
import type { ToolResult } from "../../src/tools/ToolResult.js"
import { type End, type Ending, outcome } from "../../src/tools/bash/Outcome.js"

const bounds = { timeoutMs: 30_000, outputLimitBytes: 65_536 }
const exited = (code: number | null, signal: NodeJS.Signals | null = null): End => ({ _tag: "Exited", code, signal })
const killed = exited(null, "SIGKILL")
const lost: End = { _tag: "Lost", reason: "Mino's lifeline watcher ended" }
const unreaped: End = { _tag: "Unreaped" }

const ending = (end: End, rest: Partial<Ending> = {}): Ending => ({
  end,
  killedFor: undefined,
  cancelCause: "Cancelled by SIGTERM",
  truncated: false,
  elapsedMs: 100,
  ...rest
})

const rows: ReadonlyArray<readonly [string, Ending, ToolResult]> = [
  ["exit 0", ending(exited(0)), { status: "completed", output: "out", exit_code: 0 }],
  ["exit 3", ending(exited(3)), { status: "failed", output: "out", exit_code: 3 }],
  ["exit 137 is an exit code, not a signal", ending(exited(137)), { status: "failed", output: "out", exit_code: 137 }],
  ["exited by itself after the deadline and a kill: bash's own", ending(exited(0), { killedFor: "timeout", elapsedMs: 40_000 }), { status: "completed", output: "out", exit_code: 0 }],
  ["exited by itself while cancelled", ending(exited(1), { killedFor: "cancel" }), { status: "failed", output: "out", exit_code: 1 }],
  ["exited by itself past the limit (a leftover child overflowed)", ending(exited(0), { killedFor: "overflow", truncated: true }), {
    status: "completed",
    output: "out\n[output limit of 64 KiB reached; process group killed; the first 3 bytes of the output are shown, the rest was dropped]",
    exit_code: 0,
    truncated: true
  }],
  ["cancelled", ending(killed, { killedFor: "cancel" }), {
    status: "unknown",
    output: "out\n[Cancelled by SIGTERM while it ran; process group killed. It may have had effects.]",
    cancelled: true,
    signal: "SIGKILL"
  }],
  ["cancelled after a timeout kill: the timeout", ending(killed, { killedFor: "timeout" }), {
    status: "failed",
    output: "out\n[timed out after 30 s; process group killed]",
    timed_out: true,
    signal: "SIGKILL"
  }],
  ["cancelled, never reaped", ending(unreaped, { killedFor: "cancel" }), {
    status: "unknown",
    output: "out\n[Cancelled by SIGTERM while it ran; process group killed. It may have had effects.]",
    cancelled: true
  }],
  ["killed by Mino at the deadline", ending(killed, { killedFor: "timeout", elapsedMs: 30_001 }), {
    status: "failed",
    output: "out\n[timed out after 30 s; process group killed]",
    timed_out: true,
    signal: "SIGKILL"
  }],
  ["killed by the watcher while Mino was stopped (SIGKILL, late)", ending(killed, { elapsedMs: 30_000 }), {
    status: "failed",
    output: "out\n[timed out after 30 s; process group killed]",
    timed_out: true,
    signal: "SIGKILL"
  }],
  ["SIGKILL before the deadline, by someone else", ending(killed, { elapsedMs: 29_999 }), { status: "failed", output: "out\n[terminated by signal SIGKILL]", signal: "SIGKILL" }],
  ["timed out, never reaped", ending(unreaped, { killedFor: "timeout" }), { status: "failed", output: "out\n[timed out after 30 s; process group killed]", timed_out: true }],
  ["killed at the output limit", ending(killed, { killedFor: "overflow", truncated: true }), {
    status: "failed",
    output: "out\n[output limit of 64 KiB reached; process group killed; the first 3 bytes of the output are shown, the rest was dropped]",
    truncated: true,
    signal: "SIGKILL"
  }],
  ["timed out with a full capture", ending(killed, { killedFor: "timeout", truncated: true }), {
    status: "failed",
    output:
      "out\n[timed out after 30 s; process group killed; output limit of 64 KiB reached; process group killed; the first 3 bytes of the output are shown, the rest was dropped]",
    timed_out: true,
    truncated: true,
    signal: "SIGKILL"
  }],
  ["its watcher ended", ending(lost), { status: "failed", output: "out\n[Mino's lifeline watcher ended while it ran; process group killed]", signal: "SIGKILL" }],
  ["its watcher ended after the deadline: still lost, not timed out", ending(lost, { elapsedMs: 40_000 }), {
    status: "failed",
    output: "out\n[Mino's lifeline watcher ended while it ran; process group killed]",
    signal: "SIGKILL"
  }],
  ["killed itself", ending(exited(null, "SIGTERM")), { status: "failed", output: "out\n[terminated by signal SIGTERM]", signal: "SIGTERM" }]
]

describe("Outcome", () => {
  it(`follows the precedence, row by row (${rows.length} rows)`, () => {
    for (const [name, row, expected] of rows) {
      expect({ name, result: outcome(row, "out", bounds, (text) => text) }).toEqual({ name, result: expected })
    }
  })
})
