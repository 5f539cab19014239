/**
 * Hugging Face's inference router (`https://router.huggingface.co/v1`, served by
 * huggingface/responses.js) — rebuilt from its source, @ c0ac6ee8b1f26ba3be53739c1810c4e9c4218246.
 *
 * Streams (fixtures/huggingface.*.json, made by fixtures/huggingface.build.py from src/routes/responses.ts):
 * `data:` frames only; reasoning as `content` text; a message written before a call is never closed, so it
 * stays `status: "in_progress"` inside the completed response (Mino takes it as finished text; the call
 * keeps its strict check).
 * Input rules (`routerAccepts`, from src/schemas.ts): the `input` union has no reasoning member, so any
 * reasoning item is refused with a 400 whose body is zod's issues (src/middleware/validation.ts,
 * fixtures/huggingface.error-reasoning.json). `store`, `include` and `parallel_tool_calls` are not in the
 * schema and zod strips them: no refusal.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { isObject, type ResponseItem } from "../../../src/protocol/ResponseItem.js"
import type * as ResponsesServer from "../../../src/testing/ResponsesServer.js"
import { API_KEY, chat, COMMAND, type Family, inputOf, load, outputOf, shown, steps, textOf } from "./Driver.js"

interface ErrorFixture {
  readonly source: { readonly repository: string; readonly file: string; readonly commit: string }
  readonly status: number
  readonly body: unknown
}

const loadError = (name: string): ErrorFixture =>
  JSON.parse(Fs.readFileSync(Path.join(import.meta.dirname, "fixtures", `huggingface.${name}.json`), "utf8")) as ErrorFixture

/** The refusal fixture, its issue paths moved to the reasoning item at `index` (the fixture's is at 1). */
const reasoningRefusal = (index: number): ResponsesServer.HttpError => {
  const fixture = loadError("error-reasoning")
  const move = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(move)
    if (!isObject(value)) return value
    const path = value["path"]
    const moved = Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, move(inner)]))
    return Array.isArray(path) && path[0] === "input" && path[1] === 1 ? { ...moved, path: ["input", index, ...path.slice(2)] } : moved
  }
  return { status: fixture.status, body: move(fixture.body) }
}

const isString = (value: unknown): value is string => typeof value === "string"
const partsOf = (item: ResponseItem): ReadonlyArray<ResponseItem> => (Array.isArray(item["content"]) ? item["content"].filter(isObject) : [])

/**
 * The router's input rules (src/schemas.ts @ c0ac6ee, createResponseParamsSchema.input): a message (user,
 * system or developer with input_text/input_image parts or a string; assistant with output_text/refusal
 * parts), a function_call (call_id, name, arguments), a function_call_output (call_id, output string), or
 * an mcp_* item. Anything else, a reasoning item among them, is refused at its index.
 */
const routerAccepts = (body: unknown): ReadonlyArray<{ readonly index: number; readonly problem: string }> =>
  inputOf(body).flatMap((item, index) => {
    const type = item["type"] ?? "message"
    const bad = (problem: string) => [{ index, problem }]
    switch (type) {
      case "message": {
        const role = item["role"]
        if (role === "assistant") {
          return partsOf(item).every((part) => (part["type"] === "output_text" && isString(part["text"])) || (part["type"] === "refusal" && isString(part["refusal"])))
            ? []
            : bad("assistant content")
        }
        if (role !== "user" && role !== "system" && role !== "developer") return bad("role")
        if (isString(item["content"])) return []
        return partsOf(item).every((part) => part["type"] === "input_text" || part["type"] === "input_image") ? [] : bad("content")
      }
      case "function_call":
        return isString(item["call_id"]) && isString(item["name"]) && isString(item["arguments"]) ? [] : bad("function_call")
      case "function_call_output":
        return isString(item["call_id"]) && isString(item["output"]) ? [] : bad("function_call_output")
      default:
        return bad(`type ${String(type)}`)
    }
  })

const family: Family = {
  name: "Hugging Face router",
  model: "openai/gpt-oss-120b",
  text: load("huggingface.text"),
  toolCall: load("huggingface.tool-call"),
  afterTool: load("huggingface.after-tool"),
  accepts: (body) => routerAccepts(body).map(({ index, problem }) => `input.${index}: ${problem}`),
  reasoning: "content",
  errors: []
}

/** The router: a refusal of the first item its rules reject, else the next stream in order. */
const router = (streams: ReadonlyArray<ReadonlyArray<ResponsesServer.Step>>) => {
  let played = 0
  return (request: ResponsesServer.Request): ResponsesServer.Reply => {
    const refused = routerAccepts(request.body)[0]
    if (refused !== undefined) return reasoningRefusal(refused.index)
    return streams[Math.min(played++, streams.length - 1)]!
  }
}

