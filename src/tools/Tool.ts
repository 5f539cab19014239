/**
 * The tool interface: Definition (what the model is told), Prepare (validate the
 * raw arguments and build the display fields and the operation, executing
 * nothing) and Execute (perform exactly the prepared operation).
 *
 * Approval sits between Prepare and Execute. The Approver receives the display
 * frozen (`freeze`), which it can read but not change; the Agent keeps the
 * `PreparedCall`, so what was approved is what runs.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { ToolResult } from "./ToolResult.js"

/** The function tool definition sent to the model in every request. */
export interface ToolDefinition {
  readonly type: "function"
  readonly name: string
  readonly description: string
  readonly parameters: Readonly<Record<string, unknown>>
  readonly strict: boolean
}

/**
 * One labelled part of the approval screen, as raw text: the screen escapes it,
 * in one place (`approval/ApprovalScreen.ts`), by its kind.
 *
 * - `command`: what runs, shown as one JSON string literal, emphasised;
 * - `value`: one value on one line (a directory, a limit, a notice);
 * - `entries`: named values (an environment), one entry a line.
 *
 * A value that bounds the call (its timeout, its output limit) says so in
 * `bound`, so a result header can name it without reading labels.
 */
export type DisplayField =
  | { readonly kind: "command"; readonly label: string; readonly value: string }
  | { readonly kind: "value"; readonly label: string; readonly value: string; readonly bound?: Bound }
  | { readonly kind: "entries"; readonly label: string; readonly entries: ReadonlyArray<DisplayEntry> }

export interface DisplayEntry {
  readonly name: string
  readonly value: string
}

/** A limit the call runs under, as the screen shows it (`30 s`, `64 KiB`). */
export interface Bound {
  readonly kind: "timeout" | "outputLimit"
  readonly amount: string
}

/** What the user reviews before approving: the tool's name and its fields. */
export interface ToolDisplay {
  readonly tool: string
  readonly fields: ReadonlyArray<DisplayField>
}

/**
 * `display`, made immutable all the way down, in place: the approver and the
 * screen share it without a copy, and neither can change what the other sees.
 */
export const freeze = (display: ToolDisplay): ToolDisplay => freezeDeep(display)

const freezeDeep = <A>(value: A): A => {
  if (typeof value !== "object" || value === null) return value
  for (const inner of Object.values(value)) freezeDeep(inner)
  return Object.freeze(value)
}

/** The bounds a display names, by kind: what a result header needs. */
export const bounds = (display: ToolDisplay): { readonly timeout?: string; readonly outputLimit?: string } => {
  const found: { timeout?: string; outputLimit?: string } = {}
  for (const field of display.fields) {
    if (field.kind === "value" && field.bound !== undefined) found[field.bound.kind] = field.bound.amount
  }
  return found
}

/**
 * How a running call learns that it must stop (Ctrl+C, a signal): the tool
 * registers, as its execution begins, a function that ends the call; it is
 * called at most once, with the cause ("Cancelled by SIGTERM"), and the call
 * should then return what it has so far (bash: the group killed, the output
 * captured so far kept, the cause named). A registration costs nothing: no
 * fiber waits for the stop. A tool that registers nothing is interrupted at
 * once when a stop comes; one that has not returned 2 s after being told is
 * interrupted then.
 */
export interface Cancellation {
  readonly onCancel: (stop: (cause: string) => void) => void
}

/** A rejection from Prepare: the call is answered with this result and never prompts. */
export interface Rejection {
  readonly _tag: "Rejection"
  readonly result: ToolResult
}

export interface Tool<Operation> {
  readonly definition: ToolDefinition
  /** Validates `rawArguments` (the model's JSON text, unparsed) without side effects. */
  readonly prepare: (
    rawArguments: string
  ) => Effect.Effect<{ readonly display: ToolDisplay; readonly operation: Operation }, Rejection>
  /** Performs the prepared operation; every resource it opens is closed with the scope. */
  readonly execute: (operation: Operation, cancel?: Cancellation) => Effect.Effect<ToolResult, never, Scope.Scope>
}

/** A tool whose operation type is hidden, so tools of any kind share one registry. */
export interface AnyTool {
  readonly definition: ToolDefinition
  readonly prepare: (rawArguments: string) => Effect.Effect<PreparedCall, Rejection>
}

/** A validated call: the display copy for approval and the one operation that may run. */
export interface PreparedCall {
  readonly display: ToolDisplay
  readonly execute: (cancel?: Cancellation) => Effect.Effect<ToolResult, never, Scope.Scope>
}

export const rejection = (result: ToolResult): Rejection => ({ _tag: "Rejection", result })

/** Hides a tool's operation type: Prepare now yields a call whose Execute is fixed. */
export const erase = <Operation>(tool: Tool<Operation>): AnyTool => ({
  definition: tool.definition,
  prepare: (rawArguments) =>
    Effect.map(tool.prepare(rawArguments), ({ display, operation }) => ({
      display,
      // Deferred: building the operation's effect must not start it before approval.
      execute: (cancel) => Effect.suspend(() => tool.execute(operation, cancel))
    }))
})
