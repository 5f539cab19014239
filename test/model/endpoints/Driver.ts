/**
 * The conformance driver: one endpoint family's fixtures replayed through the real
 * loop. The loopback ResponsesServer plays each recorded (or rebuilt) stream byte
 * for byte in the family's framing; the real ModelClient, Agent and SessionStore
 * (a temporary HOME, fsynced files), the real bash tool and a static approver do
 * the rest. For each family it checks:
 *
 * - text: shown once, exactly the response's text; the response saved verbatim;
 * - a tool call: it reaches approval with the command the model asked for, runs in
 *   `/bin/bash`, its result is saved, and the follow-up request passes that
 *   server's input rules (the family's `accepts`, written from its source) with
 *   the call, its paired output and the turn's reasoning in the form the family
 *   takes back (Endpoint.ts);
 * - the next turn: its request replays the completed turn, again within the rules;
 * - each error shape the server sends: one line, nothing runs, the next turn works;
 * - where a server cannot read what another wrote (llama.cpp, vLLM), a conversation
 *   begun on Ollama continues on it (`continuesOn`).
 *
 * Fixtures are JSON files in `fixtures/`, each `{ source, framing, events }`: the
 * source names the repository, file and commit the events come from, and whether
 * they were recorded there or rebuilt from the server's code.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import { Agent } from "../../../src/agent/Agent.js"
import type { AgentEvent } from "../../../src/agent/AgentEvent.js"
import { Approver } from "../../../src/approval/Approver.js"
import * as Mino from "../../../src/Mino.js"
import { isObject, type ResponseItem } from "../../../src/protocol/ResponseItem.js"
import * as ResponsesServer from "../../../src/testing/ResponsesServer.js"
import type { ToolDisplay } from "../../../src/tools/Tool.js"
import { sessionLines, tempDir } from "../../support/Harness.js"

export interface Source {
  readonly kind: "recorded" | "rebuilt"
  readonly repository: string
  readonly file: string
  readonly commit: string
  /** What was changed from the source, if anything (a recorded call renamed `bash`, say). */
  readonly changes?: string
}

/** One response as the server streams it. */
export interface Stream {
  readonly source: Source
  /** `event-and-data`: `event:` and `data:` lines; `data-only`: `data:` lines alone. */
  readonly framing: "event-and-data" | "data-only"
  /** SSE comment lines sent before the events (`: OPENROUTER PROCESSING`). */
  readonly comments?: ReadonlyArray<string>
  /** Whether `data: [DONE]` follows the events. */
  readonly done?: boolean
  readonly events: ReadonlyArray<ResponseItem>
}

export const API_KEY = "sk-conformance-4b7d9e1f3a5c"

/** The command every fixture's tool call asks for, and what it prints. */
export const COMMAND = "echo mino-conformance"
export const PRINTED = "mino-conformance\n"

export const load = (name: string): Stream =>
  JSON.parse(Fs.readFileSync(Path.join(import.meta.dirname, "fixtures", `${name}.json`), "utf8")) as Stream

/** The stream as the server writes it, one step per event. */
export const steps = (stream: Stream): Array<ResponsesServer.Step> => [
  ...(stream.comments ?? []).map((comment) => ({ raw: `: ${comment}\n\n` })),
  ...stream.events.map((event) => ({
    raw: stream.framing === "event-and-data" ? `event: ${String(event["type"])}\ndata: ${JSON.stringify(event)}\n\n` : `data: ${JSON.stringify(event)}\n\n`
  })),
  ...(stream.done === true ? [{ raw: "data: [DONE]\n\n" }] : [])
]

/** The response's output as the stream gives it: completed.output if it has items, else the finished items. */
export const outputOf = (stream: Stream): ReadonlyArray<ResponseItem> => {
  const completed = stream.events.find((event) => event["type"] === "response.completed")
  const response = completed?.["response"]
  const output = isObject(response) ? response["output"] : undefined
  if (Array.isArray(output) && output.length > 0) return output.filter(isObject)
  return stream.events.filter((event) => event["type"] === "response.output_item.done").map((event) => event["item"]).filter(isObject)
}

/** The text a person should see: every message's output text, once, in order. */
export const textOf = (stream: Stream): string =>
  outputOf(stream).filter((item) => item["type"] === "message").flatMap((item) =>
    Array.isArray(item["content"])
      ? item["content"].filter(isObject).flatMap((part) => (part["type"] === "output_text" && typeof part["text"] === "string" ? [part["text"]] : []))
      : []
  ).join("")

