/**
 * The bash tool: Definition (one required string field, `command`), Prepare
 * (check the raw arguments locally, build the approval display and the exact
 * operation, execute nothing) and Execute (hand that operation to BashRunner).
 *
 * The schema is enforced by the model service too, but Prepare does not trust
 * it: it re-reads the raw JSON text, because `JSON.parse` silently keeps the
 * last of two duplicate fields, and the approved command must be the one shown.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Escape from "../../security/Escape.js"
import { Secrets } from "../../security/Secrets.js"
import { freeze, rejection, type Tool, type ToolDefinition, type ToolDisplay } from "../Tool.js"
import {
  type BashOperation,
  BashRunner,
  DEFAULT_OUTPUT_LIMIT_BYTES,
  DEFAULT_TIMEOUT_MS,
  formatBytes,
  formatDuration
} from "./BashRunner.js"
import * as ChildEnvironment from "./ChildEnvironment.js"

/** The largest accepted command, measured as UTF-8 bytes. */
export const MAX_COMMAND_BYTES = 16 * 1024

export const PERMISSIONS_NOTICE = "runs with your account's permissions; no sandbox"

export interface BashToolOptions {
  /** The resolved startup directory; every invocation starts here. */
  readonly cwd: string
  /** Mino's environment; only the names in `CHILD_ENVIRONMENT_NAMES` are passed on (never the key: `Secrets`). */
  readonly parentEnv: Readonly<Record<string, string | undefined>>
  readonly timeoutMs?: number
  readonly outputLimitBytes?: number
}

export const make = Effect.fn("BashTool.make")(function* (options: BashToolOptions) {
  const runner = yield* BashRunner
  const secrets = yield* Secrets
  const cwd = options.cwd
  const env = ChildEnvironment.make({ parentEnv: options.parentEnv, cwd, secrets })
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
  const outputLimitBytes = options.outputLimitBytes ?? DEFAULT_OUTPUT_LIMIT_BYTES

  const definition: ToolDefinition = {
    type: "function",
    name: "bash",
    description:
      "Run a shell command with /bin/bash -c and return its output. The user must approve every call. " +
      "Each call starts fresh in the directory where Mino was started, with a minimal environment: " +
      "a cd or export does not carry over to the next call. stdin is empty. " +
      `stdout and stderr are captured together, up to ${formatBytes(outputLimitBytes)}; ` +
      `the command and everything it started are killed after ${formatDuration(timeoutMs)} or on overflow. ` +
      "The result is JSON with status, output, and exit_code when the command exited on its own.",
    parameters: {
      type: "object",
      properties: {
        command: {
          type: "string",
          description: "The bash command to run, for example \"go version\" or \"ls -la src\"."
        }
      },
      required: ["command"],
      additionalProperties: false
    },
    strict: true
  }

  // Raw text: the approval screen escapes each field by its kind. Only the command differs from call to
  // call: the other fields are built once, frozen, and shared by every display.
  const timeout = formatDuration(timeoutMs)
  const outputLimit = formatBytes(outputLimitBytes)
  const { fields: fixed } = freeze({ tool: "bash", fields: [
    { kind: "value", label: "Directory", value: cwd },
    { kind: "entries", label: "Environment", entries: Object.entries(env).map(([name, value]) => ({ name, value })) },
    { kind: "value", label: "Timeout", value: timeout, bound: { kind: "timeout", amount: timeout } },
    {
      kind: "value",
      label: "Output limit",
      value: `${outputLimit} (stdout and stderr combined)`,
      bound: { kind: "outputLimit", amount: outputLimit }
    },
    { kind: "value", label: "Permissions", value: PERMISSIONS_NOTICE }
  ] })
  const display = (command: string): ToolDisplay => ({
    tool: "bash",
    fields: [{ kind: "command", label: "Command", value: command }, ...fixed]
  })

  const tool: Tool<BashOperation> = {
    definition,
    prepare: (rawArguments) =>
      Either.match(parseArguments(rawArguments), {
        onLeft: (message) => Effect.fail(rejection({ status: "invalid_arguments", output: message })),
        onRight: (command) =>
          Effect.succeed({
            display: display(command),
            operation: { command, cwd, env, timeoutMs, outputLimitBytes }
          })
      }),
    execute: (operation, cancel) => runner.run(operation, cancel)
  }
  return tool
})

/**
 * Checks the model's raw argument text and returns the command, or one line
 * saying what is wrong. Never throws, whatever the input.
 */
