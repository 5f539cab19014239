/**
 * `~/.mino/config.json`: what would otherwise be an environment variable, kept in
 * a file — the model, the endpoint and a gateway's headers — and never the key.
 *
 *     { "model": "gpt-5.1-mini", "endpoint": "http://localhost:11434/v1",
 *       "headers": { "cf-aig-authorization": "Bearer TOKEN" } }
 *
 * It becomes a `ConfigProvider` under the environment's (`ConfigProvider.orElse`):
 * `Config.ts` reads `MINO_MODEL`, `OPENAI_BASE_URL` and `MINO_HEADERS` as before,
 * and a variable that is set (not empty) wins over the file. `sources` says where
 * each value came from, for `mino --help` and `/status`.
 *
 * The file is trusted as the sessions directory is (`SessionDirectory.ts`): a
 * regular file (never a symlink, FIFO or device, opened without following or
 * blocking), owned by this user, not writable by group or others, in a `~/.mino`
 * of the same kind; at most 64 KiB; a JSON object with only the three settings,
 * each a string (headers: an object of strings). The key in any spelling (a
 * setting named like one, a value holding it, an `Authorization` header) is
 * refused. A file that breaks a rule is one line, and the chat does not start
 * (exit 2); nothing is written, so nothing is lost. A missing file is no file.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Either from "effect/Either"
import * as Json from "../Json.js"
import * as Escape from "../security/Escape.js"
import * as Secrets from "../security/Secrets.js"

/** The settings, by the variable each one stands for. */
export const SETTINGS = [
  { name: "model", variable: "MINO_MODEL" },
  { name: "endpoint", variable: "OPENAI_BASE_URL" },
  { name: "headers", variable: "MINO_HEADERS" }
] as const
export type Setting = (typeof SETTINGS)[number]["name"]

/** The largest file read: a few settings take far less. */
export const MAX_BYTES = 64 * 1024

/** The file's settings, as the variables' text (headers as `Name: value` lines). */
export type Values = Readonly<Partial<Record<Setting, string>>>

/** Where `home`'s configuration file is. */
export const pathOf = (home: string): string => Path.join(home, ".mino", "config.json")

/** How the file is shown in messages: `~/.mino/config.json`. */
export const SHOWN = "~/.mino/config.json"

const { O_NOFOLLOW, O_NONBLOCK, O_RDONLY, O_DIRECTORY } = Fs.constants

const errno = (error: unknown): string => typeof error === "object" && error !== null && "code" in error ? String(error.code) : "EIO"

/** Whether `stats` (a file or ~/.mino) may be trusted: this user's, and not writable by group or others. */
const trusted = (stats: Fs.Stats, what: string): string | undefined => {
  const uid = process.getuid?.()
  if (uid !== undefined && stats.uid !== uid) return `${what} belongs to another user (uid ${stats.uid}); Mino does not read it`
  if ((stats.mode & 0o022) !== 0) return `${what} can be written by others (mode ${(stats.mode & 0o777).toString(8)}); make it yours alone (chmod go-w)`
  return undefined
}

const kind = (stats: Fs.Stats): string =>
  stats.isSymbolicLink() ? "a symbolic link" : stats.isFIFO() ? "a FIFO" : stats.isDirectory() ? "a directory" : stats.isCharacterDevice() || stats.isBlockDevice() ? "a device" : stats.isSocket() ? "a socket" : "not a regular file"