/** A request body's input items. */
export const inputOf = (body: unknown): ReadonlyArray<ResponseItem> => {
  const input = isObject(body) ? body["input"] : undefined
  return Array.isArray(input) ? input.filter(isObject) : []
}

/** The problems every Responses server finds: an output without its call, a call without an id. */
export const pairing = (body: unknown): Array<string> => {
  const problems: Array<string> = []
  const calls = new Set<unknown>()
  for (const item of inputOf(body)) {
    if (item["type"] === "function_call") calls.add(item["call_id"])
    if (item["type"] === "function_call_output" && (typeof item["call_id"] !== "string" || !calls.has(item["call_id"]))) {
      problems.push(`function_call_output ${JSON.stringify(item["call_id"])} has no function_call before it`)
    }
  }
  return problems
}

/** How the family takes the turn's reasoning back: verbatim, or as its text (`content`). */
export type ReasoningForm = "verbatim" | "content"

export interface ErrorShape {
  readonly name: string
  readonly reply: ResponsesServer.Reply
  /** The one line the failed turn ends with. */
  readonly line: RegExp
}

export interface Family {
  readonly name: string
  /** The host the loopback server stands for (Endpoint.ts classifies by host); none: a local server. */
  readonly host?: string
  /** The base URL Mino is given, from the loopback server's (`http://127.0.0.1:N/v1`); Azure adds a query. */
  readonly baseURL?: (loopback: string) => string
  readonly model: string
  readonly text: Stream
  readonly toolCall: Stream
  /** The answer after the tool result (default: `text`). */
  readonly afterTool?: Stream
  /** The problems the server finds with a request body, by its input rules; [] when it takes it. */
  readonly accepts: (body: unknown) => ReadonlyArray<string>
  readonly reasoning: ReasoningForm
  /** Other checks of a request the family needs (headers, the URL). */
  readonly request?: (request: ResponsesServer.Request) => void
  readonly errors: ReadonlyArray<ErrorShape>
  /** The client's limits, where a test needs them shorter. */
  readonly client?: { readonly requestTimeoutMs?: number; readonly idleTimeoutMs?: number }
}

export interface Run {
  readonly events: ReadonlyArray<AgentEvent>
  readonly status: string
  readonly reason: string | undefined
}

/** What answers the requests: replies in order (the last one repeats), or a function of each request. */
export type Replies = ReadonlyArray<ResponsesServer.Reply> | ((request: ResponsesServer.Request, n: number) => ResponsesServer.Reply)

const serve = (replies: Replies) =>
  Effect.gen(function*() {
    const next = yield* Ref.make(0)
    return yield* ResponsesServer.make((request) =>
      Effect.map(Ref.getAndUpdate(next, (n) => n + 1), (n) =>
        typeof replies === "function" ? replies(request, n) : replies[Math.min(n, replies.length - 1)]!)
    )
  })

/** The real loop over `server`, composed as Mino composes it: bash in `cwd`, a session under `home`, approvals from `approve`. */
const agentLayer = (family: Family, url: string, home: string, cwd: string, approve: (display: ToolDisplay) => boolean) =>
  Mino.layer({
    apiKey: API_KEY,
    endpoint: {
      baseURL: family.baseURL?.(url) ?? url,
      maxRetries: 0,
      idleTimeoutMs: family.client?.idleTimeoutMs ?? 10_000,
      ...(family.client?.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: family.client.requestTimeoutMs }),
      ...(family.host === undefined ? {} : { hostAs: family.host })
    },
    model: family.model,
    instructions: "test instructions",
    session: { home },
    bash: { cwd, parentEnv: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", HOME: home, LANG: "C.UTF-8" } },
    approver: Approver.layerStatic(approve)
  })

/** One process's part of a conversation: its endpoint, the server standing in for it, the questions asked. */
interface Leg {
  readonly family: Family
  readonly server: ResponsesServer.ResponsesServer
  readonly questions: ReadonlyArray<string>
}

/**
 * Runs each leg's questions as turns, one Agent (one process, as it were) per
 * leg, all on one session file; returns each turn's events and end, the
 * approvals and the file.
 */
