/**
 * The conversation's state in memory, owned in one place: the completed turns
 * the model is sent again (kept serialised, in `History`), the turns left out
 * of that and why, every question (the prompt's ↑ history), and a view of each
 * open turn (its items so far, the call ids it used, its calls still without a
 * result).
 *
 * It changes only through `apply`, which takes a `Committed` record: a record
 * read back from the file, or one `DurableFile.append` has written and fsynced.
 * So memory advances only after the disk, by construction. A completed turn
 * joins the history only when it is whole (`WholeTurns.ts`), the same rule
 * whether it was read from the file or committed while Mino runs. Nothing here
 * spreads, recurses over or applies a function to data whose size comes from
 * the file, but for a record that holds the key in use (`keyless`): it is
 * redacted string by string, as a record is before it is saved.
 */
import * as History from "../../model/request/History.js"
import { grown, TextList, type Texts } from "../../TextList.js"
import { acceptedCalls, functionCallOutput, type ResponseItem, userMessage } from "../../protocol/ResponseItem.js"
import { isToolResult, type ModelResponse, SET_ASIDE_TYPE, type SessionRecord, type ToolResultRecord, type UserInput } from "../records/Records.js"
import type { Line } from "../records/SessionReader.js"
import { TurnCheck } from "./WholeTurns.js"
import * as Json from "../../Json.js"
import { REDACTED, redactStrings, type SecretsShape } from "../../security/Secrets.js"

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
  /** The tool's name; undefined when no readable record names it. */
  readonly name: string | undefined
  /** The call's arguments as the model sent them (a JSON string for bash); undefined when its response could not be read. */
  readonly arguments: string | undefined
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
  /** Whether any response of the turn asked for a tool, or any call of it started: a tool turn. */
  readonly toolTurn: boolean
  /** The position of its first record among the lines read (for recovery). */
  readonly firstLine: number
}

/** A completed turn kept in the file but not sent to the model. */
export interface LeftOut {
  readonly turnId: string
  /** Its number among the conversation's turns, from 1. */
  readonly number: number
  readonly question: string | undefined
  readonly time: string | undefined
  /** Why it is not whole (one line). */
  readonly reason: string
}

interface CallState {
  name: string | undefined
  arguments: string | undefined
  started: boolean
  finished: boolean
}

/**
 * The JSON text of `record[key]`: the parsed value stringified, never a slice of
 * the line at a place it is assumed to be (a line with the key twice, or a space
 * after its colon, parses to one value and holds another). The history copies it
 * into its own bytes (`TextList`), so a slice of the line would share nothing, and
 * searching the line for it cost a fifth of restoring a long session.
 */
const savedText = (record: Readonly<Record<string, unknown>>, key: string): string => JSON.stringify(record[key])

/** The JSON text of a record's question, output or result, the one part of it of any size. */
const savedOf = (record: SessionRecord): string | undefined =>
  record.type === "user_input" ? savedText(record, "text") : record.type === "model_response" ? savedText(record, "output") : record.type === "tool_result" ? savedText(record, "result") : undefined

/** Whether a record's other strings (its ids, a call's name, a turn's end) hold the key: each read by name, no record walked. */
const idsHold = (record: SessionRecord, { contains }: KeyReading): boolean => {
  if (contains(record.turn_id) || (record.time !== undefined && contains(record.time))) return true
  switch (record.type) {
    case "user_input":
      return false
    case "model_response":
      return record.response_id !== undefined && contains(record.response_id)
    case "tool_start":
    case "tool_result":
      return contains(record.call_id) || (record.name !== undefined && contains(record.name))
    case "turn_end":
      return contains(record.status) || (record.reason !== undefined && contains(record.reason))
  }
}

/** What the conversation needs of `Secrets` to keep the key in use out of what it read. */
export type KeyReading = Pick<SecretsShape, "contains" | "inStringified" | "inStringifiedTwice" | "redact">

/**
 * `record` with the key in use taken out of every string (`redactStrings`), and
 * out of the JSON text of its question, output or result where that text alone
 * spells it (a key holding `"` or `\`, across strings or escapes): taken out of
 * the text as `Records.encode` takes it out of a line. When that leaves the text
 * unreadable, the part is replaced by `[redacted]` (no items, a failed result)
 * and `unsendable` says why. `saved` is the part's JSON text (`savedText`).
 */
