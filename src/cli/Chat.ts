/**
 * `mino` (and `mino --demo`): the chat as a program. It reads the configuration
 * once (`Config.ts`), opens the key and the conversation (`Mino.conversationLayer`)
 * and the terminal, shows the banner and runs the Gateway. The rest of Mino — the
 * model client, bash, the approver, the Agent over them (`cli/ChatAgent.ts`,
 * composed by `Mino.agentLayer`) — is built once the first prompt is on the
 * screen, while the user types (`Mino.staged`), so neither the prompt nor the
 * first question waits for it. Every expected way to exit is an `ExitWith`: one line
 * on stderr and an exit code, for `main.ts`.
 */
import * as Fs from "node:fs"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as HashSet from "effect/HashSet"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import { Agent, type AgentShape } from "../agent/Agent.js"
import * as Instructions from "../agent/Instructions.js"
import * as MinoConfig from "../Config.js"
import * as Mino from "../Mino.js"
import * as Escape from "../security/Escape.js"
import * as Either from "effect/Either"
import * as GatewayHeaders from "../model/GatewayHeaders.js"
import { Secrets } from "../security/Secrets.js"
import { type SessionOptions, SessionStore } from "../session/SessionStore.js"
import { fromSignal, StopSignals } from "../StopSignals.js"
import { Terminal } from "../terminal/Terminal.js"
import { VERSION } from "../version.js"
import type * as Arguments from "./Arguments.js"
import * as Banner from "./Banner.js"
import * as ChatCommands from "./ChatCommands.js"
import * as ChatSession from "./ChatSession.js"
import * as ConfigFile from "./ConfigFile.js"
import * as EndpointShown from "./EndpointShown.js"
import * as Gateway from "./Gateway.js"
import * as Slash from "./Slash.js"
import * as Wrap from "../terminal/display/Wrap.js"

/**
 * `mino` alone, the start most people make: the chat, as the command line's reader
 * (`Arguments.parse`) reads an empty line, which `test/cli/Arguments.test.ts` holds
 * it to. `main.ts` takes it without loading that reader and @effect/cli under it
 * before the first prompt.
 */
export const PLAIN_CHAT: Arguments.Invocation = { _tag: "Chat", model: undefined, demo: false, conversation: "newest", question: undefined }

/** An expected way to exit: `message` goes to stderr as one line, then exit with `code`. */
export class ExitWith extends Data.TaggedError("ExitWith")<{ readonly code: number; readonly message?: string }> {}

/** A warning on stderr, broken at word boundaries to the width of the terminal it goes to (whole when it is not one). */
const warn = (text: string): void => {
  process.stderr.write(`${Wrap.wrap(text, process.stderr.isTTY === true ? process.stderr.columns : undefined)}\n`)
}

/**
 * The chat's one logger (in place of `runMain`'s): what Mino says through Effect's
 * logger (a key too short to redact) is a warning line on stderr, in Mino's words.
 */
const warnings = Layer.locallyScoped(
  FiberRef.currentLoggers,
  HashSet.make(Logger.make(({ message }) => warn(Escape.forLine((Array.isArray(message) ? message : [message]).map(String).join(" ")))))
)

/** The demo's key: a placeholder its loopback server ignores, not a secret. */
const DEMO_KEY = "mino-demo"

