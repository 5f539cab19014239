/**
 * The hand-written record check used by restore agrees with the record schemas,
 * on valid records and on every kind of wrongly typed field; and encoding keeps
 * items verbatim, redacts once, and refuses what cannot be saved.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as fc from "fast-check"
import { encode, isRecord, isToolResult, SessionRecord, TOOL_RESULT_FIELDS } from "../../src/session/records/Records.js"
import { ToolResult } from "../../src/tools/ToolResult.js"
import * as Secrets from "../../src/security/Secrets.js"

const isSchemaRecord = Schema.is(SessionRecord)

const value = fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null), fc.constant([]), fc.constant({}), fc.array(fc.object(), { maxLength: 2 }))
const maybe = <A>(arbitrary: fc.Arbitrary<A>) => fc.option(arbitrary, { nil: undefined })
const status = fc.constantFrom("completed", "failed", "denied", "invalid_arguments", "unknown_tool", "not_executed", "unknown", "other")

const record = fc.record({
  type: fc.constantFrom("user_input", "model_response", "tool_start", "tool_result", "turn_end"),
  turn_id: fc.oneof(fc.string(), value),
  time: maybe(fc.oneof(fc.string(), value)),
  text: maybe(fc.oneof(fc.string(), value)),
  response_id: maybe(fc.oneof(fc.string(), value)),
  output: maybe(fc.oneof(fc.array(fc.oneof(fc.object(), value), { maxLength: 3 }), value)),
  call_id: maybe(fc.oneof(fc.string(), value)),
  name: maybe(fc.oneof(fc.string(), value)),
  result: maybe(fc.oneof(fc.record({ status, output: fc.oneof(fc.string(), value), exit_code: maybe(fc.oneof(fc.integer(), value)) }), value)),
  status: maybe(fc.oneof(fc.constantFrom("completed", "failed", "cancelled", "interrupted", "done"), value)),
  reason: maybe(fc.oneof(fc.string(), value)),
  // Added in 0.4: the tokens a response reported; whole, non-negative counts or the line is not a record.
  usage: maybe(fc.oneof(
    fc.record({
      input_tokens: fc.oneof(fc.integer({ min: -3, max: 1_000_000 }), fc.double(), value),
      output_tokens: fc.oneof(fc.integer({ min: -3, max: 1_000_000 }), fc.constant(2 ** 60), value)
    }, { requiredKeys: [] }),
    value
  ))
}, { requiredKeys: ["type", "turn_id"] })

describe("records", () => {
  it("the restore check agrees with the schemas on 5,000 generated records", () => {
    let valid = 0
    fc.assert(fc.property(record, (generated) => {
      // JSON has no undefined: drop absent fields the way a parsed line lacks them.
      const line = JSON.parse(JSON.stringify(generated)) as { type: string }
      const expected = isSchemaRecord(line)
      if (expected) valid += 1
      expect(isRecord(line)).toBe(expected)
    }), { numRuns: 5000 })
    // Both outcomes were reached.
    expect(valid).toBeGreaterThan(50)
  })

  it("the restore check of a tool result agrees with its schema on 5,000 generated results, and knows every field it has", () => {
    expect([...TOOL_RESULT_FIELDS].sort()).toEqual(Object.keys(ToolResult.fields).sort())
    const isSchemaResult = Schema.is(ToolResult)
    // Mostly the right type, so that both outcomes are common.
    const field = (arbitrary: fc.Arbitrary<unknown>) => fc.oneof({ arbitrary, weight: 9 }, { arbitrary: value, weight: 1 })
    const result = fc.oneof(
      fc.record({
        status: field(status),
        output: field(fc.string()),
        exit_code: field(fc.oneof(fc.integer(), fc.double({ noNaN: true }))),
        signal: field(fc.string()),
        truncated: field(fc.boolean()),
        timed_out: field(fc.boolean()),
        cancelled: field(fc.boolean()),
        other: value
      }, { requiredKeys: [] }),
      value
    )
    let valid = 0
    fc.assert(fc.property(result, (generated) => {
      const parsed: unknown = JSON.parse(JSON.stringify(generated))
      const expected = isSchemaResult(parsed)
      if (expected) valid += 1
      expect(isToolResult(parsed)).toBe(expected)
    }), { numRuns: 5000 })
    console.log(`tool results checked both ways: 5000, ${valid} valid`)
    expect(valid).toBeGreaterThan(250)
    expect(valid).toBeLessThan(4750)
  })

  it("a mistyped call_id fails the check", () => {
    expect(isRecord({ type: "tool_start", turn_id: "t", call_id: 42 } as unknown as { type: string })).toBe(false)
  })

  it("encoding keeps __proto__ and constructor keys, redacts secrets once, and ends the line", () => {
    const item = JSON.parse("{\"type\":\"x\",\"__proto__\":{\"a\":1},\"constructor\":{\"b\":2},\"text\":\"key sk-secret-123456\"}") as Record<string, unknown>
    const line = encode({ type: "model_response", turn_id: "t", output: [item] }, (text) => Secrets.redact(text, ["sk-secret-123456"]))
    expect(line).toEqual(Either.right("{\"type\":\"model_response\",\"turn_id\":\"t\",\"output\":[{\"type\":\"x\",\"__proto__\":{\"a\":1},\"constructor\":{\"b\":2},\"text\":\"key [redacted]\"}]}\n"))
  })
})
