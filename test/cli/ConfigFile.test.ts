/**
 * `~/.mino/config.json` (`cli/ConfigFile.ts`): the three settings become the
 * variables' values under the environment (a set variable wins, an empty one
 * does not), each setting says where it came from, the key is refused in any
 * spelling, and a file that is not the user's own regular file is refused with
 * one line. Read through `effect/Config`, as `Config.ts` reads it.
 */
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as fc from "fast-check"
import * as ConfigFile from "../../src/cli/ConfigFile.js"
import * as MinoConfig from "../../src/Config.js"
import { tempDir } from "../support/Harness.js"

const KEY = "sk-proj-abcdefghijklmnopqrstuvwx"

const home = (settings?: string, mode = 0o600) => {
  const dir = Fs.realpathSync(tempDir("config"))
  if (settings !== undefined) {
    Fs.mkdirSync(Path.join(dir, ".mino"), { mode: 0o700 })
    Fs.writeFileSync(ConfigFile.pathOf(dir), settings, { mode })
    Fs.chmodSync(ConfigFile.pathOf(dir), mode)
  }
  return dir
}

const loaded = (env: Record<string, string>) => {
  const result = ConfigFile.load(env)
  if (Either.isLeft(result)) throw new Error(result.left)
  return result.right
}

describe("the configuration file", () => {
  it.effect("its values are read through effect/Config under the environment's; an empty variable does not hide them", () =>
    Effect.gen(function*() {
      const dir = home(JSON.stringify({ model: "file-model", endpoint: "http://localhost:8080/v1", headers: { "cf-aig-authorization": "Bearer g" } }))
      const file = loaded({ HOME: dir, MINO_MODEL: "" })
      const read = Effect.withConfigProvider(Effect.all([MinoConfig.model, MinoConfig.baseURL]), file.provider)
      expect(yield* read).toEqual(["file-model", "http://localhost:8080/v1"])
      expect(file.sources).toEqual({ model: "file", endpoint: "file", headers: "file" })
      expect(file.values.headers).toBe("cf-aig-authorization: Bearer g")
      const env = loaded({ HOME: dir, MINO_MODEL: "env-model" })
      expect(yield* Effect.withConfigProvider(MinoConfig.model, env.provider)).toBe("env-model")
      expect(env.sources.model).toBe("environment")
      expect(ConfigFile.describe("model", env.sources.model)).toBe("from MINO_MODEL")
      expect(ConfigFile.describe("endpoint", env.sources.endpoint)).toBe("from ~/.mino/config.json")
      const none = loaded({ HOME: home() })
      expect(yield* Effect.withConfigProvider(MinoConfig.model, none.provider)).toBe("gpt-5.1")
      expect(none.sources).toEqual({ model: "default", endpoint: "default", headers: "default" })
    }))

  it("the key in any spelling is refused, and the line never holds it", () => {
    const files = [
      { apiKey: "x" },
      { api_key: "x" },
      { OPENAI_API_KEY: "x" },
      { "Api-Key": "x" },
      { token: "x" },
      { model: KEY },
      { endpoint: `https://user:${KEY}@example.com/v1` },
      { headers: { authorization: "Bearer x" } },
      { headers: { "X-Api-Key": "x" } },
      { headers: { "cf-aig-authorization": `Bearer ${KEY}` } }
    ]
    for (const settings of files) {
      const result = ConfigFile.parse(JSON.stringify(settings), KEY)
      expect(result).toEqual(Either.left("~/.mino/config.json holds an API key; the key never goes in the file: set OPENAI_API_KEY in the environment"))
    }
    // A key spelled with JSON escapes is still the key once parsed.
    const escaped = `{"model":"${[...KEY].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join("")}"}`
    expect(Either.isLeft(ConfigFile.parse(escaped, KEY))).toBe(true)
  })

  it("not an object, an unknown setting, a wrong type, a control character or a header line break: one line each", () => {
    const refused = (text: string) => Either.match(ConfigFile.parse(text, undefined), { onLeft: (line) => line, onRight: () => "accepted" })
    expect(refused("[]")).toBe("~/.mino/config.json must hold one JSON object")
    expect(refused("{")).toBe("~/.mino/config.json is not valid JSON")
    expect(refused(`{"modle":"x"}`)).toMatch(/unknown setting "modle"; it takes "model", "endpoint", "headers"$/)
    expect(refused(`{"model":3}`)).toBe(`~/.mino/config.json: "model" must be a string`)
    expect(refused(`{"model":"a\\u001b[2Jb"}`)).toBe(`~/.mino/config.json: "model" holds a control character`)
    expect(refused(`{"headers":{"x-a":"1\\r\\nx-b: 2"}}`)).toBe("~/.mino/config.json: a header holds a line break")
    expect(refused(`{"headers":["x"]}`)).toMatch(/"headers" must be an object/)
    expect(refused(`{"\\u001b]0;x\\u0007":"y"}`)).not.toMatch(/[\u0000-\u001f]/)
  })

  it("fuzzed files (1,000): each is accepted with known settings only, or refused in one line without control characters", () => {
    const json = fc.oneof(
      fc.json(),
      fc.dictionary(fc.constantFrom("model", "endpoint", "headers", "apiKey", "x"), fc.oneof(fc.string(), fc.dictionary(fc.string(), fc.string()))).map((o) => JSON.stringify(o))
    )
    fc.assert(fc.property(json, (text) => {
      const result = ConfigFile.parse(text, KEY)
      if (Either.isRight(result)) for (const name of Object.keys(result.right)) expect(["model", "endpoint", "headers"]).toContain(name)
      else expect(result.left).not.toMatch(/[\u0000-\u001f\u007f\n]/)
    }), { numRuns: 1000 })
  })

  it("a file writable by others, a symlink, a FIFO, a directory or one over 64 KiB is refused; none is no file", () => {
    const refusal = (dir: string) => Either.match(ConfigFile.load({ HOME: dir }), { onLeft: (line) => line, onRight: () => "accepted" })
    expect(refusal(home(`{"model":"m"}`, 0o602))).toMatch(/can be written by others \(mode 602\)/)
    expect(refusal(home(`{"model":"m"}`, 0o620))).toMatch(/can be written by others/)
    expect(refusal(home(`{"model":"m"}`, 0o644))).toBe("accepted")
    expect(refusal(home(`{"model":"${"x".repeat(70_000)}"}`))).toMatch(/larger than 64 KiB/)
    const link = home("{}")
    Fs.rmSync(ConfigFile.pathOf(link))
    Fs.symlinkSync("/etc/passwd", ConfigFile.pathOf(link))
    expect(refusal(link)).toBe("~/.mino/config.json is a symbolic link, not a regular file; Mino does not open it")
    const fifo = home("{}")
    Fs.rmSync(ConfigFile.pathOf(fifo))
    execFileSync("mkfifo", [ConfigFile.pathOf(fifo)])
    expect(refusal(fifo)).toBe("~/.mino/config.json is a FIFO, not a regular file; Mino does not open it")
    const directory = home("{}")
    Fs.rmSync(ConfigFile.pathOf(directory))
    Fs.mkdirSync(ConfigFile.pathOf(directory))
    expect(refusal(directory)).toMatch(/is a directory, not a regular file/)
    const openMino = home("{}")
    Fs.chmodSync(Path.join(openMino, ".mino"), 0o777)
    expect(refusal(openMino)).toMatch(/\.mino can be written by others/)
    expect(refusal(home())).toBe("accepted")
    expect(Either.isRight(ConfigFile.load({ HOME: "relative" }))).toBe(true)
  })
})
