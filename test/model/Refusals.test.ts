/**
 * Issue 29, through the real client against a loopback server:
 * - error bodies in every shape servers use become one readable line naming the field and the problem
 *   (item 3: OpenAI's object, FastAPI's `detail`, zod's issue arrays from Hugging Face's router,
 *   `{"error": "text"}`, plain text);
 * - a 400 that refuses a field without naming it as `param` (Groq's "property 'store' is unsupported")
 *   is sent again once without the optional fields, announced, remembered once taken; never a loop
 *   (item 7), and refusals that name another field or nothing are not retried;
 * - a gateway's headers (item 5) reach the server, and their values are redacted in error lines like
 *   the key; `MINO_HEADERS` is refused, in one line that never shows a value, when it would carry the
 *   key, smuggle a line, or set a header Mino owns;
 * - a base URL pasted with `/responses` or a trailing slash (item 4) and what counts as loopback (item 6).
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Adaptation from "../../src/model/Adaptation.js"
import * as Endpoint from "../../src/model/Endpoint.js"
import * as GatewayHeaders from "../../src/model/GatewayHeaders.js"
import { ModelClient, type ModelClientConfig, type ModelError, type ModelEvent, type ModelRequest } from "../../src/model/ModelClient.js"
import * as History from "../../src/model/request/History.js"
import { isObject, type ResponseItem } from "../../src/protocol/ResponseItem.js"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import { Secrets } from "../../src/security/Secrets.js"

const KEY = "sk-refusals-0123456789abcdef"

const userMessage = (text: string): ResponseItem => ({ type: "message", role: "user", content: [{ type: "input_text", text }] })
const ask = (text = "hi", history?: History.History): ModelRequest => ({
  model: "llama-3.3-70b-versatile",
  instructions: "Be brief.",
  ...(history === undefined ? {} : { history }),
  input: [userMessage(text)],
  tools: []
})

const fixture = (name: string): { readonly status: number; readonly body: unknown } =>
  JSON.parse(Fs.readFileSync(Path.join(import.meta.dirname, "endpoints", "fixtures", `huggingface.${name}.json`), "utf8")) as never

/** Runs each request in turn on one client; what each emitted and how it ended. */
const run = (server: ResponsesServer.ResponsesServer, requests: ReadonlyArray<ModelRequest>, config: Partial<ModelClientConfig> = {}, also: ReadonlyArray<string> = []) =>
  Effect.gen(function*() {
    const client = yield* ModelClient
    const results: Array<{ readonly events: ReadonlyArray<ModelEvent>; readonly error: ModelError | undefined }> = []
    for (const request of requests) {
      const events: Array<ModelEvent> = []
      const ended = yield* Effect.either(Stream.runForEach(client.respond(request), (event) => Effect.sync(() => void events.push(event))))
      results.push({ events, error: Option.getOrUndefined(Either.getLeft(ended)) })
    }
    return results
  }).pipe(Effect.provide(ModelClient.layer({ baseURL: server.url, maxRetries: 0, ...config }).pipe(Layer.provide(Secrets.layer(KEY, also)))))

const adapted = (events: ReadonlyArray<ModelEvent>) => events.flatMap((event) => (event._tag === "Adapted" ? [event.adaptation] : []))
const sentOptional = (body: unknown) =>
  isObject(body) ? Adaptation.OPTIONAL_FIELDS.filter((field) => body[field] !== undefined) : []

