/**
 * Request headers for a gateway in front of the model (Cloudflare AI Gateway's
 * `cf-aig-authorization`, a company proxy's own token), from `MINO_HEADERS`: one
 * `Name: value` a line, as HTTP writes them, blank lines ignored:
 *
 *     MINO_HEADERS='cf-aig-authorization: Bearer <gateway token>'
 *
 * Checked once, at start, each problem one line that names the line and never
 * shows a value:
 *
 * - a name is an HTTP token, a value printable ASCII (tabs allowed), trimmed as
 *   HTTP trims it: a CR, LF or any other control character cannot smuggle a
 *   second header or end the request head;
 * - the key never goes through it: `authorization` and `api-key` are Mino's (it
 *   sends `OPENAI_API_KEY` in them), and no value may hold the key;
 * - the headers that frame the request (`host`, `content-length`,
 *   `transfer-encoding`, `connection`, `content-type`, `accept`, ...) are Mino's
 *   too, and a name given twice is refused.
 *
 * The values are secrets: `secretsOf` gives what `Secrets` must protect beside the
 * key (each value, and the token of a `<scheme> <token>` value), so they are
 * redacted on the screen, in errors and in files by the same rules as the key.
 */
import * as Either from "effect/Either"

export type Header = readonly [name: string, value: string]

/** An HTTP field name (RFC 9110 `token`). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

/** Printable ASCII and tab: what a value may hold. */
const VALUE = /^[\t\x20-\x7e]*$/

/** Headers that carry the key: Mino sets them from `OPENAI_API_KEY`. */
const KEY_HEADERS: ReadonlySet<string> = new Set(["authorization", "api-key"])

/** Headers that frame the request or that Mino's transport depends on. */
const FRAMING: ReadonlySet<string> = new Set([
  "host",
  "content-length",
  "content-type",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "upgrade",
  "te",
  "trailer",
  "expect",
  "accept",
  "accept-encoding"
])

/** The shortest key whose presence inside a longer value is checked (a one-letter key is in every value). */
const KEY_INSIDE = 8

/**
 * The headers `text` gives, or the one line saying what is wrong with it.
 * `apiKey` is the key as it is sent (trimmed); empty for none.
 */
export const parse = (text: string | undefined, apiKey: string, label = "MINO_HEADERS"): Either.Either<ReadonlyArray<Header>, string> => {
  if (text === undefined) return Either.right([])
  const headers: Array<Header> = []
  const seen = new Set<string>()
  const lines = text.split("\n")
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!
    if (line.trim().length === 0) continue
    const where = `${label} line ${index + 1}`
    const colon = line.indexOf(":")
    if (colon === -1) return Either.left(`${where} is not \`Name: value\` (one header a line)`)
    const name = line.slice(0, colon).trim()
    // HTTP trims spaces and tabs around a value; only that exact value is sent, and protected.
    const value = line.slice(colon + 1).replace(/^[\t ]+|[\t ]+$/g, "")
    if (!TOKEN.test(name)) return Either.left(`${where}: the header name is not a valid HTTP name`)
    const lower = name.toLowerCase()
    if (KEY_HEADERS.has(lower)) {
      return Either.left(`${where}: ${lower} carries OPENAI_API_KEY, which Mino sends itself; set the key there, not in ${label}`)
    }
    if (FRAMING.has(lower)) return Either.left(`${where}: ${lower} is set by Mino and cannot be changed`)
    if (seen.has(lower)) return Either.left(`${where}: ${lower} is given twice`)
    if (!VALUE.test(value)) return Either.left(`${where}: the value of ${lower} holds a control or non-ASCII character`)
    if (value.length === 0) return Either.left(`${where}: ${lower} has no value`)
    if (holdsKey(value, apiKey) || holdsKey(name, apiKey)) {
      return Either.left(`${where}: ${lower} holds OPENAI_API_KEY; the key never goes in ${label}`)
    }
    seen.add(lower)
    headers.push([lower, value])
  }
  return Either.right(headers)
}

/**
 * The problem with headers given as pairs (a library user's `ModelClientConfig.headers`),
 * by the same rules as `MINO_HEADERS`; undefined when there is none.
 */
export const problem = (headers: ReadonlyArray<Header>, apiKey: string): string | undefined =>
  Either.match(parse(headers.map(([name, value]) => `${name}: ${value}`).join("\n"), apiKey, "the model client's headers"), {
    onLeft: (line) => line,
    onRight: (parsed) => (parsed.length === headers.length ? undefined : "the model client's headers: a name or value is blank")
  })

const holdsKey = (text: string, apiKey: string): boolean =>
  apiKey.length > 0 && (text === apiKey || (apiKey.length >= KEY_INSIDE && text.includes(apiKey)))

/** What `Secrets` protects beside the key: each value, and the token of a `<scheme> <token>` value. */
export const secretsOf = (headers: ReadonlyArray<Header>): ReadonlyArray<string> =>
  headers.flatMap(([, value]) => {
    const token = /^[A-Za-z][A-Za-z0-9._~+/-]*[\t ]+(\S.*)$/.exec(value)?.[1]
    return token === undefined ? [value] : [value, token]
  })
