/**
 * Hostile arguments against the bash tool's Prepare (chapter 03 section 3):
 * more than 10,000 generated argument texts, each classified by Prepare and by
 * an independent oracle written here. Prepare must never throw or die, must
 * never execute anything, must reject exactly what the oracle rejects, and an
 * accepted command must be shown as its JSON literal (`ApprovalScreen.commandLiteral`), which reads back exactly.
 *
 * The oracle reads keys with its own recursive-descent JSON reader (JSON.parse
 * silently keeps the last of two duplicate keys) and mirrors the tool's rules:
 * one field, `command`, a string, not empty after `String.prototype.trim`, no
 * NUL, no unpaired surrogate, at most 16384 UTF-8 bytes.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as fc from "fast-check"
import { commandLiteral, render } from "../../src/approval/ApprovalScreen.js"
import { erase } from "../../src/tools/Tool.js"
import { ToolRegistry } from "../../src/tools/ToolRegistry.js"
import * as ToolResult from "../../src/tools/ToolResult.js"
import { BashRunner } from "../../src/tools/bash/BashRunner.js"
import * as BashTool from "../../src/tools/bash/BashTool.js"
import { Secrets } from "../../src/security/Secrets.js"

// ---------------------------------------------------------------------------
// A runner that must never run: it counts calls and executions.

let runCalls = 0
let executed = 0
const neverRun = Layer.succeed(
  BashRunner,
  BashRunner.of({
    run: () => {
      runCalls += 1
      return Effect.sync(() => {
        executed += 1
        return ToolResult.make("completed", "this must never run")
      })
    }
  })
)

const tool = Effect.runSync(
  BashTool.make({ cwd: "/nonexistent/mino-fuzz", parentEnv: { PATH: "/usr/bin:/bin" } }).pipe(
    Effect.provide(neverRun),
    Effect.provide(Secrets.layerNone)
  )
)
// The path the Agent takes: the registry over the type-erased tool.
const registry = Effect.runSync(ToolRegistry.make([erase(tool)]).pipe(Effect.provide(Secrets.layerNone)))

// ---------------------------------------------------------------------------
// The independent oracle.

type Verdict = { readonly ok: true; readonly command: string } | { readonly ok: false; readonly why: string }

const reject = (why: string): Verdict => ({ ok: false, why })

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  "\"": "\"",
  "\\": "\\",
  "/": "/",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t"
}

const NUMBER_OR_LITERAL = /true|false|null|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y

/**
 * The top-level object's keys in `text`, decoded, duplicates included, in order;
 * undefined when `text` is not exactly one JSON object. A validating
 * recursive-descent reader, written without looking at Prepare's scanner.
 */
const objectKeys = (text: string): ReadonlyArray<string> | undefined => {
  let i = 0
  const fail = (): never => {
    throw new SyntaxError(`oracle: bad JSON at ${i}`)
  }
  const space = () => {
    while (text[i] === " " || text[i] === "\t" || text[i] === "\n" || text[i] === "\r") i += 1
  }
  const string = (): string => {
    if (text[i] !== "\"") fail()
    i += 1
    let out = ""
    for (;;) {
      const ch = text[i]
      if (ch === undefined) return fail()
      if (ch === "\"") {
        i += 1
        return out
      }
      if (ch.charCodeAt(0) < 0x20) fail()
      if (ch !== "\\") {
        out += ch
        i += 1
        continue
      }
      const escape = text[i + 1]
      if (escape === "u") {
        const hex = text.slice(i + 2, i + 6)
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail()
        out += String.fromCharCode(parseInt(hex, 16))
        i += 6
      } else {
        const decoded = escape === undefined ? undefined : SIMPLE_ESCAPES[escape]
        if (decoded === undefined) return fail()
        out += decoded
        i += 2
      }
    }
  }
  const object = (): Array<string> => {
    const keys: Array<string> = []
    i += 1 // "{"
    space()
    if (text[i] === "}") {
      i += 1
      return keys
    }
    for (;;) {
      space()
      keys.push(string())
      space()
      if (text[i] !== ":") fail()
      i += 1
      value()
      space()
      if (text[i] === ",") {
        i += 1
        continue
      }
      if (text[i] === "}") {
        i += 1
        return keys
      }
      fail()
    }
  }
  const array = () => {
    i += 1 // "["
    space()
    if (text[i] === "]") {
      i += 1
      return
    }
    for (;;) {
      value()
      space()
      if (text[i] === ",") {
        i += 1
        continue
      }
      if (text[i] === "]") {
        i += 1
        return
      }
      fail()
    }
  }
  const value = (): void => {
    space()
    const ch = text[i]
    if (ch === "{") return void object()
    if (ch === "[") return array()
    if (ch === "\"") return void string()
    NUMBER_OR_LITERAL.lastIndex = i
    const match = NUMBER_OR_LITERAL.exec(text)
    if (match === null) fail()
    else i += match[0].length
  }
  try {
    space()
    if (text[i] !== "{") return undefined
    const keys = object()
    space()
    return i === text.length ? keys : undefined
  } catch {
    return undefined
  }
}

