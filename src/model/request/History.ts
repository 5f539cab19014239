/**
 * The completed turns of a conversation in the form a request needs: each
 * record's contribution kept as its request item's JSON text (made from the text
 * its saved line holds, not parsed and stringified again), so that a request's
 * body is assembled by copying bytes: its cost is about the cost of sending it.
 *
 * A result is written into its request item as it is added; a question is the
 * one the conversation keeps for ↑ (`ConversationState`), not a second copy, and
 * is written into its user message as a request is assembled. Only reasoning
 * items are sent differently per endpoint (`Endpoint.replayItem`) or left out
 * after an adaptation (`Adaptation.ts`); a response that holds one is reshaped
 * the first time a request needs it so, and kept in that shape while requests
 * are sent that way.
 *
 * The texts are kept as UTF-8 outside the JavaScript heap (`TextList`), with
 * their kinds in typed arrays: a long session costs about its replayed bytes,
 * reading it at start-up does not grow the collector's young generation, and a
 * request's body is one Buffer, never a second copy of the history as a string.
 */
import { constants } from "node:buffer"
import { grown, TextList } from "../../TextList.js"
import * as Endpoint from "../Endpoint.js"
import type { ResponseItem } from "../../protocol/ResponseItem.js"

/** What a piece's text is, and how it is sent. */
const enum Kind {
  /** Output items (the elements of a JSON array), no reasoning among them: sent as they are to every endpoint. */
  Items,
  /** Output items whose reasoning all has encrypted content and a summary list: as they are, unless reasoning is left out. */
  ItemsVerbatimReasoning,
  /** Output items with reasoning the endpoint takes in its own form (Endpoint.replayItem). */
  ItemsReshapedReasoning,
  /** A user message or a result's `function_call_output`: sent as they are to every endpoint. */
  Input,
  /** A question the conversation keeps (its JSON string, by its place among them), sent as a user message. */
  Question
}

/** One record's contribution to a turn: its request text, or the question it asks. Made by `items`, `question` and `result`. */
export interface Piece {
  readonly kind: Kind
  readonly text: string
  /** A question's place among the questions the history was given (`Kind.Question`). */
  readonly asked?: number
}

/** A question's user message, around the question as a JSON string. */
const HEAD = `{"type":"message","role":"user","content":[{"type":"input_text","text":`
const TAIL = "}]}"
const QUESTION_HEAD = Buffer.from(HEAD)
const QUESTION_TAIL = Buffer.from(TAIL)
const COMMA = 0x2c
/** The largest Buffer Node makes. */
const MAX_LENGTH = constants.MAX_LENGTH

const isReasoning = (item: ResponseItem): boolean => item["type"] === "reasoning"

const hasEncryptedContent = (item: ResponseItem): boolean =>
  typeof item["encrypted_content"] === "string" && item["encrypted_content"].length > 0

/** Items as the elements of a JSON array: each stringified, joined by commas. */
export const joined = (items: ReadonlyArray<ResponseItem>): string => {
  let text = ""
  for (const item of items) text += text.length === 0 ? JSON.stringify(item) : "," + JSON.stringify(item)
  return text
}

/**
 * Output items. `json`, when given, is their JSON text (the elements of their
 * array), else they are stringified. Throws if the items cannot be written as JSON.
 */
export const items = (output: ReadonlyArray<ResponseItem>, json?: string): Piece => {
  let kind = Kind.Items
  for (const item of output) {
    if (!isReasoning(item)) continue
    // Without its summary list, encrypted reasoning gains one for some endpoints (Endpoint.replayItem).
    if (!hasEncryptedContent(item) || !Array.isArray(item["summary"])) {
      kind = Kind.ItemsReshapedReasoning
      break
    }
    kind = Kind.ItemsVerbatimReasoning
  }
  return { kind, text: json ?? joined(output) }
}

/**
 * A question; `json`, when given, is its text as a JSON string. `asked`, when
 * given, is its place among the questions the history was made with: the history
 * then keeps no copy of its own.
 */
export const question = (text: string, json?: string, asked?: number): Piece =>
  asked === undefined
    ? { kind: Kind.Input, text: `${HEAD}${json ?? JSON.stringify(text)}${TAIL}` }
    : { kind: Kind.Question, text: json ?? JSON.stringify(text), asked }

/** A result of call `callId`; `json`, when given, is the result's JSON text (sent as the output string). */
export const result = (callId: string, value: unknown, json?: string): Piece => ({
  kind: Kind.Input,
  text: `{"type":"function_call_output","call_id":${JSON.stringify(callId)},"output":${JSON.stringify(json ?? JSON.stringify(value))}}`
})

