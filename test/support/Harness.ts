/**
 * Shared test wiring: temporary homes and working directories, the session file
 * as parsed lines, a scripted loopback model, and the Agent composed from real
 * layers with the parts under test swapped.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import { Agent } from "../../src/agent/Agent.js"
import type { AgentEvent } from "../../src/agent/AgentEvent.js"
import { Approver } from "../../src/approval/Approver.js"
import * as Mino from "../../src/Mino.js"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import type { Secrets } from "../../src/security/Secrets.js"
import { HEADER_TYPE } from "../../src/session/directory/Conversations.js"
import type { SessionDisk } from "../../src/session/conversation/SessionDisk.js"
import type { SessionStore } from "../../src/session/SessionStore.js"
import type { AnyTool, ToolDisplay } from "../../src/tools/Tool.js"

export const API_KEY = "sk-test-7f3a9c1e5b2d4f6a8c0e"

export const tempDir = (prefix: string): string => Fs.mkdtempSync(Path.join(Os.tmpdir(), `mino-${prefix}-`))

/** Every line of the (single) session file under `home` after its header, parsed; [] when there is none. */
export const sessionLines = (home: string): Array<Record<string, unknown>> => {
  const file = sessionFile(home)
  if (file === undefined) return []
  const lines = Fs.readFileSync(file, "utf8").split("\n").filter((line) => line.length > 0).map((line) => JSON.parse(line) as Record<string, unknown>)
  return lines[0]?.["type"] === HEADER_TYPE ? lines.slice(1) : lines
}

export const sessionFile = (home: string): string | undefined => {
  const dir = Path.join(home, ".mino", "sessions")
  if (!Fs.existsSync(dir)) return undefined
  const name = Fs.readdirSync(dir).filter((entry) => entry.endsWith(".jsonl")).sort().at(-1)
  return name === undefined ? undefined : Path.join(dir, name)
}

export const types = (lines: ReadonlyArray<Record<string, unknown>>): Array<unknown> => lines.map((line) => line["type"])

/** A loopback model that answers requests in order from `replies` (the last one repeats). */
export const scriptedModel = (replies: ReadonlyArray<ResponsesServer.Reply | ((request: ResponsesServer.Request) => Effect.Effect<ResponsesServer.Reply>)>) =>
  Effect.gen(function*() {
    const next = yield* Ref.make(0)
    return yield* ResponsesServer.make((request) =>
      Effect.flatMap(Ref.getAndUpdate(next, (n) => n + 1), (n) => {
        const reply = replies[Math.min(n, replies.length - 1)]
        if (reply === undefined) return Effect.succeed(ResponsesServer.httpError(500, "no reply scripted"))
        return typeof reply === "function" ? reply(request) : Effect.succeed(reply)
      })
    )
  })

export interface AgentSetup<R = never> {
  readonly home: string
  readonly url: string
  /** The key Mino is given (default `API_KEY`): sent, and redacted everywhere. */
  readonly apiKey?: string
  readonly tools: ReadonlyArray<AnyTool>
  /** The bash tool, built by Mino beside `tools`. */
  readonly bash?: Mino.BashOptions
  readonly approve?: (display: ToolDisplay) => boolean
  readonly approver?: Layer.Layer<Approver, never, R | Secrets>
  /** The disk under the session (default: the real one); tests inject faults through it. */
  readonly disk?: Layer.Layer<SessionDisk>
  readonly idleTimeoutMs?: number
  /**
   * The model client's shipped retry configuration, only its wait cap shortened.
   * Without it the client does not retry, so a scripted failure is seen once.
   */
  readonly shippedRetries?: { readonly waitCapMs: number }
}

/** The Agent (and its SessionStore) composed as Mino composes them: loopback model, fsynced session under `home`, the given tools. */
export const agentLayer = <R = never>(setup: AgentSetup<R>) =>
  Mino.layer({
    apiKey: setup.apiKey ?? API_KEY,
    endpoint: {
      baseURL: setup.url,
      idleTimeoutMs: setup.idleTimeoutMs ?? 5_000,
      ...(setup.shippedRetries === undefined ? { maxRetries: 0 } : { retryWaitCapMs: setup.shippedRetries.waitCapMs })
    },
    model: "test-model",
    instructions: "test instructions",
    session: { home: setup.home },
    ...(setup.disk === undefined ? {} : { disk: setup.disk }),
    tools: setup.tools,
    ...(setup.bash === undefined ? {} : { bash: setup.bash }),
    approver: setup.approver ?? Approver.layerStatic(setup.approve ?? (() => true))
  })

/** Runs one turn, collecting its display events. */
export const turn = (input: string) =>
  Effect.gen(function*() {
    const agent = yield* Agent
    const events: Array<AgentEvent> = []
    const outcome = yield* agent.turn(input, (event) => Effect.sync(() => void events.push(event)))
    return { outcome, events }
  })

/** Runs `effect` with a freshly opened Agent, closing the session (and its lock) afterwards. */
export const withAgent = <A, E>(setup: AgentSetup, effect: Effect.Effect<A, E, Agent | SessionStore | Secrets | Scope.Scope>) =>
  Effect.scoped(Effect.provide(effect, agentLayer(setup)))

/** The input items of a logged request. */
export const inputOf = (request: ResponsesServer.Request): Array<Record<string, unknown>> =>
  (request.body as { input: Array<Record<string, unknown>> }).input
