/**
 * The chat's Agent: the model client (the endpoint's, or the demo's scripted
 * model, started here), bash in the startup directory, and the terminal as the
 * approver, composed by `Mino.agentLayer` over the conversation already open.
 *
 * `cli/Chat.ts` loads this module and builds it only once its first prompt is
 * on the screen, so the prompt waits for none of it; and builds it then, while
 * the user types, so the first question does not wait for it either. The openai
 * SDK, `fetch`'s classes and `node:http` are brought in here for the same reason.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { Agent, type AgentShape } from "../agent/Agent.js"
import { Approver } from "../approval/Approver.js"
import * as DemoModel from "../demo/DemoModel.js"
import * as Mino from "../Mino.js"
import type { Secrets } from "../security/Secrets.js"
import type { SessionStore } from "../session/SessionStore.js"
import type { Terminal } from "../terminal/Terminal.js"

export interface ChatAgentOptions {
  /** The scripted demo model on loopback instead of the endpoint. */
  readonly demo: boolean
  readonly baseURL: string | undefined
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
      endpoint: { baseURL },
      model: options.model,
      instructions: options.instructions,
      bash: { cwd: options.cwd, parentEnv: options.childEnvironment },
      approver: Approver.layer
    })).pipe(
      // Only the bash tool, so no two tools can share a name.
      Effect.orDie
    )
    // What the first request would otherwise load: the SDK, and the classes of `fetch`
    // that Node makes on first use.
    yield* Effect.promise(() => import("openai"))
    yield* Effect.sync(() => new Response(new ReadableStream(), { headers: new Headers({ "content-type": "text/event-stream" }) }))
    return Context.get(context, Agent)
  })