/** The request text of one shape of the history: its UTF-8 length, and a copy of it into a buffer. */
export interface RequestText {
  readonly bytes: number
  /** Copies the text into `target` at `at`; returns the number of bytes copied. */
  readonly copy: (target: Buffer, at: number) => number
}

/** The request text of the shape last sent, assembled: `used` bytes of `bytes`, the first `pieces` pieces. */
interface Assembled {
  readonly key: string
  pieces: number
  bytes: Buffer
  used: number
}

/** The reshaped pieces of the shape last sent, computed when first needed. */
interface Reshaped {
  readonly key: string
  readonly texts: TextList
  /** By piece: 1 + its entry in `texts`, or 0 while not computed. */
  entry: Uint32Array
}

export class History {
  // The pieces, flat: kind, request text (empty for a question) and a question's place, by piece; where each turn ends.
  private kinds: Uint8Array = new Uint8Array(1024)
  private asked: Uint32Array = new Uint32Array(1024)
  private readonly texts = new TextList()
  private readonly turnEnds: Array<number> = []
  /** The turns that hold reasoning, in order. */
  private readonly reasoningTurns: Array<number> = []
  /** One shape at a time: an endpoint is sent one way until an adaptation changes it. */
  private reshaped: Reshaped | undefined
  private assembled: Assembled | undefined

  /**
   * `questions`: the conversation's questions as JSON strings, where a
   * `Kind.Question` piece finds its text (without it, every question is kept here).
   */
  constructor(private readonly questions?: TextList) {}

  /** Adds a completed turn (its records' pieces, in order). */
  add(pieces: ReadonlyArray<Piece>): void {
    let reasoning = false
    for (const piece of pieces) {
      const index = this.texts.length
      this.kinds = grown(this.kinds, index)
      this.asked = grown(this.asked, index)
      if (piece.kind === Kind.Question && piece.asked !== undefined && this.questions !== undefined) {
        this.kinds[index] = Kind.Question
        this.asked[index] = piece.asked
        this.texts.push("")
      } else {
        const kind = piece.kind === Kind.Question ? Kind.Input : piece.kind
        this.kinds[index] = kind
        this.texts.push(piece.kind === Kind.Question ? `${HEAD}${piece.text}${TAIL}` : piece.text)
      }
      reasoning ||= piece.kind === Kind.ItemsVerbatimReasoning || piece.kind === Kind.ItemsReshapedReasoning
    }
    if (reasoning) this.reasoningTurns.push(this.turnEnds.length)
    this.turnEnds.push(this.texts.length)
  }

  /** How many turns it holds. */
  get turns(): number {
    return this.turnEnds.length
  }

  /** Whether a turn from `from` (inclusive) to `to` (exclusive) holds a reasoning item. */
  hasReasoning(from = 0, to: number = this.turns): boolean {
    const last = this.reasoningTurns.findLast((turn) => turn < to)
    return last !== undefined && last >= from
  }

  /**
   * The input items of every turn as `family` takes them back, the first
   * `withoutReasoningBefore` turns without their reasoning: JSON array elements
   * joined by commas (no bytes when there are none). The bytes of the shape last
   * sent are kept assembled, and only extended as turns are added: a request
   * copies them once.
   */
  request(family: Endpoint.Family, withoutReasoningBefore = 0): RequestText {
    // Infinity: no turn's reasoning, a shape that stays the same as turns are added.
    const before = Number.isFinite(withoutReasoningBefore) ? Math.min(withoutReasoningBefore, this.turns) : Infinity
    const key = `${family} ${before}`
    if (this.assembled?.key !== key) this.assembled = { key, pieces: 0, bytes: Buffer.alloc(0), used: 0 }
    const assembled = this.assembled
    if (assembled.pieces < this.texts.length) {
      const added = this.span(family, before, assembled.pieces, assembled.used > 0)
      if (assembled.used + added.bytes > assembled.bytes.length) {
        // Room for this and as much again: a long chat copies its history a few times, not per turn.
        const needed = assembled.used + added.bytes
        const larger = Buffer.allocUnsafeSlow(Math.max(needed, Math.min(2 * needed, MAX_LENGTH)))
        assembled.bytes.copy(larger, 0, 0, assembled.used)
        assembled.bytes = larger
      }
      assembled.used += added.copy(assembled.bytes, assembled.used)
      assembled.pieces = this.texts.length
    }
    const { bytes, used } = assembled
    return { bytes: used, copy: (target, at) => bytes.copy(target, at, 0, used) }
  }