describe("error bodies become one readable line naming the field and the problem", () => {
  const table: ReadonlyArray<readonly [string, ResponsesServer.HttpError, string]> = [
    [
      "OpenAI's error object",
      { status: 400, body: { error: { message: "Unknown parameter: 'input[0].foo'.", type: "invalid_request_error", param: "input[0].foo", code: "unknown_parameter" } } },
      "model request failed: HTTP 400: Unknown parameter: 'input[0].foo'."
    ],
    [
      "FastAPI's detail list (gpt-oss's server)",
      { status: 422, body: { detail: [{ type: "missing", loc: ["body", "input", 1, "summary"], msg: "Field required", input: {} }] } },
      "model request failed: HTTP 422: body.input.1.summary: Field required"
    ],
    ["FastAPI's detail string", { status: 404, body: { detail: "Not Found" } }, "model request failed: HTTP 404: Not Found"],
    [
      "zod: Hugging Face's router refusing a reasoning item (its union followed to the item's type)",
      fixture("error-reasoning") as ResponsesServer.HttpError,
      "model request failed: HTTP 400: input.1.type: type \"reasoning\" is not accepted (accepted: message, function_call, function_call_output, mcp_list_tools, mcp_approval_request, mcp_approval_response, mcp_call)"
    ],
    ["zod: a plain issue", fixture("error-field") as ResponsesServer.HttpError, "model request failed: HTTP 400: temperature: Number must be less than or equal to 2"],
    [
      "zod: several issues, three shown",
      {
        status: 400,
        body: {
          success: false,
          error: ["model", "input", "tools", "top_p"].map((field) => ({ code: "invalid_type", expected: "string", received: "undefined", path: [field], message: "Required" }))
        }
      },
      "model request failed: HTTP 400: model: Required; input: Required; tools: Required (and 1 more)"
    ],
    ["the router's 401 ({success, error: text})", fixture("error-unauthorized") as ResponsesServer.HttpError, "model request failed: HTTP 401: Unauthorized"],
    ["plain text", { status: 502, body: undefined, raw: "Bad Gateway\n" }, "model request failed: HTTP 502: Bad Gateway"]
  ]
  for (const [name, reply, line] of table) {
    it.scopedLive(name, () =>
      Effect.gen(function*() {
        const server = yield* ResponsesServer.make(() => Effect.succeed(reply))
        const [result] = yield* run(server, [ask()])
        expect(result?.error?.message).toBe(line)
        expect(adapted(result?.events ?? [])).toEqual([])
      }))
  }
  console.log(`error-line table: ${table.length} bodies`)

  it("a zod body nested as deep as a read error body can hold (64 KiB) is explained within bounds", async () => {
    const ErrorBody = await import("../../src/model/ErrorBody.js")
    let issue: Record<string, unknown> = { code: "invalid_type", path: ["input", 0, "x"], message: "deep" }
    for (let depth = 0; depth < 1_000; depth++) {
      issue = { code: "invalid_union", path: ["input"], message: "Invalid input", unionErrors: [{ issues: [issue] }, { issues: [] }] }
    }
    const said = ErrorBody.said(undefined, JSON.stringify({ error: [issue] }))
    expect(said.message).toBe("input: Invalid input")
  })
})

describe("Adaptation.asks: refusals of a field or of an input item", () => {
  const types = (index: number) => ["message", "reasoning", "function_call"][index]
  const cases: ReadonlyArray<readonly [string, Parameters<typeof Adaptation.asks>[1], ReadonlyArray<Adaptation.Adaptation>]> = [
    ["zod pointing at a reasoning item", { message: "x", at: ["input", 1, "type"] }, ["without_reasoning"]],
    ["zod pointing at a message", { message: "x", at: ["input", 0, "content"] }, []],
    ["Groq pointing at a reasoning item", { message: "'input.1' : property 'encrypted_content' is unsupported" }, ["without_reasoning"]],
    ["Ollama pointing at a message", { message: "input[0]: content[0]: unknown content type: refusal" }, []],
    ["Groq refusing store (no param)", { message: "property 'store' is unsupported, did you mean 'stop'?", type: "invalid_request_error" }, ["without_optional"]],
    ["an unknown field, unnamed", { message: "Request contains an unrecognized field." }, ["without_optional"]],
    ["pydantic's extra inputs", { message: "Extra inputs are not permitted" }, ["without_optional"]],
    ["param store", { message: "Unsupported value.", param: "store" }, ["without_optional"]],
    ["a field Mino does not send, named", { message: "property 'temperature' is unsupported" }, []],
    ["param naming another field", { message: "Invalid value.", param: "model" }, []],
    ["something else", { message: "The model `x` does not exist" }, []],
    ["an empty 400", {}, []]
  ]
  for (const [name, said, expected] of cases) {
    it(`${name}: ${expected.length === 0 ? "nothing" : expected.join(", ")}`, () => {
      expect(Adaptation.asks(400, said, types)).toEqual(expected)
      expect(Adaptation.asks(500, said, types)).toEqual([])
    })
  }
})

