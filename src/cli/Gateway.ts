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
import * as Escape from "../security/Escape.js"
import * as SetApart from "../terminal/display/SetApart.js"
import * as Markdown from "../terminal/display/Markdown.js"
import { fromSignal, type StopSignalsShape } from "../StopSignals.js"
import * as ChatCommands from "./ChatCommands.js"
import * as Fold from "./Fold.js"
import type * as Slash from "./Slash.js"
import * as Wrap from "../terminal/display/Wrap.js"
import { Terminal, type TerminalShape } from "../terminal/Terminal.js"
import * as Tool from "../tools/Tool.js"
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
  /**
   * Run in the background once the first prompt is on the screen (the CLI
   * brings in the rest of Mino then, while the user types).
   */
  readonly onFirstPrompt?: Effect.Effect<void>
  /** The `/` commands that act on the chat (`Slash.ts`): the text each shows. Without it they are unknown here. */
  readonly commands?: (command: Slash.Command) => Effect.Effect<string>
  /** What Tab completes at `You> ` (`ChatCommands.COMPLETIONS`). */
  readonly completions?: ReadonlyArray<string>
}

/** How the chat went: with piped input, a failed turn makes the exit code 1. */
export interface ChatSummary {
  readonly failedTurns: number
}

export const run = (options: GatewayOptions) =>
  Effect.gen(function*() {
    const agent = yield* Agent
    const terminal = yield* Terminal
    const fitted = fitToScreen(terminal)
    for (const notice of agent.notices) yield* terminal.write(terminal.style("yellow", yield* fitted(Escape.forDisplay(notice))) + "\n")
    yield* terminal.write((yield* fitted(options.banner)) + "\n\n")

    const screen = yield* renderer
    let failedTurns = 0
    // A stop (Ctrl+C, a signal) or standard output closed by its reader (`mino | head`)
    // ends the chat; during a turn it is the turn's cancel cause, so the running
    // command's output so far is saved and the turn is closed `cancelled` on disk.
    const stopRequested = options.stops === undefined ? Effect.never : Effect.map(options.stops.requested, (stop) => stop.description)
    let inTurn = false
    let outputClosed = false
    // A terminal that hung up is the hangup SIGHUP reports, whichever of the two Mino hears first.
    const cancel = Effect.raceFirst(
      stopRequested,
      Effect.map(terminal.outputClosed, (how) => how === "hangup" ? fromSignal("SIGHUP").description : "standard output was closed")
    )
    const over = Effect.map(options.stops?.poll ?? Effect.succeedNone, (stop) => Option.isSome(stop) || outputClosed)
    const turn = (question: string) =>
      Effect.gen(function*() {
        inTurn = true
        const outcome = yield* agent.turn(question, screen.render, { cancel }).pipe(
          Effect.ensuring(Effect.zipRight(screen.stopSpinner, Effect.sync(() => void (inTurn = false))))
        )
        if (outcome.status === "failed") failedTurns++
      })
    /** What a line typed (or given on the command line) asks for: a turn, or a `/` command; false to end the chat. */
    const answer = (line: string) =>
      Effect.gen(function*() {
        const typed = ChatCommands.read(line)
        switch (typed._tag) {
          case "Exit":
            return false
          case "Blank":
            return true
          case "Help":
            yield* terminal.write(`\n${ChatCommands.HELP_TEXT}\n`)
            return true
          case "Unknown":
            yield* terminal.write(`\n${terminal.style("yellow", yield* fitted(ChatCommands.unknown(typed.word)))}\n\n`)
            return true
          default:
            yield* command(terminal, typed, options.commands)
            return true
          case "Ask":
            yield* terminal.write("\n")
            yield* turn(typed.question)
            return true
        }
      })
    const chat = Effect.gen(function*() {
      if (options.firstQuestion !== undefined) {
        yield* terminal.write(`${terminal.style("bold", "You> ")}${Escape.forLine(options.firstQuestion)}\n`)
        if (!(yield* answer(options.firstQuestion))) return
      }
      let prompts = 0
      while (!(yield* over)) {
        const history = yield* agent.questions
        // After the prompt is drawn: the readLine below draws it before it waits for a key.
        if (prompts++ === 0 && options.onFirstPrompt !== undefined) yield* Effect.fork(Effect.zipRight(afterThisTick, options.onFirstPrompt))
        // A stop at the prompt exits; end the prompt's line first.
        const line = yield* Effect.raceFirst(
          Effect.map(terminal.readLine(terminal.style("bold", "You> "), { history, ...(options.completions === undefined ? {} : { completions: options.completions }) }), Either.right),
          Effect.map(stopRequested, Either.left)
        ).pipe(Effect.onInterrupt(() => terminal.write("\n")))
        if (Either.isLeft(line)) return yield* terminal.write("\n")
        if (Option.isNone(line.right) || !(yield* answer(line.right.value))) return
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

/** A `/` command that acts on the chat or the screen: what it shows, broken to the screen's width. */
const command = (
  terminal: TerminalShape,
  typed: Extract<ChatCommands.Typed, { readonly _tag: "Misused" | "Clear" | Slash.Command["_tag"] }>,
  commands: GatewayOptions["commands"]
) =>
  Effect.gen(function*() {
    const fitted = fitToScreen(terminal)
    switch (typed._tag) {
      case "Misused":
        return yield* terminal.write(`\n${terminal.style("yellow", yield* fitted(typed.message))}\n\n`)
      case "Clear":
        // A screen to clear: the prompt comes back at its top. A pipe or TERM=dumb has none.
        if (terminal.animated) yield* terminal.write("\u001b[H\u001b[2J\u001b[3J")
        return
      default: {
        const shown = commands === undefined ? ChatCommands.unknown(`/${typed._tag.toLowerCase()}`) : yield* commands(typed)
        return yield* terminal.write(`\n${yield* fitted(shown)}\n\n`)
      }
    }
  })

/**
 * Resumes after the work already queued has run: Effect runs fibers in
 * microtasks, so the chat fiber draws its prompt and settles on waiting for a
 * key before a `setImmediate` fires.
 */
const afterThisTick = Effect.async<void>((resume) => {
  const timer = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(timer))
})

/** Text Mino wrote itself (the banner, a notice), broken at word boundaries to the terminal's width now. */
const fitToScreen = (terminal: TerminalShape) => (text: string) =>
  Effect.map(terminal.screen, (screen) => Wrap.wrap(text, Option.getOrUndefined(Option.map(screen, ({ columns }) => columns))))

/** Where the model's text stands in the response being drawn: whether it has begun, and in which output item. */
export interface Speech {
  readonly speaking: boolean
  readonly item: string | undefined
}

/** Before a response's first text. */
export const SILENT: Speech = { speaking: false, item: undefined }

/** What a text delta opens before its text: the answer (`Assistant> `), a new paragraph (another message item), or nothing. */
export type Opening = "answer" | "paragraph" | "nothing"

/**
 * What a text delta does to the speech, pure: the first opens the answer, one
 * of another output item a paragraph (a delta with no item stays in the one
 * being drawn), and a refusal's first text is marked `[refusal]`.
 */
export const speak = (speech: Speech, delta: { readonly item?: string; readonly refusal?: boolean }): {
  readonly speech: Speech
  readonly opens: Opening
  readonly marksRefusal: boolean
} => {
  const item = delta.item ?? speech.item
  const opens: Opening = !speech.speaking ? "answer" : item !== speech.item ? "paragraph" : "nothing"
  return { speech: { speaking: true, item }, opens, marksRefusal: opens !== "nothing" && delta.refusal === true }
}

/** A finished call's output as the screen shows it under its header: folded, escaped, ending in a newline; a denial's is already on screen. */
export const resultBody = (result: ToolResult.ToolResult, columns = 0): string => {
  const shown = result.status === "denied" ? "" : result.output
  // A command's output, like the model's text, cannot pass for Mino's own screen, on any row the terminal wraps it onto.
  return shown.length > 0 ? SetApart.whole(Escape.forDisplay(Fold.fold(shown)), false, columns).replace(/\n?$/, "\n") : ""
}

/** The screen's width, 0 when output is not a terminal. */
const columnsOf = (screen: Option.Option<{ readonly columns: number }>): number => Option.match(screen, { onNone: () => 0, onSome: (size) => size.columns })

/**
 * A renderer for the model's next message: drawn as Markdown on a terminal (plain
 * and escaped on TERM=dumb and in a pipe, without colour under NO_COLOR), broken
 * to the screen's width as it is when the message starts, after what opened it
 * (`Assistant> `, `[refusal] `) on its first row.
 */
const markdownFor = (terminal: TerminalShape, step: { readonly opens: Opening; readonly marksRefusal: boolean }) =>
  Effect.map(terminal.screen, (screen) =>
    Markdown.make({
      styled: terminal.animated,
      colour: terminal.decorated,
      columns: Option.getOrUndefined(Option.map(screen, ({ columns }) => columns)),
      column: (step.opens === "answer" ? "Assistant> ".length : 0) + (step.marksRefusal ? "[refusal] ".length : 0)
    }))

/** Turns Agent events into screen output, with a spinner while waiting. */
const renderer = Effect.gen(function*() {
  const terminal = yield* Terminal
  const fitted = fitToScreen(terminal)
  const spinner = yield* Ref.make(Option.none<Scope.CloseableScope>())

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
  const refusal = terminal.style("yellow", "[refusal]")

  // What the screen shows now: whether the cursor is mid-line, whether the model
  // has begun speaking in this response and in which output item, and the bounds
  // the running call was approved with (for its result header).
  let midLine = false
  let speech = SILENT
  let bounds: ToolResult.Bounds = {}

  const out = (text: string) =>
    Effect.suspend(() => {
      if (text.length > 0) midLine = !text.endsWith("\n")
      return terminal.write(text)
    })
  /** Starts what follows on a line of its own. */
  const ownLine = Effect.suspend(() => (midLine ? out("\n") : Effect.void))
  // The model's text, drawn as Markdown as it streams (`markdownFor`).
  let markdown = Markdown.make({ styled: terminal.animated, colour: terminal.decorated })
  const draw = (step: Markdown.Rendered) => {
    markdown = step.renderer
    return out(step.output)
  }
  /** Writes what the renderer still holds (the last line's end), before anything else is shown. */
  const endText = Effect.suspend(() => draw(Markdown.end(markdown)))

  const render = (event: AgentEvent): Effect.Effect<void> =>
    Effect.gen(function*() {
      if (event._tag !== "ModelWaiting" && event._tag !== "ToolRunning") yield* stopSpinner
      if (event._tag !== "TextDelta") yield* endText
      switch (event._tag) {
        case "ModelWaiting":
          speech = SILENT
          return yield* startSpinner("waiting for the model")
        case "ModelRetrying":
          // One line per retry, then the wait goes on.
          yield* ownLine
          yield* out(terminal.style("yellow", yield* fitted(Escape.forLine(event.message))) + "\n")
          return yield* startSpinner("waiting for the model")
        case "ModelAdapted":
          // One dim line (broken at word boundaries, like the retry line): the request goes on, changed.
          yield* ownLine
          yield* out(terminal.style("dim", yield* fitted(Escape.forLine(event.message))) + "\n")
          return yield* startSpinner("waiting for the model")
        case "TextDelta": {
          const step = speak(speech, event)
          speech = step.speech
          if (step.opens === "answer") yield* out(`${assistant} `)
          // Separate message items of one response are separate paragraphs.
          if (step.opens === "paragraph") {
            yield* endText
            yield* out(midLine ? "\n\n" : "\n")
          }
          if (step.marksRefusal) yield* out(`${refusal} `)
          if (step.opens !== "nothing") markdown = yield* markdownFor(terminal, step)
          return yield* draw(Markdown.feed(markdown, event.text))
        }
        case "ModelResponded":
          return yield* speech.speaking ? ownLine : out(`${assistant}\n`)
        case "ToolRunning":
          bounds = Tool.bounds(event.display)
          return yield* startSpinner("running")
        case "ToolFinished":
          yield* ownLine
          yield* out(`\n${terminal.style("dim", ToolResult.header(event.result, bounds))}\n${resultBody(event.result, columnsOf(yield* terminal.screen))}\n`)
          bounds = {}
          return
        case "TurnEnded":
          if (event.status === "completed") return yield* out("\n")
          // A failure or cancellation never continues the model's line.
          yield* ownLine
          return yield* out(terminal.style("red", yield* fitted(`Turn ${event.status}: ${Escape.forLine(event.reason ?? "")}`)) + "\n\n")
      }
    })

  return { render, stopSpinner }
})
