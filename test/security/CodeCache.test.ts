/**
 * The start-up code cache is code (scripts/cli-loader.mjs): V8 runs what a cache
 * holds in place of the source and checks only the source's length. So a cache
 * is used only from a file and a directory owned by the effective user that no
 * group or other may write, and never written into a directory another user
 * owns. Each case plants a cache whose code writes a marker file; the first
 * case shows the plant would run if it were the user's own, the others that it
 * never runs once another uid owns it or another may write it (the tests run as
 * root: root with a user's HOME is `sudo -E mino`), and that mino still works.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { environment, packageVersion, ROOT, runPlain, sandbox, type Sandbox } from "../support/MinoProcess.js"

const NOBODY = 65534
const rootOnly = process.geteuid?.() === 0

/** `mino --version` with `home` as HOME (and the extra variables). */
const version = (box: Sandbox, extra: Readonly<Record<string, string>> = {}) =>
  runPlain(["--version"], environment(box, "http://127.0.0.1:9/v1", extra), box.cwd)

/**
 * A V8 cache for `dist/cli/app.cjs` as the loader wraps it, made from other code of
 * the same length: code that writes `marker`. Made by a plain node, as mino runs.
 */
const plantedCache = (marker: string): Buffer => {
  const script = `
    import { readFileSync } from "node:fs"
    import { Script } from "node:vm"
    import { wrap } from ${JSON.stringify(path.join(ROOT, "scripts", "cli-loader.mjs"))}
    const length = wrap(readFileSync(${JSON.stringify(path.join(ROOT, "dist", "cli", "app.cjs"))}, "latin1")).length
    const head = '(function (exports, require, module, __filename, __dirname) {require("node:fs").writeFileSync(' + ${JSON.stringify(JSON.stringify(marker))} + ', "ran");/*'
    const tail = "*/\\n})"
    const code = head + "x".repeat(length - head.length - tail.length) + tail
    process.stdout.write(new Script(code).createCachedData().toString("base64"))
  `
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { env: { PATH: "/usr/bin:/bin" }, encoding: "utf8" })
  return Buffer.from(out, "base64")
}

/** Runs mino once so its cache is made, then puts the plant in place of the start's own. */
const plant = (box: Sandbox, cacheDir: string, extra: Readonly<Record<string, string>> = {}) =>
  Effect.gen(function*() {
    const first = yield* version(box, extra)
    expect(first.code).toBe(0)
    const app = fs.readdirSync(cacheDir).find((name) => name.includes("-app-"))
    if (app === undefined) throw new Error(`no cache for app.cjs in ${cacheDir}`)
    const marker = path.join(path.dirname(box.home), "marker")
    fs.writeFileSync(path.join(cacheDir, app), plantedCache(marker), { mode: 0o600 })
    return { file: path.join(cacheDir, app), marker }
  })

/** mino answers --version, and the planted code did not run. */
const stillWorksAndNothingRan = (what: string, box: Sandbox, marker: string, extra: Readonly<Record<string, string>> = {}) =>
  Effect.gen(function*() {
    const run = yield* version(box, extra)
    expect(fs.existsSync(marker), what).toBe(false)
    expect(run.stderr, what).toBe("")
    expect(run.stdout.trim(), what).toBe(packageVersion())
    expect(run.code, what).toBe(0)
  })

