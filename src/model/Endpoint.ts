/**
 * What Mino knows about the endpoint `OPENAI_BASE_URL` names, in one place: the
 * family it belongs to (from its host), how its URL is built (a query such as
 * Azure's `api-version` stays a query on every request), which header carries the
 * key, and how earlier output items are sent back to it (the replay rule).
 *
 * The replay rule, per family, from each server's source and recorded traffic
 * (the fixtures under `test/model/endpoints/` name them, `Rules.ts` holds each
 * server's input rules):
 *
 * - `openai` (api.openai.com, Azure OpenAI hosts, api.x.ai): under `store: false`
 *   the server resolves a reasoning item only from its `encrypted_content`; one
 *   without it is looked up in storage that was never written (404). Such an item
 *   is left out; every other item goes back verbatim.
 * - `compatible` (every other host: LM Studio, Ollama, llama.cpp, vLLM, gpt-oss's
 *   server, OpenRouter, LiteLLM, proxies): these servers rebuild the chat from the
 *   items and keep no state.
 *   - Reasoning with `encrypted_content` goes back verbatim (with an empty
 *     `summary` list when it has none, as LiteLLM's own items: the Open Responses
 *     schema and llama.cpp require one): Ollama reads its
 *     thinking from there (openai/responses.go), LiteLLM its Anthropic thinking
 *     blocks (transformation.py, `_encode_thinking_blocks`), OpenRouter documents
 *     the field for input. A server that cannot read it says so (vLLM: "Encrypted
 *     content is not supported.", llama.cpp: `item['content'] is not an array`),
 *     and Adaptation.ts leaves earlier turns' reasoning out from then on; Mino
 *     cannot tell those servers from Ollama or LiteLLM by their URL.
 *   - Reasoning whose text is in `content` goes back as `{ id, type, summary,
 *     content }` with its text parts joined into one `reasoning_text` part (by a
 *     newline, as vLLM's harmony path joins them): vLLM reads only `content[0]`
 *     (responses/utils.py @ 01ca842; its harmony path asserts exactly one part,
 *     harmony_utils.py @ 04750fc), llama.cpp only `content[0].text`
 *     (server-chat.cpp @ 03eb25f); llama.cpp and gpt-oss require the `summary`
 *     array, gpt-oss takes only `reasoning_text` parts. OpenRouter's `signature`
 *     and `format` go with it when present (its openapi.yaml: the provider's
 *     signed thinking, which Anthropic needs back with a tool result).
 *   - Reasoning with neither is left out (llama.cpp rejects an empty `content`).
 *   - Every other item goes back verbatim.
 *
 * Nothing here changes what is saved: the session file keeps every item verbatim.
 */
import { isObject, type ResponseItem } from "../protocol/ResponseItem.js"

export type Family = "openai" | "compatible"

export interface Endpoint {
  readonly family: Family
  /** Whether the host is Azure's: the key goes in `api-key`, as Azure documents for key auth. */
  readonly azure: boolean
  /** The base URL without its query, for the SDK to append paths to; undefined: the SDK's default. */
  readonly baseURL: string | undefined
  /** The base URL's query (`api-version=...`), appended to every request URL; "" when none. */
  readonly query: string
  /** A name for the endpoint in memory keys and messages (the base URL as understood, query included, or the default). */
  readonly key: string
}

/**
 * Azure's hosts for key auth, the global cloud's and the sovereign clouds' (Azure
 * Government: `openai.azure.us` in MicrosoftDocs/azure-ai-docs
 * articles/ai-foundry/openai/azure-government.md @ 08a16a0, `*.cognitiveservices.azure.us`
 * in MicrosoftDocs/azure-docs articles/azure-government/compare-azure-government-global-azure.md
 * @ 0023c96; Azure operated by 21Vianet: `.openai.azure.cn`, `.cognitiveservices.azure.cn`).
 * A custom domain or an API Management gateway in front of Azure is not recognised:
 * it is a compatible endpoint, and the key goes as a bearer token.
 */
const AZURE_HOSTS = [
  ".openai.azure.com",
  ".cognitiveservices.azure.com",
  ".services.ai.azure.com",
  ".openai.azure.us",
  ".cognitiveservices.azure.us",
  ".openai.azure.cn",
  ".cognitiveservices.azure.cn"
]
const OPENAI_HOSTS = ["api.openai.com", "api.x.ai"]

const hostOf = (url: string): string | undefined => {
  try {
    return new URL(url).hostname.toLowerCase()
  } catch {
    return undefined
  }
}

/**
 * The endpoint a base URL names; undefined is the SDK's default (OpenAI).
 * `hostAs` classifies it as if its host were that one (a loopback server standing
 * in for a named host, in tests); everything else comes from `baseURL`.
 */
