/**
 * `mino`: reads the command line, dispatches to the command it names, and runs
 * it with `runMain`. This is the only file that runs an Effect; the chat is
 * `cli/Chat.ts`, and Mino's services are composed once, in `Mino.ts`.
 */
import { makeRunMain } from "@effect/platform/Runtime"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Arguments from "./cli/Arguments.js"
import { chat, Stop } from "./cli/Chat.js"
import * as Help from "./cli/Help.js"
import * as Log from "./cli/Log.js"
import * as Sessions from "./cli/Sessions.js"
import * as Conversations from "./session/Conversations.js"
import * as MinoConfig from "./Config.js"
import * as Escape from "./security/Escape.js"
import { StopSignals } from "./StopSignals.js"
import { VERSION } from "./version.js"

/**
 * Tells the start-up loader (scripts/cli-loader.mjs) that the configuration was
 * checked and held, so it may write its code cache at exit: nothing is written
 * for a start that was refused.
 */
const configurationChecked = (): void => void Reflect.set(globalThis, Symbol.for("mino.configurationChecked"), true)

const teardown = <E, A>(exit: Exit.Exit<E, A>, onExit: (code: number) => void) => {
  if (Exit.isSuccess(exit)) return onExit(0)
  if (Cause.isInterruptedOnly(exit.cause)) return onExit(130)
  const failure = Cause.failureOption(exit.cause)
  if (Option.isSome(failure) && failure.value instanceof Stop) {
    // Messages carry paths and error details from outside: one escaped line.
    if (failure.value.message !== undefined) process.stderr.write(Escape.forLine(failure.value.message) + "\n")
    return onExit(failure.value.code)
  }
  process.stderr.write(`mino: unexpected error:
${Escape.forDisplay(Cause.pretty(exit.cause))}
`)
  onExit(1)
}

/**
 * `NodeRuntime.runMain`, except for signals: it would interrupt the whole program
 * on SIGINT and SIGTERM, which loses the running command's output and names every
 * cause Ctrl+C. Here StopSignals handles SIGINT, SIGTERM, SIGHUP and SIGQUIT alike.
 */
const runMain = makeRunMain(({ fiber, teardown }) => {
  const keepAlive = setInterval(() => {}, 2 ** 31 - 1)
  fiber.addObserver((exit) => {
    clearInterval(keepAlive)
    // Exit 0 by letting the event loop drain, so piped output is flushed.
    teardown(exit, (code) => code === 0 ? undefined : process.exit(code))
  })
})

const invocation = Arguments.parse(process.argv.slice(2))
if (Either.isLeft(invocation)) {
  process.stderr.write(Escape.forLine(invocation.left.message) + "\n")
  process.exitCode = 2
} else if (invocation.right._tag === "Help") {
  configurationChecked()
  process.stdout.write(Help.text())
} else if (invocation.right._tag === "Version") {
  configurationChecked()
  process.stdout.write(`${VERSION}\n`)
} else if (invocation.right._tag === "Log" || invocation.right._tag === "Sessions") {
  // `mino log | head`: a reader that stops early ends the log quietly.
  process.stdout.on("error", () => process.exit(0))
  const request = invocation.right
  const directory = Conversations.startupDirectory()
  // HOME as for a chat: unset, empty or relative is a configuration error, never guessed.
  const output = Effect.runSync(Effect.flatMap(Effect.orDie(MinoConfig.home), (home) =>
    request._tag === "Log" ? Log.show({ ...request, home, directory }) : Sessions.show({ home, directory, demo: request.demo })).pipe(
    Effect.catchAll((e) => Effect.succeed({ stdout: "", stderr: `mino: ${Escape.forLine(e.message)}.\n`, code: 2 }))
  ))
  if (output.code === 0) configurationChecked()
  process.stdout.write(output.stdout)
  process.stderr.write(output.stderr)
  process.exitCode = output.code
} else {
  chat(invocation.right, configurationChecked).pipe(
    Effect.provide(StopSignals.layerProcess),
    runMain({ disableErrorReporting: true, teardown })
  )
}