const converse = (legs: ReadonlyArray<Leg>) =>
  Effect.gen(function*() {
    const home = tempDir("conformance")
    const cwd = Fs.realpathSync(tempDir("conformance-cwd"))
    const approvals: Array<ToolDisplay> = []
    const runs: Array<Run> = []
    for (const leg of legs) {
      yield* Effect.gen(function*() {
        const agent = yield* Agent
        for (const question of leg.questions) {
          const events: Array<AgentEvent> = []
          const outcome = yield* agent.turn(question, (event) => Effect.sync(() => void events.push(event)))
          runs.push({ events, status: outcome.status, reason: outcome.reason })
        }
      }).pipe(
        Effect.provide(agentLayer(leg.family, leg.server.url, home, cwd, (display) => (approvals.push(display), true))),
        Effect.scoped
      )
    }
    return { runs, approvals, lines: sessionLines(home) }
  })

/**
 * Runs `questions` as turns, one Agent (one process, as it were) for each list of
 * `sessions`, all on one session file and one server; returns each turn's events
 * and end, the requests, the approvals and the file.
 */
export const chat = (family: Family, replies: Replies, ...sessions: ReadonlyArray<ReadonlyArray<string>>) =>
  Effect.gen(function*() {
    const server = yield* serve(replies)
    const result = yield* converse(sessions.map((questions) => ({ family, server, questions })))
    return { ...result, requests: yield* server.requests }
  })

export const shown = (run: Run): string => run.events.flatMap((event) => (event._tag === "TextDelta" ? [event.text] : [])).join("")

const field = (display: ToolDisplay, label: string) => {
  const found = display.fields.find((entry) => entry.label === label)
  return found === undefined || found.kind === "entries" ? undefined : found.value
}

/** The follow-up's checks: within the rules, the call and its output paired, the reasoning in the family's form. */
const expectTakenBack = (family: Family, body: unknown, toolCall: Stream) => {
  expect(family.accepts(body)).toEqual([])
  const input = inputOf(body)
  const output = outputOf(toolCall)
  const call = output.find((item) => item["type"] === "function_call")!
  const sent = input.find((item) => item["type"] === "function_call" && item["call_id"] === call["call_id"])
  expect(sent).toEqual(call)
  const result = input.find((item) => item["type"] === "function_call_output" && item["call_id"] === call["call_id"])
  expect(JSON.parse(String(result?.["output"]))).toMatchObject({ status: "completed", exit_code: 0, output: PRINTED })
  // Every family's tool call carries reasoning, so this check never passes for want of it.
  const reasonings = output.filter((item) => item["type"] === "reasoning")
  expect(reasonings.length).toBeGreaterThan(0)
  for (const reasoning of reasonings) {
    switch (family.reasoning) {
      case "verbatim":
        // An empty summary list is added where it has none (LiteLLM's items), as the Open Responses schema asks.
        expect(input).toContainEqual(Array.isArray(reasoning["summary"]) ? reasoning : { ...reasoning, summary: [] })
        break
      case "content": {
        // Its text parts as one (vLLM and llama.cpp read only the first part).
        const parts = Array.isArray(reasoning["content"]) ? reasoning["content"].filter(isObject) : []
        const text = parts.flatMap((part) => (typeof part["text"] === "string" && part["text"] !== "" ? [part["text"]] : []))
        expect(input).toContainEqual({
          ...(reasoning["id"] === undefined ? {} : { id: reasoning["id"] }),
          type: "reasoning",
          summary: Array.isArray(reasoning["summary"]) ? reasoning["summary"] : [],
          content: [{ type: "reasoning_text", text: text.join("\n") }]
        })
        break
      }
    }
  }
}

