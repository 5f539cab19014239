/**
 * What an endpoint said when it refused a request: the message, code, type and
 * param of its error body, whatever its shape. OpenAI and most servers send
 * `{"error": {"message", "type", "param", "code"}}` (vLLM and llama.cpp with a
 * numeric `code`); some send `{"error": "text"}`; FastAPI servers (gpt-oss's, any
 * FastAPI 404 or 422) send `{"detail": "text"}` or `{"detail": [{"loc", "msg"}]}`;
 * others `{"message": ...}` or plain text. The openai SDK keeps only the `error`
 * key, so the raw body is read too. The client makes the result one redacted line.
 */
import * as Json from "../Json.js"
import type { Problem } from "./StreamEvents.js"

export interface Said extends Problem {
  readonly param?: string | null | undefined
}

/** How much of a body without a recognised message is shown. */
const EXCERPT = 200

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const stringOr = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined)

const codeOf = (value: unknown): string | number | undefined =>
  typeof value === "string" || typeof value === "number" ? value : undefined

/** An `{ message, code, type, param }` object, as far as it has them. */
const fromObject = (error: Readonly<Record<string, unknown>>): Said => {
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
    if (!isRecord(entry)) return []
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
 * `raw` the body's text when it was read; either may be absent.
 */
export const said = (error: unknown, raw: string | undefined): Said => {
  if (isRecord(error) && (error["message"] !== undefined || error["code"] !== undefined)) return fromObject(error)
  if (typeof error === "string" && error.length > 0) return { message: error }
  if (raw === undefined || raw.trim().length === 0) return {}
  const body = Json.parse(raw)
  if (isRecord(body)) {
    const inner = body["error"]
    if (isRecord(inner)) return fromObject(inner)
    if (typeof inner === "string") return { message: inner }
    const detail = fromDetail(body["detail"])
    if (detail !== undefined) return { message: detail }
    if (typeof body["message"] === "string") return fromObject(body)
  }
  return { message: excerpt(raw) }
}
