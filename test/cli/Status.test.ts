/**
 * `/status` (`cli/Status.ts`): the tokens come from the session's records — files
 * with `usage` and files from before it alike — summed for the last turn and the
 * conversation; the context meter appears only for a model whose window the
 * table knows; whatever came from outside is escaped.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Status from "../../src/cli/Status.js"
import type { SessionRecord } from "../../src/session/records/Records.js"

const response = (turnId: string, usage?: { input_tokens: number; output_tokens: number }): SessionRecord => ({
  type: "model_response",
  turn_id: turnId,
  output: [],
  ...(usage === undefined ? {} : { usage })
})

const facts = (over: Partial<Status.Facts> = {}): Status.Facts => ({
  model: "gpt-5.1",
  modelFrom: "the default",
  endpoint: "https://api.openai.com/v1",
  endpointFrom: "the default",
  conversation: { id: "20261204-000000-00000000", path: "/h/.mino/sessions/20261204-000000-00000000.jsonl", saved: true, turns: 2 },
  agents: { _tag: "None" },
  tokens: Status.tokens([]),
  ...over
})

describe("Status", () => {
  it("tokens: a tool turn's responses add up; the last turn is the last that reported; older records count as unreported", () => {
    const records: ReadonlyArray<SessionRecord> = [
      { type: "user_input", turn_id: "t0", text: "from 0.3" },
      response("t0"),
      { type: "user_input", turn_id: "t1", text: "a tool turn" },
      response("t1", { input_tokens: 100, output_tokens: 10 }),
      response("t1", { input_tokens: 150, output_tokens: 20 }),
      { type: "user_input", turn_id: "t2", text: "plain" },
      response("t2", { input_tokens: 200, output_tokens: 5 })
    ]
    expect(Status.tokens(records)).toEqual({
      lastTurn: { input_tokens: 200, output_tokens: 5 },
      conversation: { input_tokens: 450, output_tokens: 35 },
      context: 205,
      unreported: 1
    })
    expect(Status.tokens(records.slice(0, 5)).lastTurn).toEqual({ input_tokens: 250, output_tokens: 30 })
    expect(Status.tokens([])).toEqual({ lastTurn: undefined, conversation: { input_tokens: 0, output_tokens: 0 }, context: undefined, unreported: 0 })
  })

  it("windows: the table's models and their dated snapshots; anything else is unknown", () => {
    const table: ReadonlyArray<readonly [string, number | undefined]> = [
      ["gpt-5.1", 400_000],
      ["gpt-5", 400_000],
      ["gpt-5-mini-2025-08-07", 400_000],
      ["gpt-5.1-codex", 400_000],
      ["gpt-4.1", 1_047_576],
      ["gpt-4o-mini", 128_000],
      ["o3", 200_000],
      ["o4-mini", 200_000],
      ["gpt-oss-120b", 131_072],
      ["openai/gpt-oss-20b", 131_072],
      ["llama3.1:8b", undefined],
      ["gpt-5.1x", undefined],
      ["my-gpt-5.1", undefined]
    ]
    for (const [model, window] of table) expect(Status.windowOf(model)).toBe(window)
  })

  it("the text: every row, the meter where the window is known, none where it is not", () => {
    const tokens = Status.tokens([response("t1", { input_tokens: 100_000, output_tokens: 0 })])
    const text = Status.text(facts({ tokens }))
    expect(text.split("\n").map((row) => row.split(":")[0])).toEqual(["Model", "Endpoint", "Conversation", "AGENTS.md", "Tokens", "Context"])
    expect(text).toContain("Context:      [#####---------------] 25% of 400,000 tokens used (100,000)")
    expect(Status.text(facts({ model: "llama3" }))).toContain("window unknown for this model")
    expect(Status.text(facts({ conversation: { ...facts().conversation, saved: false, turns: 0 } }))).toContain("is made with the first question")
  })

  it("what came from outside is escaped: a model's name, a path, why AGENTS.md was ignored", () => {
    const text = Status.text(facts({
      model: "m\u001b[2J",
      conversation: { ...facts().conversation, path: "/h/\u202e.jsonl" },
      agents: { _tag: "Ignored", why: "is odd\u0007" }
    }))
    expect(text).not.toMatch(/[\u0007\u001b\u202e]/)
  })

  it("the meter is clamped and always 20 cells", () => {
    for (const fraction of [-1, 0, 0.5, 1, 7, Number.NaN]) expect(Status.meter(fraction)).toMatch(/^\[[#-]{20}\]$/)
  })
})