export const chat = (flags: Extract<Arguments.Invocation, { _tag: "Chat" }>, onConfigured: () => void = () => {}, settings?: ConfigFile.Loaded) =>
  Effect.gen(function*() {
    const config = yield* Effect.mapError(MinoConfig.chat, (error) => new ExitWith({ code: 2, message: `mino: ${error.message}` }))
    // Started in a directory that was deleted or cannot be read: one line, not a stack trace.
    const cwd = yield* Effect.try({
      try: () => {
        const resolved = Fs.realpathSync(process.cwd())
        Fs.accessSync(resolved, Fs.constants.R_OK | Fs.constants.X_OK)
        return resolved
      },
      catch: () => new ExitWith({ code: 2, message: "mino: the current directory cannot be read (was it deleted?); start mino in another one." })
    })
    const modelName = flags.model ?? config.model
    const apiKey: Option.Option<Redacted.Redacted<string> | string> = flags.demo ? Option.some(DEMO_KEY) : config.apiKey
    if (Option.isNone(apiKey)) {
      return yield* new ExitWith({ code: 2, message: "mino: OPENAI_API_KEY is not set; export your API key, or try `mino --demo`." })
    }
    // A gateway's headers: checked against the key before anything is sent, their values then secrets like it.
    const headers = flags.demo
      ? []
      : yield* Either.match(
        GatewayHeaders.parse(
          Option.getOrUndefined(Option.map(config.headers, Redacted.value)),
          typeof apiKey.value === "string" ? apiKey.value.trim() : Redacted.value(apiKey.value).trim()
        ),
        { onLeft: (problem) => Effect.fail(new ExitWith({ code: 2, message: `mino: ${problem}.` })), onRight: Effect.succeed }
      )
    const stops = yield* StopSignals

    // What the banner and the prompt need: the key (to redact), the conversation, the terminal.
    const opened = Terminal.layer(
      // Ctrl+C and Ctrl+\ arrive as keys in raw mode: they request the same stop as the signals.
      (key) => stops.request(fromSignal(key === "quit" ? "SIGQUIT" : "SIGINT"))
    ).pipe(Layer.provideMerge(Mino.conversationLayer({
      apiKey: apiKey.value,
      // The demo's key is a placeholder, no secret.
      protectKey: !flags.demo,
      // Where the key goes (a placeholder for a server on loopback is no warning), and the headers' values, secrets like it.
      endpoint: { baseURL: config.baseURL, headers },
      session: { home: config.home, directory: cwd, demo: flags.demo, conversation: flags.conversation }
    })))

    const summary = yield* Effect.gen(function*() {
      const store = yield* SessionStore
      // The configuration held: from here on, files may be written (the start-up code cache too).
      onConfigured()
      // The project's AGENTS.md, checked like a tool call's arguments; a file that is refused says so once, before the banner.
      const loaded = yield* Instructions.load(cwd)
      if (loaded.warning !== undefined) warn(loaded.warning)
      const agentOptions = { demo: flags.demo, baseURL: config.baseURL, headers, instructions: loaded.text, cwd, childEnvironment: config.childEnvironment }
      const build = (model: string) =>
        Effect.flatMap(Effect.promise(() => import("./ChatAgent.js")), (ChatAgent) => ChatAgent.build({ ...agentOptions, model }))
      // `/new` and `/model` replace the conversation and the Agent without quitting (ChatSession.ts).
      const session = yield* chatSession(build, modelName, { home: config.home, directory: cwd, demo: flags.demo, conversation: "new" })
      const where = whereYouAre(flags, config.baseURL, loaded.agents, settings)
      // The model name and the directory come from outside: escaped, they cannot draw on the screen.
      const banner = [
        `Mino ${VERSION} · model ${flags.demo ? "mino-demo (a scripted demo model on loopback, not a real AI)" : Escape.forValue(modelName)}`,
        Banner.conversationLine(store.info, { demo: flags.demo, which: flags.conversation, cwd }),
        Banner.whereLine(where),
        `Commands run in ${Escape.forValue(cwd)} after you approve them. Ctrl+D or /exit exits; Ctrl+C cancels and exits.`
      ].join("\n")
      const ran = yield* Gateway.run({
        banner,
        stops,
        onFirstPrompt: session.warm,
        commands: Slash.make({ session, ...where, home: config.home, cwd, demo: flags.demo, secrets: yield* Secrets }),
        completions: ChatCommands.COMPLETIONS,
        ...(flags.question === undefined ? {} : { firstQuestion: flags.question })
      }).pipe(Effect.provideService(Agent, session.agent))
      // How to come back, in one line, to a person at a terminal.
      if (process.stdin.isTTY === true) yield* wayBack(session, { cwd, demo: flags.demo })
      return ran
    }).pipe(Effect.provide(opened))
    // Stopped by Ctrl+C or a signal: the turn is closed on disk; exit 130 or 128+N.
    const stop = yield* stops.poll
    if (Option.isSome(stop)) return yield* new ExitWith({ code: stop.value.exitCode })
    // Piped input: a script can tell from the exit code whether a turn failed.
    if (summary.failedTurns > 0 && process.stdin.isTTY !== true) return yield* new ExitWith({ code: 1 })
  }).pipe(
    Effect.scoped,
    Effect.provide(warnings),
    Effect.catchTags({
      ConversationNotFound: (e) => new ExitWith({ code: 2, message: `mino: ${Escape.forLine(e.message)}.` }),
      SessionBusy: (e) => new ExitWith({ code: 1, message: `mino: ${e.message}` }),
      SessionOpenError: (e) => new ExitWith({ code: 1, message: `mino: ${e.message}` }),
      SessionHomeError: (e) => new ExitWith({ code: 2, message: `mino: ${e.message}` }),
      SessionWriteError: (e) => new ExitWith({ code: 1, message: `mino: ${e.message}; the chat has stopped.` }),
      AgentBusy: (e) => new ExitWith({ code: 1, message: `mino: ${e.message}` })
    })
  )

