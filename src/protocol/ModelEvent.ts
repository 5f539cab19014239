/**
 * What a model request yields, and how it fails: the stream's display events, the
 * completed response the Agent acts on, and the one error type of the model side.
 * Kept apart from the client so the event interpreter (StreamEvents.ts) and the
 * client (ModelClient.ts) both depend on it, not on each other.
 */
import * as Data from "effect/Data"
import type { ResponseItem } from "./ResponseItem.js"

/** A change to a request that an endpoint refused, made to send it again (Adaptation.ts says when). */
export type Adaptation = "without_include" | "without_earlier_reasoning" | "without_reasoning" | "without_optional"

/** The output items of one `response.completed`, exactly as received. */
export interface CompletedResponse {
  readonly id: string
  readonly output: ReadonlyArray<ResponseItem>
}

export type ModelEvent =
  /** `item` tells one output item's text from the next; `refusal`: the model declined. */
  | { readonly _tag: "TextDelta"; readonly text: string; readonly item?: string; readonly refusal?: boolean }
  /** A request failed before its stream started and will be sent again; `message` is one line. */
  | { readonly _tag: "Retrying"; readonly message: string }
  /** The endpoint refused part of the request and it is sent again without it (Adaptation.ts); `message` is one line. */
  | { readonly _tag: "Adapted"; readonly adaptation: Adaptation; readonly message: string }
  | { readonly _tag: "Completed"; readonly response: CompletedResponse }

export class ModelError extends Data.TaggedError("ModelError")<{
  readonly reason:
    | "http"
    | "connection"
    | "dropped"
    | "incomplete"
    | "failed"
    | "timeout"
    | "protocol"
    | "context_window"
    /** The response grew past what Mino holds of one before it completes (model/stream/ResponseBudget.ts). */
    | "too_large"
  /** One line for the user; never contains the API key. */
  readonly message: string
  readonly status?: number
}> {}
