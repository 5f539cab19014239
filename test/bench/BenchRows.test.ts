/**
 * `npm run bench` prints every figure the speed issue names, each beside its
 * floor, and the long session's memory is a figure it computes (not that
 * anything is fast: a small long session, 2 turns, run through the bench itself).
 */
import { execFile } from "node:child_process"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Schema from "effect/Schema"
import { ROOT } from "../support/MinoProcess.js"

const BENCH = path.join(ROOT, "scripts", "bench.mjs")

const bench = (args: ReadonlyArray<string>, env: Readonly<Record<string, string>> = {}): Promise<string> =>
  new Promise((resolve, reject) => {
    execFile(process.execPath, [BENCH, ...args], { cwd: ROOT, env: { ...process.env, ...env }, timeout: 120_000 }, (error, stdout, stderr) => {
      if (error !== null) reject(new Error(`${error.message}\n${stderr}`))
      else resolve(stdout)
    })
  })

const Rows = Schema.Record({ key: Schema.String, value: Schema.Array(Schema.String) })

const Row = Schema.Struct({
  section: Schema.String,
  name: Schema.String,
  ratio: Schema.Number,
  goal: Schema.Number,
  bytes: Schema.Struct({ history: Schema.Number, peak: Schema.Number, after: Schema.Number })
})
const Measured = Schema.Struct({ heading: Schema.String, rows: Schema.Array(Row), loadAtEnd: Schema.String })

describe("npm run bench", () => {
  it("names a row for every figure of the speed issue", async () => {
    const sections = Schema.decodeUnknownSync(Schema.parseJson(Rows))(await bench(["--list"]))
    const names = Object.values(sections).flat().map((name) => name.trim())
    const wanted = [
      "in a pseudo-terminal, 80x24",
      "first question to the model",
      "b) loop overhead per tool step",
      "CPU per tool step",
      "tool step in the CLI, guard aside",
      ...["1k", "10k", "100k"].flatMap((size) => [
        `e) turn end -> next prompt, ${size} records`,
        `request CPU, ${size} records`,
        `start-up, ${size} records`
      ]),
      "f) long session: peak memory",
      "long session: memory after the turn"
    ]
    for (const name of wanted) expect(names).toContain(name)
    expect(Object.keys(sections)).toEqual(expect.arrayContaining(["start", "step", "scale", "long"]))
  }, 120_000)

  it("computes the long session's memory as a multiple of its history, and says which build and load it ran under", async () => {
    const measured = Schema.decodeUnknownSync(Schema.parseJson(Measured))(await bench(["long", "--json"], { MINO_BENCH_LONG_TURNS: "2" }))
    expect(measured.rows.map((row) => row.name.trim())).toEqual(["f) long session: peak memory", "long session: memory after the turn"])
    const [peak, after] = measured.rows
    // The history is the last request's body: two turns of 16 results of 60 kB at least.
    expect(peak!.bytes.history).toBeGreaterThan(2 * 16 * 60_000)
    expect(peak!.bytes.peak).toBeGreaterThan(0)
    expect(peak!.ratio).toBe(peak!.bytes.peak / peak!.bytes.history)
    expect(after!.ratio).toBe(after!.bytes.after / after!.bytes.history)
    expect(Number.isFinite(after!.ratio) && after!.ratio > 0).toBe(true)
    expect(peak!.goal).toBe(1.5)
    expect(measured.heading).toMatch(/^Mino bench: (commit [0-9a-f]{12}( \+ uncommitted changes)?|not a git checkout), node v\d+\.\d+\.\d+, \d+ CPUs, load average \d+\.\d\d \d+\.\d\d \d+\.\d\d;/)
    expect(measured.loadAtEnd).toMatch(/^\d+\.\d\d \d+\.\d\d \d+\.\d\d$/)
  }, 120_000)
})
