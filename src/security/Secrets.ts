/**
 * The API key, held in one place, and everything a receiver needs to keep it off
 * the screen, out of files, away from children and from the model.
 *
 * The `Secrets` service holds the key once, as `Redacted` (it prints as
 * `<redacted>`), trimmed once: HTTP trims a header value, so `sk-…\n` authenticates
 * as `sk-…`, and only that exact value can be found again. Every layer that could
 * leak the key (the terminal, the session encoder, the tool registry, the bash
 * runner and the child environment, the model client) `yield*`s this service in
 * its constructor; none takes the key as an option. A library user who gives
 * Mino its key (`Mino.layer({ apiKey })`) therefore gets redaction everywhere.
 *
 * The rules, as pure functions over the protected strings:
 *
 * - Only a key of at least `MIN_LENGTH` (8) characters is protected: redacting a
 *   one-letter test key (`x`, or `ollama` for a local server) would mangle
 *   ordinary text. Such a key is still sent; Mino says once at start that it
 *   cannot be redacted (`SHORT_KEY_WARNING`).
 * - Text cut at an arbitrary point (a capture limit) can end in the first part
 *   of the key: at a cut, a trailing prefix of the key of `MIN_PREFIX` (4) or
 *   more characters is redacted too (`redactCut`). At most 3 characters of the
 *   key can survive a cut (for an OpenAI key, the `sk-` every key begins with).
 *   This is the one rule for every cut Mino makes (a command's capture, a
 *   result's cap, an endpoint's error body and error line): redact, then cut,
 *   then `redactCut`. Text that something else cut where Mino cannot see (V8's
 *   JSON errors quote a window of their input) is never shown.
 * - Other secrets can be held beside the key (the values of a gateway's headers,
 *   `MINO_HEADERS`): every rule here applies to them as to the key, from this one
 *   place; `redactable` still speaks of the key alone.
 * - Streamed text can split the key across writes: a writer holds back the tail
 *   that could begin it (`heldBack`) until the next write shows what follows.
 */
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"

/** The shortest key that is protected (found and redacted); shorter ones would mangle ordinary text. */
export const MIN_LENGTH = 8

/** At a cut, a trailing prefix of the key this long or longer is redacted: at most `MIN_PREFIX - 1` characters survive. */
export const MIN_PREFIX = 4

export const REDACTED = "[redacted]"

/** Said once at start when the key is too short to be redacted (it is still used). */
export const SHORT_KEY_WARNING =
  `mino: the API key is shorter than ${MIN_LENGTH} characters, so Mino cannot tell it from ordinary text and will not redact it: ` +
  "it may appear on the screen, in the session file, in what is sent to the model, and commands may see it."

export interface SecretsShape {
  /** The key to send, as given (trimmed once); `Redacted`, so it never prints by accident. */
  readonly apiKey: Redacted.Redacted<string>
  /** Whether the key is protected everywhere below; false for a key too short to tell from text, or a placeholder. */
  readonly redactable: boolean
  /** `text` with every occurrence of the key replaced by `[redacted]`. */
  readonly redact: (text: string) => string
  /** `redact`, for text that was cut at its end: a trailing prefix of the key (`MIN_PREFIX`+ characters) is redacted too. */
  readonly redactCut: (text: string) => string
  /** Whether `text` holds the key. */
  readonly contains: (text: string) => boolean
  /** Whether text holds the key, as written or once JSON escapes in it are decoded, wherever they stand (`\u0073k-…`). */
  readonly inJson: (text: string) => boolean
  /** How many characters at the end of streamed `text` could begin the key: hold them back until more arrives. */
  readonly heldBack: (text: string) => number
  /**
   * Whether JSON text as `JSON.stringify` writes it holds the key in any of its
   * strings (object keys too), or spells it in its text as it is (a key holding
   * `"` or `\` across strings or escapes, one with a lone surrogate beside its
   * pair): a search for the key as that function escapes it, and as it is where
   * that differs. Exact for such text, and as cheap as `contains` for a key JSON
   * does not escape; for text of any other spelling, `inJson`.
   */
  readonly inStringified: (json: string) => boolean
  /**
   * Whether JSON text holds the key once it is written as a JSON string itself, as
   * a tool result's JSON text is sent (the `output` of its `function_call_output`):
   * the second escape adds only backslashes, so only a key holding `\` can be
   * spelled there and not in the text; for any other key this is false, at no cost.
   */
  readonly inStringifiedTwice: (json: string) => boolean
}

