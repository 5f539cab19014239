/**
 * Approval of one prepared call. The Approver sees only a copy of the call's
 * display fields; it cannot change what runs. Only `y` or `yes` (any case,
 * surrounding spaces ignored), typed at the prompt, approves; anything else,
 * Enter alone, an answer holding pasted text, and end of input deny, and the
 * screen and the model's result say why in one sentence.
 *
 * Each call gets its own decision: on a terminal, everything typed before the
 * prompt could be answered is discarded rather than taken as the answer (see
 * `Terminal.ask`), and the prompt can only be answered once the terminal has
 * reported that it drew the screen (`terminal/input/Sighting`); a cursor
 * report nobody asked for, arriving meanwhile, denies the call. With piped input the prompt reads nothing (the next line is
 * the next question) and denies; end of input at the prompt ends the turn
 * `cancelled`.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Wrap from "../terminal/display/Wrap.js"
import * as Escape from "../security/Escape.js"
import { type Answer, Terminal } from "../terminal/Terminal.js"
import type { ToolDisplay } from "../tools/Tool.js"
import * as ApprovalScreen from "./ApprovalScreen.js"

export type Decision =
  | { readonly approved: true }
  /**
   * `reason`: one sentence, shown on the screen and sent to the model as the
   * call's `denied` result. `endTurn`: the user left (end of input); the turn
   * ends `cancelled` with `reason` and nothing more is asked of the model.
   */
  | { readonly approved: false; readonly reason: string; readonly endTurn?: boolean }

export interface ApproverShape {
  readonly decide: (display: ToolDisplay) => Effect.Effect<Decision>
}

export const PROMPT = "Approve this operation? [y/N] "

export const isApproval = (answer: string): boolean => /^(y|yes)$/i.test(answer.trim())

/** A report the terminal was not asked for came while the screen was on its way: typed by someone or something else. */
export const FORGED_REPORT =
  "Denied: the terminal's input held a cursor position report Mino had not asked for while the question was on its way to the screen, so no answer could be trusted."

export const NOT_A_TERMINAL = "Denied: standard input is not a terminal, so no command can be approved."

/** An answer quoted in a denial: escaped, and cut at 40 characters. */
const quoted = (text: string): string => {
  const chars = Array.from(text.trim())
  return Escape.jsonString(chars.slice(0, 40).join("")) + (chars.length > 40 ? " …" : "")
}

/** What an answer typed at the prompt decides. */
export const judge = (answer: Answer): Decision => {
  if (answer.forgedReport === true) return { approved: false, reason: FORGED_REPORT }
  if (answer.pasted) {
    return { approved: false, reason: "Denied: the answer held pasted text; only y or yes typed at the prompt approves." }
  }
  if (isApproval(answer.text)) return { approved: true }
  if (answer.text.trim() === "") return { approved: false, reason: "Denied: no answer was typed (Enter alone); only y or yes approves." }
  return { approved: false, reason: `Denied: the answer was ${quoted(answer.text)}; only y or yes approves.` }
}

export class Approver extends Context.Tag("mino/Approver")<Approver, ApproverShape>() {
  /** Asks on the terminal, reading the answer from the same input as the chat. */
  static readonly layer = Layer.effect(
    Approver,
    Effect.map(Terminal, (terminal) =>
      Approver.of({
        decide: (display) =>
          Effect.gen(function*() {
            const screen = yield* terminal.screen
            const shown = ApprovalScreen.render(display, {
              ...Option.match(screen, { onNone: () => ({}), onSome: ({ columns }) => ({ columns }) }),
              emphasis: (text) => terminal.style("bold", text)
            })
            // A denial is a sentence Mino wrote: broken at word boundaries to the terminal's width.
            const fitted = (line: string) => Wrap.wrap(line, Option.getOrUndefined(Option.map(screen, ({ columns }) => columns)))
            const repeat = ApprovalScreen.reminder(display, screen)
            const question = shown + (repeat === undefined ? "" : terminal.style("bold", repeat))
            if (!terminal.interactive) {
              yield* terminal.write(`${question}${PROMPT}\n${fitted(NOT_A_TERMINAL)}\n`)
              return { approved: false, reason: NOT_A_TERMINAL } as const
            }
            const answer = yield* terminal.ask(question, PROMPT)
            if (Option.isNone(answer)) {
              return { approved: false, reason: "end of input at the approval prompt", endTurn: true } as const
            }
            const decision = judge(answer.value)
            if (!decision.approved) yield* terminal.write(fitted(decision.reason) + "\n")
            return decision
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
            decide(structuredClone(display))
              ? { approved: true }
              : { approved: false, reason: "Denied by the approval policy." }
          )
      })
    )
}
