/**
 * The environment every bash child starts with: a documented handful of
 * variables, never the rest of Mino's own environment. The API key lives in
 * Mino's environment, so copying it wholesale would hand it to every command.
 *
 * | name      | value                                                  |
 * | --------- | ------------------------------------------------------ |
 * | `PATH`    | the parent's, else `/usr/local/bin:/usr/bin:/bin`      |
 * | `HOME`    | the parent's, when set                                 |
 * | `USER`    | the parent's, when set                                 |
 * | `LOGNAME` | the parent's, when set                                 |
 * | `LANG`    | the parent's, else `C.UTF-8`                           |
 * | `TERM`    | `dumb` (output is captured, not shown on a terminal)   |
 * | `SHELL`   | `/bin/bash`                                            |
 * | `PWD`     | the startup directory                                  |
 * | `TMPDIR`  | the parent's, when set                                 |
 *
 * As defence in depth, a variable whose value contains a secret is dropped (a
 * parent `PATH` or `LANG` dropped this way falls back to the default).
 */

import type { SecretsShape } from "../../security/Secrets.js"

/** The names a child environment can contain, in the order they are listed. */
export const CHILD_ENVIRONMENT_NAMES = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "LANG",
  "TERM",
  "SHELL",
  "PWD",
  "TMPDIR"
] as const
export type ChildEnvironmentName = (typeof CHILD_ENVIRONMENT_NAMES)[number]

/** The names whose value can come from Mino's own environment (the rest are fixed). */
export const INHERITED_NAMES = ["PATH", "HOME", "USER", "LOGNAME", "LANG", "TMPDIR"] as const

export const DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
export const DEFAULT_LANG = "C.UTF-8"

export interface ChildEnvironmentOptions {
  /** Mino's own environment, usually `process.env`. */
  readonly parentEnv: Readonly<Record<string, string | undefined>>
  /** The resolved startup directory, also the child's `PWD`. */
  readonly cwd: string
  /** The key that must never reach a child (from the `Secrets` service). */
  readonly secrets: Pick<SecretsShape, "contains">
}

/** Builds the child environment; entries come in `CHILD_ENVIRONMENT_NAMES` order. */
export const make = (options: ChildEnvironmentOptions): Readonly<Record<string, string>> => {
  const { cwd, parentEnv } = options
  const containsSecret = options.secrets.contains
  // An empty value counts as unset: `PATH=` would leave bash unable to find anything.
  const fromParent = (name: (typeof INHERITED_NAMES)[number]): string | undefined => {
    const value = parentEnv[name]
    return value === undefined || value === "" || containsSecret(value) ? undefined : value
  }
  const candidates: Record<ChildEnvironmentName, string | undefined> = {
    PATH: fromParent("PATH") ?? DEFAULT_PATH,
    HOME: fromParent("HOME"),
    USER: fromParent("USER"),
    LOGNAME: fromParent("LOGNAME"),
    LANG: fromParent("LANG") ?? DEFAULT_LANG,
    TERM: "dumb",
    SHELL: "/bin/bash",
    PWD: cwd,
    TMPDIR: fromParent("TMPDIR")
  }
  const env: Record<string, string> = {}
  for (const name of CHILD_ENVIRONMENT_NAMES) {
    const value = candidates[name]
    if (value !== undefined && !containsSecret(value)) {
      env[name] = value
    }
  }
  return env
}