export const parse = (baseURL: string | undefined, hostAs?: string): Endpoint => {
  if (baseURL === undefined || baseURL.length === 0) {
    return { family: "openai", azure: false, baseURL: undefined, query: "", key: "https://api.openai.com/v1" }
  }
  const host = hostAs?.toLowerCase() ?? hostOf(baseURL)
  const azure = host !== undefined && AZURE_HOSTS.some((suffix) => host.endsWith(suffix))
  const openai = azure || (host !== undefined && OPENAI_HOSTS.includes(host))
  // The SDK appends `/responses` to the base URL as a string; a query in it would end up before the path.
  const mark = baseURL.indexOf("?")
  const hash = baseURL.indexOf("#")
  const end = hash === -1 ? baseURL.length : hash
  const path = mark === -1 ? baseURL.slice(0, end) : baseURL.slice(0, mark)
  const query = mark === -1 || mark > end ? "" : baseURL.slice(mark + 1, end)
  const base = withoutResponsesPath(path)
  return {
    family: openai ? "openai" : "compatible",
    azure,
    baseURL: base,
    query,
    key: query.length === 0 ? base : `${base}?${query}`
  }
}

/**
 * A base URL as the SDK takes it: without the trailing slashes and without a
 * pasted `/responses` (several servers' docs give the whole request URL,
 * `…/v1/responses`); the SDK appends `/responses` itself.
 */
const withoutResponsesPath = (path: string): string => {
  let base = path.replace(/\/+$/, "")
  if (/\/responses$/i.test(base)) base = base.slice(0, -"/responses".length).replace(/\/+$/, "")
  return base.length === 0 ? path : base
}

/**
 * Whether a base URL's host is this machine: `localhost` (and names under
 * `.localhost`, which resolve to loopback by RFC 6761), any address in 127.0.0.0/8,
 * `::1`, and IPv4-mapped loopback (`::ffff:127.0.0.1`). Nothing else: not 0.0.0.0,
 * not the machine's own names or its LAN addresses (a key sent there leaves the
 * loopback interface). No base URL (OpenAI's) is not loopback.
 */
export const isLoopback = (baseURL: string | undefined): boolean => {
  if (baseURL === undefined || baseURL.length === 0) return false
  const host = hostOf(baseURL)?.replace(/\.$/, "")
  if (host === undefined) return false
  if (host === "localhost" || host.endsWith(".localhost")) return true
  if (/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)) return true
  // WHATWG URL writes IPv6 hosts bracketed and compressed: [::1], [::ffff:7f00:1] for ::ffff:127.0.0.1.
  if (host === "[::1]") return true
  const mapped = /^\[::ffff:([0-9a-f]{1,4}):[0-9a-f]{1,4}\]$/.exec(host)
  return mapped !== null && (parseInt(mapped[1]!, 16) >> 8) === 127
}

/** `url` with the endpoint's query added to its own (the SDK adds none for a Responses request). */
export const withQuery = (endpoint: Endpoint, url: string): string => {
  if (endpoint.query.length === 0) return url
  return url.includes("?") ? `${url}&${endpoint.query}` : `${url}?${endpoint.query}`
}

/** The request headers for the key: Azure's `api-key` on Azure hosts (no bearer), else the SDK's bearer. */
export const authorize = (endpoint: Endpoint, headers: Headers, apiKey: string): void => {
  if (!endpoint.azure) return
  headers.delete("authorization")
  headers.set("api-key", apiKey)
}

const nonEmpty = (value: unknown): value is string => typeof value === "string" && value.length > 0

/** The text of a reasoning item's `content` parts (`reasoning_text`, or any part with text), in order. */
const reasoningText = (item: ResponseItem): ReadonlyArray<string> => {
  const content = item["content"]
  if (!Array.isArray(content)) return []
  return content.flatMap((part) => (isObject(part) && nonEmpty(part["text"]) ? [part["text"]] : []))
}

/**
 * An input item as `family` takes it back: the item itself, another form of it,
 * or undefined when it must be left out. Only reasoning items are ever changed.
 */
export const replayItem = (family: Family, item: ResponseItem): ResponseItem | undefined => {
  if (item["type"] !== "reasoning") return item
  if (family === "openai") return nonEmpty(item["encrypted_content"]) ? item : undefined
  // The summary list the Open Responses schema and llama.cpp require (LiteLLM's own items have none).
  if (nonEmpty(item["encrypted_content"])) return Array.isArray(item["summary"]) ? item : { ...item, summary: [] }
  const text = reasoningText(item)
  if (text.length === 0) return undefined
  const summary = item["summary"]
  return {
    ...(typeof item["id"] === "string" ? { id: item["id"] } : {}),
    type: "reasoning",
    summary: Array.isArray(summary) ? summary : [],
    content: [{ type: "reasoning_text", text: text.join("\n") }],
    // OpenRouter's proof of a provider's thinking (Anthropic's signed blocks), which that provider needs back.
    ...(nonEmpty(item["signature"]) ? { signature: item["signature"] } : {}),
    ...(nonEmpty(item["format"]) ? { format: item["format"] } : {})
  }
}

/** The input of a request to `family`: each item as it takes it back, in order. */
export const replay = (family: Family, input: ReadonlyArray<ResponseItem>): ReadonlyArray<ResponseItem> => {
  const out: Array<ResponseItem> = []
  for (const item of input) {
    const replayed = replayItem(family, item)
    if (replayed !== undefined) out.push(replayed)
  }
  return out
}
