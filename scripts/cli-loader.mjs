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
// NODE_DISABLE_COMPILE_CACHE=1 turns the user cache off, as it does in later Node versions.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, isAbsolute, join } from "node:path"
import { Script } from "node:vm"

/** A file's source as the function V8 compiles; the build makes its cache from the same text. */
export const wrap = (source) => `(function (exports, require, module, __filename, __dirname) {"use strict";${source}\n})`

/** Runs `entry`, one of the build's CommonJS files in `dir` (build content hash `buildId`), each with a code cache. */
export const start = (dir, entry, buildId) => {
  const nodeRequire = createRequire(join(dir, entry))
  const userDir = userCacheDirectory()
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
    const buildCache = () => readCache(filename.replace(/\.cjs$/, ".v8"))
    const userCache = userDir === undefined ? undefined : join(userDir, `cli-${buildId}-${name.replace(/\.cjs$/, "")}-${process.version}-${process.arch}.v8`)
    const userData = userCache === undefined ? undefined : readCache(userCache)
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
    for (const [file, script] of unsaved) writeCache(file, script)
    removeOthers(userDir, buildId)
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

const readCache = (file) => {
  try {
    return readFileSync(file)
  } catch {
    return undefined
  }
}

const writeCache = (file, script) => {
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 })
    // Written aside and renamed, so a concurrent start never reads half a cache.
    const temporary = `${file}.${process.pid}.tmp`
    writeFileSync(temporary, script.createCachedData(), { mode: 0o600 })
    renameSync(temporary, file)
  } catch {
    // No cache: the next start compiles again.
  }
}

/** Caches of other builds or Node versions: this build's are the ones in use now. */
const removeOthers = (dir, buildId) => {
  try {
    for (const name of readdirSync(dir)) {
      const ours = name.startsWith(`cli-${buildId}-`) && name.endsWith(`-${process.version}-${process.arch}.v8`)
      if (name.startsWith("cli-") && name.endsWith(".v8") && !ours) rmSync(join(dir, name), { force: true })
    }
  } catch {
    // Left for the next build's start to remove.
  }
}
