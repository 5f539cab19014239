/**
 * A second, non-blocking descriptor on the terminal an open descriptor reads
 * from, found the same way on macOS and Linux.
 *
 * A new open of the terminal's device file is what is needed: a `dup` would
 * share the original's flags, and making it non-blocking would make the
 * original non-blocking too. The device file is found by its device number,
 * as `ttyname(3)` finds it: among the pseudo-terminals (`/dev/pts/N` on Linux,
 * `/dev/ttysNNN` on macOS) and the other terminals in `/dev` (`ttyN`,
 * `console`), the character device whose `rdev` is the descriptor's. Only root
 * can make a device node, so a match is that terminal. When none is found
 * (a terminal from another devpts instance, say), `/dev/tty`, the process's
 * controlling terminal, is the last resort: it cannot be checked to be the same
 * terminal (its descriptor reports `/dev/tty`'s own device number), and for a
 * terminal-bound process it is.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"

/** What the search asks of the system: injected in tests. */
export interface System {
  readonly list: (directory: string) => ReadonlyArray<string>
  /** The device number of the character device at `path` (no symlink followed), else undefined. */
  readonly charDevice: (path: string) => number | undefined
  readonly deviceOf: (fd: number) => number | undefined
  readonly open: (path: string) => number | undefined
}

const FLAGS = Fs.constants.O_RDONLY | Fs.constants.O_NONBLOCK | Fs.constants.O_NOCTTY

export const system: System = {
  list: (directory) => {
    try {
      return Fs.readdirSync(directory)
    } catch {
      return []
    }
  },
  charDevice: (path) => {
    try {
      const stats = Fs.lstatSync(path)
      return stats.isCharacterDevice() ? stats.rdev : undefined
    } catch {
      return undefined
    }
  },
  deviceOf: (fd) => {
    try {
      const stats = Fs.fstatSync(fd)
      return stats.isCharacterDevice() ? stats.rdev : undefined
    } catch {
      return undefined
    }
  },
  open: (path) => {
    try {
      return Fs.openSync(path, FLAGS)
    } catch {
      return undefined
    }
  }
}

/** Names in `/dev` that can be a terminal on either system. */
const TERMINAL_NAME = /^(tty|pts|console)/

/** macOS's pseudo-terminals (its `/dev` also holds 256 legacy `ttyp0`–`ttywf` names). */
const MACOS_PTY = /^ttys\d+$/

/** The device files that may be the terminal, pseudo-terminals first (Linux's, then macOS's). */
const candidates = (os: System): ReadonlyArray<string> => {
  const dev = os.list("/dev").filter((name) => TERMINAL_NAME.test(name) && name !== "tty")
  return [
    ...os.list("/dev/pts").filter((name) => /^\d+$/.test(name)).map((name) => Path.join("/dev/pts", name)),
    ...dev.filter((name) => MACOS_PTY.test(name)).map((name) => Path.join("/dev", name)),
    ...dev.filter((name) => !MACOS_PTY.test(name)).map((name) => Path.join("/dev", name))
  ]
}

/** The terminal's device file, by its device number; undefined when none matches. */
export const deviceFile = (fd: number, os: System = system): string | undefined => {
  const device = os.deviceOf(fd)
  if (device === undefined) return undefined
  return candidates(os).find((path) => os.charDevice(path) === device)
}

/** A new non-blocking descriptor on the terminal `fd` reads from (opened without becoming its controlling terminal). */
export const openAgain = (fd: number, os: System = system): number | undefined => {
  const path = deviceFile(fd, os)
  const opened = path === undefined ? undefined : os.open(path)
  return opened ?? os.open("/dev/tty")
}