const groq = (body: unknown): ResponsesServer.Reply =>
  sentOptional(body).length > 0
    ? { status: 400, body: { error: { message: `property '${sentOptional(body)[0]}' is unsupported, did you mean 'stop'?`, type: "invalid_request_error" } } }
    : ResponsesServer.textResponse("fine")

describe("a field refused without being named", () => {
  it.scopedLive("is left out once, announced, and remembered for the endpoint once a request without it is taken", () =>
    Effect.gen(function*() {
      const server = yield* ResponsesServer.make((request) => Effect.succeed(groq(request.body)))
      const results = yield* run(server, [ask("one"), ask("two")])
      expect(results.map((result) => result.error)).toEqual([undefined, undefined])
      expect(results.map((result) => adapted(result.events))).toEqual([["without_optional"], []])
      const announced = results[0]!.events.find((event) => event._tag === "Adapted")
      expect(announced).toMatchObject({ message: expect.stringMatching(/^the endpoint refused a field it does not support; asking again without the optional ones/) })
      expect((yield* server.requests).map((request) => sentOptional(request.body))).toEqual([["store", "include", "parallel_tool_calls"], [], []])
    }))

  it.scopedLive("an endpoint that refuses every retry fails the turn after one retry with its own words; the next request asks in full again", () =>
    Effect.gen(function*() {
      const refusal = { status: 400, body: { error: { message: "property 'store' is unsupported", type: "invalid_request_error" } } }
      const server = yield* ResponsesServer.make(() => Effect.succeed(refusal))
      const results = yield* run(server, [ask("one"), ask("two")])
      expect(results.map((result) => result.error?.message)).toEqual([
        "model request failed: HTTP 400: property 'store' is unsupported",
        "model request failed: HTTP 400: property 'store' is unsupported"
      ])
      // Two per request: never a loop; nothing remembered from a retry that was not taken.
      expect((yield* server.requests).map((request) => sentOptional(request.body).length)).toEqual([3, 0, 3, 0])
    }))

  it.scopedLive("with reasoning in the history and every kind of refusal, each change is tried once: at most one request per kind", () =>
    Effect.gen(function*() {
      const history = new History.History()
      history.add([History.question("before"), History.items([{ id: "rs_1", type: "reasoning", summary: [], encrypted_content: "gAAAA-x" }])])
      // Whatever is sent: vLLM's bare refusal while reasoning or include goes, then a field refusal, forever.
      const server = yield* ResponsesServer.make((request) =>
        Effect.succeed(
          isObject(request.body) && (request.body["include"] !== undefined || inputOfBody(request.body).some((item) => item["type"] === "reasoning"))
            ? { status: 400, body: { error: { message: "Encrypted content is not supported.", code: 400 } } }
            : { status: 400, body: { error: { message: "Unknown parameter in the request." } } }
        )
      )
      const [result] = yield* run(server, [ask("now", history)])
      expect(result?.error?.message).toBe("model request failed: HTTP 400: Unknown parameter in the request.")
      expect(adapted(result?.events ?? [])).toEqual(["without_earlier_reasoning", "without_include", "without_optional"])
      expect(yield* server.requests).toHaveLength(4)
    }))
})

const inputOfBody = (body: unknown): ReadonlyArray<ResponseItem> => {
  const input = isObject(body) ? body["input"] : undefined
  return Array.isArray(input) ? input.filter(isObject) : []
}