export const withoutKey = (record: SessionRecord, secrets: KeyReading): { readonly record: SessionRecord; readonly saved: string | undefined; readonly unsendable?: string } => {
  const clean = redactStrings(record, secrets.redact)
  const saved = savedOf(clean)
  // A result's JSON text is sent as a JSON string: escaped a second time, it can spell a key holding `\`; its output is then not sent.
  if (clean.type === "tool_result" && saved !== undefined && !secrets.contains(saved) && secrets.inStringifiedTwice(saved)) {
    const result = { status: clean.result.status, output: REDACTED }
    return { record: { ...clean, result }, saved: JSON.stringify(result) }
  }
  if (saved === undefined || !secrets.contains(saved)) return { record: clean, saved }
  const again = Json.parse(secrets.redact(saved))
  const field = clean.type === "user_input" ? "text" : clean.type === "model_response" ? "output" : "result"
  const fits = clean.type === "user_input"
    ? typeof again === "string"
    : clean.type === "model_response"
    ? Array.isArray(again) && again.every((item) => typeof item === "object" && item !== null && !Array.isArray(item))
    : isToolResult(again)
  if (fits) return { record: { ...clean, [field]: again } as SessionRecord, saved: JSON.stringify(again) }
  const lost = clean.type === "user_input" ? REDACTED : clean.type === "model_response" ? [] : { status: "failed", output: REDACTED }
  return { record: { ...clean, [field]: lost } as SessionRecord, saved: JSON.stringify(lost), unsendable: "it holds the API key in a form that cannot be taken out of it" }
}

const isFunctionCall = (item: ResponseItem): boolean => item["type"] === "function_call"

/** The request items a committed record contributes (none for `tool_start`, `turn_end`). */
const itemsOf = (record: SessionRecord): ReadonlyArray<ResponseItem> => {
  switch (record.type) {
    case "user_input":
      return [userMessage(record.text)]
    case "model_response":
      return record.output
    case "tool_result":
      return [functionCallOutput(record.call_id, JSON.stringify(record.result))]
    default:
      return []
  }
}

class TurnState {
  /** The turn's records that give it items, for its next request (made into items when asked: the turn is small). */
  readonly records: Array<SessionRecord> = []
  /** The same items as request text, a piece per record, for the history once the turn completes. */
  readonly pieces: Array<History.Piece> = []
  readonly calls = new Map<string, CallState>()
  readonly check = new TurnCheck()
  requests = 0
  toolTurn = false
  question: string | undefined
  time: string | undefined
  /** Set when a record's items cannot be written as request text. */
  unwritable: string | undefined
  /** Its questions: each one's number among the conversation's questions, and its place among the turn's pieces. */
  readonly asked: Array<{ readonly question: number; readonly piece: number; readonly json: string }> = []
  /** `number`: its place among the conversation's turns in the order they begin, from 1 (as `mino log` numbers them). */
  constructor(readonly turnId: string, readonly firstLine: number, readonly number: number) {}

  /**
   * Adds a record's items; `saved` is the JSON text of its question, output or
   * result (`savedText`).
   */
  add(record: UserInput | ModelResponse | ToolResultRecord, saved: string): void {
    this.records.push(record)
    try {
      switch (record.type) {
        case "user_input":
          this.pieces.push(History.question(record.text, saved))
          return
        case "model_response":
          this.pieces.push(History.items(record.output, saved.slice(1, -1)))
          return
        case "tool_result":
          this.pieces.push(History.result(record.call_id, record.result, saved))
          return
      }
    } catch {
      this.unwritable ??= "its items cannot be written as JSON"
    }
  }

  call(callId: string): CallState {
    let call = this.calls.get(callId)
    if (call === undefined) {
      call = { name: undefined, arguments: undefined, started: false, finished: false }
      this.calls.set(callId, call)
    }
    return call
  }

  view(): OpenTurn {
    const unfinished: Array<OpenCall> = []
    for (const [callId, call] of this.calls) {
      if (!call.finished) unfinished.push({ callId, name: call.name, arguments: call.arguments, started: call.started })
    }
    return {
      turnId: this.turnId,
      items: this.records.flatMap(itemsOf),
      callIds: new Set(this.calls.keys()),
      requests: this.requests,
      unfinished,
      toolTurn: this.toolTurn,
      firstLine: this.firstLine
    }
  }
}

/** In `ConversationState`'s question places: a question kept apart from the history (the rest of the number: its entry). */
const KEPT_APART = 0x80000000
/** In `ConversationState`'s question places: a question of a turn still open, kept with the turn. */
const OPEN = 0xffffffff

