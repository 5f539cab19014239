/**
 * What the Agent tells its interaction surface during a turn. These are display
 * events: none of them is committed conversation state.
 */
import type { TurnStatus } from "../session/records/Records.js"
import type { ToolDisplay } from "../tools/Tool.js"
import type { ToolResult } from "../tools/ToolResult.js"

export type AgentEvent =
  /** A model request was sent; nothing has arrived yet. */
  | { readonly _tag: "ModelWaiting" }
  /** The request failed before its stream started and is sent again; `message` is one line. */
  | { readonly _tag: "ModelRetrying"; readonly message: string }
  /** The endpoint refused part of the request, which is sent again without it; `message` is one line. */
  | { readonly _tag: "ModelAdapted"; readonly message: string }
  /** A fragment of the model's text, as it streams. */
  /** `item` tells one output item's text from the next; `refusal`: the model declined (display only). */
  | { readonly _tag: "TextDelta"; readonly text: string; readonly item?: string; readonly refusal?: boolean }
  /** The model's response completed (and was saved). */
  | { readonly _tag: "ModelResponded" }
  /** An approved call is about to execute. */
  | { readonly _tag: "ToolRunning"; readonly callId: string; readonly display: ToolDisplay }
  /** A call's result, saved and about to be sent back to the model. */
  | { readonly _tag: "ToolFinished"; readonly callId: string; readonly name: string; readonly result: ToolResult }
  /** The turn is over; `reason` explains any status but `completed`. */
  | { readonly _tag: "TurnEnded"; readonly status: TurnStatus; readonly reason?: string }
