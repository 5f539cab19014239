// Run one Mino turn from another Effect program, with your own tool and approval policy.
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Agent, Approver, erase, ModelClient, SessionStore, ToolRegistry, ToolResult } from "mino"

// A tool of your own: Definition, Prepare (validate, executes nothing), Execute.
const shout = erase<string>({
  definition: {
    type: "function",
    name: "shout",
    description: "Return the text in capitals.",
    parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"], additionalProperties: false },
    strict: true
  },
  prepare: (raw) => {
    const text: unknown = JSON.parse(raw)?.text
    return typeof text === "string"
      ? Effect.succeed({ display: { tool: "shout", fields: [{ label: "Text", value: text }] }, operation: text })
      : Effect.fail({ _tag: "Rejection", result: ToolResult.make("invalid_arguments", "text must be a string") })
  },
  execute: (text) => Effect.succeed(ToolResult.make("completed", text.toUpperCase()))
})

export const askOnce = (question: string, config: { apiKey: string; baseURL?: string; home: string }) =>
  Effect.gen(function*() {
    const agent = yield* Agent
    let answer = ""
    const outcome = yield* agent.turn(question, (event) =>
      Effect.sync(() => {
        if (event._tag === "TextDelta") answer += event.text
      }))
    return { status: outcome.status, answer }
  }).pipe(
    Effect.provide(
      Agent.layer({ model: "gpt-5.1", instructions: "Use the shout tool when asked to shout." }).pipe(
        Layer.provide(ModelClient.layer({ apiKey: config.apiKey, baseURL: config.baseURL })),
        Layer.provide(SessionStore.layer({ home: config.home })),
        Layer.provide(ToolRegistry.layer([shout])),
        Layer.provide(Approver.layerStatic((display) => display.tool === "shout")),
        Layer.provide(NodeFileSystem.layer)
      )
    )
  )