/** Texts read through functions: a live view. */
class Live implements Texts {
  constructor(private readonly count: () => number, readonly at: (index: number) => string | undefined) {}
  get length(): number {
    return this.count()
  }
}

export class ConversationState {
  /** `secrets`: the key in use, taken out of every record read (`keyless`); none for a conversation whose records hold no key to hide. */
  constructor(private readonly secrets?: KeyReading) {}

  /**
   * Every question is kept once, as its JSON string, for ↑: a turn's question in the
   * history's request text when the turn joins it, the others (their turn left out)
   * apart, outside the heap, and those of a turn still open with the turn.
   * `questionPlaces`: by question, its piece in the history, KEPT_APART and its
   * entry in `questionTexts`, or OPEN.
   */
  private questionPlaces: Uint32Array = new Uint32Array(256)
  private questionCount = 0
  private readonly questionTexts = new TextList()
  /** The completed, whole turns in the form a request needs. */
  readonly history = new History.History()
  /** Completed turns left out of the history, in file order. */
  readonly leftOut: Array<LeftOut> = []
  private readonly open = new Map<string, TurnState>()
  /** The open turn of the last record applied, if it is still open. */
  private last: TurnState | undefined
  private lineCount = 0
  private turnCount = 0
  /** Turns begun (a stray `turn_end` counts as a turn of its own), for their numbers. */
  private begun = 0
  /** Turns an unreadable line named before any of their records was read. */
  private readonly damaged = new Set<string>()

  /** Applies a committed record. Only this changes the conversation. */
  apply(entry: Committed): void {
    this.applyRecord(entry.record)
  }

  /** `apply`, for a record known to be on disk (read back from the file): no `Committed` made for each line. */
  private applyRecord(read: SessionRecord): void {
    const { record, saved, unsendable } = this.keyless(read)
    const position = this.lineCount++
    // A turn's records follow one another: its id is compared with the last one's before the map is asked (a hash of a new string).
    const last = this.last
    let turn = last !== undefined && last.turnId === record.turn_id ? last : this.open.get(record.turn_id)
    if (record.type === "turn_end") {
      this.turnCount += 1
      if (turn === undefined) {
        this.begun += 1
        return
      }
      this.open.delete(record.turn_id)
      this.last = undefined
      this.place(turn, record.status === "completed" ? this.complete(turn) : undefined)
      return
    }
    if (turn === undefined) {
      turn = new TurnState(record.turn_id, position, ++this.begun)
      if (this.damaged.delete(record.turn_id)) turn.check.lost()
      this.open.set(record.turn_id, turn)
    }
    this.last = turn
    if (unsendable !== undefined) turn.unwritable ??= unsendable
    switch (record.type) {
      case "user_input": {
        const json = saved ?? savedText(record, "text")
        const question = this.questionCount++
        this.questionPlaces = grown(this.questionPlaces, question)
        this.questionPlaces[question] = OPEN
        turn.asked.push({ question, piece: turn.pieces.length, json })
        turn.question ??= record.text
        turn.time ??= record.time
        turn.check.question()
        turn.add(record, json)
        return
      }
      case "model_response": {
        turn.check.response(record.output)
        turn.add(record, saved ?? savedText(record, "output"))
        turn.requests += 1
        // Only the calls of a valid response belong to the turn: the Agent executes
        // nothing of an invalid one, and replay and recovery must agree with it.
        // A response's calls are its function calls: one without any (an answer) is not validated a second time.
        const accepted = record.output.some(isFunctionCall) ? acceptedCalls(record.output, new Set(turn.calls.keys())) : []
        if (accepted.length > 0) turn.toolTurn = true
        for (const call of accepted) {
          const state = turn.call(call.call_id)
          state.name = call.name
          state.arguments = call.arguments
        }
        return
      }
      case "tool_start": {
        const call = turn.call(record.call_id)
        call.name ??= record.name
        call.started = true
        turn.toolTurn = true
        return
      }
      case "tool_result": {
        turn.check.result(record.call_id)
        turn.add(record, saved ?? savedText(record, "result"))
        const call = turn.call(record.call_id)
        call.name ??= record.name
        call.finished = true
        return
      }
    }
  }

  /**
   * A completed turn joins the history when it is whole (returns where its first
   * piece is kept there); otherwise it is named as left out.
   */
  private complete(turn: TurnState): number | undefined {
    const reason = turn.check.end() ?? turn.unwritable
    if (reason === undefined) return this.history.add(turn.pieces)
    this.leftOut.push({ turnId: turn.turnId, number: turn.number, question: turn.question, time: turn.time, reason })
    return undefined
  }

