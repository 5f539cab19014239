/**
 * Approval of one prepared call. The Approver sees only a copy of the call's
 * display fields; it cannot change what runs. Only `y` or `yes` (any case,
 * surrounding spaces ignored) approves; anything else, Enter, and end of input
 * deny. Each call gets its own decision: on a terminal, everything typed before
 * the prompt appeared is discarded rather than taken as the answer. With piped
 * input the prompt reads nothing (the next line is the next question) and
 * denies; end of input at the prompt ends the turn `cancelled`.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Escape from "../terminal/Escape.js"
import { Terminal } from "../terminal/Terminal.js"
import type { ToolDisplay } from "../tools/Tool.js"

export type Decision =
  | { readonly approved: true }
  /** `endTurn`: the user left (end of input); the turn ends `cancelled` and nothing more is asked of the model. */
  | { readonly approved: false; readonly reason: string; readonly endTurn?: boolean }

export interface ApproverShape {
  readonly decide: (display: ToolDisplay) => Effect.Effect<Decision>
}

export const PROMPT = "Approve this operation? [y/N] "

export const isApproval = (answer: string): boolean => /^(y|yes)$/i.test(answer.trim())

/** The approval screen: the tool, then each field, values escaped so nothing can hide. */
export const render = (display: ToolDisplay): string =>
  [
    `[Tool: ${Escape.forLine(display.tool)}]`,
    ...display.fields.flatMap(({ label, value }) =>
      typeof value === "string"
        ? [`${label}: ${Escape.forLine(value)}`]
        : [`${label}:`, ...value.map((entry) => `  ${Escape.forLine(entry)}`)]
    )
  ].join("\n") + "\n"

export class Approver extends Context.Tag("mino/Approver")<Approver, ApproverShape>() {
  /** Asks on the terminal, reading the answer from the same input as the chat. */
  static readonly layer = Layer.effect(
    Approver,
    Effect.map(Terminal, (terminal) =>
      Approver.of({
        decide: (display) =>
          Effect.gen(function*() {
            yield* terminal.write(render(display))
            if (!terminal.interactive) {
              yield* terminal.write(`${PROMPT}\nDenied: standard input is not a terminal, so no command can be approved.\n`)
              return { approved: false, reason: "standard input is not a terminal" } as const
            }
            const answer = yield* terminal.readLine(PROMPT, { fresh: true })
            if (Option.isNone(answer)) {
              return { approved: false, reason: "end of input at the approval prompt", endTurn: true } as const
            }
            return isApproval(answer.value)
              ? ({ approved: true } as const)
              : ({ approved: false, reason: "the user did not approve" } as const)
          })
      })
    )
  )

  /** Decides without asking: for tests and for programs with their own policy. */
  static readonly layerStatic = (decide: (display: ToolDisplay) => boolean) =>
    Layer.succeed(
      Approver,
      Approver.of({
        decide: (display) =>
          Effect.sync(() =>
            decide(structuredClone(display)) ? { approved: true } : { approved: false, reason: "denied by policy" }
          )
      })
    )
}
