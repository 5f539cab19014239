/**
 * The composition root: `Mino.layer(options)` composes Mino's services once —
 * `Secrets` (the key), `ModelClient`, `SessionStore`, `BashRunner` and the
 * `ToolRegistry` (bash, and any tools of yours), the `Approver`, and the `Agent`
 * over them — and is what the CLI, the tests, the bench and a library user all
 * run. The parts worth swapping are options: the approver, the session (a file
 * under `home`, over a given disk, or memory), the tools, the model endpoint or
 * the whole model client.
 *
 * The key is given once (`apiKey`) and held by `Secrets`; every layer that could
 * leak it takes it from there, so redaction covers the screen, the session file,
 * the tool registry, the child environment and the model client's errors without
 * the key being passed again. A key too short to redact is still used, and said
 * once, as a warning through Effect's logger, once the conversation is open (the
 * CLI's logger writes it on stderr).
 *
 * It composes in two stages, and a user may take them apart: `conversationLayer`
 * (the key and the conversation: what a chat's first prompt needs) and
 * `agentLayer` over it (the model client, the tools, the approver and the Agent).
 * The CLI opens the conversation and draws its first prompt, then builds the
 * Agent while the user types (`staged`); `layer` is the two at once.
 */
import * as Effect from "effect/Effect"
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import type * as Redacted from "effect/Redacted"
import type { AgentShape } from "./agent/Agent.js"
import type * as AgentParts from "./AgentParts.js"
import * as Instructions from "./agent/Instructions.js"
import type { Approver } from "./approval/Approver.js"
import * as MinoConfig from "./Config.js"
import { DEFAULT_MODEL } from "./defaults.js"
import * as Endpoint from "./model/Endpoint.js"
import * as GatewayHeaders from "./model/GatewayHeaders.js"
import type { ModelClient, ModelClientConfig } from "./model/ModelClient.js"
import { Secrets, SHORT_KEY_WARNING } from "./security/Secrets.js"
import { SessionDisk } from "./session/conversation/SessionDisk.js"
import { type SessionOptions, SessionStore } from "./session/SessionStore.js"
import type { AnyTool } from "./tools/Tool.js"

/** The bash tool: where its commands start, and optionally what they inherit and their bounds. */
export interface BashOptions {
  /** The startup directory; every command starts here. */
  readonly cwd: string
  /** Mino's environment, of which the child gets the documented handful; read through `effect/Config` when absent. */
  readonly parentEnv?: Readonly<Record<string, string | undefined>>
  readonly timeoutMs?: number
  readonly outputLimitBytes?: number
}

/** The key and the conversation: the first stage. */
export interface ConversationOptions {
  /**
   * The API key: held once by `Secrets`, sent by the model client, redacted everywhere else.
   * One shorter than `MIN_LENGTH` (8) cannot be redacted: it is still sent, and the layer logs
   * `SHORT_KEY_WARNING` once, at warning level (`Secrets`' `redactable` says the same), unless
   * the endpoint is on loopback (a local server's placeholder: the key leaves no machine).
   */
  readonly apiKey: Redacted.Redacted<string> | string
  /** False for a placeholder that is no secret (the demo's): sent as given, never redacted. Default true. */
  readonly protectKey?: boolean
  /** Where the conversation lives: a file under `home` (see `SessionOptions`), or `"memory"`. */
  readonly session: SessionOptions | "memory"
  /** The disk under a session file (default: the real one); tests inject faults through it. */
  readonly disk?: Layer.Layer<SessionDisk>
  /**
   * How to reach the model: base URL, headers, idle timeout, retries. The first stage reads
   * where it is (a key for a server on loopback is no warning) and its headers (secrets too).
   */
  readonly endpoint?: ModelClientConfig
}

export interface MinoOptions<Extra, RIn> extends ConversationOptions {
  /** A model client of your own instead (a scripted model, a wrapper); it can read the key from `Secrets`. */
  readonly modelClient?: Layer.Layer<ModelClient, never, Secrets>
  /** The model's name (default `gpt-5.1`). */
  readonly model?: string
  /** The instructions sent with every request (default: Mino's own); an effect may read them, using `Secrets`. */
  readonly instructions?: string | Effect.Effect<string, never, Secrets>
  /** The bash tool, when given. */
  readonly bash?: BashOptions
  /** Tools besides bash; two tools with one name fail the layer (`DuplicateToolName`). */
  readonly tools?: ReadonlyArray<AnyTool>
  /**
   * Who decides each call: `Approver.layerStatic(policy)`, or `Approver.layer`
   * (asks on the terminal) with the `Terminal` merged in. It may use `Secrets`;
   * whatever else it provides (the `Terminal`) is part of the result.
   */
  readonly approver: Layer.Layer<Approver | Extra, never, RIn>
}