  /** `request`'s text (`undefined`: every item as saved), as a string, made afresh: for tests and embedders. */
  json(family: Endpoint.Family | undefined, withoutReasoningBefore = 0): string {
    const text = this.span(family, Math.min(withoutReasoningBefore, this.turns), 0, false)
    const bytes = Buffer.allocUnsafe(text.bytes)
    text.copy(bytes, 0)
    return bytes.toString("utf8")
  }

  /** The history's items as saved (every item verbatim), parsed: for tests and embedders. */
  items(): ReadonlyArray<ResponseItem> {
    return JSON.parse(`[${this.json(undefined)}]`) as ReadonlyArray<ResponseItem>
  }

  /**
   * The request text of the pieces from `from` on, as `family` takes them back
   * (`undefined`: as saved), the turns before `before` without their reasoning;
   * each part after a comma, the first too when `comma`.
   */
  private span(family: Endpoint.Family | undefined, before: number, from: number, comma: boolean): RequestText {
    const reshaped = family === undefined ? undefined : this.reshapedFor(`${family} ${before}`)
    // A piece's bytes: its reshaped text (`reshaped.texts`), the question it asks, or its own text.
    const size = (piece: number, turn: number): number => {
      if (this.kinds[piece]! as Kind === Kind.Question) {
        return QUESTION_HEAD.length + this.questions!.byteLength(this.asked[piece]!) + QUESTION_TAIL.length
      }
      const entry = reshaped === undefined ? -1 : this.reshapedEntry(reshaped, piece, family!, turn < before)
      return entry === -1 ? this.texts.byteLength(piece) : reshaped!.texts.byteLength(entry)
    }
    const copy = (piece: number, turn: number, target: Buffer, at: number): number => {
      if (this.kinds[piece]! as Kind === Kind.Question) {
        let written = QUESTION_HEAD.copy(target, at)
        written += this.questions!.copy(this.asked[piece]!, target, at + written)
        return written + QUESTION_TAIL.copy(target, at + written)
      }
      const entry = reshaped === undefined ? -1 : this.reshapedEntry(reshaped, piece, family!, turn < before)
      return entry === -1 ? this.texts.copy(piece, target, at) : reshaped!.texts.copy(entry, target, at)
    }
    const pieces = this.texts.length
    const first = this.turnOf(from)
    let bytes = 0
    for (let piece = from, turn = first, parts = comma ? 1 : 0; piece < pieces; piece++) {
      while (this.turnEnds[turn]! <= piece) turn += 1
      const length = size(piece, turn)
      if (length > 0) bytes += parts++ === 0 ? length : length + 1
    }
    return {
      bytes,
      copy: (target, at) => {
        let written = 0
        for (let piece = from, turn = first, parts = comma ? 1 : 0; piece < pieces; piece++) {
          while (this.turnEnds[turn]! <= piece) turn += 1
          if (size(piece, turn) === 0) continue
          if (parts++ > 0) target[at + written++] = COMMA
          written += copy(piece, turn, target, at + written)
        }
        return written
      }
    }
  }

  /** The turn piece `piece` belongs to. */
  private turnOf(piece: number): number {
    let turn = 0
    while (turn < this.turnEnds.length && this.turnEnds[turn]! <= piece) turn += 1
    return turn
  }

  /** The reshaped pieces of shape `key`, kept while requests are sent that way. */
  private reshapedFor(key: string): Reshaped {
    if (this.reshaped?.key !== key) this.reshaped = { key, texts: new TextList(), entry: new Uint32Array(this.texts.length + 1) }
    this.reshaped.entry = grown(this.reshaped.entry, this.texts.length)
    return this.reshaped
  }

  /** Piece `piece`'s entry among the reshaped texts, or -1 when it goes as it is. */
  private reshapedEntry(reshaped: Reshaped, piece: number, family: Endpoint.Family, withoutReasoning: boolean): number {
    switch (this.kinds[piece]! as Kind) {
      case Kind.ItemsVerbatimReasoning:
        if (!withoutReasoning) return -1
        break
      case Kind.ItemsReshapedReasoning:
        break
      default:
        return -1
    }
    const known = reshaped.entry[piece]!
    if (known > 0) return known - 1
    const output = JSON.parse(`[${this.texts.at(piece)!}]`) as ReadonlyArray<ResponseItem>
    reshaped.texts.push(joined(Endpoint.replay(family, withoutReasoning ? output.filter((item) => !isReasoning(item)) : output)))
    reshaped.entry[piece] = reshaped.texts.length
    return reshaped.texts.length - 1
  }
}
