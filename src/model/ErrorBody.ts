/**
 * What an endpoint said when it refused a request or failed a stream, and what
 * it means: the message, code, type and param of its error, whatever its shape,
 * and whether it is the context window overflowing.
 *
 * OpenAI and most servers send `{"error": {"message", "type", "param", "code"}}`
 * (vLLM and llama.cpp with a numeric `code`); some send `{"error": "text"}`;
 * FastAPI servers (gpt-oss's, any FastAPI 404 or 422) send `{"detail": "text"}` or
 * `{"detail": [{"loc", "msg"}]}`; others `{"message": ...}` or plain text. The
 * openai SDK keeps only the `error` key, so the raw body is read too. The client
 * makes the result one redacted line.
 */
import * as Json from "../Json.js"
import { isObject, type ResponseItem } from "../protocol/ResponseItem.js"

/** The line a context-window failure ends with; #12's `--new` starts that conversation. */
export const CONTEXT_WINDOW_MESSAGE =
  "the conversation no longer fits in the model's context window; start a new conversation with `mino --new`"

/** An error `code` as servers send it: OpenAI a string, vLLM and llama.cpp the HTTP status as a number. */
export type Code = string | number | null | undefined

/** What an error said: its code, type and message, each as the server sent it. */
export interface Problem {
  readonly code?: Code
  readonly type?: string | null | undefined
  readonly message?: string | null | undefined
}

/** What a refusal said: a problem, and the request parameter it names. */
export interface Said extends Problem {
  readonly param?: string | null | undefined
}

/** The codes and types that mean the context window overflowed: OpenAI and Azure, llama.cpp. */
const CONTEXT_CODES: ReadonlySet<string> = new Set(["context_length_exceeded", "exceed_context_size_error"])

/**
 * The wordings of the same failure: OpenAI ("exceeds the context window"), Azure and
 * vLLM ("maximum context length is"), vLLM ("longer than the maximum model length"), xAI
 * ("maximum prompt length"), llama.cpp ("exceeds the available context size"), Ollama
 * ("longer than the context length", "exceeds the context length"), LiteLLM
 * (`ContextWindowExceededError`).
 */
const CONTEXT_WORDING = /context (window|length|size)|maximum context|maximum (model|prompt) length|ContextWindowExceeded|context_length_exceeded|exceed_context_size/i

/** Whether an error is the context window overflowing, by its code, its type or its wording. */
export const isContextWindow = (problem: Problem): boolean =>
  (problem.code !== null && problem.code !== undefined && CONTEXT_CODES.has(String(problem.code))) ||
  (typeof problem.type === "string" && CONTEXT_CODES.has(problem.type)) ||
  CONTEXT_WORDING.test(problem.message ?? "")

/** How much of a body without a recognised message is shown. */
const EXCERPT = 200

const stringOr = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined)

const codeOf = (value: unknown): string | number | undefined =>
  typeof value === "string" || typeof value === "number" ? value : undefined

/** An `{ message, code, type, param }` object, as far as it has them. */
const fromObject = (error: ResponseItem): Said => {
  const message = error["message"]
  return {
    message: typeof message === "string" ? message : message === undefined ? undefined : JSON.stringify(message),
    code: codeOf(error["code"]),
    type: stringOr(error["type"]),
    param: stringOr(error["param"])
  }
}

/** FastAPI's validation detail: `body.input.0.summary: Field required; ...`. */
const fromDetail = (detail: unknown): string | undefined => {
  if (typeof detail === "string") return detail
  if (!Array.isArray(detail)) return undefined
  const parts = detail.flatMap((entry) => {
    if (!isObject(entry)) return []
    const where = Array.isArray(entry["loc"]) ? entry["loc"].map(String).join(".") : undefined
    const what = stringOr(entry["msg"]) ?? JSON.stringify(entry)
    return [where === undefined ? what : `${where}: ${what}`]
  })
  return parts.length > 0 ? parts.join("; ") : undefined
}

const excerpt = (text: string): string => {
  const line = text.replace(/\s+/g, " ").trim()
  return line.length > EXCERPT ? `${line.slice(0, EXCERPT)}...` : line
}

/**
 * What the body said. `error` is what the SDK kept (the body's `error` value),
 * `raw` the body's text when it was read; either may be absent. Both come from
 * text the client redacted as it read it, so an excerpt's cut falls on no key.
 */
export const said = (error: unknown, raw: string | undefined): Said => {
  if (isObject(error) && (error["message"] !== undefined || error["code"] !== undefined)) return fromObject(error)
  if (typeof error === "string" && error.length > 0) return { message: error }
  if (raw === undefined || raw.trim().length === 0) return {}
  const body = Json.parse(raw)
  if (isObject(body)) {
    const inner = body["error"]
    if (isObject(inner)) return fromObject(inner)
    if (typeof inner === "string") return { message: inner }
    const detail = fromDetail(body["detail"])
    if (detail !== undefined) return { message: detail }
    if (typeof body["message"] === "string") return fromObject(body)
  }
  return { message: excerpt(raw) }
}
