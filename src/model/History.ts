/**
 * The completed turns of a conversation in the form a request needs: each
 * record's input items kept as JSON text, serialised once when the turn is
 * added, so that a request is assembled by joining text instead of parsing and
 * stringifying the history again (its cost is about the cost of sending it).
 *
 * Only reasoning items are sent differently per endpoint (`Endpoint.replayItem`)
 * or left out after an adaptation (`Adaptation.ts`); a piece that holds one is
 * reshaped once per way of sending it, on first use, and the result is kept.
 * Every other piece is the same text for every endpoint.
 */
import * as Endpoint from "./Endpoint.js"
import type { ResponseItem } from "./ResponseItem.js"

/** How the reasoning items of a piece go back: none to change, verbatim for every endpoint, or reshaped per endpoint. */
type Reasoning = "none" | "verbatim" | "reshaped"

/** The input items one record contributes, as the text of a JSON array's elements. */
export interface Piece {
  /** The items' JSON texts joined by commas ("" when there are none). */
  readonly json: string
  readonly reasoning: Reasoning
}

const isReasoning = (item: ResponseItem): boolean => item["type"] === "reasoning"

const hasEncryptedContent = (item: ResponseItem): boolean =>
  typeof item["encrypted_content"] === "string" && item["encrypted_content"].length > 0

/**
 * The piece for `items`. `json`, when given, is their text as saved (the elements of
 * the array the record's line holds, joined by commas), which spares a stringify.
 * Throws if the items cannot be written as JSON.
 */
export const piece = (items: ReadonlyArray<ResponseItem>, json?: string): Piece => {
  let reasoning: Reasoning = "none"
  for (const item of items) {
    if (!isReasoning(item)) continue
    if (!hasEncryptedContent(item)) {
      reasoning = "reshaped"
      break
    }
    reasoning = "verbatim"
  }
  return { json: json ?? joined(items), reasoning }
}

const joined = (items: ReadonlyArray<ResponseItem>): string => {
  let text = ""
  for (const item of items) text += text.length === 0 ? JSON.stringify(item) : "," + JSON.stringify(item)
  return text
}

/** One way of sending the history: the endpoint family, and how many first turns go without their reasoning. */
interface Shape {
  readonly family: Endpoint.Family
  readonly withoutReasoningBefore: number
}

const shapeKey = (shape: Shape): string => `${shape.family} ${shape.withoutReasoningBefore}`

/** The text of `piece` for turn `turn` sent in `shape`. */
const textOf = (piece: Piece, turn: number, shape: Shape): string => {
  if (piece.reasoning === "none") return piece.json
  const dropReasoning = turn < shape.withoutReasoningBefore
  if (piece.reasoning === "verbatim" && !dropReasoning) return piece.json
  const items = JSON.parse(`[${piece.json}]`) as ReadonlyArray<ResponseItem>
  const kept = dropReasoning ? items.filter((item) => !isReasoning(item)) : items
  return joined(Endpoint.replay(shape.family, kept))
}

/** The history's text in the shape last sent, extended as turns are added. */
interface Cached {
  readonly key: string
  /** Turns already in `json`. */
  turns: number
  json: string
}

export class History {
  /** Each completed turn's pieces, in order. */
  private readonly turnPieces: Array<ReadonlyArray<Piece>> = []
  /** One shape at a time: an endpoint is sent one way until an adaptation changes it. */
  private cached: Cached | undefined
  /** The turns that hold reasoning, in order. */
  private readonly reasoningTurns: Array<number> = []

  /** Adds a completed turn (its records' pieces, in order). */
  add(pieces: ReadonlyArray<Piece>): void {
    if (pieces.some((p) => p.reasoning !== "none")) this.reasoningTurns.push(this.turnPieces.length)
    this.turnPieces.push(pieces)
  }

  /** How many turns it holds. */
  get turns(): number {
    return this.turnPieces.length
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
    const key = shapeKey(shape)
    if (this.cached?.key !== key) this.cached = { key, turns: 0, json: "" }
    const cached = this.cached
    let text = cached.json
    for (let turn = cached.turns; turn < this.turnPieces.length; turn++) {
      for (const piece of this.turnPieces[turn]!) {
        const part = textOf(piece, turn, shape)
        if (part.length > 0) text = text.length === 0 ? part : text + "," + part
      }
    }
    cached.turns = this.turnPieces.length
    cached.json = text
    return text
  }

  /** The history's items as saved (every item verbatim), parsed: for tests and embedders. */
  items(): ReadonlyArray<ResponseItem> {
    const texts: Array<string> = []
    for (const pieces of this.turnPieces) for (const piece of pieces) if (piece.json.length > 0) texts.push(piece.json)
    return JSON.parse(`[${texts.join(",")}]`) as ReadonlyArray<ResponseItem>
  }
}