const hasLoneSurrogate = (text: string): boolean => {
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) {
        i += 1
        continue
      }
      return true
    }
    if (unit >= 0xdc00 && unit <= 0xdfff) return true
  }
  return false
}

/** UTF-8 length of well-formed text, counted by code point. */
const utf8Bytes = (text: string): number => {
  let bytes = 0
  for (const ch of text) {
    const point = ch.codePointAt(0) ?? 0
    bytes += point < 0x80 ? 1 : point < 0x800 ? 2 : point < 0x10000 ? 3 : 4
  }
  return bytes
}

const oracle = (raw: string): Verdict => {
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch {
    return reject("not JSON")
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return reject("not an object")
  const keys = objectKeys(raw)
  // JSON.parse accepted an object, so the oracle's own reader must too.
  if (keys === undefined) throw new Error(`oracle reader disagrees with JSON.parse on ${JSON.stringify(raw.slice(0, 200))}`)
  if (keys.length !== 1 || keys[0] !== "command") return reject("fields")
  const command: unknown = Object.getOwnPropertyDescriptor(parsed, "command")?.value
  if (typeof command !== "string") return reject("type")
  // BashTool's rule: `command.trim() === ""` is empty.
  if (command.trim() === "") return reject("empty")
  if (hasLoneSurrogate(command)) return reject("surrogate")
  if (command.includes("\ufffd")) return reject("replacement")
  if (command.includes("\u0000")) return reject("NUL")
  if (utf8Bytes(command) > BashTool.MAX_COMMAND_BYTES) return reject("size")
  return { ok: true, command }
}

// ---------------------------------------------------------------------------
// The check every generated input goes through.

const UNSAFE_ON_SCREEN = /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/

const check = (raw: string): Verdict => {
  const expected = oracle(raw)
  const before = { runCalls, executed }

  let effect: ReturnType<typeof tool.prepare> | undefined
  expect(() => void (effect = tool.prepare(raw))).not.toThrow()
  const exit = Effect.runSyncExit(effect!)
  const viaRegistry = Effect.runSyncExit(registry.prepare("bash", raw))

  if (expected.ok) {
    if (Exit.isFailure(exit)) {
      throw new Error(`accepted by the oracle, rejected by Prepare: ${JSON.stringify(raw.slice(0, 200))}: ${Cause.pretty(exit.cause)}`)
    }
    const { display, operation } = exit.value
    expect(operation.command).toBe(expected.command)
    const field = display.fields.find((candidate) => candidate.label === "Command")
    expect(field).toEqual({ kind: "command", label: "Command", value: expected.command })
    const shown = commandLiteral(expected.command)
    expect(JSON.parse(shown)).toBe(expected.command)
    // The approval screen shows that literal, whole, on one line.
    expect(render(display)).toContain(`\nCommand: ${shown}\n`)
    expect(Exit.isSuccess(viaRegistry)).toBe(true)
  } else {
    if (Exit.isSuccess(exit)) {
      throw new Error(`rejected by the oracle (${expected.why}), accepted by Prepare: ${JSON.stringify(raw.slice(0, 200))}`)
    }
    // A rejection, never a defect or an interruption.
    expect(Cause.isFailType(exit.cause)).toBe(true)
    if (Cause.isFailType(exit.cause)) {
      const { result } = exit.cause.error
      expect(result.status).toBe("invalid_arguments")
      // One line the user can read safely.
      expect(result.output).not.toMatch(UNSAFE_ON_SCREEN)
    }
    expect(Exit.isFailure(viaRegistry) && Cause.isFailType(viaRegistry.cause)).toBe(true)
  }
  // Prepare never executes, on either path; the direct path does not even build the run.
  expect(executed).toBe(before.executed)
  expect(executed).toBe(0)
  if (!expected.ok) expect(runCalls).toBe(before.runCalls)
  return expected
}

// ---------------------------------------------------------------------------
// Generators of argument text.

const jsonSpace = fc.string({ unit: fc.constantFrom(" ", "\t", "\n", "\r"), maxLength: 3 })

const hex4 = (unit: number, upper: boolean): string => {
  const hex = unit.toString(16).padStart(4, "0")
  return `\\u${upper ? hex.toUpperCase() : hex}`
}

/** A JSON string literal for `text`, each UTF-16 unit written raw or escaped at random. */
const spelled = (text: string): fc.Arbitrary<string> =>
  fc.array(fc.constantFrom<"raw" | "lower" | "upper">("raw", "raw", "lower", "upper"), {
    minLength: text.length,
    maxLength: text.length
  }).map((choices) => {
    let out = "\""
    for (let i = 0; i < text.length; i++) {
      const ch = text[i]!
      const unit = ch.charCodeAt(0)
      const choice = choices[i]
      const mustEscape = ch === "\"" || ch === "\\" || unit < 0x20
      out += choice === "raw" && !mustEscape ? ch : hex4(unit, choice === "upper")
    }
    return `${out}"`
  })

/** A JSON object's text from already written key and value texts, with random spacing. */
const objectText = (entries: ReadonlyArray<readonly [string, string]>): fc.Arbitrary<string> =>
  fc.array(jsonSpace, { minLength: entries.length * 4 + 2, maxLength: entries.length * 4 + 2 }).map((spaces) => {
    let s = 0
    const space = () => spaces[s++] ?? ""
    const body = entries.map(([key, value]) => `${space()}${key}${space()}:${space()}${value}${space()}`).join(",")
    return `${space()}{${body}${entries.length === 0 ? space() : ""}}${space()}`
  })

const HOSTILE_UNITS = [
  "\u0000", "\u0007", "\b", "\t", "\n", "\r", "\u001b", "\u007f", "\u0085", "\u009b", "\u00a0", "\u00ad",
  "\u061c", "\u180e", "\u200b", "\u200d", "\u200e", "\u2028", "\u2029", "\u202e", "\u2066", "\u2069",
  "\u3000", "\ufeff", "\ud800", "\udbff", "\udc00", "\udfff", "\ud83d\ude00", "é", "€", "\"", "\\", "/",
  "'", "$", "`", "{", "}", "[", "]", ":", ",", " ", "a", "Z", "0", ";", "|", "&"
]

const commandText = fc.oneof(
  fc.string({ unit: "grapheme", minLength: 1, maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.string({ unit: fc.constantFrom(...HOSTILE_UNITS), maxLength: 30 }),
  fc.constantFrom("ls -la", "go version", "echo \"}\", {\"command\": 1}", "rm -rf ~", "printf '\\e[2J'")
)

const commandKey = spelled("command")

const stringValue = (text: fc.Arbitrary<string>) =>
  text.chain((command) => fc.oneof(fc.constant(JSON.stringify(command)), spelled(command)))

/** Arguments of the shape the model should send: `{"command": ...}`. */
const validShape = fc.tuple(commandKey, stringValue(commandText)).chain(([key, value]) => objectText([[key, value]]))

const WHITESPACE_UNITS = [
  " ", "\t", "\n", "\r", "\u000b", "\f", "\u00a0", "\u1680", "\u2000", "\u200a", "\u2028", "\u2029", "\u202f",
  "\u205f", "\u3000", "\ufeff",
  // Not whitespace to String.prototype.trim: these commands are not empty.
  "\u180e", "\u200b", "\u0085"
]

const TRICKY_KEYS = [
  "Command", "COMMAND", "command ", " command", "commandx", "comman", "cmd", "", "__proto__", "constructor",
  "toString", "cwd", "env", "timeout", "\u001b[2J", "command\u0000", "c\u200bommand", "сommand"
]

const trickyValue = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }).map((value) => JSON.stringify(value)),
  fc.constantFrom("\"}\"", "\"\\\"}\"", "{\"command\": \"rm -rf ~\"}", "[\"}\", {\"a\": \"]\"}]", "{}", "[]", "null")
)

