/**
 * Where sessions live, and that the files there are what they claim to be.
 *
 * `HOME` must be an absolute path. `~/.mino` and `~/.mino/sessions` (or the
 * demo's `~/.mino/demo`) must be real directories owned by this user (never a
 * symlink) and are tightened to 0700 on every start; a session or lock file must
 * be a regular file owned by this user (never a symlink, FIFO or device) and is
 * tightened to 0600. Every check is made on the opened descriptor, so nothing is
 * followed, read or appended to before it has been checked, and opening never
 * blocks. Which files are conversations, and what they are named, is
 * `Conversations`' business.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Either from "effect/Either"
import * as Escape from "../../security/Escape.js"

const { O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK, O_RDONLY } = Fs.constants

/** `path` for a one-line message: escaped, so a name cannot hide text on a terminal. */
export const show = (path: string): string => Escape.forValue(path)

/**
 * A directory of conversations under `home`: `~/.mino/sessions` (the default),
 * or `~/.mino/demo` for the demo's; or why `home` cannot be used.
 */
export const sessionsDirectory = (home: string | undefined, name: "sessions" | "demo" = "sessions"): Either.Either<string, string> => {
  if (home === undefined) return Either.left("HOME is not set; Mino keeps its sessions in $HOME/.mino")
  if (home.length === 0) return Either.left("HOME is empty; Mino keeps its sessions in $HOME/.mino")
  if (!Path.isAbsolute(home)) return Either.left(`HOME is not an absolute path (${show(home)}); Mino keeps its sessions in $HOME/.mino`)
  return Either.right(Path.join(home, ".mino", name))
}

const uid = (): number | undefined => process.getuid?.()

/** What a file that is not a regular one is, in words (`a FIFO`), from its Stats or directory entry. */
export const kind = (stats: Fs.Stats | Fs.Dirent): string =>
  stats.isSymbolicLink() ? "a symbolic link" : stats.isFIFO() ? "a FIFO" : stats.isCharacterDevice() || stats.isBlockDevice() ? "a device" : stats.isSocket() ? "a socket" : stats.isDirectory() ? "a directory" : stats.isFile() ? "a regular file" : "not a regular file"

/** A system error's code (`ENOENT`), or the error as text. */
export const errno = (error: unknown): string =>
  typeof error === "object" && error !== null && "code" in error ? String(error.code) : String(error)

/**
 * Makes `dir` (and its parent `.mino`) exist as real directories owned by this
 * user with mode 0700, or says why not.
 */
export const ensureDirectory = (dir: string): Either.Either<void, string> => {
  for (const path of [Path.dirname(dir), dir]) {
    let fd: number
    try {
      fd = openDirectory(path)
    } catch (error) {
      if (errno(error) !== "ENOENT") return Either.left(refusal(path, error))
      try {
        Fs.mkdirSync(path, { mode: 0o700 })
        syncDirectory(Path.dirname(path))
      } catch (made) {
        if (errno(made) !== "EEXIST") return Either.left(`cannot create ${show(path)}: ${errno(made)}`)
      }
      try {
        fd = openDirectory(path)
      } catch (again) {
        return Either.left(refusal(path, again))
      }
    }
    const refused = owned(path, fd, true)
    if (refused !== undefined) return Either.left(refused)
  }
  return Either.void
}

/** Opens `path` as a real directory: never through a symlink, and never anything else. */
const openDirectory = (path: string): number => Fs.openSync(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW)

/**
 * Whether open directory `fd` (at `path`) is this user's, its mode tightened to
 * 0700 when `tighten`; then closes it. Undefined when it is, else one line why not.
 */
const owned = (path: string, fd: number, tighten: boolean): string | undefined => {
  try {
    const stats = Fs.fstatSync(fd)
    if (uid() !== undefined && stats.uid !== uid()) return `${show(path)} belongs to another user (uid ${stats.uid}); Mino does not use it`
    if (tighten && (stats.mode & 0o777) !== 0o700) Fs.fchmodSync(fd, 0o700)
    return undefined
  } catch (error) {
    return `cannot check ${show(path)}: ${errno(error)}`
  } finally {
    Fs.closeSync(fd)
  }
}

/**
 * For a command that only reads conversations (`mino log`, `mino sessions`):
 * whether `dir` and its parent `.mino` are real directories owned by this user,
 * checked as `ensureDirectory` checks them but with nothing created or changed.
 * Undefined when they are, or when one does not exist yet (there is nothing to
 * read); otherwise one line saying why not, and nothing in them is read.
 */
export const checkDirectory = (dir: string): string | undefined => {
  for (const path of [Path.dirname(dir), dir]) {
    let fd: number
    try {
      fd = openDirectory(path)
    } catch (error) {
      return errno(error) === "ENOENT" ? undefined : refusal(path, error)
    }
    const refused = owned(path, fd, false)
    if (refused !== undefined) return refused
  }
  return undefined
}

/** Why opening a directory failed: a symlink or another kind of file is named as such. */
const refusal = (path: string, error: unknown): string => {
  const code = errno(error)
  if (code === "ELOOP" || code === "ENOTDIR") {
    const stats = lstat(path)
    return `${show(path)} is ${stats === undefined ? "not a directory" : kind(stats)}, not a real directory; Mino does not follow it`
  }
  return `cannot open ${show(path)}: ${code}`
}

const lstat = (path: string): Fs.Stats | undefined => {
  try {
    return Fs.lstatSync(path)
  } catch {
    return undefined
  }
}

/**
 * Opens `path` as a regular file owned by this user, mode 0600, without
 * following a symlink or blocking on a FIFO or device: the descriptor, or one
 * line saying why not. `flags` adds to `O_NOFOLLOW | O_NONBLOCK`.
 */
export const openRegular = (path: string, flags: number): Either.Either<number, string> => {
  // A FIFO or device is refused before it is opened: opening one can block or act.
  const before = lstat(path)
  if (before !== undefined && !before.isFile()) return Either.left(`${show(path)} is ${kind(before)}, not a regular file; Mino does not open it`)
  let fd: number
  try {
    fd = Fs.openSync(path, flags | O_NOFOLLOW | O_NONBLOCK, 0o600)
  } catch (error) {
    const code = errno(error)
    return Either.left(code === "ELOOP" ? `${show(path)} is a symbolic link; Mino does not follow it` : `cannot open ${show(path)}: ${code}`)
  }
  try {
    const stats = Fs.fstatSync(fd)
    if (!stats.isFile()) throw new Refused(`${show(path)} is ${kind(stats)}, not a regular file; Mino does not open it`)
    if (uid() !== undefined && stats.uid !== uid()) throw new Refused(`${show(path)} belongs to another user (uid ${stats.uid}); Mino does not open it`)
    if ((stats.mode & 0o777) !== 0o600) Fs.fchmodSync(fd, 0o600)
    return Either.right(fd)
  } catch (error) {
    Fs.closeSync(fd)
    return Either.left(error instanceof Refused ? error.message : `cannot check ${show(path)}: ${errno(error)}`)
  }
}

class Refused extends Error {}

/** fsync of a directory, so a created or renamed entry survives a crash. */
export const syncDirectory = (dir: string): void => {
  const fd = Fs.openSync(dir, O_RDONLY | O_DIRECTORY)
  try {
    Fs.fsyncSync(fd)
  } finally {
    Fs.closeSync(fd)
  }
}
