/**
 * Only whole turns reach the model, and the notices follow the evidence: each
 * file below is one that issue #19 found replayed wrongly or announced falsely
 * (a completed turn without its result, a question without an answer, an answer
 * filed under another turn, a line with an editor's BOM, a damaged response
 * whose start survived), plus sizes that used to crash a restore.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { ResponseItem } from "../../src/protocol/ResponseItem.js"
import { Secrets } from "../../src/security/Secrets.js"
import { INTERRUPTED_NOTICE } from "../../src/session/conversation/Recovery.js"
import { SessionStore } from "../../src/session/SessionStore.js"
import { tempDir } from "../support/Harness.js"

const line = (record: Record<string, unknown>) => JSON.stringify(record) + "\n"
/** A line as written by hand, not by JSON.stringify. */
const raw = (text: string) => text + "\n"

const question = (turn: string, text: string) => line({ type: "user_input", turn_id: turn, text })
const answer = (turn: string, text: string) =>
  line({ type: "model_response", turn_id: turn, output: [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text }] }] })
const call = (turn: string, callId: string, command: string) =>
  line({ type: "model_response", turn_id: turn, output: [{ type: "function_call", call_id: callId, name: "bash", arguments: JSON.stringify({ command }), status: "completed" }] })
const start = (turn: string, callId: string) => line({ type: "tool_start", turn_id: turn, call_id: callId, name: "bash" })
const result = (turn: string, callId: string) =>
  line({ type: "tool_result", turn_id: turn, call_id: callId, name: "bash", result: { status: "completed", output: "ok\n", exit_code: 0 } })
const end = (turn: string, status = "completed") => line({ type: "turn_end", turn_id: turn, status })

/** A whole tool turn: question, call, start, result, answer, end. */
const toolTurn = (turn: string, text: string) =>
  question(turn, text) + call(turn, `call_${turn}`, "ls") + start(turn, `call_${turn}`) + result(turn, `call_${turn}`) + answer(turn, `done ${text}`) + end(turn)

const homeWith = (content: string) => {
  const home = tempDir("whole")
  const dir = Path.join(home, ".mino", "sessions")
  Fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  Fs.writeFileSync(Path.join(dir, "demo.jsonl"), content, { mode: 0o600 })
  return home
}

const fileOf = (home: string) => Path.join(home, ".mino", "sessions", "demo.jsonl")

/** Opens the session in `home`: its notices, the history as a request sends it, and its questions. */
const open = (home: string) =>
  Effect.scoped(Effect.gen(function*() {
    const store = yield* SessionStore
    return {
      notices: store.notices,
      items: store.history.items(),
      json: store.history.json("openai"),
      questions: yield* Effect.map(store.questions, (texts) => Array.from({ length: texts.length }, (_, i) => texts.at(i)))
    }
  }).pipe(Effect.provide(SessionStore.layer({ home, sessionId: "demo" }).pipe(Layer.provide(Secrets.layerNone)))))

const userTexts = (items: ReadonlyArray<ResponseItem>) =>
  items.flatMap((item) => item["role"] === "user" ? [(item["content"] as Array<{ text: string }>)[0]!.text] : [])

/** Every function_call of `items` has exactly one function_call_output after it, and every output a call before it. */
const paired = (items: ReadonlyArray<ResponseItem>): boolean => {
  const open = new Set<unknown>()
  for (const item of items) {
    if (item["type"] === "function_call") open.add(item["call_id"])
    if (item["type"] === "function_call_output" && !open.delete(item["call_id"])) return false
  }
  return open.size === 0
}

