/**
 * A model request and its body as JSON bytes. The history is already text, kept
 * as UTF-8 (`History.ts`); the body is a list of Buffers written in order: its
 * head, views of the history's kept bytes, and this turn's items with the rest,
 * so the cost of a request grows with what is sent, not with parsing or
 * stringifying the conversation again, and the history is never copied (a long
 * session's memory is about its history, once). Every item goes back as the
 * endpoint takes it (`Endpoint.replay`); `store: false`, `parallel_tool_calls:
 * false`, streaming, and `include` of encrypted reasoning unless the endpoint
 * refused it; reasoning items and the optional fields are left out once an
 * endpoint refused them (Adaptation.ts).
 */
import type { ToolDefinition } from "../../tools/Tool.js"
import * as Endpoint from "../Endpoint.js"
import { type History, joined } from "./History.js"
import type { ResponseItem } from "../../protocol/ResponseItem.js"

export interface ModelRequest {
  readonly model: string
  readonly instructions: string
  /** The conversation's earlier, completed turns, kept serialised (none when absent). */
  readonly history?: History
  /** This turn's input items so far: the user's text, output items verbatim, results. */
  readonly input: ReadonlyArray<ResponseItem>
  readonly tools: ReadonlyArray<ToolDefinition>
  /** Leave out the reasoning items of the history's first N turns: the endpoint could not use them (Adaptation.ts). */
  readonly withoutReasoningBefore?: number
}

/** Every item of a request, parsed: the history's as saved, then this turn's (for clients that read a request rather than send it). */
export const requestItems = (request: ModelRequest): ReadonlyArray<ResponseItem> => [
  ...(request.history?.items() ?? []),
  ...request.input
]

/** How a body is written after the adaptations made so far (Adaptation.ts). */
export interface Shape {
  /** Whether to ask for `reasoning.encrypted_content`. */
  readonly include: boolean
  /** The history's first turns sent without their reasoning. */
  readonly withoutReasoningBefore: number
  /** Whether reasoning items are sent at all (false: none, of any turn, this one's included). Default true. */
  readonly reasoning?: boolean
  /** Whether the fields a request can do without are sent (`store`, `include`, `parallel_tool_calls`). Default true. */
  readonly optional?: boolean
}

const notReasoning = (item: ResponseItem): boolean => item["type"] !== "reasoning"

/**
 * A request body: Buffers to write in order, `bytes` in all, none of them ever
 * changed (the history's are views of its kept bytes). It is a `ReadableStream`
 * of those Buffers, so the openai SDK hands it to the transport as it is
 * (HttpTransport writes the Buffers themselves, with the body's length, and again
 * for a redirect); read as a stream, it gives them in order, once.
 */
export class Body extends ReadableStream<Uint8Array> {
  constructor(readonly chunks: ReadonlyArray<Buffer>, readonly bytes: number) {
    let next = 0
    super({
      pull(controller) {
        const chunk = chunks[next++]
        if (chunk === undefined) controller.close()
        else controller.enqueue(chunk)
      }
    }, { highWaterMark: 0 })
  }

  /** The body as UTF-8 text (a copy: for reading a refused request's items, and tests). */
  override toString(_encoding?: "utf8"): string {
    return Buffer.concat(this.chunks, this.bytes).toString("utf8")
  }
}

/**
 * The body writer for an endpoint of `family`. The instructions and tools are the
 * same from request to request: each is stringified once, when it changes.
 */
export const writer = (family: Endpoint.Family) => {
  let instructions: string | undefined
  let instructionsJson = ""
  const toolsJson = new WeakMap<ReadonlyArray<ToolDefinition>, string>()
  const constant = (request: ModelRequest): { readonly instructions: string; readonly tools: string } => {
    if (request.instructions !== instructions) {
      instructions = request.instructions
      instructionsJson = JSON.stringify(request.instructions)
    }
    let tools = toolsJson.get(request.tools)
    if (tools === undefined) {
      tools = JSON.stringify(request.tools)
      toolsJson.set(request.tools, tools)
    }
    return { instructions: instructionsJson, tools }
  }
  return (request: ModelRequest, shape: Shape): Body => {
    const reasoning = shape.reasoning !== false && shape.optional !== false
    const history = request.history?.request(family, reasoning ? shape.withoutReasoningBefore : Infinity)
    const current = joined(Endpoint.replay(family, reasoning ? request.input : request.input.filter(notReasoning)))
    const { instructions, tools } = constant(request)
    const head = `{"model":${JSON.stringify(request.model)},"instructions":${instructions},"input":[`
    const optional = shape.optional === false
      ? ""
      : `"store":false,${shape.include ? `"include":["reasoning.encrypted_content"],` : ""}"parallel_tool_calls":false,`
    const rest = `${history !== undefined && history.bytes > 0 && current.length > 0 ? "," : ""}${current}],"tools":${tools},` +
      `${optional}"stream":true}`
    const headBytes = Buffer.from(head)
    const restBytes = Buffer.from(rest)
    const chunks = history === undefined || history.bytes === 0 ? [headBytes, restBytes] : [headBytes, ...history.chunks, restBytes]
    return new Body(chunks, headBytes.length + (history?.bytes ?? 0) + restBytes.length)
  }
}