/** Mino's services, composed once: the Agent, the SessionStore it saves through, and the Secrets it keeps. */
export const layer = <Extra = never, RIn = never>(options: MinoOptions<Extra, RIn>) =>
  agentLayer(options).pipe(Layer.provideMerge(conversationLayer(options)))

/**
 * The key (as `Secrets`, with the values of the endpoint's headers beside it) and
 * the conversation (the `SessionStore`, which redacts with them): the one place a
 * key becomes `Secrets`. A protected key too short to redact is still used, and
 * said once the conversation is open, unless the endpoint is on loopback.
 */
export const conversationLayer = (options: ConversationOptions) => {
  const protect = options.protectKey !== false
  const { endpoint } = options
  const secrets = protect
    ? Secrets.layer(options.apiKey, GatewayHeaders.secretsOf(endpoint?.headers ?? []))
    : Secrets.layerPlaceholder(options.apiKey)
  // Where the key goes, classified as the client classifies it (`hostAs` stands a loopback server in for a host).
  const target = endpoint?.hostAs === undefined ? endpoint?.baseURL : `http://${endpoint.hostAs}/`
  const warns = (secrets: Context.Tag.Service<Secrets>) => protect && !secrets.redactable && !Endpoint.isLoopback(target)
  const session = options.session === "memory"
    ? SessionStore.layerMemory()
    : SessionStore.layerOnDisk(options.session).pipe(Layer.provide(options.disk ?? SessionDisk.layer))
  return session.pipe(
    Layer.provideMerge(secrets),
    Layer.tap((context) => warns(Context.get(context, Secrets)) ? Effect.logWarning(SHORT_KEY_WARNING) : Effect.void)
  )
}

/** What the Agent needs besides the conversation and the key. */
export type AgentOptions<Extra, RIn> = Omit<MinoOptions<Extra, RIn>, "apiKey" | "protectKey" | "session" | "disk">

/**
 * The Agent with what only it uses (the model client, the tools, the approver),
 * over the `Secrets` and `SessionStore` of `conversationLayer`: the CLI opens the
 * conversation and shows its first prompt before it builds this (`staged`).
 */
export const agentLayer = <Extra = never, RIn = never>(options: AgentOptions<Extra, RIn>) =>
  // Its modules are loaded as it is built (`AgentParts.ts`): the chat's first prompt waits for none of them.
  Layer.unwrapEffect(Effect.map(Effect.promise(() => import("./AgentParts.js")), (parts) => composeAgent(parts, options)))

const composeAgent = <Extra, RIn>(parts: typeof AgentParts, options: AgentOptions<Extra, RIn>) => {
  const model = options.modelClient ?? parts.ModelClient.layer(options.endpoint)
  const tools = Layer.effect(
    parts.ToolRegistry,
    Effect.gen(function*() {
      const bash = options.bash === undefined ? [] : [parts.erase(yield* makeBash(parts, options.bash))]
      return yield* parts.ToolRegistry.make([...bash, ...(options.tools ?? [])])
    })
  ).pipe(Layer.provide(parts.BashRunner.layer))
  const instructions = options.instructions ?? Instructions.BUILT_IN
  const agent = Layer.unwrapEffect(
    Effect.map(
      typeof instructions === "string" ? Effect.succeed(instructions) : instructions,
      (text) => parts.AgentLoop.layer({ model: options.model ?? DEFAULT_MODEL, instructions: text })
    )
  )
  return agent.pipe(
    Layer.provide(Layer.mergeAll(model, tools)),
    Layer.provideMerge(options.approver)
  )
}

const makeBash = (parts: typeof AgentParts, options: BashOptions) =>
  Effect.gen(function*() {
    const parentEnv = options.parentEnv ?? (yield* Effect.orDie(MinoConfig.childEnvironment))
    return yield* parts.BashTool.make({
      cwd: options.cwd,
      parentEnv,
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      ...(options.outputLimitBytes === undefined ? {} : { outputLimitBytes: options.outputLimitBytes })
    })
  })

/**
 * The second stage, later: an Agent whose parts `build` makes once — when `warm`
 * runs (the CLI runs it once its first prompt is drawn, so the first question
 * does not wait for them either), or at the first turn if that comes sooner.
 * Its notices and questions come from the conversation, open already. What it
 * builds is held by the caller's scope, and built with the services around it now.
 */
export const staged = <R>(build: Effect.Effect<AgentShape, never, R | Scope.Scope>) =>
  Effect.gen(function*() {
    const store = yield* SessionStore
    const scope = yield* Effect.scope
    const context = yield* Effect.context<Exclude<R, Scope.Scope>>()
    const ready = yield* Effect.cached(build.pipe(Scope.extend(scope), Effect.provide(context)))
    const agent: AgentShape = {
      notices: store.notices,
      questions: store.questions,
      turn: (input, emit, options) => Effect.flatMap(ready, (built) => built.turn(input, emit, options))
    }
    return { agent, warm: Effect.asVoid(Effect.forkIn(ready, scope)) }
  })