export const parseArguments = (rawArguments: string): Either.Either<string, string> => {
  try {
    return checkArguments(rawArguments)
  } catch {
    // Unreachable for valid JSON, but a malformed call must be a rejection, never a crash.
    return Either.left("arguments could not be read; expected a JSON object like {\"command\": \"ls\"}")
  }
}

const checkArguments = (rawArguments: string): Either.Either<string, string> => {
  let parsed: unknown
  try {
    parsed = JSON.parse(rawArguments)
  } catch {
    return Either.left("arguments are not valid JSON; expected a JSON object like {\"command\": \"ls\"}")
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return Either.left(`arguments must be a JSON object, not ${kindOf(parsed)}`)
  }
  const seen = new Set<string>()
  for (const key of topLevelKeys(rawArguments)) {
    if (seen.has(key)) return Either.left(`duplicate field ${label(key)}`)
    seen.add(key)
  }
  for (const key of seen) {
    if (key !== "command") return Either.left(`unknown field ${label(key)}; the only field is "command"`)
  }
  if (!("command" in parsed)) return Either.left("missing required field \"command\"")
  const command = parsed.command
  if (typeof command !== "string") return Either.left(`"command" must be a string, not ${kindOf(command)}`)
  if (command.trim() === "") return Either.left("\"command\" is empty")
  if (LONE_SURROGATE.test(command)) {
    return Either.left("\"command\" contains invalid text (an unpaired UTF-16 surrogate)")
  }
  // Invalid UTF-8 on the wire reaches us decoded as U+FFFD: what ran would not be what was sent.
  if (command.includes("\ufffd")) {
    return Either.left("\"command\" contains invalid text (U+FFFD, the mark of undecodable UTF-8)")
  }
  if (command.includes("\u0000")) return Either.left("\"command\" contains a NUL character")
  const bytes = Buffer.byteLength(command, "utf8")
  if (bytes > MAX_COMMAND_BYTES) {
    return Either.left(`"command" is ${bytes} bytes; the limit is ${MAX_COMMAND_BYTES} bytes (16 KiB) of UTF-8`)
  }
  return Either.right(command)
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

const kindOf = (value: unknown): string =>
  value === null ? "null" : Array.isArray(value) ? "an array" : typeof value === "object" ? "an object" : `a ${typeof value}`

/** A field name for a one-line message: quoted, escaped and shortened. */
const label = (key: string): string => Escape.jsonString(key.length > 40 ? `${key.slice(0, 40)}…` : key)

// ---------------------------------------------------------------------------
// Top-level keys of a JSON object, as written. Only called on text that
// `JSON.parse` accepted as an object, so the scanner need not re-validate;
// every loop is still bounded by the text's length.

const isWhitespace = (ch: string | undefined): boolean => ch === " " || ch === "\t" || ch === "\n" || ch === "\r"

const skipWhitespace = (text: string, i: number): number => {
  while (i < text.length && isWhitespace(text[i])) i += 1
  return i
}

/** `text[i]` is an opening quote; returns the index after the closing one. */
const skipString = (text: string, i: number): number => {
  let j = i + 1
  while (j < text.length && text[j] !== "\"") j += text[j] === "\\" ? 2 : 1
  return j + 1
}

/** Returns the index after the value that starts at `text[i]`. */
const skipValue = (text: string, i: number): number => {
  const first = text[i]
  if (first === "\"") return skipString(text, i)
  if (first === "{" || first === "[") {
    let depth = 0
    let j = i
    while (j < text.length) {
      const ch = text[j]
      if (ch === "\"") {
        j = skipString(text, j)
        continue
      }
      if (ch === "{" || ch === "[") depth += 1
      else if (ch === "}" || ch === "]") {
        depth -= 1
        if (depth === 0) return j + 1
      }
      j += 1
    }
    return j
  }
  let j = i
  while (j < text.length && !isWhitespace(text[j]) && text[j] !== "," && text[j] !== "}" && text[j] !== "]") j += 1
  return j
}

/** The decoded keys of the top-level object in `text`, duplicates included, in order. */
const topLevelKeys = (text: string): Array<string> => {
  const keys: Array<string> = []
  let i = skipWhitespace(text, 0) + 1 // past "{"
  i = skipWhitespace(text, i)
  if (text[i] === "}") return keys
  while (i < text.length) {
    const end = skipString(text, i)
    const key: unknown = JSON.parse(text.slice(i, end))
    keys.push(typeof key === "string" ? key : String(key))
    i = skipWhitespace(text, end) + 1 // past ":"
    i = skipWhitespace(text, skipValue(text, skipWhitespace(text, i)))
    if (text[i] !== ",") break
    i = skipWhitespace(text, i + 1)
  }
  return keys
}
