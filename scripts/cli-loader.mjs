// The start of `mino`, bundled by scripts/build.mjs into dist/cli/main.js.
//
// Compiling the application takes V8 about as long as Node takes to boot, and Node
// 20 has no compile cache for modules (module.enableCompileCache came in Node 22).
// So the application is CommonJS files (dist/cli/*.cjs: the chat's start, what it
// loads once the prompt is drawn, the code they share, the openai SDK), each run
// here as a vm.Script with a V8 code cache, and loaded only when first required:
// - dist/cli/<file>.v8, made by the build: valid while Node is the one that built it;
// - ~/.cache/mino (or $XDG_CACHE_HOME/mino), written for each file that had no valid
//   cache there: made on exit, it also holds the functions that run compiled lazily,
//   and it serves whatever Node version runs mino. Only under an absolute, existing
//   XDG_CACHE_HOME (a relative one is ignored, as the XDG spec says) or HOME, never
//   relative to the current directory; and only once the application has said its
//   configuration was checked (`mino.configurationChecked`): a refused start writes
//   nothing.
// V8 rejects a cache from another V8 version or other flags, and checks only the
// source's length, so a cache file is named after the build's content hash. A cache
// that cannot be read or written only costs time.
// Each installation (the directory its build lies in) keeps its own caches, named
// after a hash of that directory: a start removes only its own installation's caches
// of other builds or Node versions, never another's (two checkouts, or two installed
// versions, used side by side would otherwise remove each other's caches and compile
// on every start); another installation's caches are removed once unused for a month
// (that installation is likely gone), as are caches named before installations were.
// A cache is code: V8 runs what it holds in place of the source. So the user cache is
// read only from a file opened without following a link and, on that open file, a
// regular file owned by this process's effective user that no group or other may
// write, in a directory (not a link) of the same kind; it is written only into such a
// directory, made 0700 only inside a directory the effective user owns. Another user's
// cache, or one another user could have written, is never run: `sudo -E mino` (root,
// with the user's HOME) neither runs nor writes the user's cache.
// NODE_DISABLE_COMPILE_CACHE=1 turns the user cache off, as it does in later Node versions.
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, renameSync, rmSync, statSync, writeSync } from "node:fs"
import { createHash } from "node:crypto"
import { createRequire } from "node:module"
import { dirname, isAbsolute, join } from "node:path"
import { Script } from "node:vm"
import { Buffer } from "node:buffer"

/** A file's source as the function V8 compiles; the build makes its cache from the same text. */
export const wrap = (source) => `(function (exports, require, module, __filename, __dirname) {"use strict";${source}\n})`

/** Runs `entry`, one of the build's CommonJS files in `dir` (build content hash `buildId`), each with a code cache. */
export const start = (dir, entry, buildId) => {
  const nodeRequire = createRequire(join(dir, entry))
  const userDir = userCacheDirectory()
  const prefix = `cli-${installation(dir)}-${buildId}-`
  const loaded = new Map()
  // The caches to write at exit: the files that had no valid one in the user's cache.
  const unsaved = []
  const load = (name) => {
    const known = loaded.get(name)
    if (known !== undefined) return known.exports
    const filename = join(dir, name)
    // esbuild escapes what is not ASCII, so latin1 reads a file without UTF-8 decoding.
    const source = readFileSync(filename, "latin1")
    const compile = (cachedData) => new Script(wrap(source), { filename, ...(cachedData === undefined ? {} : { cachedData }) })
    const buildCache = () => readBuildCache(filename.replace(/\.cjs$/, ".v8"))
    const userCache = userDir === undefined ? undefined : join(userDir, `${prefix}${name.replace(/\.cjs$/, "")}-${process.version}-${process.arch}.v8`)
    const userData = userCache === undefined ? undefined : readOwnCache(userCache)
    let script = compile(userData ?? buildCache())
    // Made under other V8 flags (NODE_OPTIONS): V8 says so before reading it, and the build's may still do.
    const userRejected = userData !== undefined && script.cachedDataRejected === true
    if (userRejected) script = compile(buildCache())
    if (userCache !== undefined && (userData === undefined || userRejected)) unsaved.push([userCache, script])
    const module = { exports: {} }
    loaded.set(name, module)
    script.runInThisContext()(module.exports, requireFrom, module, filename, dir)
    return module.exports
  }
  // The build's own files by their relative name; Node's modules otherwise.
  const requireFrom = (specifier) => /^\.\/[^/]+\.cjs$/.test(specifier) ? load(specifier.slice(2)) : nodeRequire(specifier)
  process.once("exit", () => {
    if (globalThis[Symbol.for("mino.configurationChecked")] !== true || userDir === undefined || unsaved.length === 0) return
    if (!ownDirectoryMade(userDir)) return
    for (const [file, script] of unsaved) writeCache(file, script)
    removeOthers(userDir, prefix)
  })
  load(entry)
}

/** An absolute path naming an existing directory, else undefined. */
const directory = (path) => {
  if (path === undefined || !isAbsolute(path)) return undefined
  try {
    return statSync(path).isDirectory() ? path : undefined
  } catch {
    return undefined
  }
}