  /** Where an ended turn's questions are kept from now on: in the history, from piece `first` on, or apart. */
  private place(turn: TurnState, first: number | undefined): void {
    for (const { json, piece, question } of turn.asked) {
      if (first !== undefined) {
        this.questionPlaces[question] = first + piece
      } else {
        this.questionPlaces[question] = KEPT_APART + this.questionTexts.length
        this.questionTexts.push(json)
      }
    }
  }

  /**
   * Applies a line as the file holds it: a record; a line that could not be read,
   * or the `set_aside` record left where one was, whose turn is then not held
   * whole; or another kind of line, counted for positions. Returns the line with
   * the turn it names as the conversation names it (`keylessId`), for recovery
   * and the set-aside marker to name the same turn.
   */
  read<L extends Line>(line: L): L {
    if (line._tag === "Record") {
      this.applyRecord(line.record)
      return line
    }
    const turnId = this.keylessId(line.turnId)
    const named = turnId === undefined || turnId === line.turnId ? line : { ...line, turnId }
    if (line._tag === "Unreadable" || line.type === SET_ASIDE_TYPE) this.unreadable(turnId)
    else this.skip()
    return named
  }

  /**
   * The record as the conversation keeps it, with the JSON text of its question,
   * output or result (`savedText`). A record that holds the key now in use (saved
   * while another key was in use, or typed into a question then) has it redacted
   * in every string as it is read, ids included: it never reaches the model or
   * the screen, and a closing record, redacted as every record is written, names
   * the turn the conversation knows.
   */
  private keyless(record: SessionRecord): { readonly record: SessionRecord; readonly saved: string | undefined; readonly unsendable?: string } {
    const saved = savedOf(record)
    const { secrets } = this
    if (
      secrets === undefined ||
      !((saved !== undefined && (secrets.inStringified(saved) || (record.type === "tool_result" && secrets.inStringifiedTwice(saved)))) || idsHold(record, secrets))
    ) return { record, saved }
    return withoutKey(record, secrets)
  }

  /** A turn id as the conversation keeps it (`keyless`). */
  private keylessId(turnId: string | undefined): string | undefined {
    return turnId === undefined || this.secrets === undefined || !this.secrets.contains(turnId) ? turnId : this.secrets.redact(turnId)
  }

  /**
   * Counts a line that could not be read (for positions); a turn it names cannot
   * be held whole: it is left out if it completes.
   */
  private unreadable(turnId: string | undefined): void {
    this.lineCount += 1
    if (turnId === undefined) return
    const turn = this.open.get(turnId)
    if (turn !== undefined) turn.check.lost()
    else this.damaged.add(turnId)
  }

  /** Counts a line that is kept but is not one of the five records (for positions). */
  skip(): void {
    this.lineCount += 1
  }

  /** How many lines have been applied or skipped: the position of the next one. */
  get position(): number {
    return this.lineCount
  }

  /** Every question, oldest first: a live view, appended to as questions are committed. */
  readonly questions: Texts = new Live(() => this.questionCount, (index) => this.question(index))

  /** Question `question` of a turn still open (there are few). */
  private openQuestion(question: number): string | undefined {
    for (const turn of this.open.values()) {
      for (const asked of turn.asked) if (asked.question === question) return asked.json
    }
    return undefined
  }

  /** Question `index` (counted from the end when negative, as `Array.at`), or undefined. */
  private question(index: number): string | undefined {
    const at = index < 0 ? this.questionCount + index : index
    if (!Number.isInteger(at) || at < 0 || at >= this.questionCount) return undefined
    const place = this.questionPlaces[at]!
    const json = place === OPEN ? this.openQuestion(at) : place >= KEPT_APART ? this.questionTexts.at(place - KEPT_APART) : this.history.question(place)
    return json === undefined ? undefined : JSON.parse(json) as string
  }

  /** The view of turn `turnId` while it is open. */
  openTurn(turnId: string): OpenTurn | undefined {
    return this.open.get(turnId)?.view()
  }

  /** Every turn without a `turn_end`, in the order they began. */
  openTurns(): ReadonlyArray<OpenTurn> {
    const views: Array<OpenTurn> = []
    for (const turn of this.open.values()) views.push(turn.view())
    return views
  }

  /** The number of turns that have ended (any status). */
  get endedTurns(): number {
    return this.turnCount
  }
}
