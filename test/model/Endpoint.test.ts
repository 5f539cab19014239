/**
 * What Mino knows of an endpoint from its base URL (Endpoint.ts) and what an
 * error body said (ErrorBody.ts): the family by host, the query kept as a query,
 * Azure's key header, the replay rule per family, and every error body shape.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "effect/FastCheck"
import * as Endpoint from "../../src/model/Endpoint.js"
import * as ErrorBody from "../../src/model/ErrorBody.js"
import * as History from "../../src/model/request/History.js"

describe("Endpoint.parse", () => {
  const cases: ReadonlyArray<readonly [string | undefined, Endpoint.Family, boolean]> = [
    [undefined, "openai", false],
    ["https://api.openai.com/v1", "openai", false],
    ["https://api.x.ai/v1", "openai", false],
    ["https://mino.openai.azure.com/openai/v1", "openai", true],
    ["https://mino.cognitiveservices.azure.com/openai?api-version=2025-04-01-preview", "openai", true],
    ["https://mino.services.ai.azure.com/openai/v1", "openai", true],
    // Azure Government and Azure operated by 21Vianet: the same key header.
    ["https://mino.openai.azure.us/openai/v1", "openai", true],
    ["https://mino.cognitiveservices.azure.us/openai?api-version=2025-04-01-preview", "openai", true],
    ["https://mino.openai.azure.cn/openai/v1", "openai", true],
    ["https://MINO.CognitiveServices.Azure.CN/openai/v1", "openai", true],
    // A custom domain or an API Management gateway in front of Azure: not recognisable, a compatible endpoint.
    ["https://ai.contoso.example/openai/v1", "compatible", false],
    ["https://contoso.azure-api.net/openai/v1", "compatible", false],
    ["https://openai.azure.us.evil.example/v1", "compatible", false],
    ["https://openrouter.ai/api/v1", "compatible", false],
    ["http://localhost:11434/v1", "compatible", false],
    ["http://127.0.0.1:8080/v1", "compatible", false],
    ["https://openai.azure.com.evil.example/v1", "compatible", false]
  ]
  for (const [url, family, azure] of cases) {
    it(`${url ?? "the default"}: ${family}${azure ? ", Azure" : ""}`, () => {
      const endpoint = Endpoint.parse(url)
      expect(endpoint.family).toBe(family)
      expect(endpoint.azure).toBe(azure)
    })
  }

  it("keeps a query as a query: the path goes before it on every request", () => {
    const endpoint = Endpoint.parse("https://mino.openai.azure.com/openai?api-version=2025-04-01-preview")
    expect(endpoint.baseURL).toBe("https://mino.openai.azure.com/openai")
    expect(Endpoint.withQuery(endpoint, "https://mino.openai.azure.com/openai/responses")).toBe(
      "https://mino.openai.azure.com/openai/responses?api-version=2025-04-01-preview"
    )
    expect(Endpoint.withQuery(endpoint, "https://x/openai/responses?a=1")).toBe("https://x/openai/responses?a=1&api-version=2025-04-01-preview")
    expect(Endpoint.withQuery(Endpoint.parse("http://localhost:1234/v1"), "http://localhost:1234/v1/responses")).toBe("http://localhost:1234/v1/responses")
  })

  it("on Azure hosts the key goes in api-key and no bearer token is sent; elsewhere the headers are left alone", () => {
    const azure = new Headers({ authorization: "Bearer sk-x" })
    Endpoint.authorize(Endpoint.parse("https://mino.openai.azure.com/openai/v1"), azure, "azure-key-123")
    expect([...azure.entries()]).toEqual([["api-key", "azure-key-123"]])
    const other = new Headers({ authorization: "Bearer sk-x" })
    Endpoint.authorize(Endpoint.parse("https://api.openai.com/v1"), other, "sk-x")
    expect([...other.entries()]).toEqual([["authorization", "Bearer sk-x"]])
  })
})

describe("Endpoint.replay", () => {
  const encrypted = { id: "rs_1", type: "reasoning", summary: [], encrypted_content: "gAAAA" }
  const text = { id: "rs_2", type: "reasoning", summary: [], content: [{ type: "reasoning_text", text: "thinking" }], encrypted_content: "", status: "completed" }
  const summaryOnly = { id: "rs_3", type: "reasoning", summary: [{ type: "summary_text", text: "a summary" }] }
  const message = { id: "m", type: "message", role: "assistant", content: [{ type: "output_text", text: "hi" }] }

  it("openai: reasoning only with its encrypted_content, verbatim; everything else verbatim", () => {
    expect(Endpoint.replay("openai", [encrypted, text, summaryOnly, message])).toEqual([encrypted, message])
  })

  it("compatible: encrypted reasoning without a summary list (LiteLLM's own items) gets an empty one, else verbatim", () => {
    const liteLlm = { type: "reasoning", id: "rs_1", status: "completed", role: "assistant", content: [{ type: "output_text", text: "thinking", annotations: [] }], encrypted_content: "[{\"type\":\"thinking\"}]" }
    expect(Endpoint.replay("compatible", [liteLlm])).toEqual([{ ...liteLlm, summary: [] }])
    expect(Endpoint.replay("openai", [liteLlm])).toEqual([liteLlm])
  })

  it("compatible: several text parts go back as one, joined by a newline (vLLM and llama.cpp read only the first)", () => {
    const parts = {
      id: "rs_4",
      type: "reasoning",
      summary: [{ type: "summary_text", text: "plan" }],
      content: [{ type: "reasoning_text", text: "first" }, { type: "reasoning_text", text: "" }, { type: "output_text", text: "second", annotations: [] }],
      role: "system"
    }
    expect(Endpoint.replay("compatible", [parts])).toEqual([
      { id: "rs_4", type: "reasoning", summary: [{ type: "summary_text", text: "plan" }], content: [{ type: "reasoning_text", text: "first\nsecond" }] }
    ])
  })

  it("compatible: OpenRouter's signature and format go back with the text (its openapi.yaml example), nothing else of the item", () => {
    const anthropic = {
      content: [{ text: "First, we analyze the problem...", type: "reasoning_text" }],
      format: "anthropic-claude-v1",
      id: "reasoning-123",
      signature: "EvcBCkgIChABGAIqQKkSDbRuVEQUk9qN1odC098l9SEj...",
      status: "completed",
      summary: [{ text: "Analyzed the problem and found the optimal solution.", type: "summary_text" }],
      type: "reasoning"
    }
    expect(Endpoint.replay("compatible", [anthropic])).toEqual([
      {
        id: "reasoning-123",
        type: "reasoning",
        summary: anthropic.summary,
        content: [{ type: "reasoning_text", text: "First, we analyze the problem..." }],
        signature: anthropic.signature,
        format: "anthropic-claude-v1"
      }
    ])
  })

  it("compatible: encrypted verbatim, text as { id, type, summary, content }, neither left out", () => {
    expect(Endpoint.replay("compatible", [encrypted, text, summaryOnly, message])).toEqual([
      encrypted,
      { id: "rs_2", type: "reasoning", summary: [], content: [{ type: "reasoning_text", text: "thinking" }] },
      message
    ])
  })
})

describe("ErrorBody.said", () => {
  const cases: ReadonlyArray<readonly [string, unknown, string | undefined, ErrorBody.Said]> = [
    ["OpenAI's error object", { message: "bad", type: "invalid_request_error", param: "include", code: null }, undefined, { message: "bad", type: "invalid_request_error", param: "include", code: undefined }],
    ["a numeric code", { message: "too long", code: 400 }, undefined, { message: "too long", code: 400, type: undefined, param: undefined }],
    ["an error string", "Incorrect API key", undefined, { message: "Incorrect API key" }],
    ["FastAPI detail string", undefined, "{\"detail\":\"Not Found\"}", { message: "Not Found" }],
    ["FastAPI detail list", undefined, "{\"detail\":[{\"loc\":[\"body\",\"input\"],\"msg\":\"Field required\"},{\"msg\":\"bad\"}]}", { message: "body.input: Field required; bad" }],
    ["a top-level message", undefined, "{\"message\":\"Unauthorized\",\"code\":401}", { message: "Unauthorized", code: 401, type: undefined, param: undefined }],
    ["plain text, cut and on one line", undefined, `Internal\n  Server Error ${"x".repeat(300)}`, { message: `Internal Server Error ${"x".repeat(178)}...` }],
    ["nothing", undefined, "", {}]
  ]
  for (const [name, error, raw, said] of cases) {
    it(name, () => {
      expect(ErrorBody.said(error, raw)).toEqual(said)
    })
  }
})

describe("mino --help", () => {
  it("names nothing an endpoint needs beyond OPENAI_BASE_URL and OPENAI_API_KEY", async () => {
    const Help = await import("../../src/cli/Help.js")
    const environment = Help.text().split("\nEnvironment:\n")[1]?.split("\n\n")[0] ?? ""
    // Every variable Mino reads is listed (issue 17: HOME and the code cache's too; issue 29: a gateway's headers); none is an endpoint's.
    expect(environment.split("\n").map((line) => line.trim().split(/\s+/)[0])).toEqual(["OPENAI_API_KEY", "OPENAI_BASE_URL", "MINO_MODEL", "MINO_HEADERS", "NO_COLOR", "TERM", "HOME", "XDG_CACHE_HOME"])
    expect(Help.text()).not.toMatch(/AZURE|API_VERSION|api-version|OPENAI_ORG|OLLAMA_|LM_STUDIO|OPENROUTER_|XAI_/)
  })
})

describe("the kept history follows the replay rule", () => {
  const reasoning = fc.oneof(
    fc.constant({ id: "rs_e", type: "reasoning", summary: [], encrypted_content: "gAAAA" }),
    // LiteLLM's own: encrypted, no summary list.
    fc.constant({ id: "rs_l", type: "reasoning", encrypted_content: "[{\"type\":\"thinking\"}]", content: [{ type: "output_text", text: "t" }] }),
    fc.constant({ id: "rs_t", type: "reasoning", summary: [], content: [{ type: "reasoning_text", text: "a" }, { type: "reasoning_text", text: "b" }] }),
    fc.constant({ id: "rs_s", type: "reasoning", summary: [{ type: "summary_text", text: "s" }] })
  )
  const other = fc.oneof(
    fc.constant({ id: "m", type: "message", role: "assistant", content: [{ type: "output_text", text: "hi", annotations: [], logprobs: [] }] }),
    fc.constant({ id: "fc", type: "function_call", call_id: "c", name: "bash", arguments: "{}" })
  )
  const turns = fc.array(fc.array(fc.oneof(reasoning, other), { maxLength: 4 }), { minLength: 1, maxLength: 4 })

  it.prop("for every family, the history's request text is the replay of its items (300 cases)", [turns], ([outputs]) => {
    const history = new History.History()
    for (const output of outputs) history.add([History.question("q"), History.items(output)])
    const items = outputs.flatMap((output) => [{ type: "message", role: "user", content: [{ type: "input_text", text: "q" }] }, ...output])
    for (const family of ["openai", "compatible"] as const) {
      expect(JSON.parse(`[${history.json(family)}]`)).toEqual(Endpoint.replay(family, items))
    }
  }, { fastCheck: { numRuns: 300 } })
})