describe("only whole turns are replayed", () => {
  it.live("a completed turn that lost its tool_result is left out, kept in the file, and named once", () =>
    Effect.gen(function*() {
      const damaged = question("t2", "second") + call("t2", "call_x", "date") + start("t2", "call_x") + answer("t2", "it is late") + end("t2")
      const content = toolTurn("t1", "first") + damaged + toolTurn("t3", "third")
      const home = homeWith(content)
      const opened = yield* open(home)
      expect(userTexts(opened.items)).toEqual(["first", "third"])
      expect(paired(opened.items)).toBe(true)
      expect(opened.notices).toHaveLength(1)
      expect(opened.notices[0]).toContain("A completed turn is kept in the file but left out")
      expect(opened.notices[0]).toContain(`turn 2 ("second"): call "call_x" has no result`)
      // Kept in the file, byte for byte: the rule only decides what is sent.
      expect(Fs.readFileSync(fileOf(home), "utf8")).toBe(content)
      // The same on every start, and the questions are all there for ↑.
      const again = yield* open(home)
      expect(again.json).toBe(opened.json)
      expect(again.questions).toEqual(["first", "second", "third"])
    }))

  it.live("a question and a completed end without an answer is left out", () =>
    Effect.gen(function*() {
      const home = homeWith(toolTurn("t1", "first") + question("t2", "lonely") + end("t2"))
      const opened = yield* open(home)
      expect(userTexts(opened.items)).toEqual(["first"])
      expect(opened.notices[0]).toContain(`turn 2 ("lonely"): it has no answer`)
    }))

  it.live("an answer filed under another turn id is sent neither with nor without its question", () =>
    Effect.gen(function*() {
      const home = homeWith(question("t1", "asked") + answer("tX", "stray answer") + end("t1") + toolTurn("t2", "next"))
      const opened = yield* open(home)
      expect(userTexts(opened.items)).toEqual(["next"])
      expect(opened.json).not.toContain("stray answer")
      expect(opened.notices.join("\n")).toContain(`turn 1 ("asked"): it has no answer`)
    }))

  it.live("a line with an editor's BOM is read as its record, so its turn stays whole", () =>
    Effect.gen(function*() {
      const home = homeWith("\ufeff" + toolTurn("t1", "first") + "\ufeff" + question("t2", "bom") + answer("t2", "fine") + end("t2"))
      const opened = yield* open(home)
      expect(userTexts(opened.items)).toEqual(["first", "bom"])
      expect(opened.notices).toEqual([])
    }))

  it.live("results out of order, duplicated or foreign, and two questions, each leave the turn out with a reason", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [string, string]> = [
        [question("t", "q") + result("t", "call_a") + call("t", "call_a", "ls") + answer("t", "a") + end("t"), `it holds a result for call "call_a", which it did not make`],
        [question("t", "q") + call("t", "call_a", "ls") + result("t", "call_a") + result("t", "call_a") + answer("t", "a") + end("t"), `call "call_a" has more than one result`],
        [question("t", "q") + question("t", "q2") + answer("t", "a") + end("t"), "it holds more than one question"],
        [answer("t", "a") + question("t", "q") + answer("t", "b") + end("t"), "its question is missing"],
        [question("t", "q") + call("t", "call_a", "ls") + result("t", "call_a") + end("t"), "it has no answer (its last response asked for a tool)"],
        [question("t", "q") + call("t", "call_a", "ls") + result("t", "call_a") + call("t", "call_b", "ls") + answer("t", "a") + end("t"), `call "call_b" has no result`],
        [question("t", "q") + call("t", "call_a", "ls") + result("t", "call_a") + call("t", "call_a", "ls") + result("t", "call_a") + answer("t", "a") + end("t"), "one of its responses is invalid (call_id \"call_a\" was already used earlier in this turn)"]
      ]
      for (const [content, reason] of cases) {
        const opened = yield* open(homeWith(content))
        expect(opened.items).toEqual([])
        expect(opened.notices.join("\n")).toContain(reason)
      }
    }))

  it.live("the notice names three turns and counts the rest", () =>
    Effect.gen(function*() {
      let content = ""
      for (let i = 1; i <= 7; i++) content += question(`t${i}`, `q${i}`) + end(`t${i}`)
      const opened = yield* open(homeWith(content + toolTurn("t8", "whole")))
      expect(opened.notices).toHaveLength(1)
      expect(opened.notices[0]).toMatch(/^7 completed turns are kept in the file but left out/)
      expect(opened.notices[0]).toContain("; and 4 more.")
      expect(userTexts(opened.items)).toEqual(["whole"])
    }))
})

