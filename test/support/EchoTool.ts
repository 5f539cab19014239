/**
 * A test-only tool: it echoes its `text` argument. It runs no process, so its
 * result has no exit code, which shows the result format does not assume one.
 * `onExecute` lets a test look at the world (the session file) at execution time.
 */
import * as Effect from "effect/Effect"
import { erase, rejection, type Tool } from "../../src/tools/Tool.js"
import * as ToolResult from "../../src/tools/ToolResult.js"

export const make = (onExecute: (text: string) => void = () => {}) =>
  erase<string>({
    definition: {
      type: "function",
      name: "echo",
      description: "Echo the text back.",
      parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"], additionalProperties: false },
      strict: true
    },
    prepare: (rawArguments) => {
      const parsed = (() => {
        try {
          return JSON.parse(rawArguments) as unknown
        } catch {
          return undefined
        }
      })()
      const text = typeof parsed === "object" && parsed !== null && "text" in parsed ? parsed.text : undefined
      return typeof text === "string"
        ? Effect.succeed({ display: { tool: "echo", fields: [{ kind: "value", label: "Text", value: text }] }, operation: text })
        : Effect.fail(rejection(ToolResult.make("invalid_arguments", "echo needs a string field text")))
    },
    execute: (text) =>
      Effect.sync(() => {
        onExecute(text)
        return ToolResult.make("completed", text)
      })
  } satisfies Tool<string>)
