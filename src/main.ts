/**
 * `mino`: reads the command line (`cli/Arguments.ts`), dispatches to the command
 * it names, and runs it with `runMain`. This is the only file that runs an
 * Effect; the chat is `cli/Chat.ts`, the commands that print are `cli/Print.ts`,
 * and Mino's services are composed once, in `Mino.ts`.
 */
import { makeRunMain } from "@effect/platform/Runtime"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type * as Arguments from "./cli/Arguments.js"
import { chat, ExitWith, PLAIN_CHAT } from "./cli/Chat.js"
import * as CodeCache from "./cli/CodeCache.js"
import * as ConfigFile from "./cli/ConfigFile.js"
import type * as Print from "./cli/Print.js"
import * as Escape from "./security/Escape.js"
import { StopSignals } from "./StopSignals.js"

/** The commands that print: loaded only for them, so a chat's start does not compile them. */
const printing = <E>(command: (print: typeof Print) => Effect.Effect<void, E>) =>
  Effect.flatMap(Effect.promise(() => import("./cli/Print.js")), command)

/** `~/.mino/config.json` under the environment (`ConfigFile`): a file it refuses is one line, exit 2. */
const configured = <A, E, R>(use: (loaded: ConfigFile.Loaded) => Effect.Effect<A, E, R>) =>
  Effect.suspend((): Effect.Effect<A, E | ExitWith, R> =>
    Either.match(ConfigFile.load(process.env), {
      onLeft: (line) => Effect.fail(new ExitWith({ code: 2, message: `mino: ${line}.` })),
      onRight: (loaded) => Effect.withConfigProvider(use(loaded), loaded.provider)
    })
  )

const dispatch = (invocation: Arguments.Invocation) => {
  switch (invocation._tag) {
    case "Help":
      return printing((print) => print.help(Either.getOrElse(Either.mapLeft(ConfigFile.load(process.env), (refused) => ({ refused })), (loaded) => loaded)))
    case "Version":
      return printing((print) => print.version)
    case "Completions":
      return printing((print) => print.completions(invocation.shell))
    case "Log":
    case "Sessions":
      return printing((print) => print.log(invocation))
    case "Chat":
      return configured((loaded) => Effect.provide(chat(invocation, CodeCache.configurationChecked, loaded), StopSignals.layerProcess))
  }
}

const teardown = <E, A>(exit: Exit.Exit<E, A>, onExit: (code: number) => void) => {
  if (Exit.isSuccess(exit)) return onExit(0)
  if (Cause.isInterruptedOnly(exit.cause)) return onExit(130)
  const failure = Cause.failureOption(exit.cause)
  if (Option.isSome(failure) && failure.value instanceof ExitWith) {
    // Messages carry paths and error details from outside: one escaped line. (Without
    // one, `message` is Error's empty default, and nothing is written.)
    const { message } = failure.value
    if (message !== undefined && message.length > 0) process.stderr.write(Escape.forLine(message) + "\n")
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

const invocation = (args: ReadonlyArray<string>): Effect.Effect<Arguments.Invocation, Arguments.UsageError> =>
  args.length === 0
    ? Effect.succeed(PLAIN_CHAT)
    : Effect.flatMap(Effect.promise(() => import("./cli/Arguments.js")), (reader) => reader.parse(args))

invocation(process.argv.slice(2)).pipe(
  Effect.catchTag("UsageError", (error) => new ExitWith({ code: 2, message: error.message })),
  Effect.flatMap(dispatch),
  runMain({ disableErrorReporting: true, teardown })
)