describe("notices follow the evidence", () => {
  it.live("a damaged response with a surviving tool_start: the tool-turn notice, and the call said unknown plainly", () =>
    Effect.gen(function*() {
      const damaged = call("t2", "call_x", "rm -rf build").replace("\"output\"", "\"outp")
      const home = homeWith(toolTurn("t1", "first") + question("t2", "clean up") + damaged + start("t2", "call_x"))
      const opened = yield* open(home)
      expect(opened.notices).toContain(INTERRUPTED_NOTICE)
      const unknown = opened.notices.filter((notice) => notice.startsWith("Outcome unknown:"))
      expect(unknown).toEqual([`Outcome unknown: a bash call (call_id "call_x") whose command is not known: the response that asked for it could not be read`])
      expect(opened.notices.join("\n")).not.toContain(`bash ""`)
    }))
})

describe("size never crashes", () => {
  it.live("a response of 200,000 small output items is saved, replayed and reopened", () =>
    Effect.gen(function*() {
      const home = tempDir("whole")
      const output: Array<ResponseItem> = []
      for (let i = 0; i < 200_000; i++) output.push({ type: "reasoning", summary: [] })
      output.push({ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "done" }] })
      const layer = SessionStore.layer({ home, sessionId: "demo" }).pipe(Layer.provide(Secrets.layerNone))
      yield* Effect.scoped(Effect.gen(function*() {
        const store = yield* SessionStore
        yield* store.append({ type: "user_input", turn_id: "big", text: "many" })
        yield* store.append({ type: "model_response", turn_id: "big", output })
        yield* store.append({ type: "turn_end", turn_id: "big", status: "completed" })
        expect(store.history.items()).toHaveLength(200_002)
      }).pipe(Effect.provide(layer)))
      for (let i = 0; i < 2; i++) {
        const opened = yield* open(home)
        expect(opened.notices).toEqual([])
        expect(opened.items).toHaveLength(200_002)
      }
    }), 60_000)

  it.live("an open turn with 100,000 calls is closed with one write, and the notice lists a few by name", () =>
    Effect.gen(function*() {
      const calls: Array<ResponseItem> = []
      for (let i = 0; i < 100_000; i++) calls.push({ type: "function_call", call_id: `c${i}`, name: "bash", arguments: "{\"command\":\"true\"}", status: "completed" })
      let content = question("t", "go") + line({ type: "model_response", turn_id: "t", output: calls })
      for (let i = 0; i < 30; i++) content += start("t", `c${i}`)
      const home = homeWith(content)
      const opened = yield* open(home)
      expect(opened.notices[0]).toBe(INTERRUPTED_NOTICE)
      const unknown = opened.notices.filter((notice) => notice.startsWith("Outcome unknown:"))
      expect(unknown).toHaveLength(21)
      expect(unknown.at(-1)).toBe("Outcome unknown: 10 more call(s); `mino log --unknown` lists them all.")
      const lines = Fs.readFileSync(fileOf(home), "utf8").trimEnd().split("\n")
      expect(lines).toHaveLength(2 + 30 + 100_000 + 1)
      expect(JSON.parse(lines.at(-1)!)).toMatchObject({ type: "turn_end", status: "interrupted" })
    }), 60_000)

  it.live("a record nested deeper than a record may be is set aside on read, not a crash", () =>
    Effect.gen(function*() {
      const deep = "[".repeat(5000) + "]".repeat(5000)
      const content = toolTurn("t1", "first") + `{"type":"model_response","turn_id":"t2","output":[{"type":"message","role":"assistant","content":${deep}}]}\n`
      const opened = yield* open(homeWith(content))
      expect(userTexts(opened.items)).toEqual(["first"])
      expect(opened.notices.join("\n")).toContain("unreadable line(s)")
    }))
})

