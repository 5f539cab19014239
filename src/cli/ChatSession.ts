/**
 * The chat's conversation and Agent, which `/new` and `/model NAME` replace
 * without quitting. The Gateway is given one Agent (`agent`) whose turns go to
 * whichever is current; a replacement is made whole before the one it replaces
 * is released, and only at the prompt (a line is read only once a turn has
 * ended), so no turn ever spans two.
 *
 * `/new` takes a new conversation in this directory (`Conversations`' `new`:
 * its own lock; its file made with its first question), then releases the old
 * one's lock and file. `/model` builds the Agent again over the same
 * conversation. Both build the Agent's parts (model client, bash) afresh, in a
 * scope of their own, closed when they are replaced or the chat ends.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import type { AgentShape } from "../agent/Agent.js"
import * as Conversations from "../session/directory/Conversations.js"
import type { SessionStoreShape } from "../session/SessionStore.js"

/** Why a new conversation could not be opened (busy, a refused file...): one line. */
export interface OpenError {
  readonly _tag: string
  readonly message: string
}

export interface ChatSessionOptions {
  /** The conversation the chat opened (held by the chat's own scope). */
  readonly store: SessionStoreShape
  readonly model: string
  /** Opens a new conversation in this directory, held by the scope it runs in. */
  readonly open: Effect.Effect<SessionStoreShape, OpenError, Scope.Scope>
  /** The Agent over `store`, asking `model`, held by the scope it runs in. */
  readonly build: (store: SessionStoreShape, model: string) => Effect.Effect<AgentShape, never, Scope.Scope>
}

interface Current {
  readonly store: SessionStoreShape
  /** The conversation's own scope; undefined for the one the chat opened. */
  readonly storeScope: Scope.CloseableScope | undefined
  readonly model: string
  readonly agentScope: Scope.CloseableScope
  /** The Agent, built once: on `warm`, or at the first turn that needs it. */
  readonly ready: Effect.Effect<AgentShape>
}

export const make = (options: ChatSessionOptions) =>
  Effect.gen(function*() {
    const outer = yield* Effect.scope
    const child = Scope.fork(outer, ExecutionStrategy.sequential)
    const agentOver = (store: SessionStoreShape, model: string, storeScope: Scope.CloseableScope | undefined) =>
      Effect.gen(function*() {
        const agentScope = yield* child
        const ready = yield* Effect.cached(Scope.extend(options.build(store, model), agentScope))
        return { store, storeScope, model, agentScope, ready } satisfies Current
      })
    let current: Current = yield* agentOver(options.store, options.model, undefined)

    const agent: AgentShape = {
      notices: options.store.notices,
      questions: Effect.suspend(() => current.store.questions),
      turn: (input, emit, turnOptions) => Effect.flatMap(Effect.suspend(() => current.ready), (built) => built.turn(input, emit, turnOptions))
    }

    /** Makes `next` current, then releases what it replaced (`keepStore`: the conversation stays). */
    const replace = (next: Current, keepStore: boolean) =>
      Effect.gen(function*() {
        const previous = current
        current = next
        yield* Scope.close(previous.agentScope, Exit.void)
        if (!keepStore && previous.storeScope !== undefined) yield* Scope.close(previous.storeScope, Exit.void)
      })

    /** `/new`: a new conversation here; the current one stays on disk (if it was ever asked anything). */
    const renew = Effect.gen(function*() {
      const storeScope = yield* child
      const store = yield* Scope.extend(options.open, storeScope).pipe(Effect.onError(() => Scope.close(storeScope, Exit.void)))
      yield* replace(yield* agentOver(store, current.model, storeScope), false)
      return store
    })

    /** `/model NAME`: the Agent again, over the same conversation. */
    const setModel = (model: string) =>
      Effect.gen(function*() {
        yield* replace(yield* agentOver(current.store, model, current.storeScope), true)
      })

    return {
      agent,
      /** Builds the current Agent in the background (after the first prompt is drawn). */
      warm: Effect.asVoid(Effect.forkIn(Effect.suspend(() => current.ready), outer)),
      renew,
      setModel,
      store: Effect.sync(() => current.store),
      model: Effect.sync(() => current.model)
    }
  })

export type ChatSession = Effect.Effect.Success<ReturnType<typeof make>>

/** Whether the conversation has a file yet: a new one gets it with its first question. */
export const saved = (store: SessionStoreShape): boolean => {
  try {
    return Fs.lstatSync(store.path).isFile()
  } catch {
    return false
  }
}

/**
 * The one line said at exit: how to come back to this conversation (`mino` here
 * when it is this directory's newest, else by id), or that nothing was kept.
 */
export const comeBack = (store: SessionStoreShape, options: { readonly cwd: string; readonly demo: boolean }): string => {
  const demo = options.demo ? " --demo" : ""
  const newest = Conversations.newestStartedIn(Path.dirname(store.path), options.cwd)
  if (!saved(store)) {
    // A new conversation (`--new`, `/new`) that asked nothing: the one a plain start takes up is named instead.
    return newest === undefined
      ? "Nothing was asked, so no conversation was kept."
      : `Nothing was asked in the new conversation, so it was not kept; \`mino${demo}\` here continues ${newest.id}.`
  }
  const byId = `\`mino${demo} --continue ${store.info.id}\``
  return newest?.id === store.info.id
    ? `To come back to this conversation: \`mino${demo}\` here, or ${byId} from anywhere.`
    : `To come back to this conversation: ${byId}.`
}