describe("a gateway's headers", () => {
  const TOKEN = "cfgw-token-9f8e7d6c5b4a"
  const headers = [["cf-aig-authorization", `Bearer ${TOKEN}`], ["x-team", "dev"]] as const

  it.scopedLive("reach the server with every request; an error that echoes them shows neither value nor token", () =>
    Effect.gen(function*() {
      const server = yield* ResponsesServer.make((request) =>
        Effect.succeed({ status: 403, body: { error: { message: `gateway refused ${String(request.headers["cf-aig-authorization"])} (token ${TOKEN})` } } })
      )
      const [result] = yield* run(server, [ask()], { headers }, GatewayHeaders.secretsOf(headers))
      const [request] = yield* server.requests
      expect(request?.headers["cf-aig-authorization"]).toBe(`Bearer ${TOKEN}`)
      expect(request?.headers["x-team"]).toBe("dev")
      expect(request?.headers["authorization"]).toBe(`Bearer ${KEY}`)
      expect(result?.error?.message).toBe("model request failed: HTTP 403: gateway refused [redacted] (token [redacted])")
    }))

  it.scopedLive("given by a library user, are held to the same rules: one holding the key or a CR/LF sends nothing", () =>
    Effect.gen(function*() {
      const server = yield* ResponsesServer.make(() => Effect.succeed(ResponsesServer.textResponse("fine")))
      const cases: ReadonlyArray<readonly [ReadonlyArray<readonly [string, string]>, string]> = [
        [[["x-gw", `Bearer ${KEY}`]], "model request not sent: the model client's headers line 1: x-gw holds OPENAI_API_KEY; the key never goes in the model client's headers"],
        [[["Authorization", "Bearer other-token-123"]], "model request not sent: the model client's headers line 1: authorization carries OPENAI_API_KEY, which Mino sends itself; set the key there, not in the model client's headers"],
        [[["x-gw", "a\r\nx-evil: 1"]], "model request not sent: the model client's headers line 1: the value of x-gw holds a control or non-ASCII character"],
        [[["x-gw", "a\nx-evil: 1"]], "model request not sent: the model client's headers: a name or value is blank"]
      ]
      for (const [given, line] of cases) {
        const [result] = yield* run(server, [ask()], { headers: given })
        expect(result?.error?.message).toBe(line)
      }
      expect(yield* server.requests).toEqual([])
    }))

  const refused: ReadonlyArray<readonly [string, string, RegExp]> = [
    ["authorization", `Authorization: Bearer ${TOKEN}`, /^MINO_HEADERS line 1: authorization carries OPENAI_API_KEY/],
    ["api-key, any case", `API-Key: ${TOKEN}`, /^MINO_HEADERS line 1: api-key carries OPENAI_API_KEY/],
    ["a value holding the key", `x-gw: Bearer ${KEY}`, /^MINO_HEADERS line 1: x-gw holds OPENAI_API_KEY/],
    ["a value that is the key", `x-gw:   ${KEY}  `, /^MINO_HEADERS line 1: x-gw holds OPENAI_API_KEY/],
    ["a CR in a value (a second header smuggled)", `x-gw: a\rx-evil: 1`, /^MINO_HEADERS line 1: the value of x-gw holds a control or non-ASCII character$/],
    ["a CRLF line ending", `x-gw: ${TOKEN}\r\n`, /^MINO_HEADERS line 1: the value of x-gw holds a control or non-ASCII character$/],
    ["an escape sequence", `x-gw: \x1b[2J${TOKEN}`, /control or non-ASCII/],
    ["a framing header", "Content-Length: 5", /^MINO_HEADERS line 1: content-length is set by Mino/],
    ["a host header", "Host: evil.example", /^MINO_HEADERS line 1: host is set by Mino/],
    ["a name given twice", `x-gw: a\nX-GW: b`, /^MINO_HEADERS line 2: x-gw is given twice$/],
    ["a bad name", `x gw: ${TOKEN}`, /^MINO_HEADERS line 1: the header name is not a valid HTTP name$/],
    ["no colon", TOKEN, /^MINO_HEADERS line 1 is not `Name: value`/],
    ["no value", "x-gw:", /^MINO_HEADERS line 1: x-gw has no value$/]
  ]
  for (const [name, text, line] of refused) {
    it(`MINO_HEADERS with ${name} is refused in one line that shows no value`, () => {
      const problem = Either.getLeft(GatewayHeaders.parse(text, KEY)).pipe(Option.getOrThrow)
      expect(problem).toMatch(line)
      expect(problem).not.toContain(TOKEN)
      expect(problem).not.toContain(KEY)
      expect(problem).not.toMatch(/[\r\n\x1b]/)
    })
  }

  it("MINO_HEADERS is read one `Name: value` a line, trimmed as HTTP trims, blank lines ignored; a short key is checked by equality", () => {
    expect(GatewayHeaders.parse(`\ncf-aig-authorization:  Bearer ${TOKEN}\t\n\nX-Team: dev\n`, KEY)).toEqual(
      Either.right([["cf-aig-authorization", `Bearer ${TOKEN}`], ["x-team", "dev"]])
    )
    expect(GatewayHeaders.parse(undefined, KEY)).toEqual(Either.right([]))
    // A placeholder key ("x") is not looked for inside values, only as a whole value.
    expect(Either.isRight(GatewayHeaders.parse("x-trace: xyz", "x"))).toBe(true)
    expect(Either.isLeft(GatewayHeaders.parse("x-trace: x", "x"))).toBe(true)
    expect(GatewayHeaders.secretsOf([["a", `Bearer ${TOKEN}`], ["b", "plain-value-123"]])).toEqual([`Bearer ${TOKEN}`, TOKEN, "plain-value-123"])
  })
})