/** The conformance tests of one endpoint family. */
export const conformance = (family: Family) =>
  describe(`${family.name} (${[family.text, family.toolCall].map((stream) => stream.source.kind).join(", ")})`, () => {
    it.scopedLive("shows the text once and saves the response verbatim", () =>
      Effect.gen(function*() {
        const { runs, requests, lines } = yield* chat(family, [steps(family.text)], ["Say hello."])
        expect(runs[0]!.status).toBe("completed")
        expect(shown(runs[0]!)).toBe(textOf(family.text))
        expect(lines.find((line) => line["type"] === "model_response")?.["output"]).toEqual(outputOf(family.text))
        expect(family.accepts(requests[0]!.body)).toEqual([])
        family.request?.(requests[0]!)
      }))

    it.scopedLive("a tool call reaches approval and bash, and the follow-up and the next turn are requests it takes", () =>
      Effect.gen(function*() {
        const afterTool = family.afterTool ?? family.text
        const { runs, requests, approvals, lines } = yield* chat(
          family,
          [steps(family.toolCall), steps(afterTool), steps(family.text)],
          ["Run echo mino-conformance.", "Thanks."]
        )
        expect(runs.map((run) => run.status)).toEqual(["completed", "completed"])
        expect(approvals).toHaveLength(1)
        expect(field(approvals[0]!, "Command")).toBe(COMMAND)
        const result = lines.find((line) => line["type"] === "tool_result")
        expect(result?.["result"]).toMatchObject({ status: "completed", exit_code: 0, output: PRINTED })
        expect(lines.filter((line) => line["type"] === "model_response").map((line) => line["output"])).toEqual([
          outputOf(family.toolCall),
          outputOf(afterTool),
          outputOf(family.text)
        ])
        expect(requests).toHaveLength(3)
        expectTakenBack(family, requests[1]!.body, family.toolCall)
        // The next turn replays the whole completed turn, within the same rules.
        expectTakenBack(family, requests[2]!.body, family.toolCall)
        for (const request of requests) family.request?.(request)
      }))

    for (const shape of family.errors) {
      it.scopedLive(`error: ${shape.name}: one line, nothing runs, the next turn works`, () =>
        Effect.gen(function*() {
          const { runs, lines } = yield* chat(family, [shape.reply, steps(family.text)], ["First.", "Second."])
          expect(runs[0]!.status).toBe("failed")
          expect(runs[0]!.reason).toMatch(shape.line)
          expect(runs[0]!.reason).not.toContain("\n")
          expect(runs[0]!.reason).not.toContain(API_KEY)
          expect(lines.some((line) => line["type"] === "tool_start")).toBe(false)
          expect(runs[1]!.status).toBe("completed")
        }))
    }
  })

const hasInclude = (body: unknown): boolean => isObject(body) && body["include"] !== undefined

/**
 * Item 1's first adaptation against `family`: the endpoint refuses `include` with
 * `refusal` (its own error shape); the request is sent again without it, once,
 * announced in one line; later requests of the process leave it out; a new
 * process asks once more (not saved); the file holds only the conversation.
 */
export const adaptsToNoInclude = (family: Family, refusal: ResponsesServer.HttpError) =>
  it.scopedLive("a model without encrypted reasoning: asked again without include, remembered while Mino runs", () =>
    Effect.gen(function*() {
      const { runs, requests, lines } = yield* chat(
        family,
        (request) => (hasInclude(request.body) ? refusal : steps(family.text)),
        ["First.", "Second."],
        ["After a restart."]
      )
      expect(runs.map((run) => run.status)).toEqual(["completed", "completed", "completed"])
      const adapted = runs.map((run) => run.events.filter((event) => event._tag === "ModelAdapted"))
      expect(adapted.map((events) => events.length)).toEqual([1, 0, 1])
      expect(adapted[0]![0]).toMatchObject({ message: expect.stringMatching(/^the endpoint does not return encrypted reasoning for .*; asking again without it/) })
      // First process: refused, again without; its second turn does not ask. The restart asks once more.
      expect(requests.map((request) => hasInclude(request.body))).toEqual([true, false, false, true, false])
      expect(shown(runs[0]!)).toBe(textOf(family.text))
      expect(lines.map((line) => line["type"])).toEqual(
        ["user_input", "model_response", "turn_end", "user_input", "model_response", "turn_end", "user_input", "model_response", "turn_end"]
      )
    }))

/** Whether a request sends back encrypted reasoning of an earlier turn (before its last user message). */
const earlierReasoning = (body: unknown): boolean => {
  const input = inputOf(body)
  const lastQuestion = input.map((item) => item["role"] === "user").lastIndexOf(true)
  return input.slice(0, lastQuestion).some((item) => item["type"] === "reasoning" && typeof item["encrypted_content"] === "string" && item["encrypted_content"] !== "")
}

/**
 * Item 1's second adaptation: the endpoint cannot verify the reasoning of earlier
 * turns (`refusal`); the request goes again without it, once, announced; the
 * conversation's later requests leave it out; this turn's own reasoning still
 * goes back; the file keeps every item verbatim.
 */
