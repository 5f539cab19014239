/**
 * The completed turns of a conversation in the form a request needs: each
 * record's contribution kept as its request item's JSON text (made from the text
 * its saved line holds, not parsed and stringified again), so that a request is
 * assembled by joining text: its cost is about the cost of sending it.
 *
 * A question and a result are written into their request items as they are
 * added. Only reasoning items are sent differently per endpoint
 * (`Endpoint.replayItem`) or left out after an adaptation (`Adaptation.ts`); a
 * response that holds one is reshaped when a request needs it so. The joined
 * text of the way last sent is kept, and only extended as turns are added.
 *
 * The texts are kept as UTF-8 outside the JavaScript heap (`TextList`), with
 * their kinds in a typed array: a long session costs about its replayed bytes,
 * and reading it at start-up does not grow the collector's young generation.
 */
import { TextList } from "../TextList.js"
import * as Endpoint from "./Endpoint.js"
import type { ResponseItem } from "./ResponseItem.js"

/** What a piece's text is, and how it is sent. */
const enum Kind {
  /** Output items (the elements of a JSON array), no reasoning among them: sent as they are to every endpoint. */
  Items,
  /** Output items whose reasoning all has encrypted content and a summary list: as they are, unless reasoning is left out. */
  ItemsVerbatimReasoning,
  /** Output items with reasoning the endpoint takes in its own form (Endpoint.replayItem). */
  ItemsReshapedReasoning,
  /** A question's user message, or a result's `function_call_output`: sent as they are to every endpoint. */
  Input
}

/** One record's contribution to a turn: its request text. Made by `items`, `question` and `result`. */
export interface Piece {
  readonly kind: Kind
  readonly text: string
}

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
export const question = (text: string, json?: string): Piece => ({
  kind: Kind.Input,
  text: `{"type":"message","role":"user","content":[{"type":"input_text","text":${json ?? JSON.stringify(text)}}]}`
})

/** A result of call `callId`; `json`, when given, is the result's JSON text (sent as the output string). */
export const result = (callId: string, value: unknown, json?: string): Piece => ({
  kind: Kind.Input,
  text: `{"type":"function_call_output","call_id":${JSON.stringify(callId)},"output":${JSON.stringify(json ?? JSON.stringify(value))}}`
})

/** One way of sending the history: the endpoint family, and how many first turns go without their reasoning. */
interface Shape {
  readonly family: Endpoint.Family
  readonly withoutReasoningBefore: number
}

/** The joined text of the shape last sent. */
interface Cached {
  readonly key: string
  /** Pieces already in `json`. */
  pieces: number
  json: string
}

export class History {
  // The pieces, flat: kind and request text, by piece; where each turn ends.
  private kinds = new Uint8Array(1024)
  private readonly texts = new TextList()
  private readonly turnEnds: Array<number> = []
  /** The turns that hold reasoning, in order. */
  private readonly reasoningTurns: Array<number> = []
  /** One shape at a time: an endpoint is sent one way until an adaptation changes it. */
  private cached: Cached | undefined

  /** Adds a completed turn (its records' pieces, in order). */
  add(pieces: ReadonlyArray<Piece>): void {
    let reasoning = false
    for (const piece of pieces) {
      const index = this.texts.length
      if (index === this.kinds.length) {
        const larger = new Uint8Array(this.kinds.length * 2)
        larger.set(this.kinds)
        this.kinds = larger
      }
      this.kinds[index] = piece.kind
      this.texts.push(piece.text)
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
   * joined by commas ("" when there are none).
   */
  json(family: Endpoint.Family, withoutReasoningBefore = 0): string {
    const shape: Shape = { family, withoutReasoningBefore: Math.min(withoutReasoningBefore, this.turns) }
    const key = `${shape.family} ${shape.withoutReasoningBefore}`
    if (this.cached?.key !== key) this.cached = { key, pieces: 0, json: "" }
    const cached = this.cached
    let text = cached.json
    let turn = this.turnOf(cached.pieces)
    for (let piece = cached.pieces; piece < this.texts.length; piece++) {
      while (this.turnEnds[turn]! <= piece) turn += 1
      const part = this.textOf(piece, turn < shape.withoutReasoningBefore, shape.family)
      if (part.length > 0) text = text.length === 0 ? part : text + "," + part
    }
    cached.pieces = this.texts.length
    cached.json = text
    return text
  }

  /** The history's items as saved (every item verbatim), parsed: for tests and embedders. */
  items(): ReadonlyArray<ResponseItem> {
    const texts: Array<string> = []
    for (let piece = 0; piece < this.texts.length; piece++) {
      const text = this.textOf(piece, false, undefined)
      if (text.length > 0) texts.push(text)
    }
    return JSON.parse(`[${texts.join(",")}]`) as ReadonlyArray<ResponseItem>
  }

  /** The turn piece `piece` belongs to. */
  private turnOf(piece: number): number {
    let turn = 0
    while (turn < this.turnEnds.length && this.turnEnds[turn]! <= piece) turn += 1
    return turn
  }

  /** Piece `piece`'s request text; `family` undefined: every item as saved. */
  private textOf(piece: number, withoutReasoning: boolean, family: Endpoint.Family | undefined): string {
    const text = this.texts.at(piece)!
    switch (this.kinds[piece]! as Kind) {
      case Kind.Input:
      case Kind.Items:
        return text
      case Kind.ItemsVerbatimReasoning:
        if (!withoutReasoning || family === undefined) return text
        break
      case Kind.ItemsReshapedReasoning:
        if (family === undefined) return text
        break
    }
    if (family === undefined) return text
    const output = JSON.parse(`[${text}]`) as ReadonlyArray<ResponseItem>
    return joined(Endpoint.replay(family, withoutReasoning ? output.filter((item) => !isReasoning(item)) : output))
  }
}