const userCacheDirectory = () => {
  const disabled = process.env["NODE_DISABLE_COMPILE_CACHE"]
  if (disabled !== undefined && disabled !== "" && disabled !== "0") return undefined
  // Never os.homedir(): it turns an empty HOME into "", and the cache into ./.cache.
  const xdg = directory(process.env["XDG_CACHE_HOME"])
  const home = directory(process.env["HOME"])
  const base = xdg ?? (home === undefined ? undefined : join(home, ".cache"))
  return base === undefined ? undefined : join(base, "mino")
}

/** The build's own cache, beside its code: as trusted as the code itself. */
const readBuildCache = (file) => {
  try {
    return readFileSync(file)
  } catch {
    return undefined
  }
}

const euid = () => process.geteuid?.() ?? -1

/** Owned by this process's effective user, and no group or other may write it. */
const own = (stats) => stats.uid === euid() && (stats.mode & 0o022) === 0

/** A directory itself (not a link to one) that is `own`. */
const ownDirectory = (path) => {
  try {
    const stats = lstatSync(path)
    return stats.isDirectory() && own(stats)
  } catch {
    return false
  }
}

/**
 * A user cache, read only if `own`: checked on the open file (no link followed), so
 * what is read is what was checked, whatever is renamed meanwhile.
 */
const readOwnCache = (file) => {
  if (!ownDirectory(dirname(file))) return undefined
  let fd
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW)
    const stats = fstatSync(fd)
    if (!stats.isFile() || !own(stats)) return undefined
    const data = Buffer.alloc(stats.size)
    let read = 0
    while (read < data.length) {
      const count = readSync(fd, data, read, data.length - read, read)
      if (count === 0) break
      read += count
    }
    return read === data.length ? data : undefined
  } catch {
    return undefined
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}

/**
 * The cache directory, `own`, made (0700) if missing, but only inside a directory the
 * effective user owns: never in one someone else does (under `sudo -E`, root's cache
 * never lands in the user's ~/.cache).
 */
const ownDirectoryMade = (dir, last = true) => {
  let stats
  try {
    stats = lstatSync(dir)
  } catch {
    stats = undefined
  }
  if (stats !== undefined) return stats.isDirectory() && (last ? own(stats) : stats.uid === euid())
  const parent = dirname(dir)
  if (parent === dir || !ownDirectoryMade(parent, false)) return false
  try {
    mkdirSync(dir, { mode: 0o700 })
  } catch {
    return false
  }
  return ownDirectoryMade(dir, last)
}

const writeCache = (file, script) => {
  const temporary = `${file}.${process.pid}.tmp`
  let fd
  try {
    // A new file of ours (never an existing one, never through a link), renamed into
    // place, so a concurrent start never reads half a cache. (A crashed start's, with
    // this pid, is removed first: the directory is ours.)
    rmSync(temporary, { force: true })
    fd = openSync(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600)
    const data = script.createCachedData()
    let written = 0
    while (written < data.length) written += writeSync(fd, data, written, data.length - written)
    closeSync(fd)
    fd = undefined
    renameSync(temporary, file)
  } catch {
    // No cache: the next start compiles again.
    try {
      if (fd !== undefined) closeSync(fd)
      rmSync(temporary, { force: true })
    } catch {
      // Left for a later start.
    }
  }
}

/** The installation a build lies in (its directory), as the first part of its caches' names. */
const installation = (dir) => createHash("sha256").update(dir).digest("hex").slice(0, 16)

/** A cache name of this loader: `cli-<installation>-<build>-<file>-<node>-<arch>.v8`; the installation's 16 hex digits. */
const CACHE_NAME = /^cli-([0-9a-f]{16})-[0-9a-f]{16}-.+\.v8$/

/** Another installation's caches unused this long are removed (that installation is likely gone). */
const UNUSED_MS = 30 * 24 * 60 * 60 * 1000

/**
 * Caches of this installation's other builds or Node versions (this build's are the
 * ones in use now), another installation's unused for a month, and ones named before
 * installations were (`cli-<build>-<file>-...`).
 */
const removeOthers = (dir, prefix) => {
  const own = prefix.slice(0, "cli-".length + 16)
  try {
    for (const name of readdirSync(dir)) {
      if (!name.startsWith("cli-") || !name.endsWith(".v8")) continue
      if (name.startsWith(prefix) && name.endsWith(`-${process.version}-${process.arch}.v8`)) continue
      const file = join(dir, name)
      const named = CACHE_NAME.exec(name)
      const another = named !== null && !name.startsWith(`${own}-`)
      if (another && !unusedFor(file, UNUSED_MS)) continue
      rmSync(file, { force: true })
    }
  } catch {
    // Left for the next build's start to remove.
  }
}

/** Whether `file` was neither read nor written for `ms` (its newer of access and change times). */
const unusedFor = (file, ms) => {
  try {
    const stats = lstatSync(file)
    return Date.now() - Math.max(stats.atimeMs, stats.mtimeMs) > ms
  } catch {
    return false
  }
}
