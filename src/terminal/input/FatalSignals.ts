/**
 * The signals whose default action ends the process on the spot, which Mino does
 * not otherwise handle: without a handler no code runs at the end (not even
 * `process.on("exit")`), and a terminal in raw mode stays raw, echo and Ctrl+C
 * off, for whatever runs next in it. While raw mode is on, each of them first
 * runs `restore`; then one that would only end the process is raised again with
 * its default action (the process still ends by it), and one whose default also
 * writes a core file (SIGABRT, SIGXCPU) ends it with 128 + its number instead, as
 * SIGQUIT does (StopSignals.ts): a core holds the process's memory, the key with
 * it, and lands in the working directory, the user's project.
 *
 * Not here: SIGINT, SIGTERM, SIGHUP and SIGQUIT (StopSignals.ts closes the turn
 * and exits: `exit` restores); SIGKILL and SIGSTOP (no handler can run); SIGSEGV,
 * SIGBUS, SIGFPE, SIGILL, SIGSYS and SIGTRAP (raised by the instruction that
 * failed, or by a debugger: no JavaScript can run safely); SIGPROF (V8's profiler);
 * SIGUSR1 (Node's inspector); SIGPIPE and SIGXFSZ (Node ignores them). A V8
 * out-of-memory abort raises SIGABRT from inside V8, where no JavaScript runs
 * either; the response bounds (model/stream/ResponseBudget.ts) keep an endpoint
 * from causing one.
 */
import * as Os from "node:os"

export const SIGNALS = ["SIGABRT", "SIGALRM", "SIGVTALRM", "SIGUSR2", "SIGXCPU", "SIGIO", "SIGPWR", "SIGSTKFLT"] as const

/** Those whose default action writes a core file. */
const CORE: ReadonlySet<string> = new Set(["SIGABRT", "SIGXCPU"])

const numberOf = (signal: string): number | undefined => Os.constants.signals[signal as keyof typeof Os.constants.signals]

/** Runs `restore` before any of `SIGNALS` ends the process (those this platform has); the returned function stops it. */
export const restoreBeforeDeath = (restore: () => void): (() => void) => {
  const signals = SIGNALS.filter((signal) => numberOf(signal) !== undefined)
  const stop = () => {
    for (const signal of signals) process.removeListener(signal, onSignal)
  }
  function onSignal(signal: NodeJS.Signals) {
    restore()
    stop()
    if (CORE.has(signal)) return process.exit(128 + (numberOf(signal) ?? 0))
    // With no listener left, the signal has its default action again: raised once more, it ends the process.
    process.kill(process.pid, signal)
  }
  for (const signal of signals) process.on(signal, onSignal)
  return stop
}
