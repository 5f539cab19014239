/**
 * The shells every helper script Mino runs (the lifeline's gate and watcher) is
 * tested under: what `/bin/sh` is on Debian (dash), on macOS (bash in POSIX
 * mode), on Alpine (busybox), and the strictest (posh). A missing one fails the
 * test that needs it, with the line that installs it, unless
 * `MINO_SHELLS_OPTIONAL=1`, which skips those tests instead.
 */
import * as fs from "node:fs"

export interface Shell {
  readonly name: string
  /** The program and flags that run a script given as `-c <script>`; empty when it is not installed. */
  readonly argv: ReadonlyArray<string>
}

const first = (candidates: ReadonlyArray<string>): string | undefined => candidates.find((file) => fs.existsSync(file))

const shell = (name: string, candidates: ReadonlyArray<string>, flags: ReadonlyArray<string>): Shell => {
  const file = first(candidates)
  return { name, argv: file === undefined ? [] : [file, ...flags] }
}

const ALL: ReadonlyArray<Shell> = [
  shell("dash", ["/usr/bin/dash", "/bin/dash"], []),
  shell("posh", ["/usr/bin/posh", "/bin/posh"], []),
  shell("busybox sh", ["/usr/bin/busybox", "/bin/busybox"], ["sh"]),
  // --norc: a bash whose stdin is a socket (Node's pipes are socket pairs) and not named sh would read ~/.bashrc.
  shell("bash --posix", ["/bin/bash"], ["--noprofile", "--norc", "--posix"])
]

/**
 * The shells tested: all four; with what a Mac lacks taken away (MINO_TEST_MAC_LACKS, the second
 * pass), bash in POSIX mode, a Mac's /bin/sh (Mino's own commands there run under this machine's
 * /bin/sh, dash, which is also a Mac's /bin/dash). posh and busybox, which no Mac has, and every
 * shell with /proc, are tested in the first pass.
 */
export const SHELLS: ReadonlyArray<Shell> = process.env["MINO_TEST_PROC"] === undefined
  ? ALL
  : ALL.filter((candidate) => candidate.name === "bash --posix")

export const OPTIONAL = process.env["MINO_SHELLS_OPTIONAL"] === "1"

/** Whether tests under `shell` are skipped (it is missing and missing shells are optional). */
export const skipped = (shell: Shell): boolean => shell.argv.length === 0 && OPTIONAL

/** The shell's argv; throws, failing the test, when it is not installed. */
export const argvOf = (shell: Shell): ReadonlyArray<string> => {
  if (shell.argv.length > 0) return shell.argv
  throw new Error(
    `${shell.name} is not installed, and the lifeline's scripts must be tested under it: apt-get install -y posh busybox ` +
      "(or set MINO_SHELLS_OPTIONAL=1 to skip these tests)"
  )
}
