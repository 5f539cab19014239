/**
 * The terminal side of Mino: it reads questions, shows what the Agent reports,
 * and (through the Approver) asks for decisions. It never opens session files or
 * runs commands; a whole turn, approvals included, finishes before the next
 * question is read.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import { Agent } from "../agent/Agent.js"
import type { AgentEvent } from "../agent/AgentEvent.js"
import * as Escape from "../terminal/Escape.js"
import { Terminal } from "../terminal/Terminal.js"
import * as ToolResult from "../tools/ToolResult.js"

export interface GatewayOptions {
  /** The line shown once before the first prompt. */
  readonly banner: string
}

export const run = (options: GatewayOptions) =>
  Effect.gen(function*() {
    const agent = yield* Agent
    const terminal = yield* Terminal
    for (const notice of agent.notices) yield* terminal.write(terminal.style("yellow", notice) + "\n")
    yield* terminal.write(options.banner + "\n\n")

    const screen = yield* renderer
    while (true) {
      // Ctrl+C at the prompt exits; end the prompt's line first.
      const line = yield* terminal.readLine(terminal.style("bold", "You> ")).pipe(Effect.onInterrupt(() => terminal.write("\n")))
      if (Option.isNone(line)) return
      if (line.value.trim().length === 0) continue
      yield* terminal.write("\n")
      yield* agent.turn(line.value, screen.render).pipe(Effect.ensuring(screen.stopSpinner))
    }
  })

/** Turns Agent events into screen output, with a spinner while waiting. */
const renderer = Effect.gen(function*() {
  const terminal = yield* Terminal
  const spinner = yield* Ref.make(Option.none<Scope.CloseableScope>())
  const speaking = yield* Ref.make(false)

  const stopSpinner = Effect.flatMap(Ref.getAndSet(spinner, Option.none()), (open) =>
    Option.match(open, { onNone: () => Effect.void, onSome: (scope) => Scope.close(scope, Exit.void) }))
  const startSpinner = (label: string) =>
    Effect.gen(function*() {
      yield* stopSpinner
      const scope = yield* Scope.make()
      yield* Scope.extend(terminal.spinner(label), scope)
      yield* Ref.set(spinner, Option.some(scope))
    })
  const assistant = terminal.style("cyan", "Assistant>")

  const render = (event: AgentEvent): Effect.Effect<void> =>
    Effect.gen(function*() {
      if (event._tag !== "ModelWaiting" && event._tag !== "ToolRunning") yield* stopSpinner
      switch (event._tag) {
        case "ModelWaiting":
          yield* Ref.set(speaking, false)
          return yield* startSpinner("waiting for the model")
        case "ModelRetrying":
          // One line per retry, then the wait goes on.
          yield* terminal.write(terminal.style("yellow", Escape.forLine(event.message)) + "\n")
          return yield* startSpinner("waiting for the model")
        case "TextDelta":
          if (!(yield* Ref.getAndSet(speaking, true))) yield* terminal.write(`${assistant} `)
          return yield* terminal.write(Escape.forDisplay(event.text))
        case "ModelResponded":
          return yield* terminal.write((yield* Ref.get(speaking)) ? "\n" : `${assistant}\n`)
        case "ToolRunning":
          return yield* startSpinner("running")
        case "ToolFinished": {
          const output = event.result.output.length > 0 ? Escape.forDisplay(event.result.output).replace(/\n?$/, "\n") : ""
          return yield* terminal.write(`\n${terminal.style("dim", ToolResult.header(event.result))}\n${output}\n`)
        }
        case "TurnEnded":
          return yield* event.status === "completed"
            ? terminal.write("\n")
            : terminal.write(terminal.style("red", `Turn ${event.status}: ${Escape.forLine(event.reason ?? "")}`) + "\n\n")
      }
    })

  return { render, stopSpinner }
})
