/**
 * The completed turns of a conversation in the form a request needs: each
 * record's contribution kept as its request item's JSON text (made from the text
 * its saved line holds, not parsed and stringified again), so that a request's
 * body is written from those bytes: its cost is about the cost of sending it.
 *
 * A result is written into its request item as it is added, a question into its
 * user message. Only reasoning items are sent differently per endpoint
 * (`Endpoint.replayItem`) or left out after an adaptation (`Adaptation.ts`); a
 * response that holds one is reshaped the first time a request needs it so, and
 * kept in that shape while requests are sent that way.
 *
 * The texts are kept as UTF-8 outside the JavaScript heap (`TextList`), each
 * after the comma that separates it from the one before, with their kinds in
 * typed arrays: a long session costs about its replayed bytes, reading it at
 * start-up does not grow the collector's young generation, and a request's
 * history is a list of views of those bytes, in order (consecutive texts are
 * consecutive bytes: a view per megabyte or so), written to the socket as they
 * are: the history is never copied, neither as a string nor as bytes.
 */
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
  /** A question (its JSON string), sent as a user message around it. */
  Question
}

/** One record's contribution to a turn: its request text (a question's: its JSON string). Made by `items`, `question` and `result`. */
export interface Piece {
  readonly kind: Kind
  readonly text: string
}

/** A question's user message, around the question as a JSON string. */
const HEAD = `{"type":"message","role":"user","content":[{"type":"input_text","text":`
const TAIL = "}]}"

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

/** A question; `json`, when given, is its text as a JSON string. */
export const question = (text: string, json?: string): Piece => ({ kind: Kind.Question, text: json ?? JSON.stringify(text) })

/** A result of call `callId`; `json`, when given, is the result's JSON text (sent as the output string). */
export const result = (callId: string, value: unknown, json?: string): Piece => ({
  kind: Kind.Input,
  text: `{"type":"function_call_output","call_id":${JSON.stringify(callId)},"output":${JSON.stringify(json ?? JSON.stringify(value))}}`
})

/** The request text of one shape of the history: its UTF-8 length, and its bytes as views of the memory that keeps them, in order. */
export interface RequestText {
  readonly bytes: number
  readonly chunks: ReadonlyArray<Buffer>
}

/**
 * Views of kept texts (each after its comma) joined into the request text of a list
 * of items: the first text's comma left out, a text that follows the one before it
 * in memory joined to its view, empty texts skipped.
 */
class Views {
  private readonly closed: Array<Buffer> = []
  private memory: ArrayBufferLike | undefined
  private start = 0
  private end = 0
  bytes = 0

  add(view: Buffer): void {
    if (view.length === 0) return
    // Every kept text but an empty one begins with its comma: the list's first is written without it.
    const text = this.bytes === 0 ? view.subarray(1) : view
    if (text.length === 0) return
    this.bytes += text.length
    if (this.memory === text.buffer && this.end === text.byteOffset) {
      this.end += text.length
      return
    }
    this.close()
    this.memory = text.buffer
    this.start = text.byteOffset
    this.end = text.byteOffset + text.length
  }

  /** The views so far (this one's own list is not shared: adding to it later changes nothing returned). */
  chunks(): ReadonlyArray<Buffer> {
    return this.memory === undefined ? [...this.closed] : [...this.closed, Buffer.from(this.memory, this.start, this.end - this.start)]
  }

  private close(): void {
    if (this.memory !== undefined) this.closed.push(Buffer.from(this.memory, this.start, this.end - this.start))
    this.memory = undefined
  }
}

/** The request text of the shape last sent: the views of its first `pieces` pieces. */
interface Sent {
  readonly key: string
  pieces: number
  readonly views: Views
}

/** The reshaped pieces of the shape last sent, computed when first needed. */
interface Reshaped {
  readonly key: string
  readonly texts: TextList
  /** By piece: 1 + its entry in `texts`, or 0 while not computed. */
  entry: Uint32Array
}

/** What is kept before a text: its comma, unless it is empty. */
const comma = (text: string): string => (text.length === 0 ? "" : ",")

/** The user message around a question's JSON string, after its comma. */
const QUESTION_BEFORE = `,${HEAD}`

/** A kept text as it was given. */
const given = (text: string): string => text.slice(1)