export const adaptsToUnverifiableReasoning = (family: Family, refusal: ResponsesServer.HttpError) =>
  it.scopedLive("reasoning the endpoint cannot verify: asked again without earlier turns' reasoning, for the rest of the conversation", () =>
    Effect.gen(function*() {
      const afterTool = family.afterTool ?? family.text
      const { runs, requests, lines } = yield* chat(
        family,
        (request, n) => (earlierReasoning(request.body) ? refusal : steps(n === 0 ? family.toolCall : n === 1 ? afterTool : family.text)),
        ["Run echo mino-conformance.", "Second.", "Third."]
      )
      expect(runs.map((run) => run.status)).toEqual(["completed", "completed", "completed"])
      expect(runs.map((run) => run.events.filter((event) => event._tag === "ModelAdapted").length)).toEqual([0, 1, 0])
      // Turn 1: two requests, its own reasoning sent back within the turn; turn 2: refused, then
      // without; turn 3: without from the start.
      expect(requests.map((request) => earlierReasoning(request.body))).toEqual([false, false, true, false, false])
      const turnReasoning = outputOf(family.toolCall).filter((item) => item["type"] === "reasoning")
      expect(inputOf(requests[1]!.body).filter((item) => item["type"] === "reasoning")).toEqual(turnReasoning)
      expect(inputOf(requests[4]!.body).some((item) => item["type"] === "function_call")).toBe(true)
      // The file still holds the reasoning verbatim.
      expect(lines.find((line) => line["type"] === "model_response")?.["output"]).toEqual(outputOf(family.toolCall))
    }))

/** Ollama's tool-call turn, its thinking only in `encrypted_content` (openai/responses.go @ 01d04d5): a conversation to move elsewhere. */
export const ollamaTurn = (accepts: Family["accepts"]): Family => ({
  name: "Ollama",
  model: "qwen3:8b",
  text: load("ollama.text"),
  toolCall: load("ollama.tool-call"),
  afterTool: load("ollama.after-tool"),
  accepts,
  reasoning: "verbatim",
  errors: []
})

/**
 * A conversation begun on `from` (a tool call and its answer, in one process)
 * and continued on `to` after a restart with another `OPENAI_BASE_URL`: `to`
 * answers every request its input rules reject with `refusal` (the error that
 * server sends for that problem), as the server itself would, and plays its text
 * stream otherwise. Its first request carries `from`'s reasoning, which it cannot
 * read: refused once, then asked again without the earlier reasoning, announced
 * once; the next turn leaves it out from the start; the tool call and its output
 * stay in the context; the file keeps every item verbatim.
 */
export const continuesOn = (from: Family, to: Family, refusal: (problem: string) => ResponsesServer.HttpError) =>
  it.scopedLive(`a conversation begun on ${from.name} goes on: what ${to.name} cannot read is left out, once refused`, () =>
    Effect.gen(function*() {
      const first = yield* serve([steps(from.toolCall), steps(from.afterTool ?? from.text)])
      const then = yield* serve((request) => {
        const problems = to.accepts(request.body)
        return problems.length > 0 ? refusal(problems[0]!) : steps(to.text)
      })
      const { runs, lines } = yield* converse([
        { family: from, server: first, questions: ["Run echo mino-conformance."] },
        { family: to, server: then, questions: ["Second.", "Third."] }
      ])
      expect(runs.map((run) => run.status)).toEqual(["completed", "completed", "completed"])
      expect(runs.map((run) => run.events.filter((event) => event._tag === "ModelAdapted").length)).toEqual([0, 1, 0])
      for (const request of yield* first.requests) expect(from.accepts(request.body)).toEqual([])
      const requests = yield* then.requests
      // Refused once for the reasoning it cannot read, then taken: three requests for two turns.
      expect(requests.map((request) => to.accepts(request.body).length > 0)).toEqual([true, false, false])
      const reasoning = outputOf(from.toolCall).filter((item) => item["type"] === "reasoning")
      expect(reasoning.length).toBeGreaterThan(0)
      expect(inputOf(requests[0]!.body)).toContainEqual(reasoning[0])
      for (const request of requests.slice(1)) {
        const input = inputOf(request.body)
        expect(input.some((item) => item["type"] === "reasoning")).toBe(false)
        expect(input.some((item) => item["type"] === "function_call")).toBe(true)
        expect(input.some((item) => item["type"] === "function_call_output")).toBe(true)
      }
      expect(lines.find((line) => line["type"] === "model_response")?.["output"]).toEqual(outputOf(from.toolCall))
    }))
