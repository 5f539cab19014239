/**
 * The terminal side of Mino: it reads questions, shows what the Agent reports,
 * and (through the Approver) asks for decisions. It never opens session files or
 * runs commands; a whole turn, approvals included, finishes before the next
 * question is read.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import { Agent } from "../agent/Agent.js"
import type { AgentEvent } from "../agent/AgentEvent.js"
import * as Escape from "../terminal/Escape.js"
import type { StopSignalsShape } from "../StopSignals.js"
import { Terminal } from "../terminal/Terminal.js"
import * as ToolResult from "../tools/ToolResult.js"

export interface GatewayOptions {
  /** The line shown once before the first prompt. */
  readonly banner: string
  /** A question from the command line, asked as the first turn (shown as if typed). */
  readonly firstQuestion?: string
  /**
   * Where stops are requested (Ctrl+C, SIGTERM...): at the prompt the chat ends;
   * during a turn the turn is cancelled with the cause, then the chat ends. The
   * caller exits with the request's code.
   */
  readonly stops?: StopSignalsShape
}

/** How the chat went: with piped input, a failed turn makes the exit code 1. */
export interface ChatSummary {
  readonly failedTurns: number
}

/** Typed at `You> `, ends the chat; it is never sent to the model. */
export const EXIT_COMMAND = "/exit"

export const run = (options: GatewayOptions) =>
  Effect.gen(function*() {
    const agent = yield* Agent
    const terminal = yield* Terminal
    for (const notice of agent.notices) yield* terminal.write(terminal.style("yellow", notice) + "\n")
    yield* terminal.write(options.banner + "\n\n")

    const screen = yield* renderer
    let failedTurns = 0
    // A stop (Ctrl+C, a signal) or standard output closed by its reader (`mino | head`)
    // ends the chat; during a turn it is the turn's cancel cause, so the running
    // command's output so far is saved and the turn is closed `cancelled` on disk.
    const stopRequested = options.stops === undefined ? Effect.never : Effect.map(options.stops.requested, (stop) => stop.description)
    let inTurn = false
    let outputClosed = false
    const cancel = Effect.raceFirst(stopRequested, Effect.as(terminal.outputClosed, "standard output was closed"))
    const over = Effect.map(options.stops?.poll ?? Effect.succeedNone, (stop) => Option.isSome(stop) || outputClosed)
    const turn = (question: string) =>
      Effect.gen(function*() {
        inTurn = true
        const outcome = yield* agent.turn(question, screen.render, { cancel }).pipe(
          Effect.ensuring(Effect.zipRight(screen.stopSpinner, Effect.sync(() => void (inTurn = false))))
        )
        if (outcome.status === "failed") failedTurns++
      })
    const chat = Effect.gen(function*() {
      if (options.firstQuestion !== undefined) {
        yield* terminal.write(`${terminal.style("bold", "You> ")}${Escape.forLine(options.firstQuestion)}\n\n`)
        yield* turn(options.firstQuestion)
      }
      while (!(yield* over)) {
        const history = yield* agent.questions
        // A stop at the prompt exits; end the prompt's line first.
        const line = yield* Effect.raceFirst(
          Effect.map(terminal.readLine(terminal.style("bold", "You> "), { history }), Either.right),
          Effect.map(stopRequested, Either.left)
        ).pipe(Effect.onInterrupt(() => terminal.write("\n")))
        if (Either.isLeft(line)) return yield* terminal.write("\n")
        if (Option.isNone(line.right) || line.right.value.trim() === EXIT_COMMAND) return
        if (line.right.value.trim().length === 0) continue
        yield* terminal.write("\n")
        yield* turn(line.right.value)
      }
    })
    const chatting = yield* Effect.fork(chat)
    // At the prompt nothing is running: closed output ends the chat at once.
    yield* Effect.fork(Effect.zipRight(
      terminal.outputClosed,
      Effect.suspend(() => {
        outputClosed = true
        return inTurn ? Effect.void : Fiber.interrupt(chatting)
      })
    ))
    const exit = yield* Fiber.await(chatting).pipe(Effect.onInterrupt(() => Fiber.interrupt(chatting)))
    if (!Exit.isInterrupted(exit)) yield* exit
    return { failedTurns } satisfies ChatSummary
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