/** The file's text (undefined: there is none), or the one line that refuses it. */
export const read = (home: string): Either.Either<string | undefined, string> => {
  const dir = Path.join(home, ".mino")
  try {
    const before = Fs.lstatSync(dir)
    if (!before.isDirectory()) return Either.left(`${Escape.forValue(dir)} is ${kind(before)}, not a directory; Mino does not follow it`)
    const fd = Fs.openSync(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
    try {
      const refused = trusted(Fs.fstatSync(fd), Escape.forValue(dir))
      if (refused !== undefined) return Either.left(refused)
    } finally {
      Fs.closeSync(fd)
    }
  } catch (error) {
    return errno(error) === "ENOENT" ? Either.right(undefined) : Either.left(`cannot read ${Escape.forValue(dir)} (${errno(error)})`)
  }
  return readFile(pathOf(home))
}

const readFile = (path: string): Either.Either<string | undefined, string> => {
  let fd: number
  try {
    const before = Fs.lstatSync(path)
    // A FIFO or device is refused before it is opened: opening one can block or act.
    if (!before.isFile()) return Either.left(`${SHOWN} is ${kind(before)}, not a regular file; Mino does not open it`)
    fd = Fs.openSync(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
  } catch (error) {
    const code = errno(error)
    if (code === "ENOENT") return Either.right(undefined)
    return Either.left(code === "ELOOP" ? `${SHOWN} is a symbolic link; Mino does not follow it` : `cannot open ${SHOWN} (${code})`)
  }
  try {
    const stats = Fs.fstatSync(fd)
    if (!stats.isFile()) return Either.left(`${SHOWN} is ${kind(stats)}, not a regular file; Mino does not open it`)
    const refused = trusted(stats, SHOWN)
    if (refused !== undefined) return Either.left(refused)
    if (stats.size > MAX_BYTES) return Either.left(`${SHOWN} is larger than ${MAX_BYTES / 1024} KiB; it holds three settings at most`)
    const buffer = Buffer.alloc(MAX_BYTES + 1)
    let length = 0
    for (let read = -1; read !== 0 && length <= MAX_BYTES;) length += read = Fs.readSync(fd, buffer, length, buffer.length - length, null)
    if (length > MAX_BYTES) return Either.left(`${SHOWN} is larger than ${MAX_BYTES / 1024} KiB; it holds three settings at most`)
    return Either.right(buffer.toString("utf8", 0, length))
  } catch (error) {
    return Either.left(`cannot read ${SHOWN} (${errno(error)})`)
  } finally {
    Fs.closeSync(fd)
  }
}

/** A setting's name that is the key's in some spelling: `apiKey`, `OPENAI_API_KEY`, `api-key`, `token`. */
const namesKey = (name: string): boolean => /key|token|secret|password|authorization|credential/.test(name.toLowerCase().replace(/[^a-z]/g, ""))

/** Header names that carry the key: Mino sends `OPENAI_API_KEY` in them itself. */
const KEY_HEADERS: ReadonlySet<string> = new Set(["authorization", "api-key", "x-api-key", "proxy-authorization"])

/** Text that looks like an OpenAI key, or holds the key in use (as written or JSON-escaped: `Secrets.inJson`, the one rule). */
const holdsKey = (text: string, apiKey: string | undefined): boolean =>
  /\bsk-[A-Za-z0-9_-]{16,}/.test(text) || (apiKey !== undefined && Secrets.inJson(text, [apiKey]))

const KEY_REFUSED = `${SHOWN} holds an API key; the key never goes in the file: set OPENAI_API_KEY in the environment`

/** One setting's value as the variable's text, or why it is refused. */
const valueOf = (name: Setting, value: unknown): Either.Either<string, string> => {
  if (name !== "headers") {
    if (typeof value !== "string") return Either.left(`${SHOWN}: "${name}" must be a string`)
    if (/[\u0000-\u001f\u007f-\u009f]/.test(value)) return Either.left(`${SHOWN}: "${name}" holds a control character`)
    return Either.right(value)
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return Either.left(`${SHOWN}: "headers" must be an object of "Name": "value" pairs`)
  }
  const lines: Array<string> = []
  for (const [header, text] of Object.entries(value)) {
    if (KEY_HEADERS.has(header.toLowerCase())) return Either.left(KEY_REFUSED)
    if (typeof text !== "string") return Either.left(`${SHOWN}: the header ${Escape.jsonString(header.slice(0, 40))} must have a string value`)
    // One header a line in MINO_HEADERS: a line break here would smuggle in another.
    if (/[\r\n]/.test(header) || /[\r\n]/.test(text)) return Either.left(`${SHOWN}: a header holds a line break`)
    lines.push(`${header}: ${text}`)
  }
  return Either.right(lines.join("\n"))
}

/** The settings `text` holds, or the one line that refuses it. `apiKey`: the key in use, never allowed in the file. */
export const parse = (text: string, apiKey: string | undefined): Either.Either<Values, string> => {
  const json = Json.parse(text)
  if (json === undefined) return Either.left(`${SHOWN} is not valid JSON`)
  if (typeof json !== "object" || json === null || Array.isArray(json)) return Either.left(`${SHOWN} must hold one JSON object`)
  if (holdsKey(text, apiKey)) return Either.left(KEY_REFUSED)
  const values: Partial<Record<Setting, string>> = {}
  for (const [name, value] of Object.entries(json)) {
    if (namesKey(name)) return Either.left(KEY_REFUSED)
    const setting = SETTINGS.find((known) => known.name === name)
    if (setting === undefined) {
      return Either.left(`${SHOWN}: unknown setting ${Escape.jsonString(name.slice(0, 40))}; it takes ${SETTINGS.map((known) => `"${known.name}"`).join(", ")}`)
    }
    const read = valueOf(setting.name, value)
    if (Either.isLeft(read)) return Either.left(read.left)
    if (holdsKey(read.right, apiKey)) return Either.left(KEY_REFUSED)
    values[setting.name] = read.right
  }
  return Either.right(values)
}

/** Where a setting's value comes from. */
export type Source = "environment" | "file" | "default"

/** Whether the variable is set: an empty one counts as unset, as `Config.ts` reads it. */
const isSet = (value: string | undefined): value is string => value !== undefined && value !== ""

/**
 * The provider `Config.ts` reads through: the environment, with the configurable
 * variables that are empty taken out (empty is unset, so the file's value
 * shows), over the file's values by their variables' names.
 */
export const provider = (env: Readonly<Record<string, string | undefined>>, values: Values): ConfigProvider.ConfigProvider => {
  const entries = Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined)
  const configurable: ReadonlySet<string> = new Set(SETTINGS.map((setting) => setting.variable))
  const environment = ConfigProvider.fromMap(new Map(entries.filter(([name, value]) => !configurable.has(name) || isSet(value))))
  const file = ConfigProvider.fromMap(new Map(SETTINGS.flatMap((setting) => {
    const value = values[setting.name]
    return value === undefined || value === "" ? [] : [[setting.variable, value] as const]
  })))
  return ConfigProvider.orElse(environment, () => file)
}

/** Where each setting comes from: a set variable, else the file, else the default. */
export const sources = (env: Readonly<Record<string, string | undefined>>, values: Values): Readonly<Record<Setting, Source>> =>
  Object.fromEntries(SETTINGS.map((setting) => [
    setting.name,
    isSet(env[setting.variable]) ? "environment" : isSet(values[setting.name]) ? "file" : "default"
  ])) as Record<Setting, Source>

/** Where a setting came from, in words: `from MINO_MODEL`, `from ~/.mino/config.json`, `the default`. */
export const describe = (setting: Setting, source: Source): string => {
  const variable = SETTINGS.find((known) => known.name === setting)?.variable ?? setting
  return source === "environment" ? `from ${variable}` : source === "file" ? `from ${SHOWN}` : "the default"
}

/** What the chat and the help are given: the file's values and where each setting comes from. */
export interface Loaded {
  readonly values: Values
  readonly sources: Readonly<Record<Setting, Source>>
  /** Each setting's value as the chat will read it (undefined: the default). */
  readonly effective: Readonly<Partial<Record<Setting, string>>>
  readonly provider: ConfigProvider.ConfigProvider
}

/** Reads and checks `home`'s file against `env`: what it gives, or the one line that refuses it. */
export const load = (env: Readonly<Record<string, string | undefined>>): Either.Either<Loaded, string> => {
  const home = env["HOME"]
  // HOME unset or relative: no file; the chat says what is wrong with HOME where it uses it.
  const text = home === undefined || !Path.isAbsolute(home) ? Either.right(undefined) : read(home)
  return Either.flatMap(text, (found) => {
    const apiKey = env["OPENAI_API_KEY"]?.trim()
    const values: Either.Either<Values, string> = found === undefined ? Either.right({}) : parse(found, apiKey === "" ? undefined : apiKey)
    return Either.map(values, (values) => {
      const effective = Object.fromEntries(SETTINGS.flatMap((setting) => {
        const value = isSet(env[setting.variable]) ? env[setting.variable] : values[setting.name]
        return isSet(value) ? [[setting.name, value]] : []
      }))
      return { values, sources: sources(env, values), effective, provider: provider(env, values) }
    })
  })
}
