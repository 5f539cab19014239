/**
 * The conversation in memory, owned in one place: what replay sends to the
 * model, and a view of each open turn (its items so far, the call ids it used,
 * its calls still without a result).
 *
 * It changes only through `apply`, which takes a `Committed` record: a record
 * read back from the file, or one `DurableFile.append` has written and fsynced.
 * So memory advances only after the disk, by construction. Completed turns are
 * kept as the text of their lines (what the disk holds, secrets already
 * redacted), parsed again only when a request is built: a long session costs
 * about its own size in memory.
 */
import { acceptedCalls, type ResponseItem } from "../model/ResponseItem.js"
import { type SessionRecord, contextItems } from "./Records.js"

declare const CommittedBrand: unique symbol

/** A record that is on disk, with its line's text. Made only by `committed`. */
export interface Committed {
  readonly [CommittedBrand]: true
  readonly record: SessionRecord
  readonly text: string
}

/** For `DurableFile` and replay only: the record has been written and fsynced, or read back. */
export const committed = (record: SessionRecord, text: string): Committed => ({ record, text }) as Committed

/** A call of an open turn that has no result yet. */
export interface OpenCall {
  readonly callId: string
  readonly name: string
  /** The call's arguments as the model sent them (a JSON string for bash). */
  readonly arguments: string
  /** Whether its `tool_start` is on disk: it may have run. */
  readonly started: boolean
}

/** What a turn that has not ended holds so far. */
export interface OpenTurn {
  readonly turnId: string
  /** This turn's input items for the next request: the question, responses, results. */
  readonly items: ReadonlyArray<ResponseItem>
  /** Every call id the turn's responses used. */
  readonly callIds: ReadonlySet<string>
  /** The model responses saved so far (each one a request made). */
  readonly requests: number
  /** Its calls still without a result, in order. */
  readonly unfinished: ReadonlyArray<OpenCall>
  /** Whether any response of the turn asked for a tool. */
  readonly hadCalls: boolean
  /** The position of its first record among the lines read (for recovery). */
  readonly firstLine: number
}

interface CallState {
  readonly name: string
  readonly arguments: string
  started: boolean
  finished: boolean
}

class TurnState {
  readonly lines: Array<string> = []
  /** The items of `lines`, parsed from the same text: the turn is small, and each request needs them. */
  readonly items: Array<ResponseItem> = []
  readonly calls = new Map<string, CallState>()
  requests = 0
  askedForTools = false
  constructor(readonly turnId: string, readonly firstLine: number) {}

  view(): OpenTurn {
    const unfinished: Array<OpenCall> = []
    for (const [callId, call] of this.calls) {
      if (!call.finished) unfinished.push({ callId, name: call.name, arguments: call.arguments, started: call.started })
    }
    return {
      turnId: this.turnId,
      items: this.items.slice(),
      callIds: new Set(this.calls.keys()),
      requests: this.requests,
      unfinished,
      hadCalls: this.askedForTools,
      firstLine: this.firstLine
    }
  }
}

const itemsOf = (text: string): ReadonlyArray<ResponseItem> => contextItems(JSON.parse(text) as SessionRecord)

export class Conversation {
  /** The lines of completed turns that give the model context, in file order. */
  private readonly completed: Array<string> = []
  private readonly open = new Map<string, TurnState>()
  private lineCount = 0
  private turnCount = 0

  /** Applies a committed record. Only this changes the conversation. */
  apply(entry: Committed): void {
    const { record, text } = entry
    const position = this.lineCount++
    let turn = this.open.get(record.turn_id)
    if (record.type === "turn_end") {
      if (record.status === "completed" && turn !== undefined) for (const line of turn.lines) this.completed.push(line)
      this.open.delete(record.turn_id)
      this.turnCount += 1
      return
    }
    if (turn === undefined) {
      turn = new TurnState(record.turn_id, position)
      this.open.set(record.turn_id, turn)
    }
    switch (record.type) {
      case "user_input":
        turn.lines.push(text)
        turn.items.push(...contextItems(record))
        return
      case "model_response": {
        turn.lines.push(text)
        turn.items.push(...record.output)
        turn.requests += 1
        // Only the calls of a valid response belong to the turn: the Agent executes
        // nothing of an invalid one, and replay and recovery must agree with it.
        const accepted = acceptedCalls(record.output, new Set(turn.calls.keys()))
        if (accepted.length > 0) turn.askedForTools = true
        for (const call of accepted) {
          turn.calls.set(call.call_id, { name: call.name, arguments: call.arguments, started: false, finished: false })
        }
        return
      }
      case "tool_start": {
        const call = turn.calls.get(record.call_id)
        if (call === undefined) turn.calls.set(record.call_id, { name: record.name ?? "", arguments: "", started: true, finished: false })
        else call.started = true
        return
      }
      case "tool_result": {
        turn.lines.push(text)
        turn.items.push(...contextItems(record))
        const call = turn.calls.get(record.call_id)
        if (call === undefined) turn.calls.set(record.call_id, { name: record.name ?? "", arguments: "", started: false, finished: true })
        else call.finished = true
        return
      }
    }
  }

  /** Counts a line that is kept but is not one of the five records (for positions). */
  skip(): void {
    this.lineCount += 1
  }

  /** How many lines have been applied or skipped: the position of the next one. */
  get position(): number {
    return this.lineCount
  }

  /** The view of turn `turnId` while it is open. */
  openTurn(turnId: string): OpenTurn | undefined {
    return this.open.get(turnId)?.view()
  }

  /** Every turn without a `turn_end`, in the order they began. */
  openTurns(): ReadonlyArray<OpenTurn> {
    return [...this.open.values()].map((turn) => turn.view())
  }

  /** The model's context from completed turns, in file order. */
  history(): ReadonlyArray<ResponseItem> {
    return this.completed.flatMap(itemsOf)
  }

  /** The number of turns that have ended (any status). */
  get endedTurns(): number {
    return this.turnCount
  }

  /** The input of the next request of open turn `turnId`: completed turns, then the turn so far. */
  requestInput(turnId: string): ReadonlyArray<ResponseItem> {
    return [...this.history(), ...(this.open.get(turnId)?.items ?? [])]
  }
}
