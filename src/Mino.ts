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
 * once, as a warning through Effect's logger, when the layer is built (the CLI
 * says it on stderr instead).
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"
import * as AgentLoop from "./agent/AgentLoop.js"
import * as Instructions from "./agent/Instructions.js"
import type { Approver } from "./approval/Approver.js"
import * as MinoConfig from "./Config.js"
import { DEFAULT_MODEL } from "./defaults.js"
import * as Endpoint from "./model/Endpoint.js"
import * as GatewayHeaders from "./model/GatewayHeaders.js"
import { ModelClient, type ModelClientConfig } from "./model/ModelClient.js"
import { make as makeSecrets, Secrets, SHORT_KEY_WARNING } from "./security/Secrets.js"
import { SessionDisk } from "./session/conversation/SessionDisk.js"
import { type SessionOptions, SessionStore } from "./session/SessionStore.js"
import { type AnyTool, erase } from "./tools/Tool.js"
import { ToolRegistry } from "./tools/ToolRegistry.js"
import { BashRunner } from "./tools/bash/BashRunner.js"
import * as BashTool from "./tools/bash/BashTool.js"

/** The bash tool: where its commands start, and optionally what they inherit and their bounds. */
export interface BashOptions {
  /** The startup directory; every command starts here. */
  readonly cwd: string
  /** Mino's environment, of which the child gets the documented handful; read through `effect/Config` when absent. */
  readonly parentEnv?: Readonly<Record<string, string | undefined>>
  readonly timeoutMs?: number
  readonly outputLimitBytes?: number
}

export interface MinoOptions<Extra, RIn> {
  /**
   * The API key: held once by `Secrets`, sent by the model client, redacted everywhere else.
   * One shorter than `MIN_LENGTH` (8) cannot be redacted: it is still sent, and the layer logs
   * `SHORT_KEY_WARNING` once, at warning level (`Secrets`' `redactable` says the same), unless
   * the endpoint is on loopback (a local server's placeholder: the key leaves no machine).
   */
  readonly apiKey: Redacted.Redacted<string> | string
  /** False for a placeholder that is no secret (the demo's): sent as given, never redacted. Default true. */
  readonly protectKey?: boolean
  /** How to reach the model: base URL, idle timeout, retries. */
  readonly endpoint?: ModelClientConfig
  /** A model client of your own instead (a scripted model, a wrapper); it can read the key from `Secrets`. */
  readonly modelClient?: Layer.Layer<ModelClient, never, Secrets>
  /** The model's name (default `gpt-5.1`). */
  readonly model?: string
  /** The instructions sent with every request (default: Mino's own); an effect may read them, using `Secrets`. */
  readonly instructions?: string | Effect.Effect<string, never, Secrets>
  /** Where the conversation lives: a file under `home` (see `SessionOptions`), or `"memory"`. */
  readonly session: SessionOptions | "memory"
  /** The disk under a session file (default: the real one); tests inject faults through it. */
  readonly disk?: Layer.Layer<SessionDisk>
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
export const layer = <Extra = never, RIn = never>(options: MinoOptions<Extra, RIn>) => {
  const secrets = options.protectKey === false ? Secrets.layerPlaceholder(options.apiKey) : keyLayer(options.apiKey, options.endpoint)
  const session = options.session === "memory"
    ? SessionStore.layerMemory()
    : SessionStore.layerOnDisk(options.session).pipe(Layer.provide(options.disk ?? SessionDisk.layer))
  return agentLayer(options).pipe(
    Layer.provideMerge(session),
    Layer.provideMerge(secrets)
  )
}

/**
 * The key, protected, and the values of the endpoint's headers beside it; a key too short
 * to redact is still used, and said once, as the CLI says it (not for a server on loopback).
 */
const keyLayer = (apiKey: Redacted.Redacted<string> | string, endpoint: ModelClientConfig | undefined): Layer.Layer<Secrets> =>
  Layer.effect(
    Secrets,
    Effect.gen(function*() {
      const secrets = makeSecrets(apiKey, { also: GatewayHeaders.secretsOf(endpoint?.headers ?? []) })
      // Where the key goes, classified as the client classifies it (`hostAs` stands a loopback server in for a host).
      const target = endpoint?.hostAs === undefined ? endpoint?.baseURL : `http://${endpoint.hostAs}/`
      if (!secrets.redactable && !Endpoint.isLoopback(target)) yield* Effect.logWarning(SHORT_KEY_WARNING)
      return secrets
    })
  )

/** What the Agent needs besides the conversation and the key. */
export type AgentOptions<Extra, RIn> = Omit<MinoOptions<Extra, RIn>, "apiKey" | "protectKey" | "session" | "disk">

/**
 * The Agent with what only it uses (the model client, the tools, the approver),
 * over a `Secrets` and a `SessionStore` composed already: the CLI opens the
 * conversation and shows its first prompt before it builds this.
 */
export const agentLayer = <Extra = never, RIn = never>(options: AgentOptions<Extra, RIn>) => {
  const model = options.modelClient ?? ModelClient.layer(options.endpoint)
  const tools = Layer.effect(
    ToolRegistry,
    Effect.gen(function*() {
      const bash = options.bash === undefined ? [] : [erase(yield* makeBash(options.bash))]
      return yield* ToolRegistry.make([...bash, ...(options.tools ?? [])])
    })
  ).pipe(Layer.provide(BashRunner.layer))
  const instructions = options.instructions ?? Instructions.BUILT_IN
  const agent = Layer.unwrapEffect(
    Effect.map(
      typeof instructions === "string" ? Effect.succeed(instructions) : instructions,
      (text) => AgentLoop.layer({ model: options.model ?? DEFAULT_MODEL, instructions: text })
    )
  )
  return agent.pipe(
    Layer.provide(Layer.mergeAll(model, tools)),
    Layer.provideMerge(options.approver)
  )
}

const makeBash = (options: BashOptions) =>
  Effect.gen(function*() {
    const parentEnv = options.parentEnv ?? (yield* Effect.orDie(MinoConfig.childEnvironment))
    return yield* BashTool.make({
      cwd: options.cwd,
      parentEnv,
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      ...(options.outputLimitBytes === undefined ? {} : { outputLimitBytes: options.outputLimitBytes })
    })
  })
