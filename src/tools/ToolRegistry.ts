/**
 * The tools the Agent offers: their definitions for each request, and Prepare by
 * name. A name the registry does not know is answered with an `unknown_tool`
 * result and never reaches the approval prompt.
 *
 * The registry is also where the API key is kept away from the model: a call
 * whose arguments contain it is refused before approval (what would be shown
 * `[redacted]` must never run with the real key), and every result is redacted
 * here, where it is made, so what is saved, shown and sent is one and the same.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Secrets from "../security/Secrets.js"
import { type AnyTool, type PreparedCall, type Rejection, rejection, type ToolDefinition } from "./Tool.js"
import * as ToolResult from "./ToolResult.js"

export interface ToolRegistryShape {
  readonly definitions: ReadonlyArray<ToolDefinition>
  readonly prepare: (name: string, rawArguments: string) => Effect.Effect<PreparedCall, Rejection>
}

export interface ToolRegistryOptions {
  /** Values no call may carry and no result may return (the API key). */
  readonly secrets?: ReadonlyArray<string>
}

export const CONTAINS_KEY =
  "the arguments contain the API key; Mino never runs a call that carries it (it would be shown [redacted] and run with the key)"

export class ToolRegistry extends Context.Tag("mino/ToolRegistry")<ToolRegistry, ToolRegistryShape>() {
  static readonly make = (tools: ReadonlyArray<AnyTool>, options: ToolRegistryOptions = {}): ToolRegistryShape => {
    const byName = new Map(tools.map((tool) => [tool.definition.name, tool]))
    const secrets = Secrets.effective(options.secrets ?? [])
    const clean = (result: ToolResult.ToolResult) => ToolResult.redact(result, secrets)
    const prepare = (name: string, rawArguments: string): Effect.Effect<PreparedCall, Rejection> => {
      const tool = byName.get(name)
      if (tool === undefined) {
        return Effect.fail(rejection(clean(ToolResult.make("unknown_tool", `Mino has no tool named ${JSON.stringify(name)}.`))))
      }
      if (Secrets.inJson(rawArguments, secrets)) return Effect.fail(rejection(ToolResult.make("invalid_arguments", CONTAINS_KEY)))
      return tool.prepare(rawArguments).pipe(
        Effect.map((call) => ({ display: call.display, execute: Effect.map(call.execute, clean) })),
        Effect.mapError((refused) => rejection(clean(refused.result)))
      )
    }
    return { definitions: tools.map((tool) => tool.definition), prepare }
  }

  /** A registry of the given tools; the application's is built in `main.ts` with bash alone. */
  static readonly layer = (tools: ReadonlyArray<AnyTool>, options: ToolRegistryOptions = {}) =>
    Layer.succeed(ToolRegistry, ToolRegistry.make(tools, options))
}