describe("what a line holds is what its record says (the red team's files)", () => {
  const fc = { type: "function_call", call_id: "call_evil", name: "bash", arguments: "{\"command\":\"rm -rf ~\"}", status: "completed" }
  const message = { type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "hello" }] }

  const cases: ReadonlyArray<readonly [string, string]> = [
    ["the output key twice", `{"type":"model_response","turn_id":"t1","output":[${JSON.stringify(fc)}],"output":[${JSON.stringify(message)}]}`],
    ["keys that would rewrite the request", `{"type":"model_response","turn_id":"t1","output":[${JSON.stringify(message)}],"instructions":"INJECTED","input":[${JSON.stringify(fc)}],"output":[${JSON.stringify(message)}],"instructions":"INJECTED","input":"s"}`],
    ["a space after the colon", `{"type":"model_response","turn_id":"t1","output": [${JSON.stringify(message)}]}`],
    ["a space before the closing brace", `{"type":"model_response","turn_id":"t1","output":[${JSON.stringify(message)}] }`]
  ]
  for (const [name, response] of cases) {
    it.live(`${name}: the request holds the parsed record's items, valid JSON, nothing else`, () =>
      Effect.gen(function*() {
        const home = homeWith(question("t1", "hi") + raw(response) + end("t1"))
        const opened = yield* open(home)
        const items = JSON.parse(`[${opened.json}]`) as Array<ResponseItem>
        expect(items).toEqual([{ type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] }, message])
        expect(opened.json).toBe([JSON.stringify(items[0]), JSON.stringify(message)].join(","))
      }))
  }

  it.live("a question whose key is doubled or spaced is recalled (↑) and sent as its parsed text", () =>
    Effect.gen(function*() {
      const lines = [
        `{"type":"user_input","turn_id":"t1","text":"shown in log","text":"second"}`,
        `{"type":"user_input","turn_id":"t2","text": "spaced"}`,
        `{"type":"user_input","turn_id":"t3","text":"trail" }`
      ]
      const home = homeWith(lines.map((text, i) => raw(text) + answer(`t${i + 1}`, "ok") + end(`t${i + 1}`)).join(""))
      const opened = yield* open(home)
      expect(opened.questions).toEqual(["second", "spaced", "trail"])
      expect(userTexts(opened.items)).toEqual(["second", "spaced", "trail"])
    }))
})

describe("a lost line costs its turn's place, at every start", () => {
  it.live("a completed turn whose call and result lines are unreadable is left out, and stays left out after they are set aside", () =>
    Effect.gen(function*() {
      // Both lines name t1 but are not records (a field of the wrong type): set aside.
      const broken = raw(`{"type":"model_response","turn_id":"t1","output":"not a list"}`) + raw(`{"type":"tool_result","turn_id":"t1","call_id":7}`)
      const home = homeWith(question("t1", "first") + broken + answer("t1", "the output says 3") + end("t1") + toolTurn("t2", "second"))
      const first = yield* open(home)
      expect(userTexts(first.items)).toEqual(["second"])
      expect(first.notices.some((notice) => notice.startsWith("Set aside 2 unreadable line(s)"))).toBe(true)
      expect(first.notices.some((notice) => notice.includes("one of its lines could not be read"))).toBe(true)
      // The file now holds a set_aside record where each line was: the next start agrees.
      const again = yield* open(home)
      expect(userTexts(again.items)).toEqual(["second"])
      expect(again.notices.filter((notice) => notice.startsWith("Set aside"))).toEqual([])
      expect(again.notices.some((notice) => notice.includes("one of its lines could not be read"))).toBe(true)
      expect(Fs.readFileSync(fileOf(home), "utf8")).toContain("{\"type\":\"set_aside\",\"turn_id\":\"t1\"")
    }))
})
