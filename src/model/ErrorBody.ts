/**
 * What an endpoint said when it refused a request or failed a stream, and what
 * it means: the message, code, type and param of its error, whatever its shape,
 * and whether it is the context window overflowing.
 *
 * OpenAI and most servers send `{"error": {"message", "type", "param", "code"}}`
 * (vLLM and llama.cpp with a numeric `code`); some send `{"error": "text"}`;
 * FastAPI servers (gpt-oss's, any FastAPI 404 or 422) send `{"detail": "text"}` or
 * `{"detail": [{"loc", "msg"}]}`; Hugging Face's router (responses.js, an express
 * server validating with zod 3) sends `{"success": false, "error": [issues], "details":
 * [issues]}` (src/middleware/validation.ts @ c0ac6ee), each issue `{ code, path,
 * message }` and a union's failed options under `unionErrors[].issues`; others
 * `{"message": ...}` or plain text. The
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
  /** Where in the request body it points (a zod issue's `path`: `["input", 3, "type"]`), when it says. */
  readonly at?: ReadonlyArray<string | number>
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

/** A zod 3 issue as `JSON.stringify` writes it. */
interface Issue {
  readonly code: string | undefined
  readonly path: ReadonlyArray<string | number>
  readonly message: string
  readonly item: ResponseItem
}

/** How deep into a union's options an explanation follows (a hostile body could nest without end). */
const UNION_DEPTH = 8

const issueOf = (value: unknown): Issue | undefined => {
  if (!isObject(value) || typeof value["message"] !== "string" || !Array.isArray(value["path"])) return undefined
  const path = value["path"].filter((part): part is string | number => typeof part === "string" || typeof part === "number")
  return { code: stringOr(value["code"]), path, message: value["message"], item: value }
}

/** The issues of each of a union issue's options (`unionErrors[].issues`). */
const optionsOf = (issue: Issue): ReadonlyArray<ReadonlyArray<Issue>> => {
  const errors = issue.item["unionErrors"]
  if (!Array.isArray(errors)) return []
  return errors.flatMap((error) =>
    isObject(error) && Array.isArray(error["issues"]) ? [error["issues"].flatMap((entry) => issueOf(entry) ?? [])] : []
  )
}

const samePath = (a: ReadonlyArray<string | number>, b: ReadonlyArray<string | number>): boolean =>
  a.length === b.length && a.every((part, index) => part === b[index])

/**
 * What one issue means, for a person: a union's "Invalid input" is followed into
 * the option that got furthest (the array of items, not the string, for `input`);
 * where every option refuses an object's `type`, that is the problem: the type it
 * had is not one the server takes.
 */
const explain = (issue: Issue, depth = 0): { readonly at: ReadonlyArray<string | number>; readonly message: string } => {
  const options = issue.code === "invalid_union" && depth < UNION_DEPTH ? optionsOf(issue) : []
  if (options.length > 0) {
    const typeAt = [...issue.path, "type"]
    const refusals = options.map((option) => option.find((inner) => samePath(inner.path, typeAt)))
    if (refusals.every((refusal) => refusal !== undefined)) {
      const received = refusals.map((refusal) => refusal?.item["received"]).find((value) => typeof value === "string")
      const accepted = [...new Set(refusals.flatMap((refusal) => {
        const listed = refusal?.item["options"]
        const expected = refusal?.item["expected"]
        return Array.isArray(listed) ? listed.map(String) : typeof expected === "string" ? [expected] : []
      }))]
      return {
        at: typeAt,
        message: `${received === undefined ? "the type" : `type ${JSON.stringify(received)}`} is not accepted` +
          (accepted.length > 0 ? ` (accepted: ${accepted.join(", ")})` : "")
      }
    }
    const reach = (option: ReadonlyArray<Issue>): number => Math.max(0, ...option.map((inner) => inner.path.length))
    const furthest = Math.max(...options.map(reach))
    const leaders = options.filter((option) => reach(option) === furthest)
    const deepest = leaders[0]?.find((inner) => inner.path.length === furthest)
    if (leaders.length === 1 && furthest > issue.path.length && deepest !== undefined) return explain(deepest, depth + 1)
  }
  return { at: issue.path, message: issue.message }
}

/** zod's issues as one line (the first three), and where the first points. */
const fromIssues = (entries: ReadonlyArray<unknown>): Said | undefined => {
  const issues = entries.flatMap((entry) => issueOf(entry) ?? [])
  if (issues.length === 0) return undefined
  const explained = issues.map((issue) => explain(issue))
  const parts = explained.slice(0, 3).map(({ at, message }) => (at.length === 0 ? message : `${at.join(".")}: ${message}`))
  const more = issues.length > 3 ? ` (and ${issues.length - 3} more)` : ""
  return { message: parts.join("; ") + more, at: explained[0]!.at, code: issues[0]!.code }
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
    const issues = Array.isArray(inner) ? fromIssues(inner) : undefined
    if (issues !== undefined) return issues
    const detail = fromDetail(body["detail"])
    if (detail !== undefined) return { message: detail }
    if (typeof body["message"] === "string") return fromObject(body)
  }
  return { message: excerpt(raw) }
}