/**
 * The chat's conversation and Agent (`ChatSession`): the Agent's parts are built
 * once, when `warm` runs (after the first prompt) or at the first turn if that
 * comes sooner, and again after `/new` or `/model`, with the services around
 * it now; a new conversation is opened as `newOptions` say.
 */
const chatSession = (
  build: (model: string) => Effect.Effect<AgentShape, never, Scope.Scope | SessionStore | Secrets | Terminal>,
  model: string,
  newOptions: SessionOptions
) =>
  Effect.gen(function*() {
    const store = yield* SessionStore
    const context = yield* Effect.context<Secrets | Terminal>()
    return yield* ChatSession.make({
      store,
      model,
      open: Effect.map(Layer.build(SessionStore.layer(newOptions)), (built) => Context.get(built, SessionStore)).pipe(Effect.provide(context)),
      build: (current, name) => build(name).pipe(Effect.provideService(SessionStore, current), Effect.provide(context))
    })
  })

/** What the banner and `/status` say of the model, the endpoint and AGENTS.md, and where each came from. */
const whereYouAre = (
  flags: Extract<Arguments.Invocation, { _tag: "Chat" }>,
  baseURL: string | undefined,
  agents: Instructions.AgentsFile,
  settings: ConfigFile.Loaded | undefined
) => ({
  modelFrom: flags.demo ? "the demo's" : flags.model !== undefined ? "from --model" : ConfigFile.describe("model", settings?.sources.model ?? "default"),
  endpoint: flags.demo ? "a scripted demo model on loopback" : EndpointShown.shown(baseURL),
  endpointFrom: flags.demo ? "--demo" : ConfigFile.describe("endpoint", settings?.sources.endpoint ?? "default"),
  elsewhere: flags.demo ? undefined : EndpointShown.elsewhere(baseURL),
  agents
})

/** The line said at the end of a chat: how to come back to its conversation, broken to the screen's width. */
const wayBack = (session: ChatSession.ChatSession, options: { readonly cwd: string; readonly demo: boolean }) =>
  Effect.gen(function*() {
    const terminal = yield* Terminal
    const columns = Option.getOrUndefined(Option.map(yield* terminal.screen, (screen) => screen.columns))
    yield* terminal.write(`${terminal.style("dim", Wrap.wrap(ChatSession.comeBack(yield* session.store, options), columns))}\n`)
  })
