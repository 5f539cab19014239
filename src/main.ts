/**
 * `mino`: parses the command line, composes the layers once, and runs the chat.
 * This is the only file that runs an Effect.
 */
import { realpathSync } from "node:fs"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { makeRunMain } from "@effect/platform/Runtime"
import * as Cause from "effect/Cause"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Agent } from "./agent/Agent.js"
import * as Instructions from "./agent/Instructions.js"
import { Approver } from "./approval/Approver.js"
import * as Arguments from "./cli/Arguments.js"
import * as Banner from "./cli/Banner.js"
import * as Gateway from "./cli/Gateway.js"
import * as Help from "./cli/Help.js"
import * as Log from "./cli/Log.js"
import * as DemoModel from "./demo/DemoModel.js"
import { ModelClient } from "./model/ModelClient.js"
import { SessionStore } from "./session/SessionStore.js"
import * as Escape from "./security/Escape.js"
import { Terminal } from "./terminal/Terminal.js"
import { erase } from "./tools/Tool.js"
import { ToolRegistry } from "./tools/ToolRegistry.js"
import { BashRunner } from "./tools/bash/BashRunner.js"
import * as BashTool from "./tools/bash/BashTool.js"
import { DEFAULT_MODEL } from "./defaults.js"
import { fromSignal, StopSignals } from "./StopSignals.js"
import { VERSION } from "./version.js"

/** An expected way to stop: `message` goes to stderr as one line, then exit with `code`. */
class Stop extends Data.TaggedError("Stop")<{ readonly code: number; readonly message?: string }> {}

const chat = (flags: Extract<Arguments.Invocation, { _tag: "Chat" }>) =>
  Effect.gen(function*() {
    const env = process.env
    const cwd = realpathSync(process.cwd())
    // HOME is taken as given: unset, empty or relative is refused by the session store, never guessed.
    const home = env["HOME"]
    const modelName = flags.model ?? (env["MINO_MODEL"] || DEFAULT_MODEL)
    const endpoint = flags.demo ? { apiKey: "mino-demo", baseURL: (yield* DemoModel.start).url } : {
      // Normalised once: HTTP trims a header value, so `sk-…\n` authenticates as `sk-…`,
      // and only that exact value can be found and redacted everywhere.
      apiKey: (env["OPENAI_API_KEY"] ?? "").trim(),
      baseURL: env["OPENAI_BASE_URL"] || undefined
    }
    if (endpoint.apiKey.length === 0) {
      return yield* new Stop({ code: 2, message: "mino: OPENAI_API_KEY is not set; export your API key, or try `mino --demo`." })
    }
    const secrets = flags.demo ? [] : [endpoint.apiKey]
    const loaded = yield* Instructions.load(cwd)
    if (loaded.warning !== undefined) process.stderr.write(loaded.warning + "\n")
    const instructions = loaded.text

    const bash = BashTool.make({ cwd, parentEnv: env, secrets }).pipe(
      // Bash alone cannot share a name with another tool.
      Effect.flatMap((tool) => Effect.orDie(ToolRegistry.make([erase(tool)], { secrets })))
    )
    const stops = yield* StopSignals
    // Ctrl+C and Ctrl+\ arrive as keys in raw mode: they request the same stop as the signals.
    const terminal = Terminal.layer(secrets, (key) => stops.request(fromSignal(key === "quit" ? "SIGQUIT" : "SIGINT")))
    const agent = Agent.layer({ model: modelName, instructions }).pipe(
      Layer.provide(ModelClient.layer(endpoint)),
      Layer.provideMerge(SessionStore.layer({ home, secrets, ...(flags.demo ? { sessionId: "demo" } : { conversation: flags.conversation }) })),
      Layer.provide(Layer.effect(ToolRegistry, bash).pipe(Layer.provide(BashRunner.layer))),
      Layer.provide(Approver.layer),
      Layer.provideMerge(terminal)
    )

    const summary = yield* Effect.gen(function*() {
      const store = yield* SessionStore
      // The model name and the directory come from outside: escaped, they cannot draw on the screen.
      const banner = [
        `Mino ${VERSION} · model ${flags.demo ? "mino-demo (a scripted demo model on loopback, not a real AI)" : Escape.forValue(modelName)}`,
        Banner.conversationLine(store.info, { demo: flags.demo, fresh: flags.conversation === "new" }),
        `Commands run in ${Escape.forValue(cwd)} after you approve them. Ctrl+D or /exit exits; Ctrl+C cancels and exits.`
      ].join("\n")
      return yield* Gateway.run({
        banner,
        stops,
        ...(flags.question === undefined ? {} : { firstQuestion: flags.question })
      })
    }).pipe(Effect.provide(agent))
    // Stopped by Ctrl+C or a signal: the turn is closed on disk; exit 130 or 128+N.
    const stop = yield* stops.poll
    if (Option.isSome(stop)) return yield* new Stop({ code: stop.value.exitCode })
    // Piped input: a script can tell from the exit code whether a turn failed.
    if (summary.failedTurns > 0 && process.stdin.isTTY !== true) return yield* new Stop({ code: 1 })
  }).pipe(
    Effect.scoped,
    Effect.catchTags({
      ConversationNotFound: (e) => new Stop({ code: 2, message: `mino: ${Escape.forLine(e.message)}.` }),
      SessionBusy: (e) => new Stop({ code: 1, message: `mino: ${e.message}` }),
      SessionOpenError: (e) => new Stop({ code: 1, message: `mino: ${e.message}` }),
      SessionHomeError: (e) => new Stop({ code: 2, message: `mino: ${e.message}` }),
      SessionWriteError: (e) => new Stop({ code: 1, message: `mino: ${e.message}; the chat has stopped.` }),
      AgentBusy: (e) => new Stop({ code: 1, message: `mino: ${e.message}` })
    })
  )

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
  process.stdout.write(Help.text())
} else if (invocation.right._tag === "Version") {
  process.stdout.write(`${VERSION}\n`)
} else if (invocation.right._tag === "Log") {
  // `mino log | head`: a reader that stops early ends the log quietly.
  process.stdout.on("error", () => process.exit(0))
  const { demo, id, json, unknownOnly } = invocation.right
  // HOME as for a chat: unset, empty or relative is a configuration error, never guessed.
  const output = Effect.runSync(Log.show({ home: process.env["HOME"], id, demo, json, unknownOnly }).pipe(
    Effect.catchAll((e) => Effect.succeed({ stdout: "", stderr: `mino: ${Escape.forLine(e.message)}.\n`, code: 2 }))
  ))
  process.stdout.write(output.stdout)
  process.stderr.write(output.stderr)
  process.exitCode = output.code
} else {
  chat(invocation.right).pipe(
    Effect.provide(Layer.merge(NodeFileSystem.layer, StopSignals.layerProcess)),
    runMain({ disableErrorReporting: true, teardown })
  )
}
