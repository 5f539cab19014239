// Run one Mino turn from another Effect program, with your own tool and approval policy.
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { Agent, Approver, erase, Mino, rejection, ToolResult } from "mino-agent"

// The model's arguments are untrusted JSON text: decode them, never assume their shape.
const ShoutArguments = Schema.parseJson(Schema.Struct({ text: Schema.String }))

// A tool of your own: Definition, Prepare (validate, executes nothing), Execute.
const shout = erase<string>({
  definition: {
    type: "function",
    name: "shout",
    description: "Return the text in capitals.",
    parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"], additionalProperties: false },
    strict: true
  },
  prepare: (raw) =>
    Schema.decodeUnknown(ShoutArguments)(raw).pipe(
      Effect.mapError((error) => rejection(ToolResult.make("invalid_arguments", error.message))),
      Effect.map(({ text }) => ({ display: { tool: "shout", fields: [{ kind: "value", label: "Text", value: text }] }, operation: text }))
    ),
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
    // The key is given once: it is sent to the model, and redacted from the session
    // file, every tool result and every error; a call that carries it never runs.
    Effect.provide(Mino.layer({
      apiKey: config.apiKey,
      endpoint: { baseURL: config.baseURL },
      model: "gpt-5.1",
      instructions: "Use the shout tool when asked to shout.",
      session: { home: config.home },
      tools: [shout],
      approver: Approver.layerStatic((display) => display.tool === "shout")
    }))
  )
