/**
 * The `POST /responses` request schema (ResponsesSchema.ts, over the fixture
 * extracted from openai/openai-openapi): the requests Mino sends on recorded
 * OpenAI and Azure streams are valid, and so are those on the loopback server's
 * scripted items (their `output_text` parts carry `logprobs` as the API's do); a body broken in one place is rejected with lines naming that place and why,
 * swept over generated damage.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fc from "effect/FastCheck"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import { chat, type Family, load, steps } from "../model/endpoints/Driver.js"
import * as Rules from "../model/endpoints/Rules.js"
import * as EchoTool from "./EchoTool.js"
import { scriptedModel, tempDir, turn, withAgent } from "./Harness.js"
import { validateRequestBody } from "./ResponsesSchema.js"

type Json = Record<string, unknown>

const isJson = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

const inputOf = (body: unknown): ReadonlyArray<Json> => {
  const input = isJson(body) ? body["input"] : undefined
  return Array.isArray(input) ? input.filter(isJson) : []
}

const recorded = (name: string, host: string, baseURL?: (loopback: string) => string): Family => ({
  name,
  host,
  ...(baseURL === undefined ? {} : { baseURL }),
  model: "gpt-5.1",
  text: load(`${name}.text`),
  toolCall: load(`${name}.tool-call`),
  afterTool: load(`${name}.after-tool`),
  accepts: Rules.openAi,
  reasoning: "verbatim",
  errors: []
})

describe("the Responses request schema", () => {
  for (
    const family of [
      recorded("openai", "api.openai.com"),
      recorded("azure", "mino-test.openai.azure.com", (loopback) => `${loopback.replace(/\/v1$/, "/openai")}?api-version=2025-04-01-preview`)
    ]
  ) {
    it.scopedLive(`${family.name}: every request of a tool turn and the next turn, on recorded streams, is valid`, () =>
      Effect.gen(function*() {
        const { requests, runs } = yield* chat(
          family,
          [steps(family.toolCall), steps(family.afterTool!), steps(family.text)],
          ["Run echo mino-conformance.", "Thanks."]
        )
        expect(runs.map((run) => run.status)).toEqual(["completed", "completed"])
        expect(requests.map((request) => validateRequestBody(request.body))).toEqual([[], [], []])
        // The last one replays every kind Mino sends, verbatim as the server produced it.
        const input = inputOf(requests[2]!.body)
        expect(input.map((item) => [item["type"], item["role"]])).toEqual([
          ["message", "user"],
          ["reasoning", undefined],
          ["function_call", undefined],
          ["function_call_output", undefined],
          ["message", "assistant"],
          ["message", "user"]
        ])
        expect(input[1]).toMatchObject({ id: expect.any(String), encrypted_content: expect.stringMatching(/^gAAAA/) })
        expect(input[4]).toMatchObject({ id: expect.any(String), status: "completed", content: [{ annotations: [], logprobs: [] }] })
      }))
  }

  const echo = (id: string, text: string) => ({ call_id: id, name: "echo", arguments: JSON.stringify({ text }) })

  it.scopedLive("the loopback server's scripted items, sent back as Mino sends them, are valid", () =>
    Effect.gen(function*() {
      const server = yield* scriptedModel([
        ResponsesServer.toolCallResponse([echo("c1", "one"), echo("c2", "two")], {
          reasoning: { encrypted_content: "gAAAA-opaque" },
          message: { text: "Let me check.", phase: "commentary", extra: { unknown_field: [1, 2] } }
        }),
        ResponsesServer.textResponse("both echoed"),
        ResponsesServer.textResponse("again")
      ])
      yield* withAgent({ home: tempDir("schema"), url: server.url, tools: [EchoTool.make()] }, Effect.zip(turn("echo two things"), turn("and again")))
      const requests = yield* server.requests
      // The tool turn's two requests, then the next turn's.
      expect(requests).toHaveLength(3)
      expect(inputOf(requests[2]!.body).map((item) => item["type"])).toEqual(
        ["message", "reasoning", "message", "function_call", "function_call", "function_call_output", "function_call_output", "message", "message"]
      )
      expect(requests.map((request) => validateRequestBody(request.body))).toEqual([[], [], []])
    }))

  /** A body in the shape Mino sends (Mino's bash tool, the items of a tool turn), short. */
  const body = () => ({
    model: "gpt-5.1",
    instructions: "test instructions",
    input: [
      { type: "message", role: "user", content: [{ type: "input_text", text: "Run ls." }] },
      { id: "rs_1", type: "reasoning", encrypted_content: "gAAAA-opaque", summary: [{ type: "summary_text", text: "Listing." }] },
      { id: "fc_1", type: "function_call", status: "completed", arguments: "{\"command\":\"ls\"}", call_id: "call_1", name: "bash" },
      { type: "function_call_output", call_id: "call_1", output: "{\"status\":\"completed\",\"output\":\"a\\n\",\"exit_code\":0}" },
      { id: "msg_1", type: "message", status: "completed", role: "assistant", phase: "final_answer", content: [{ type: "output_text", annotations: [], logprobs: [], text: "Done." }] }
    ] as Array<Json>,
    tools: [{
      type: "function",
      name: "bash",
      description: "Run a shell command.",
      parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"], additionalProperties: false },
      strict: true
    }] as Array<Json>,
    store: false,
    include: ["reasoning.encrypted_content"],
    parallel_tool_calls: false,
    stream: true
  } as Json & { input: Array<Json>; tools: Array<Json> })

  type Body = ReturnType<typeof body>

  const broken: ReadonlyArray<readonly [string, (body: Body) => unknown, ReadonlyArray<string | RegExp>]> = [
    ["a function_call_output without its output", (b) => delete b.input[3]!["output"], ["/input/3 must have required property 'output'"]],
    ["a function_call_output with an empty call_id", (b) => (b.input[3]!["call_id"] = ""), ["/input/3/call_id must NOT have fewer than 1 characters"]],
    [
      "an input item of an unknown type",
      (b) => (b.input[2]!["type"] = "bash_call"),
      [/^\/input\/2\/type must be equal to one of the allowed values: "message", .*"function_call", "function_call_output", .*"reasoning", .* \(got "bash_call"\)$/]
    ],
    [
      "a message with role system given an output_text part",
      (b) => (b.input[4]!["role"] = "system"),
      // Only an output message holds output_text parts (an input message's are input_*), and its role is assistant.
      ["/input/4/role must be equal to one of the allowed values: \"assistant\" (got \"system\")"]
    ],
    ["a function_call whose arguments are an object", (b) => (b.input[2]!["arguments"] = { command: "ls" }), ["/input/2/arguments must be string (got {\"command\":\"ls\"})"]],
    ["a reasoning item without its summary", (b) => delete b.input[1]!["summary"], ["/input/1 must have required property 'summary'"]],
    [
      "an assistant message with an unknown status",
      (b) => (b.input[4]!["status"] = "done"),
      ["/input/4/status must be equal to one of the allowed values: \"in_progress\", \"completed\", \"incomplete\" (got \"done\")"]
    ],
    [
      "a user message with role tool",
      (b) => (b.input[0]!["role"] = "tool"),
      // The two input-message forms say it, each with its roles.
      [
        "/input/0/role must be equal to one of the allowed values: \"user\", \"assistant\", \"system\", \"developer\" (got \"tool\")",
        "/input/0/role must be equal to one of the allowed values: \"user\", \"system\", \"developer\" (got \"tool\")"
      ]
    ],
    ["a null input item", (b) => b.input.push(null as never), ["/input/5 must be object (got null)"]],
    ["input that is a number", (b) => Object.assign(b, { input: 3 }), ["/input must be string or array (got 3)"]],
    ["stream given as a string", (b) => (b["stream"] = "true"), ["/stream must be boolean or null (got \"true\")"]],
    ["an include value the API does not know", (b) => (b["include"] = ["reasoning.encrypted"]), [/^\/include\/0 must be equal to one of the allowed values: .*"reasoning.encrypted_content".* \(got "reasoning.encrypted"\)$/]],
    ["a function tool without parameters", (b) => delete b.tools[0]!["parameters"], ["/tools/0 must have required property 'parameters'"]]
  ]

  it("Mino's shape is valid, and each body broken in one place is rejected for that reason", () => {
    expect(validateRequestBody(body())).toEqual([])
    expect(validateRequestBody("hello")).toEqual(["body must be object (got \"hello\")"])
    for (const [name, breakIt, expected] of broken) {
      const b = body()
      breakIt(b)
      const lines = validateRequestBody(b)
      expect({ name, lines }).toEqual({ name, lines: expected.map((line) => (typeof line === "string" ? line : expect.stringMatching(line))) })
    }
  })

  it("the spec accepts what the API checks only at run time: a call_id is optional, an item with an id and no type is a reference", () => {
    // So the schema does not replace the pairing check (Rules.openAi): an output with no call_id passes it.
    const withoutCallId = body()
    delete withoutCallId.input[3]!["call_id"]
    expect(validateRequestBody(withoutCallId)).toEqual([])
    // An item that lost its `type` but kept its `id` reads as an item_reference (looked up in storage under store: false).
    const withoutType = body()
    delete withoutType.input[2]!["type"]
    expect(validateRequestBody(withoutType)).toEqual([])
  })

  /** Every place in the body below its top, as a path of keys. */
  const places = (value: unknown, path: ReadonlyArray<string | number> = []): Array<ReadonlyArray<string | number>> => {
    const children: ReadonlyArray<readonly [string | number, unknown]> = Array.isArray(value)
      ? value.map((item, index) => [index, item] as const)
      : isJson(value)
      ? Object.entries(value)
      : []
    return [...(path.length > 0 ? [path] : []), ...children.flatMap(([key, child]) => places(child, [...path, key]))]
  }

  /** `body()` with the value at `path` removed or replaced. */
  const damage = (path: ReadonlyArray<string | number>, replacement: { readonly value: unknown } | "remove"): Body => {
    const damaged = body()
    let parent: unknown = damaged
    for (const key of path.slice(0, -1)) parent = Array.isArray(parent) ? parent[Number(key)] : isJson(parent) ? parent[key] : undefined
    const key = path.at(-1)!
    if (Array.isArray(parent)) {
      if (replacement === "remove") parent.splice(Number(key), 1)
      else parent[Number(key)] = replacement.value
    } else if (isJson(parent)) {
      if (replacement === "remove") delete parent[key]
      else parent[key] = replacement.value
    }
    return damaged
  }

  it("a body damaged at one place is explained at that place, never by the fallback (a sweep of 1,000 generated damages)", () => {
    const all = places(body())
    let valid = 0
    fc.assert(
      fc.property(fc.integer({ min: 0, max: all.length - 1 }), fc.option(fc.jsonValue({ maxDepth: 2 }), { nil: undefined }), (at, value) => {
        const path = all[at]!
        const lines = validateRequestBody(damage(path, value === undefined ? "remove" : { value }))
        if (lines.length === 0) return void valid++
        expect(lines.join("\n")).not.toContain("explaining validator found nothing more")
        // Every line is about the damaged top-level field; one of them is on the damaged place's line.
        const top = `/${path[0]}`
        for (const line of lines) expect(line.startsWith(`${top} `) || line.startsWith(`${top}/`)).toBe(true)
        const place = path.map((key) => `/${key}`).join("")
        const where = lines.map((line) => line.split(" ")[0]!)
        expect(where.some((at) => place.startsWith(at) || at.startsWith(place))).toBe(true)
      }),
      { numRuns: 1000 }
    )
    console.log(`schema sweep: 1000 damaged bodies over ${all.length} places, ${1000 - valid} rejected, ${valid} still valid`)
    expect(1000 - valid).toBeGreaterThan(500)
  })
})