describe("base URLs and loopback", () => {
  it("a base URL pasted with /responses or a trailing slash is the base the SDK appends /responses to; a query stays a query", () => {
    const cases: ReadonlyArray<readonly [string, string, string]> = [
      ["http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1", ""],
      ["http://127.0.0.1:8080/v1/", "http://127.0.0.1:8080/v1", ""],
      ["http://127.0.0.1:8080/v1/responses", "http://127.0.0.1:8080/v1", ""],
      ["http://127.0.0.1:8080/v1/responses/", "http://127.0.0.1:8080/v1", ""],
      ["http://127.0.0.1:8080/v1/Responses", "http://127.0.0.1:8080/v1", ""],
      ["https://x.openai.azure.com/openai/v1/responses?api-version=preview", "https://x.openai.azure.com/openai/v1", "api-version=preview"],
      ["https://router.huggingface.co/v1", "https://router.huggingface.co/v1", ""],
      // Only a last segment named exactly responses goes.
      ["http://127.0.0.1:8080/my-responses", "http://127.0.0.1:8080/my-responses", ""]
    ]
    for (const [given, base, query] of cases) {
      expect([given, Endpoint.parse(given).baseURL, Endpoint.parse(given).query]).toEqual([given, base, query])
    }
  })

  it("loopback is localhost, 127.0.0.0/8 and ::1 (mapped too), nothing else", () => {
    const loopback = ["http://localhost:11434/v1", "http://LOCALHOST./v1", "http://api.localhost/v1", "http://127.0.0.1:1234/v1", "http://127.0.0.2/v1", "http://127.255.255.254/v1", "http://127.1/v1", "http://[::1]:8080/v1", "http://[::ffff:127.0.0.1]/v1"]
    const elsewhere = [undefined, "", "https://api.openai.com/v1", "http://0.0.0.0:8080/v1", "http://10.0.0.5/v1", "http://192.0.2.1/v1", "http://128.0.0.1/v1", "http://[::ffff:10.0.0.1]/v1", "http://localhost.evil.example/v1", "http://127.0.0.1.nip.io/v1", "not a url"]
    expect(loopback.filter((url) => !Endpoint.isLoopback(url))).toEqual([])
    expect(elsewhere.filter((url) => Endpoint.isLoopback(url))).toEqual([])
  })

  it.scopedLive("a pasted /responses URL and a trailing slash reach /v1/responses", () =>
    Effect.gen(function*() {
      const server = yield* ResponsesServer.make(() => Effect.succeed(ResponsesServer.textResponse("fine")))
      for (const suffix of ["/responses", "/responses/", "/"]) {
        const [result] = yield* run(server, [ask()], { baseURL: `${server.url}${suffix}` })
        expect(result?.error).toBeUndefined()
      }
      expect((yield* server.requests).map((request) => request.url)).toEqual(["/v1/responses", "/v1/responses", "/v1/responses"])
    }))
})
