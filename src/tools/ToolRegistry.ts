/**
 * The tools the Agent offers: their definitions for each request, and Prepare by
 * name. A name the registry does not know is answered with an `unknown_tool`
 * result and never reaches the approval prompt.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type AnyTool, type PreparedCall, type Rejection, rejection, type ToolDefinition } from "./Tool.js"
import * as ToolResult from "./ToolResult.js"

export interface ToolRegistryShape {
  readonly definitions: ReadonlyArray<ToolDefinition>
  readonly prepare: (name: string, rawArguments: string) => Effect.Effect<PreparedCall, Rejection>
}

export class ToolRegistry extends Context.Tag("mino/ToolRegistry")<ToolRegistry, ToolRegistryShape>() {
  static readonly make = (tools: ReadonlyArray<AnyTool>): ToolRegistryShape => {
    const byName = new Map(tools.map((tool) => [tool.definition.name, tool]))
    return {
      definitions: tools.map((tool) => tool.definition),
      prepare: (name, rawArguments) => {
        const tool = byName.get(name)
        return tool === undefined
          ? Effect.fail(rejection(ToolResult.make("unknown_tool", `Mino has no tool named ${JSON.stringify(name)}.`)))
          : tool.prepare(rawArguments)
      }
    }
  }

  /** A registry of the given tools; the application's is built in `main.ts` with bash alone. */
  static readonly layer = (tools: ReadonlyArray<AnyTool>) => Layer.succeed(ToolRegistry, ToolRegistry.make(tools))
}
