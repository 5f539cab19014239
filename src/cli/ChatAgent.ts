/**
 * The chat's Agent: the model client (the endpoint's, or the demo's scripted
 * model, started here), bash in the startup directory, and the terminal as the
 * approver, composed by `Mino.agentLayer` over the conversation already open.
 *
 * `cli/Chat.ts` loads this module and builds it only once its first prompt is
 * on the screen, so the prompt waits for none of it; and builds it then, while
 * the user types, so the first question does not wait for it either: the model
 * client loads the openai SDK as it is built, and a practice request to a
 * loopback server brings in the rest of the request's way.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { Agent, type AgentShape } from "../agent/Agent.js"
import { Approver } from "../approval/Approver.js"
import * as DemoModel from "../demo/DemoModel.js"
import * as Mino from "../Mino.js"
import { ModelClient } from "../model/ModelClient.js"
import * as ResponsesServer from "../testing/ResponsesServer.js"
import { Secrets } from "../security/Secrets.js"
import type { SessionStore } from "../session/SessionStore.js"
import type { Terminal } from "../terminal/Terminal.js"

export interface ChatAgentOptions {
  /** The scripted demo model on loopback instead of the endpoint. */
  readonly demo: boolean
  readonly baseURL: string | undefined
  /** A gateway's headers (MINO_HEADERS, checked), sent with every request to the endpoint. */
  readonly headers?: ReadonlyArray<readonly [string, string]>
  readonly model: string
  readonly instructions: string
  /** The startup directory: every command starts here. */
  readonly cwd: string
  /** Mino's environment, of which a command inherits the documented handful. */
  readonly childEnvironment: Readonly<Record<string, string | undefined>>
}

/** The Agent, its resources (the demo's server, the model client's sockets, bash's watcher) held by the scope. */
export const build = (options: ChatAgentOptions): Effect.Effect<AgentShape, never, Scope.Scope | SessionStore | Secrets | Terminal> =>
  Effect.gen(function*() {
    const baseURL = options.demo ? (yield* DemoModel.start).url : options.baseURL
    const context = yield* Layer.build(Mino.agentLayer({
      endpoint: options.demo ? { baseURL } : { baseURL, headers: options.headers ?? [] },
      model: options.model,
      instructions: options.instructions,
      bash: { cwd: options.cwd, parentEnv: options.childEnvironment },
      approver: Approver.layer
    })).pipe(
      // Only the bash tool, so no two tools can share a name.
      Effect.orDie
    )
    // Beside the first turn, should that come first: it waits for none of it.
    yield* Effect.forkScoped(practice)
    return Context.get(context, Agent)
  })

/**
 * One request the way the first question's will go — the SDK, `fetch`'s classes,
 * Mino's transport over `node:http`, the event stream read back — to a loopback
 * server in this process that answers at once, through a model client of its own
 * with a placeholder key: nothing reaches the endpoint, the key goes nowhere, and
 * the first question finds that code loaded and compiled. Whatever goes wrong
 * here is the first question's to meet and report.
 */
const practice = Effect.scoped(Effect.gen(function*() {
  const server = yield* ResponsesServer.make(() => Effect.succeed(ResponsesServer.textResponse("ready")))
  const client = yield* Layer.build(ModelClient.layer({ baseURL: server.url, maxRetries: 0 }).pipe(Layer.provide(Secrets.layerPlaceholder("practice"))))
  // Read as the Agent reads a reply: a step at a time, to its end.
  const reply = yield* Context.get(client, ModelClient).open({ model: "practice", instructions: "", input: [], tools: [] })
  while ((yield* reply.next) !== undefined) continue
})).pipe(Effect.ignore)