export interface SecretsOptions {
  /** False for a key that is not a secret (the demo's placeholder): it is sent, and nothing is redacted. Default true. */
  readonly protect?: boolean
  /**
   * Other secrets, protected by the same rules as the key (the values of a
   * gateway's headers, `MINO_HEADERS`): redacted wherever the key is, by the same
   * functions, with the same `MIN_LENGTH`. They do not change `redactable`.
   */
  readonly also?: ReadonlyArray<string>
}

/** The service for `apiKey` (trimmed here, once). */
export const make = (apiKey: Redacted.Redacted<string> | string, options: SecretsOptions = {}): SecretsShape => {
  const key = (typeof apiKey === "string" ? apiKey : Redacted.value(apiKey)).trim()
  // Guarded: `layerNone` is made as this module loads, before `effective` below is defined.
  const also = options.also === undefined || options.also.length === 0 ? [] : effective(options.also.map((secret) => secret.trim()))
  const protectedKeys = [...(options.protect === false ? [] : effective([key])), ...also]
  // Each secret as JSON.stringify writes it inside a string, and as it is where that differs: JSON text can spell a
  // secret holding `"` or `\` by its escapes or across strings, and a lone surrogate in it beside its pair is written as it is.
  const stringifiedKeys = protectedKeys.flatMap((secret) => {
    const escaped = JSON.stringify(secret).slice(1, -1)
    return escaped === secret ? [secret] : [escaped, secret]
  })
  const backslashed = protectedKeys.some((secret) => secret.includes("\\"))
  return {
    apiKey: Redacted.make(key),
    redactable: protectedKeys.length > also.length,
    redact: (text) => redact(text, protectedKeys),
    redactCut: (text) => redactCut(text, protectedKeys),
    // `protectedKeys` are effective already: searched as they are, with no list made for each text.
    contains: (text) => protectedKeys.some((secret) => text.includes(secret)),
    inJson: (text) => inJson(text, protectedKeys),
    heldBack: (text) => heldBack(text, protectedKeys),
    inStringified: (json) => inStringified(json, stringifiedKeys),
    inStringifiedTwice: backslashed ? (json) => contains(JSON.stringify(json), protectedKeys) : () => false
  }
}

export class Secrets extends Context.Tag("mino/Secrets")<Secrets, SecretsShape>() {
  /** The key (and `also`, a gateway's header values), protected everywhere it could leak. */
  static readonly layer = (apiKey: Redacted.Redacted<string> | string, also: ReadonlyArray<string> = []): Layer.Layer<Secrets> =>
    Layer.succeed(Secrets, make(apiKey, { also }))
  /** A key that is not a secret (the demo's placeholder): sent as given, never redacted. */
  static readonly layerPlaceholder = (apiKey: Redacted.Redacted<string> | string): Layer.Layer<Secrets> => Layer.succeed(Secrets, make(apiKey, { protect: false }))
  /** No key at all, for parts that send nothing (tests of the terminal, the store, the runner). */
  static readonly layerNone: Layer.Layer<Secrets> = Secrets.layerPlaceholder("")
}

// ---------------------------------------------------------------------------
// The rules, over the protected strings.

/** The strings worth protecting among `secrets`. */
export const effective = (secrets: ReadonlyArray<string>): ReadonlyArray<string> =>
  secrets.filter((secret) => secret.length >= MIN_LENGTH)