export class History {
  // The pieces, flat: kind and request text (after its comma), by piece; where each turn ends.
  private kinds: Uint8Array = new Uint8Array(1024)
  private readonly texts = new TextList()
  private readonly turnEnds: Array<number> = []
  /** The turns that hold reasoning, in order. */
  private readonly reasoningTurns: Array<number> = []
  /** One shape at a time: an endpoint is sent one way until an adaptation changes it. */
  private reshaped: Reshaped | undefined
  private sent: Sent | undefined

  /** Adds a completed turn (its records' pieces, in order); returns where its first piece is kept (`question`). */
  add(pieces: ReadonlyArray<Piece>): number {
    const first = this.texts.length
    let reasoning = false
    for (const piece of pieces) {
      const index = this.texts.length
      this.kinds = grown(this.kinds, index)
      this.kinds[index] = piece.kind
      if (piece.kind === Kind.Question) this.texts.push(piece.text, QUESTION_BEFORE, TAIL)
      else this.texts.push(piece.text, comma(piece.text))
      reasoning ||= piece.kind === Kind.ItemsVerbatimReasoning || piece.kind === Kind.ItemsReshapedReasoning
    }
    if (reasoning) this.reasoningTurns.push(this.turnEnds.length)
    this.turnEnds.push(this.texts.length)
    return first
  }

  /** The question kept as piece `piece` (counted as `add` returns), as its JSON string; undefined when that piece is no question. */
  question(piece: number): string | undefined {
    if (!Number.isInteger(piece) || piece < 0 || piece >= this.texts.length || this.kinds[piece] !== Kind.Question) return undefined
    // The user message around it is ASCII: as many characters as bytes.
    return this.texts.at(piece)!.slice(QUESTION_BEFORE.length, -TAIL.length)
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
   * joined by commas (no bytes when there are none), as views of the kept bytes.
   * The views of the shape last sent are kept, and only extended as turns are added.
   */
  request(family: Endpoint.Family, withoutReasoningBefore = 0): RequestText {
    // Infinity: no turn's reasoning, a shape that stays the same as turns are added.
    const before = Number.isFinite(withoutReasoningBefore) ? Math.min(withoutReasoningBefore, this.turns) : Infinity
    const key = `${family} ${before}`
    if (this.sent?.key !== key) this.sent = { key, pieces: 0, views: new Views() }
    const sent = this.sent
    if (sent.pieces < this.texts.length) {
      this.span(family, before, sent.pieces, sent.views)
      sent.pieces = this.texts.length
    }
    return { bytes: sent.views.bytes, chunks: sent.views.chunks() }
  }

  /** `request`'s text (`undefined`: every item as saved), as a string, made afresh: for tests and embedders. */
  json(family: Endpoint.Family | undefined, withoutReasoningBefore = 0): string {
    const views = new Views()
    this.span(family, Math.min(withoutReasoningBefore, this.turns), 0, views)
    return Buffer.concat(views.chunks()).toString("utf8")
  }

  /** The history's items as saved (every item verbatim), parsed: for tests and embedders. */
  items(): ReadonlyArray<ResponseItem> {
    return JSON.parse(`[${this.json(undefined)}]`) as ReadonlyArray<ResponseItem>
  }

  /**
   * Adds to `views` the pieces from `from` on, as `family` takes them back
   * (`undefined`: as saved), the turns before `before` without their reasoning.
   */
  private span(family: Endpoint.Family | undefined, before: number, from: number, views: Views): void {
    const reshaped = family === undefined ? undefined : this.reshapedFor(`${family} ${before}`)
    const pieces = this.texts.length
    for (let piece = from, turn = this.turnOf(from); piece < pieces; piece++) {
      while (this.turnEnds[turn]! <= piece) turn += 1
      const entry = reshaped === undefined ? -1 : this.reshapedEntry(reshaped, piece, family!, turn < before)
      views.add(entry === -1 ? this.texts.view(piece) : reshaped!.texts.view(entry))
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
    const output = JSON.parse(`[${given(this.texts.at(piece)!)}]`) as ReadonlyArray<ResponseItem>
    const text = joined(Endpoint.replay(family, withoutReasoning ? output.filter((item) => !isReasoning(item)) : output))
    reshaped.texts.push(text, comma(text))
    reshaped.entry[piece] = reshaped.texts.length
    return reshaped.texts.length - 1
  }
}