const reasoningIn = (body: unknown): boolean => inputOf(body).some((item) => item["type"] === "reasoning")

describe("Hugging Face's router (rebuilt from huggingface/responses.js @ c0ac6ee)", () => {
  it("every fixture names its source: repository, file, commit", () => {
    for (const name of ["text", "tool-call", "after-tool", "error-reasoning", "error-field", "error-unauthorized"]) {
      const { source } = JSON.parse(Fs.readFileSync(Path.join(import.meta.dirname, "fixtures", `huggingface.${name}.json`), "utf8")) as ErrorFixture
      expect(source).toMatchObject({ repository: "huggingface/responses.js", commit: "c0ac6ee8b1f26ba3be53739c1810c4e9c4218246" })
      expect(source.file).toMatch(/^src\//)
    }
  })

  it.scopedLive("text: shown once, saved verbatim, the request within its rules", () =>
    Effect.gen(function*() {
      const { runs, requests, lines } = yield* chat(family, router([steps(family.text)]), ["Say hello."])
      expect(runs[0]!.status).toBe("completed")
      expect(shown(runs[0]!)).toBe(textOf(family.text))
      expect(lines.find((line) => line["type"] === "model_response")?.["output"]).toEqual(outputOf(family.text))
      expect(requests).toHaveLength(1)
      expect(routerAccepts(requests[0]!.body)).toEqual([])
    }))

  it.scopedLive("a reasoning tool turn: the text before the call is shown, the call runs once, the refused follow-up goes again without reasoning, announced once, remembered", () =>
    Effect.gen(function*() {
      const { runs, requests, approvals, lines } = yield* chat(
        family,
        router([steps(family.toolCall), steps(family.afterTool!), steps(family.text)]),
        ["Run echo mino-conformance.", "Thanks."]
      )
      expect(runs.map((run) => [run.status, run.reason])).toEqual([["completed", undefined], ["completed", undefined]])
      // The sentence before the call (left in_progress by the router) is on the screen, and the call was offered.
      expect(shown(runs[0]!)).toBe(`I'll run that for you.${textOf(family.afterTool!)}`)
      expect(approvals).toHaveLength(1)
      expect(approvals[0]!.fields.find((entry) => entry.label === "Command")).toMatchObject({ value: COMMAND })
      // Run once: one tool_start, one result.
      expect(lines.filter((line) => line["type"] === "tool_start")).toHaveLength(1)
      expect(lines.filter((line) => line["type"] === "tool_result")).toHaveLength(1)
      // The question; the follow-up with the turn's reasoning (refused); again without; the next turn without from the start.
      expect(requests.map((request) => reasoningIn(request.body))).toEqual([false, true, false, false])
      expect(requests.map((request) => routerAccepts(request.body).length)).toEqual([0, 1, 0, 0])
      const adapted = runs.map((run) => run.events.flatMap((event) => (event._tag === "ModelAdapted" ? [event.message] : [])))
      expect(adapted).toEqual([[expect.stringMatching(/^the endpoint takes no reasoning items in its input; asking again without them/)], []])
      // The retried follow-up keeps the call, its output and the in_progress message; the file keeps the reasoning.
      const retried = inputOf(requests[2]!.body)
      expect(retried.map((item) => item["type"])).toEqual(["message", "message", "function_call", "function_call_output"])
      expect(retried[1]).toMatchObject({ role: "assistant", status: "in_progress" })
      expect(lines.find((line) => line["type"] === "model_response")?.["output"]).toEqual(outputOf(family.toolCall))
    }))

  it.scopedLive("a router that refuses every form: the turn fails once with one readable line, never a loop", () =>
    Effect.gen(function*() {
      const refusal = reasoningRefusal(1)
      const { runs, requests } = yield* chat(family, () => refusal, ["Hello."])
      expect(runs[0]!.status).toBe("failed")
      // The user's question is input 0; the refusal points at input 1, which is no reasoning item of this request: nothing to adapt.
      expect(runs[0]!.reason).toBe(
        "model request failed: HTTP 400: input.1.type: type \"reasoning\" is not accepted (accepted: message, function_call, function_call_output, mcp_list_tools, mcp_approval_request, mcp_approval_response, mcp_call)"
      )
      expect(requests).toHaveLength(1)
      expect(runs[0]!.reason).not.toContain(API_KEY)
    }))
})