/** `text` with every occurrence of each (effective) secret replaced. */
export const redact = (text: string, secrets: ReadonlyArray<string>): string =>
  effective(secrets).reduce((current, secret) => current.split(secret).join(REDACTED), text)

/** The length of the longest proper prefix of a secret, `atLeast` characters or more, that `text` ends with (0: none). */
const trailingPrefix = (text: string, secrets: ReadonlyArray<string>, atLeast: number): number => {
  let longest = 0
  for (const secret of effective(secrets)) {
    for (let n = Math.min(secret.length - 1, text.length); n >= Math.max(atLeast, longest + 1); n--) {
      if (text.endsWith(secret.slice(0, n))) {
        longest = n
        break
      }
    }
  }
  return longest
}

/** `redact`, then a trailing prefix of a secret of `MIN_PREFIX` or more characters replaced too: for text cut at its end. */
export const redactCut = (text: string, secrets: ReadonlyArray<string>): string => {
  const redacted = redact(text, secrets)
  const cut = trailingPrefix(redacted, secrets, MIN_PREFIX)
  return cut === 0 ? redacted : redacted.slice(0, redacted.length - cut) + REDACTED
}

/** How many characters at the end of `text` could begin a secret (any proper prefix, however short). */
export const heldBack = (text: string, secrets: ReadonlyArray<string>): number => trailingPrefix(text, secrets, 1)

/** Whether `text` holds any (effective) secret. */
export const contains = (text: string, secrets: ReadonlyArray<string>): boolean =>
  effective(secrets).some((secret) => text.includes(secret))

