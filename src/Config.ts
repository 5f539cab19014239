/**
 * Mino's configuration, read once, through `effect/Config` (the process
 * environment by default; any `ConfigProvider` in tests). These are the only
 * variables Mino reads for itself:
 *
 * | name              | what                                                                       |
 * | ----------------- | -------------------------------------------------------------------------- |
 * | `OPENAI_API_KEY`  | the key, as `Redacted`; blank counts as unset (trimmed once, by `Secrets`) |
 * | `OPENAI_BASE_URL` | a Responses-compatible endpoint; empty counts as unset                     |
 * | `MINO_MODEL`      | the model when `--model` names none; empty counts as unset                 |
| `MINO_HEADERS`    | headers for a gateway, `Name: value` a line, as `Redacted` (GatewayHeaders) |
 * | `HOME`            | where `~/.mino` is; checked (absolute) by the session store                |
 *
 * and, for commands only, the inherited part of the child environment
 * (`ChildEnvironment`: `PATH`, `HOME`, `USER`, `LOGNAME`, `LANG`, `TMPDIR`). The
 * openai SDK's own variables (`OPENAI_ORG_ID`, `OPENAI_PROJECT_ID`,
 * `OPENAI_CUSTOM_HEADERS`, ...) are never read: the model client switches them off.
 * Outside this module: `NO_COLOR` and `TERM` (the terminal: `TERM=dumb` draws no
 * cursor movement, spinner or colour), and the start-up loader's `XDG_CACHE_HOME`
 * and `NODE_DISABLE_COMPILE_CACHE` (scripts/cli-loader.mjs).
 */
import * as Config from "effect/Config"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { DEFAULT_MODEL } from "./defaults.js"
import { INHERITED_NAMES } from "./tools/bash/ChildEnvironment.js"

/** A variable whose empty value means "not set". */
const optionalText = (name: string): Config.Config<string | undefined> =>
  Config.string(name).pipe(Config.option, Config.map((value) => Option.getOrUndefined(Option.filter(value, (text) => text !== ""))))

/** `OPENAI_API_KEY`: `None` when unset or blank (the CLI then stops with one line, exit 2). */
export const apiKey: Config.Config<Option.Option<Redacted.Redacted<string>>> = Config.redacted("OPENAI_API_KEY").pipe(
  Config.option,
  Config.map(Option.filter((key) => Redacted.value(key).trim() !== ""))
)

/** `OPENAI_BASE_URL`; undefined: the SDK's default endpoint. */
export const baseURL: Config.Config<string | undefined> = optionalText("OPENAI_BASE_URL")

/** `MINO_HEADERS`, as `Redacted` (its values are secrets); blank counts as unset. GatewayHeaders.ts checks it. */
export const headers: Config.Config<Option.Option<Redacted.Redacted<string>>> = Config.redacted("MINO_HEADERS").pipe(
  Config.option,
  Config.map(Option.filter((text) => Redacted.value(text).trim() !== ""))
)

/** `MINO_MODEL`, else the default model. */
export const model: Config.Config<string> = optionalText("MINO_MODEL").pipe(Config.map((name) => name ?? DEFAULT_MODEL))

/** `HOME` as given: unset, empty or relative is refused where it is used, never guessed. */
export const home: Config.Config<string | undefined> = Config.string("HOME").pipe(Config.option, Config.map(Option.getOrUndefined))

/** The variables a command may inherit (`ChildEnvironment` decides which and how). */
export const childEnvironment: Config.Config<Readonly<Record<string, string | undefined>>> = Config.all(
  Object.fromEntries(
    INHERITED_NAMES.map((name) => [name, Config.string(name).pipe(Config.option, Config.map(Option.getOrUndefined))])
  )
)

/** Everything a chat needs, read in one go. */
export const chat = Config.all({ apiKey, baseURL, model, headers, home, childEnvironment })
export type Chat = Config.Config.Success<typeof chat>
