/**
 * The tools the Agent offers: their definitions for each request, and Prepare by
 * name. A name the registry does not know is answered with an `unknown_tool`
 * result and never reaches the approval prompt.
 *
 * The registry is also where the API key is kept away from the model (it takes
 * the key from the `Secrets` service): a call whose arguments contain it is
 * refused before approval (what would be shown `[redacted]` must never run with
 * the real key), and every result is redacted here, where it is made, so what is
 * saved, shown and sent is one and the same, and holds at most 65,536 bytes
 * (`ToolResult.capped`).
 *
 * A tool cannot take Mino down: a defect (a throw) in its Prepare becomes that
 * call's `invalid_arguments` result, and one in its Execute a `failed` result,
 * each with the message, so the turn closes normally and the chat goes on.
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { describe } from "../Described.js"
import { Secrets } from "../security/Secrets.js"
import { type AnyTool, type PreparedCall, type Rejection, rejection, type ToolDefinition } from "./Tool.js"
import * as ToolResult from "./ToolResult.js"

export interface ToolRegistryShape {
  readonly definitions: ReadonlyArray<ToolDefinition>
  readonly prepare: (name: string, rawArguments: string) => Effect.Effect<PreparedCall, Rejection>
}

export const CONTAINS_KEY =
  "the arguments contain the API key; Mino never runs a call that carries it (it would be shown [redacted] and run with the key)"

/** Two tools share a name: the model could not say which one it calls. */
export class DuplicateToolName extends Data.TaggedError("DuplicateToolName")<{ readonly name: string }> {
  override get message() {
    return `two tools are named ${JSON.stringify(this.name)}; tool names must be unique`
  }
}

export class ToolRegistry extends Context.Tag("mino/ToolRegistry")<ToolRegistry, ToolRegistryShape>() {
  /** A registry of `tools`; refused when two share a name. */
  static readonly make = (tools: ReadonlyArray<AnyTool>): Effect.Effect<ToolRegistryShape, DuplicateToolName, Secrets> =>
    Effect.gen(function*() {
      const secrets = yield* Secrets
      const byName = new Map<string, AnyTool>()
      for (const tool of tools) {
        if (byName.has(tool.definition.name)) return yield* new DuplicateToolName({ name: tool.definition.name })
        byName.set(tool.definition.name, tool)
      }
      // Redacted, then held to 64 KiB with a note if over it: any tool's result is saved and sent within the cap.
      const clean = (result: ToolResult.ToolResult) => ToolResult.capped(ToolResult.redact(result, secrets.redact), secrets.redactCut)
      const prepare = (name: string, rawArguments: string): Effect.Effect<PreparedCall, Rejection> => {
        const tool = byName.get(name)
        if (tool === undefined) {
          return Effect.fail(rejection(clean(ToolResult.make("unknown_tool", `Mino has no tool named ${JSON.stringify(name)}.`))))
        }
        if (secrets.inJson(rawArguments)) return Effect.fail(rejection(ToolResult.make("invalid_arguments", CONTAINS_KEY)))
        return guard(tool, rawArguments).pipe(
          Effect.map((call): PreparedCall => ({ display: call.display, execute: (cancel) => Effect.map(call.execute(cancel), clean) })),
          Effect.mapError((refused) => rejection(clean(refused.result)))
        )
      }
      return ToolRegistry.of({ definitions: tools.map((tool) => tool.definition), prepare })
    })

  /** A registry of the given tools; the application's (`Mino.layer`) holds bash. */
  static readonly layer = (tools: ReadonlyArray<AnyTool>) => Layer.effect(ToolRegistry, ToolRegistry.make(tools))
}

/** Prepare and Execute with their defects turned into the call's result; interruption passes through. */
const guard = (tool: AnyTool, rawArguments: string): Effect.Effect<PreparedCall, Rejection> =>
  Effect.suspend(() => tool.prepare(rawArguments)).pipe(
    Effect.catchAllDefect((defect) =>
      Effect.fail(rejection(ToolResult.make("invalid_arguments", `The ${tool.definition.name} tool failed to prepare this call: ${describe(defect)}`)))
    ),
    Effect.map((call): PreparedCall => ({
      display: call.display,
      execute: (cancel) => Effect.suspend(() => call.execute(cancel)).pipe(
        Effect.catchAllDefect((defect) =>
          Effect.succeed(ToolResult.make("failed", `The ${tool.definition.name} tool failed while running: ${describe(defect)}`))
        )
      )
    }))
  )