/** One JSON escape (`\u0073`, `\"`, `\\`, `\/`, `\n`...), decoded. */
const JSON_ESCAPE = /\\(?:u([0-9a-fA-F]{4})|(["\\/bfnrt]))/g
const SIMPLE_ESCAPES: Readonly<Record<string, string>> = { "\"": "\"", "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" }
const decodeEscape = (_: string, hex: string | undefined, simple: string | undefined): string =>
  hex !== undefined ? String.fromCharCode(parseInt(hex, 16)) : SIMPLE_ESCAPES[simple ?? ""] ?? ""

const ESCAPE_ALONE = /\\(?:u([0-9a-fA-F]{4})|u\{([0-9a-fA-F]{1,6})\}|x([0-9a-fA-F]{2}))/g
const decodeAlone = (whole: string, unit: string | undefined, point: string | undefined, byte: string | undefined): string => {
  const code = parseInt(unit ?? point ?? byte ?? "", 16)
  return code <= 0x10ffff ? String.fromCodePoint(code) : whole
}

/**
 * `text` with JSON's escapes decoded wherever they stand, in every reading that
 * could spell a secret: left to right as JSON reads them, again for text escaped
 * more than once (JSON inside a JSON string), and each `\uXXXX`, `\u{…}` or `\xHH`
 * alone (after a backslash that JSON would read as escaped itself).
 */
const decodings = (text: string): ReadonlyArray<string> => {
  const found: Array<string> = []
  let current = text
  // Each decoding shortens the text, so this ends; a few rounds cover any real nesting.
  for (let round = 0; round < 8 && current.includes("\\"); round++) {
    const next = current.replace(JSON_ESCAPE, decodeEscape)
    if (next === current) break
    found.push(next)
    current = next
  }
  // Each escape alone, JSON's `\uXXXX` and JavaScript's (and a shell's `printf`) `\xHH` and `\u{H…}` too.
  if (/\\[ux]/.test(text)) found.push(text.replace(ESCAPE_ALONE, decodeAlone))
  return found
}

/**
 * Whether text holds a secret as written or once JSON's escapes in it are decoded
 * (`\u0073k-…` spells `sk-…`), wherever they stand: the text need not be JSON (an
 * `AGENTS.md` with the key pasted from a JSON configuration). For JSON text this
 * covers every string in it, keys included: each is a stretch of the decoded text.
 */
export const inJson = (text: string, secrets: ReadonlyArray<string>): boolean =>
  effective(secrets).length > 0 && (contains(text, secrets) || decodings(text).some((decoded) => contains(decoded, secrets)))

/**
 * Whether `json` (as `JSON.stringify` writes it) holds one of `stringified`, the
 * secrets each as that function writes it inside a string. `JSON.stringify`
 * escapes character by character, so a string that holds a secret holds its
 * escaped form; a match that begins inside an escape is a false alarm, after
 * which redacting the value's strings finds nothing to replace.
 */
const inStringified = (json: string, stringified: ReadonlyArray<string>): boolean =>
  stringified.some((secret) => json.includes(secret.length > PROBE ? secret.slice(-PROBE) : secret) && json.includes(secret))

/**
 * How much of a secret's end is searched for first. V8 searches a text of
 * megabytes for a 16-character string several times faster than for the whole
 * key (about 3 against 17 ms over 55 MB in 100,000 texts, measured on Node 20),
 * and a key's end is its random part: the whole key is searched for only where
 * its end was found.
 */
const PROBE = 16

/**
 * `value` (parsed JSON: a record, an output item) with `redact` applied to every
 * string in it, object keys included, before it is encoded: the key is found in
 * the raw strings, whatever characters it holds, not in their JSON escapes (where
 * a `"`, `\` or tab in it reads `\"`, `\\`, `\t`). What holds no key is returned
 * as it is, not copied.
 */
export const redactStrings = <A>(value: A, redact: (text: string) => string): A => {
  const walk = (current: unknown): unknown => {
    if (typeof current === "string") return redact(current)
    if (typeof current !== "object" || current === null) return current
    if (Array.isArray(current)) {
      let copy: Array<unknown> | undefined
      current.forEach((item, index) => {
        const clean = walk(item)
        if (clean !== item) (copy ??= current.slice())[index] = clean
      })
      return copy ?? current
    }
    const entries = Object.entries(current)
    let changed = false
    const cleaned = entries.map(([key, item]): [string, unknown] => {
      const [cleanKey, clean] = [redact(key), walk(item)]
      if (cleanKey !== key || clean !== item) changed = true
      return [cleanKey, clean]
    })
    // fromEntries defines own properties: a "__proto__" key stays a key, as JSON.parse made it.
    return changed ? Object.fromEntries(cleaned) : current
  }
  return walk(value) as A
}

/**
 * `text`, which came after streamed text that ended holding `held` back (a beginning of
 * the key, shown redacted), with the rest of the key after that beginning taken out
 * where `MIN_PREFIX` or more of it appear: an endpoint that splits the key between a
 * text's end and the error that follows it shows no piece of it either.
 */
export const afterHeld = (secrets: Pick<SecretsShape, "apiKey" | "redactable">, held: string, text: string): string => {
  if (!secrets.redactable || held === "") return text
  const key = Redacted.value(secrets.apiKey)
  if (!key.startsWith(held)) return text
  const rest = key.slice(held.length)
  for (let length = rest.length; length >= MIN_PREFIX; length--) {
    const piece = rest.slice(0, length)
    if (text.includes(piece)) return text.split(piece).join(REDACTED)
  }
  return text
}

/**
 * Streamed text redacted as it comes, before anything escapes it for the screen:
 * `push` returns what may be shown now, keeping back a tail that could begin the
 * key until the next piece shows what follows; `flush` returns that tail when the
 * text ends.
 */
export const streamRedactor = (secrets: Pick<SecretsShape, "redact" | "heldBack">) => {
  let held = ""
  return {
    push: (text: string): string => {
      const combined = secrets.redact(held + text)
      const keep = secrets.heldBack(combined)
      held = combined.slice(combined.length - keep)
      return combined.slice(0, combined.length - keep)
    },
    flush: (): string => {
      const rest = held
      held = ""
      return rest
    }
  }
}
