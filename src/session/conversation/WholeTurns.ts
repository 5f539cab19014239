/**
 * Which completed turns the model is sent again: whole turns only. A turn is
 * whole when its question comes first and only once, each response is valid
 * (`ResponseItem.validate`, call ids fresh in the turn), every call of a response
 * has exactly one result before the next response, and its last response is
 * the answer (it asks for no tool). A turn the Agent wrote is always whole; a
 * file that lost, duplicated or reordered lines may hold one that is not, and
 * sending it would send a call without its output (refused by the API: "No
 * tool output found for function call") or an answer without its question.
 *
 * The one rule, applied record by record as a turn is replayed from the file or
 * committed while Mino runs, so memory and a restart agree.
 */
import * as Either from "effect/Either"
import { validate, type ResponseItem } from "../../protocol/ResponseItem.js"

const quoted = (callId: string): string => JSON.stringify(callId.length > 40 ? `${callId.slice(0, 40)}…` : callId)

export class TurnCheck {
  /** Why the turn is not whole: the first fault found. */
  private fault: string | undefined
  private questions = 0
  private responses = 0
  /** Every call id the turn's responses used. */
  private readonly calls = new Set<string>()
  /** The calls of the last response still without a result, in order. */
  private readonly pending = new Set<string>()
  /** Whether the last response asked for no tool. */
  private answered = false

  private fail(why: string): void {
    this.fault ??= why
  }

  question(): void {
    if (this.questions > 0) this.fail("it holds more than one question")
    else if (this.responses > 0) this.fail("its question comes after an answer")
    this.questions += 1
  }

  response(output: ReadonlyArray<ResponseItem>): void {
    if (this.questions === 0) this.fail("its question is missing")
    this.unanswered()
    this.responses += 1
    Either.match(validate(output, this.calls), {
      onLeft: (why) => this.fail(`one of its responses is invalid (${why})`),
      onRight: (calls) => {
        for (const call of calls) {
          this.calls.add(call.call_id)
          this.pending.add(call.call_id)
        }
        this.answered = calls.length === 0
      }
    })
  }

  result(callId: string): void {
    if (this.pending.delete(callId)) return
    this.fail(this.calls.has(callId) ? `call ${quoted(callId)} has more than one result` : `it holds a result for call ${quoted(callId)}, which it did not make`)
  }

  /** A line of the turn could not be read: the file no longer holds it whole. */
  lost(): void {
    this.fail("one of its lines could not be read")
  }

  /** The turn's end: undefined when it is whole, else why it is not (one line). */
  end(): string | undefined {
    if (this.questions === 0) this.fail("its question is missing")
    if (this.responses === 0) this.fail("it has no answer")
    this.unanswered()
    if (!this.answered) this.fail("it has no answer (its last response asked for a tool)")
    return this.fault
  }

  private unanswered(): void {
    const [first] = this.pending
    if (first !== undefined) this.fail(`call ${quoted(first)} has no result`)
  }
}
