/**
 * Whether an open file lives on a pseudo file system: one whose files the
 * kernel generates (a process's environment, keys, device state) and `fstat`
 * still calls regular.
 *
 * Node has no `fstatfs`. Where Linux's `/proc` is mounted, `statfs` of
 * `/proc/self/fd/N` is the open file's own file system, whatever its name now
 * says. Without `/proc` (macOS, or Linux with none mounted) the file is
 * `statfs`ed by its name, and the answer counts only when the name still
 * reaches the same file (device and inode) afterwards, so a file mounted over
 * the name is judged by where it really lives. What cannot be checked there: a
 * process running beside Mino that swaps the name to another file and back
 * while the check runs. macOS has none of the Linux pseudo file systems below
 * (its `devfs` holds devices, never regular files), and its `statfs` type
 * numbers are small indices that none of these magic numbers equal.
 */
import * as Fs from "node:fs"

/** Linux's pseudo file systems, by `statfs` type (`linux/magic.h`). */
const PSEUDO_FILE_SYSTEMS: ReadonlyMap<number, string> = new Map([
  [0x9fa0, "proc"],
  [0x62656572, "sysfs"],
  [0x64626720, "debugfs"],
  [0x74726163, "tracefs"],
  [0x73636673, "securityfs"],
  [0x27e0eb, "cgroup"],
  [0x63677270, "cgroup2"],
  [0x1cd1, "devpts"],
  [0xcafe4a11, "bpf"],
  [0x62656570, "configfs"],
  [0xde5e81e4, "efivarfs"],
  [0x6165676c, "pstore"],
  [0xf97cff8c, "selinuxfs"],
  [0x43415d53, "smackfs"],
  [0x65735543, "fusectl"],
  [0x42494e4d, "binfmt_misc"],
  [0x6e736673, "nsfs"],
  [0x19800202, "mqueue"],
  [0x7655821, "resctrl"]
])

export type Verdict =
  | { readonly _tag: "Real" }
  | { readonly _tag: "Pseudo"; readonly name: string }
  /** The name no longer reaches the open file. */
  | { readonly _tag: "Moved" }

/** What the check asks of the system: injected in tests. */
export interface System {
  /** The `statfs` type of `path` (following links), or undefined when it cannot be had. */
  readonly fileSystemType: (path: string) => number | undefined
  readonly identity: (target: number | string) => { readonly dev: number; readonly ino: number } | undefined
}

export const system: System = {
  fileSystemType: (path) => {
    try {
      return Fs.statfsSync(path).type
    } catch {
      return undefined
    }
  },
  identity: (target) => {
    try {
      const stats = typeof target === "number" ? Fs.fstatSync(target) : Fs.lstatSync(target)
      return { dev: stats.dev, ino: stats.ino }
    } catch {
      return undefined
    }
  }
}

const verdictOf = (type: number): Verdict => {
  const name = PSEUDO_FILE_SYSTEMS.get(type)
  return name === undefined ? { _tag: "Real" } : { _tag: "Pseudo", name }
}

/** The file system of open `fd`, which was opened (without following a link) at `path`. */
export const check = (fd: number, path: string, os: System = system): Verdict => {
  const own = os.fileSystemType(`/proc/self/fd/${fd}`)
  if (own !== undefined) return verdictOf(own)
  const opened = os.identity(fd)
  const type = os.fileSystemType(path)
  const named = os.identity(path)
  if (opened === undefined || type === undefined || named === undefined || named.dev !== opened.dev || named.ino !== opened.ino) return { _tag: "Moved" }
  return verdictOf(type)
}