describe.runIf(rootOnly)("a planted code cache is never run", () => {
  it.scopedLive("the plant runs when it is the user's own (the attack is real): this is why ownership is checked", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const { marker } = yield* plant(box, path.join(box.home, ".cache", "mino"))
      yield* version(box)
      expect(fs.readFileSync(marker, "utf8")).toBe("ran")
    }))

  it.scopedLive("a cache file owned by another uid, or group- or other-writable, or a link, is not run", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const dir = path.join(box.home, ".cache", "mino")
      const { file, marker } = yield* plant(box, dir)
      const planted = fs.readFileSync(file)
      const cases: ReadonlyArray<readonly [string, () => void]> = [
        ["owned by nobody", () => fs.chownSync(file, NOBODY, NOBODY)],
        ["group-writable", () => fs.chmodSync(file, 0o620)],
        ["other-writable", () => fs.chmodSync(file, 0o602)],
        ["a link to the plant", () => {
          const aside = path.join(path.dirname(box.home), "aside.v8")
          fs.writeFileSync(aside, planted, { mode: 0o600 })
          fs.rmSync(file)
          fs.symlinkSync(aside, file)
        }]
      ]
      for (const [name, make] of cases) {
        fs.rmSync(file, { force: true })
        fs.writeFileSync(file, planted, { mode: 0o600 })
        make()
        yield* stillWorksAndNothingRan(name, box, marker)
      }
      console.log(`planted cache files refused: ${cases.length} kinds`)
    }))

  it.scopedLive("a cache directory owned by another uid, group- or other-writable, or a link, is not used (nor written)", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const dir = path.join(box.home, ".cache", "mino")
      const { file, marker } = yield* plant(box, dir)
      const cases: ReadonlyArray<readonly [string, () => void, () => void]> = [
        ["owned by nobody", () => fs.chownSync(dir, NOBODY, NOBODY), () => fs.chownSync(dir, 0, 0)],
        ["group-writable", () => fs.chmodSync(dir, 0o770), () => fs.chmodSync(dir, 0o700)],
        ["other-writable and sticky", () => fs.chmodSync(dir, 0o1777), () => fs.chmodSync(dir, 0o700)],
        ["a link to the planted directory", () => {
          fs.renameSync(dir, `${dir}.real`)
          fs.symlinkSync(`${dir}.real`, dir)
        }, () => {
          fs.unlinkSync(dir)
          fs.renameSync(`${dir}.real`, dir)
        }]
      ]
      for (const [name, make, undo] of cases) {
        make()
        const before = fs.readdirSync(dir).sort()
        yield* stillWorksAndNothingRan(name, box, marker)
        // Nothing written into a directory that is not the user's own.
        expect(fs.readdirSync(dir).sort()).toEqual(before)
        undo()
      }
      expect(fs.existsSync(file)).toBe(true)
      console.log(`planted cache directories refused: ${cases.length} kinds`)
    }))

  it.scopedLive("as under `sudo -E`: root with HOME or XDG_CACHE_HOME at a user's cache neither runs it nor writes there", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      // The user's cache, made by the user's own mino (here: made, then handed to the user).
      const dir = path.join(box.home, ".cache", "mino")
      const { marker } = yield* plant(box, dir)
      for (const each of [box.home, path.join(box.home, ".cache"), dir, ...fs.readdirSync(dir).map((name) => path.join(dir, name))]) {
        fs.chownSync(each, NOBODY, NOBODY)
      }
      yield* stillWorksAndNothingRan("HOME", box, marker)
      yield* stillWorksAndNothingRan("XDG_CACHE_HOME", box, marker, { XDG_CACHE_HOME: path.join(box.home, ".cache") })
      // Nothing of root's in the user's directories.
      const owners = (at: string): ReadonlyArray<number> =>
        fs.readdirSync(at, { withFileTypes: true }).flatMap((entry) => {
          const full = path.join(at, entry.name)
          return [fs.lstatSync(full).uid, ...(entry.isDirectory() ? owners(full) : [])]
        })
      expect(owners(box.home).every((uid) => uid === NOBODY)).toBe(true)

      // The user has no cache yet: root makes none in the user's HOME or XDG_CACHE_HOME.
      fs.rmSync(path.join(box.home, ".cache"), { recursive: true })
      const xdg = path.join(path.dirname(box.home), "xdg")
      fs.mkdirSync(xdg)
      fs.chownSync(xdg, NOBODY, NOBODY)
      yield* stillWorksAndNothingRan("HOME, no cache", box, marker)
      yield* stillWorksAndNothingRan("XDG_CACHE_HOME, no cache", box, marker, { XDG_CACHE_HOME: xdg })
      expect(fs.readdirSync(box.home)).toEqual([])
      expect(fs.readdirSync(xdg)).toEqual([])
    }))
})
