// The start of `mino`, bundled by scripts/build.mjs into dist/cli/main.js.
//
// Compiling the ~430 KB application bundle takes V8 about as long as Node takes to
// boot, and Node 20 has no compile cache for modules (module.enableCompileCache
// came in Node 22). So the bundle is CommonJS, run here as a vm.Script with a V8
// code cache:
// - dist/cli/app.v8, made by the build: valid while Node is the one that built it;
// - ~/.cache/mino (or $XDG_CACHE_HOME/mino), written when a start had no valid cache
//   there: made on exit, it also holds the functions that start-up compiled lazily,
//   and it serves whatever Node version runs mino. Only under an absolute, existing
//   XDG_CACHE_HOME (a relative one is ignored, as the XDG spec says) or HOME, never
//   relative to the current directory; and only once the application has said its
//   configuration was checked (`mino.configurationChecked`): a refused start writes
//   nothing.
// V8 rejects a cache from another V8 version or other flags, and checks only the
// source's length, so a cache file is named after the bundle's content hash. A cache
// that cannot be read or written only costs time.
// NODE_DISABLE_COMPILE_CACHE=1 turns the user cache off, as it does in later Node versions.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { basename, dirname, isAbsolute, join } from "node:path"
import { fileURLToPath } from "node:url"
import { Script } from "node:vm"

/** The bundle's source as the function V8 compiles; the build makes its cache from the same text. */
export const wrap = (source) => `(function (exports, require, module, __filename, __dirname) {"use strict";${source}\n})`

/** Compiles the CommonJS bundle at `bundleUrl` (content hash `buildId`) with a code cache, and runs it. */
export const start = (bundleUrl, buildId) => {
  const filename = fileURLToPath(bundleUrl)
  // The bundle is ASCII (esbuild escapes the rest), so latin1 reads it without UTF-8 decoding.
  const source = readFileSync(filename, "latin1")
  const compile = (cachedData) => new Script(wrap(source), { filename, ...(cachedData === undefined ? {} : { cachedData }) })
  const buildCache = () => readCache(filename.replace(/\.cjs$/, ".v8"))
  const userCache = userCachePath(buildId)
  const userData = userCache === undefined ? undefined : readCache(userCache)
  let script = compile(userData ?? buildCache())
  // Made under other V8 flags (NODE_OPTIONS): V8 says so before reading it, and the build's may still do.
  const userRejected = userData !== undefined && script.cachedDataRejected === true
  if (userRejected) script = compile(buildCache())
  if (userCache !== undefined && (userData === undefined || userRejected)) {
    const compiled = script
    process.once("exit", () => {
      if (globalThis[Symbol.for("mino.configurationChecked")] === true) writeCache(userCache, compiled)
    })
  }
  const module = { exports: {} }
  script.runInThisContext()(module.exports, createRequire(filename), module, filename, dirname(filename))
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

const userCachePath = (buildId) => {
  const disabled = process.env["NODE_DISABLE_COMPILE_CACHE"]
  if (disabled !== undefined && disabled !== "" && disabled !== "0") return undefined
  // Never os.homedir(): it turns an empty HOME into "", and the cache into ./.cache.
  const xdg = directory(process.env["XDG_CACHE_HOME"])
  const home = directory(process.env["HOME"])
  const base = xdg ?? (home === undefined ? undefined : join(home, ".cache"))
  return base === undefined ? undefined : join(base, "mino", `cli-${buildId}-${process.version}-${process.arch}.v8`)
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
    const dir = dirname(file)
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    // Written aside and renamed, so a concurrent start never reads half a cache.
    const temporary = `${file}.${process.pid}.tmp`
    writeFileSync(temporary, script.createCachedData(), { mode: 0o600 })
    renameSync(temporary, file)
    // Caches of other builds or Node versions: this is the one in use now.
    for (const name of readdirSync(dir)) {
      if (name.startsWith("cli-") && name.endsWith(".v8") && name !== basename(file)) rmSync(join(dir, name), { force: true })
    }
  } catch {
    // No cache: the next start compiles again.
  }
}
