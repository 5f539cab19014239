/**
 * The signals whose default action ends the process on the spot, which Mino does
 * not otherwise handle: without a handler no code runs at the end (not even
 * `process.on("exit")`), and a terminal in raw mode stays raw, echo and Ctrl+C
 * off, for whatever runs next in it. While raw mode is on, each of them first
 * runs `restore`, then is raised again with its default action: the process
 * still ends by that signal (its exit status and any core file unchanged), only
 * with the terminal put back.
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

/** Runs `restore` before any of `SIGNALS` ends the process (those this platform has); the returned function stops it. */
export const restoreBeforeDeath = (restore: () => void): (() => void) => {
  const signals = SIGNALS.filter((signal) => Os.constants.signals[signal as keyof typeof Os.constants.signals] !== undefined)
  const stop = () => {
    for (const signal of signals) process.removeListener(signal, onSignal)
  }
  function onSignal(signal: NodeJS.Signals) {
    restore()
    // With no listener left, the signal has its default action again: raised once more, it ends the process.
    stop()
    process.kill(process.pid, signal)
  }
  for (const signal of signals) process.on(signal, onSignal)
  return stop
}