const arbitraries: ReadonlyArray<readonly [string, number, fc.Arbitrary<string>, "accept" | "reject" | "either"]> = [
  ["any JSON text", 1_500, fc.json({ maxDepth: 3 }), "either"],
  ["any JSON object", 500, fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 })).map((o) => JSON.stringify(o)), "either"],
  ["a valid command, spelled and spaced at random", 2_000, validShape, "either"],
  [
    "a command of the wrong type",
    1_000,
    fc.tuple(commandKey, fc.jsonValue({ maxDepth: 2 }).filter((value) => typeof value !== "string"))
      .chain(([key, value]) => objectText([[key, JSON.stringify(value)]])),
    "reject"
  ],
  [
    "duplicate command fields, plain or escaped",
    1_000,
    fc.tuple(
      fc.array(fc.tuple(commandKey, fc.oneof(stringValue(commandText), trickyValue)), { minLength: 2, maxLength: 4 }),
      fc.array(fc.tuple(fc.constantFrom(...TRICKY_KEYS).chain(spelled), trickyValue), { maxLength: 2 })
    ).chain(([commands, extra]) => fc.shuffledSubarray([...commands, ...extra], { minLength: commands.length + extra.length }))
      .chain((entries) => objectText(entries)),
    "reject"
  ],
  [
    "extra fields beside a valid command",
    1_000,
    fc.tuple(
      fc.tuple(commandKey, stringValue(commandText)),
      fc.array(
        fc.tuple(fc.oneof(fc.constantFrom(...TRICKY_KEYS), fc.string({ maxLength: 10 })).filter((k) => k !== "command").chain(spelled), trickyValue),
        { minLength: 1, maxLength: 3 }
      )
    ).chain(([command, extra]) => fc.shuffledSubarray([command, ...extra], { minLength: extra.length + 1 }))
      .chain((entries) => objectText(entries)),
    "reject"
  ],
  [
    "a NUL character, raw or escaped",
    500,
    fc.tuple(fc.string({ maxLength: 20 }), fc.string({ maxLength: 20 }), fc.constantFrom("\u0000", "\\u0000", "\\u0000\\u0000"), commandKey)
      .map(([before, after, nul, key]) => `{${key}:${JSON.stringify(before).slice(0, -1)}${nul}${JSON.stringify(after).slice(1)}}`),
    "reject"
  ],
  [
    "an unpaired surrogate, raw or escaped",
    800,
    fc.tuple(
      fc.string({ maxLength: 20 }),
      fc.string({ maxLength: 20 }),
      fc.constantFrom("\ud800", "\udfff", "\\ud800", "\\uDBFF", "\\udc00", "\\ude00\\ud83d", "\\ud83d\\ud83d", "\ud83d x", "\\ud83d\ude00\\udc00"),
      commandKey
    ).map(([before, after, lone, key]) => `{${key}:${JSON.stringify(before).slice(0, -1)}${lone}${JSON.stringify(after).slice(1)}}`),
    "reject"
  ],
  [
    "a command around 16384 UTF-8 bytes",
    400,
    fc.tuple(fc.constantFrom("a", "é", "€", "😀", "\\u20ac", "\\ud83d\\ude00"), fc.integer({ min: -6, max: 6 }), fc.boolean())
      .map(([unit, delta, spaced]) => {
        const target = BashTool.MAX_COMMAND_BYTES + delta
        const decoded = JSON.parse(`"${unit}"`) as string
        const unitBytes = Buffer.byteLength(decoded)
        const count = Math.floor(target / unitBytes)
        const text = `${unit.repeat(count)}${"a".repeat(target - count * unitBytes)}`
        return spaced ? `{ "command" : "${text}" }\n` : `{"command":"${text}"}`
      }),
    "either"
  ],
  [
    "truncated JSON",
    1_000,
    validShape.chain((text) => fc.nat({ max: Math.max(0, text.length - 1) }).map((end) => text.slice(0, end))),
    "either"
  ],
  [
    "a whitespace-only or invisible command",
    800,
    fc.tuple(commandKey, fc.string({ unit: fc.constantFrom(...WHITESPACE_UNITS), maxLength: 6 }).chain((text) => stringValue(fc.constant(text))))
      .chain(([key, value]) => objectText([[key, value]])),
    "either"
  ],
  [
    "text that is barely JSON, or not at all",
    1_000,
    fc.oneof(
      fc.string({ unit: "binary", maxLength: 60 }),
      fc.array(
        fc.constantFrom("{", "}", "[", "]", ",", ":", "\"", "\\", "\"command\"", "\"comm\\u0061nd\"", "\"ls\"", "1", "null", " ", "\n", "\u00a0", "\u0000", "\ud800"),
        { maxLength: 14 }
      ).map((parts) => parts.join("")),
      fc.constantFrom(
        "", " ", " {\"command\":\"ls\"}\n", "{", "{\"command\"", "{\"command\":", "{\"command\":\"ls\"", "{\"command\":\"ls\",}", "{\"command\":\"ls\"}}",
        "{\"command\":\"ls\"} {}", "{'command':'ls'}", "{command:\"ls\"}", "{\"command\":\"ls\" \"x\":1}", "\ufeff{\"command\":\"ls\"}",
        "{\u00a0\"command\":\"ls\"}", "{\"command\":\"l\ns\"}", "{\"command\":\"\\x41\"}", "{\"command\":\"\\u00zz\"}"
      )
    ),
    "either"
  ]
]

describe("Prepare under fuzzing", () => {
  for (const [name, numRuns, arbitrary, expectation] of arbitraries) {
    it(`${name}: ${numRuns} inputs classified like the oracle, nothing executed`, () => {
      const verdicts = { accepted: 0, rejected: 0 }
      fc.assert(
        fc.property(arbitrary, (raw) => {
          const verdict = check(raw)
          verdicts[verdict.ok ? "accepted" : "rejected"] += 1
          if (expectation === "accept") expect(verdict.ok).toBe(true)
          if (expectation === "reject") expect(verdict.ok).toBe(false)
        }),
        { numRuns }
      )
      expect(verdicts.accepted + verdicts.rejected).toBeGreaterThanOrEqual(numRuns)
    })
  }

  it("the generators reach both outcomes where they should, and the total is at least 10,000", () => {
    const total = arbitraries.reduce((sum, [, numRuns]) => sum + numRuns, 0)
    expect(total).toBeGreaterThanOrEqual(10_000)
    const sample = (arbitrary: fc.Arbitrary<string>) => fc.sample(arbitrary, { numRuns: 300, seed: 42 }).map((raw) => oracle(raw).ok)
    for (const [name, , arbitrary, expectation] of arbitraries) {
      if (expectation !== "either" || name === "any JSON text" || name === "any JSON object") continue
      const outcomes = sample(arbitrary)
      expect({ name, accepted: outcomes.some(Boolean), rejected: outcomes.some((ok) => !ok) }).toEqual({ name, accepted: true, rejected: true })
    }
    expect(executed).toBe(0)
  })

  it("the oracle itself agrees with known cases", () => {
    const cases: ReadonlyArray<readonly [string, boolean]> = [
      ["{\"command\":\"ls\"}", true],
      ["{\"comm\\u0061nd\":\"ls\"}", true],
      ["{\"command\":\"ls\",\"comm\\u0061nd\":\"ls\"}", false],
      ["{\"command\":\"ls\",\"x\":{\"command\":1}}", false],
      ["{\"x\":\"}\\\"\",\"command\":\"ls\"}", false],
      ["{\"command\":\" \\n\\t\"}", false],
      ["{\"command\":\"\\u200b\"}", true],
      ["{\"command\":\"a\\u0000\"}", false],
      ["{\"command\":\"\\ud800\"}", false],
      ["{\"command\":\"\\ud83d\\ude00\"}", true],
      ["{\"command\":\"echo \ufffd\"}", false],
      ["{\"command\":\"echo \\ufffd\"}", false],
      [JSON.stringify({ command: "a".repeat(16_384) }), true],
      [JSON.stringify({ command: "a".repeat(16_385) }), false],
      ["{\"__proto__\":{},\"command\":\"ls\"}", false]
    ]
    for (const [raw, ok] of cases) {
      expect({ raw, ok: oracle(raw).ok }).toEqual({ raw, ok })
      expect({ raw, ok: check(raw).ok }).toEqual({ raw, ok })
    }
  })
})
