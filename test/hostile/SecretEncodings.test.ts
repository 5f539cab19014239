/**
 * Redaction on values, not on their encodings: a key holding characters that JSON
 * escapes (`"`, `\`, a tab, control characters) or that the screen escapes
 * (U+00AD, C1 controls, NBSP, zero-width and bidi characters), or characters of
 * several UTF-8 bytes, is found in the raw strings before they are encoded or
 * escaped. Generated keys, echoed by an endpoint in text (in pieces), in a tool
 * call's arguments and in reasoning, never reach the session file, `mino log`,
 * the next request or the screen, as themselves or in any escaped form.
 */
import * as Fs from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as fc from "fast-check"
import { Approver } from "../../src/approval/Approver.js"
import * as Gateway from "../../src/cli/Gateway.js"
import * as Log from "../../src/cli/Log.js"
import * as Escape from "../../src/security/Escape.js"
import * as Secrets from "../../src/security/Secrets.js"
import { encode, type SessionRecord } from "../../src/session/records/Records.js"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import * as EchoTool from "../support/EchoTool.js"
import { agentLayer, scriptedModel, sessionFile, tempDir, turn, withAgent } from "../support/Harness.js"
import * as Screen from "../support/Screen.js"
import { cutAt, textInPieces } from "./Streams.js"

/** Characters JSON escapes, characters the screen escapes, and characters of two to four UTF-8 bytes. */
const JSON_ESCAPED = ["\"", "\\", "\t", "\u0001", "\u001f", "\u007f", "/"]
const SCREEN_ESCAPED = ["\u00ad", "\u0085", "\u009b", "\u00a0", "\u200b", "\u202e", "\u2066", "\u061c", "\ufeff"]
const MULTI_BYTE = ["é", "ÿ", "Ω", "漢", "🙂"]
const PLAIN = [..."abcXYZ0189-_"]

/** What an HTTP header can carry (the key is sent as one): a tab, printable ASCII, and U+0080–U+00FF. */
const sendable = (char: string): boolean => /^[\t\u0020-\u007e\u0080-\u00ff]$/u.test(char)

const keyArb = (pool: ReadonlyArray<string>) =>
  fc.tuple(
    fc.array(fc.constantFrom(...PLAIN, ...pool), { minLength: 3, maxLength: 10 }),
    fc.constantFrom(...pool.filter((char) => !PLAIN.includes(char))),
    fc.array(fc.constantFrom(...PLAIN, ...pool), { minLength: 0, maxLength: 6 })
  ).map(([before, special, after]) => `sk-${before.join("")}${special}${after.join("")}Z`)

/** Every form the key could take where Mino writes or shows text. */
const forms = (key: string): ReadonlyArray<string> =>
  [...new Set([key, JSON.stringify(key).slice(1, -1), Escape.forDisplay(key), Escape.forValue(key), Escape.forLine(key), Escape.jsonString(key).slice(1, -1)])]

const leaks = (where: string, text: string, key: string): ReadonlyArray<string> =>
  forms(key).filter((form) => text.includes(form)).map((form) => `${where}: ${JSON.stringify(form)}`)

const MARK = "@KEY@"

/** `value` with the mark replaced by the key in every string (the endpoint echoes the key itself, not its JSON). */
const withKey = <A>(value: A, key: string): A => Secrets.redactStrings(value, (text) => text.split(MARK).join(key))

/** A chat: the model answers with a tool call carrying the key (refused), reasoning and a message holding it, then text holding it, in pieces. */
const chat = (key: string, cuts: ReadonlyArray<number>) =>
  Effect.gen(function*() {
    const home = tempDir("secret-encodings")
    const answer = `Done: ${key} is the key.`
    const server = yield* scriptedModel([
      withKey(
        ResponsesServer.toolCallResponse([{ call_id: "c1", name: "echo", arguments: JSON.stringify({ text: `use ${MARK} now` }) }], {
          reasoning: { encrypted_content: `gAAAA${MARK}opaque` },
          message: { text: `Looking for ${MARK} now.`, phase: "commentary" }
        }),
        key
      ),
      textInPieces(cutAt(answer, cuts)),
      ResponsesServer.textResponse("Fine.")
    ])
    const screen = Screen.make(["first question", "second question"], { interactive: true, apiKey: key })
    const ran: Array<string> = []
    const layer = agentLayer({ home, url: server.url, apiKey: key, tools: [EchoTool.make((text) => void ran.push(text))], approver: Approver.layer }).pipe(
      Layer.provideMerge(screen.layer)
    )
    yield* Effect.scoped(Effect.provide(Gateway.run({ banner: "BANNER" }), layer))
    const file = Fs.readFileSync(sessionFile(home)!, "utf8")
    const records = file.split("\n").filter((line) => line.length > 0).map((line) => JSON.parse(line) as SessionRecord).filter((record) => record.type !== ("conversation" as never))
    const log = yield* Log.show({ home, directory: undefined, id: undefined, demo: false, json: false, unknownOnly: false }).pipe(Effect.orDie)
    const logJson = yield* Log.show({ home, directory: undefined, id: undefined, demo: false, json: true, unknownOnly: false }).pipe(Effect.orDie)
    const requests = (yield* server.requests).map((request) => JSON.stringify(request.body))
    return { ran, file, records, log: [Log.render(records), Log.renderUnknown(records), log.stdout, logJson.stdout].join("\n"), requests, screen: screen.screen() }
  })

describe("the key is redacted as a value, whatever characters it holds", () => {
  it("a key an endpoint echoes in text, arguments and reasoning reaches no file, log, request or screen, in any form", async () => {
    let runs = 0
    await fc.assert(
      fc.asyncProperty(
        keyArb([...JSON_ESCAPED, ...SCREEN_ESCAPED, ...MULTI_BYTE].filter(sendable)),
        fc.uniqueArray(fc.integer({ min: 0, max: 40 }), { maxLength: 4 }),
        async (key, cuts) => {
          await new Promise((resolve) => setImmediate(resolve))
          const run = await Effect.runPromise(Effect.scoped(chat(key, cuts)))
          // The chat went as scripted: three requests, the call refused, the answer shown redacted.
          expect(run.requests).toHaveLength(3)
          expect(run.ran).toEqual([])
          expect(run.screen).toContain("the arguments contain the API key")
          expect(run.screen).toContain("Done: [redacted] is the key.")
          expect(run.file).toContain("Done: [redacted] is the key.")
          const found = [
            ...leaks("session file", run.file, key),
            ...leaks("mino log", run.log, key),
            ...run.requests.flatMap((body, index) => leaks(`request ${index + 1}`, body, key)),
            ...leaks("screen", run.screen, key)
          ]
          expect(found, JSON.stringify(key)).toEqual([])
          runs++
        }
      ),
      { numRuns: 30 }
    )
    console.log(`keys over JSON-escaped, screen-escaped and multi-byte characters, echoed in text, arguments and reasoning: ${runs} chats, no leak`)
  }, 180_000)

  it("an error body holding the key JSON-escaped, in JSON the SDK cannot read or escaped on purpose, is not shown or saved in any form", async () => {
    let runs = 0
    await fc.assert(
      fc.asyncProperty(keyArb([...JSON_ESCAPED, ...SCREEN_ESCAPED, ...MULTI_BYTE].filter(sendable)), fc.nat(3), async (key, shape) => {
        const escapedEach = [...key].map((char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`).join("")
        const bodies = [
          // Torn JSON: the SDK cannot parse it, so its text would be shown as it is.
          `{"error": {"message": "Incorrect API key provided: ${JSON.stringify(key).slice(1, -1)}`,
          `Bad key ${escapedEach} (as JSON escapes)`,
          `{"error": {"message": "key ${JSON.stringify(key).slice(1, -1)} refused", "type": "x"}}`,
          `<html>${JSON.stringify(key)}</html>`
        ]
        const home = tempDir("secret-error-body")
        const outcome = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
          const model = yield* scriptedModel([{ status: 401, body: null, raw: bodies[shape]! }])
          return yield* withAgent({ home, url: model.url, apiKey: key, tools: [] }, turn("hello"))
        })))
        expect(outcome.outcome.status).toBe("failed")
        expect(outcome.outcome.reason).toMatch(/^model request failed: HTTP 401/)
        const file = Fs.readFileSync(sessionFile(home)!, "utf8")
        expect([...leaks("reason", outcome.outcome.reason ?? "", key), ...leaks("session file", file, key)], JSON.stringify([key, shape])).toEqual([])
        runs++
      }),
      { numRuns: 40 }
    )
    console.log(`error bodies holding the key in JSON escapes: ${runs}, none shown or saved`)
  }, 120_000)

  it.scopedLive("a stream that drops inside the key shows none of its beginning (4 characters or more) on the screen, whatever the cut", () =>
    Effect.gen(function*() {
      const key = "sk-drop-\"\u00ad-0123456789"
      let cases = 0
      for (let cut = 1; cut < key.length; cut++) {
        const steps = textInPieces(["Here it is: ", key.slice(0, cut), key.slice(cut)])
        // Everything up to the delta that ends inside the key, then the connection drops.
        const at = steps.findIndex((step) => typeof step === "object" && "delta" in step && step.delta === key.slice(0, cut))
        const server = yield* scriptedModel([[...steps.slice(0, at + 1), { delay: 1 }, "drop"], ResponsesServer.textResponse("Fine.")])
        const screen = Screen.make(["first", "second"], { interactive: true, apiKey: key })
        const layer = agentLayer({ home: tempDir("secret-drop"), url: server.url, apiKey: key, tools: [], approver: Approver.layer }).pipe(
          Layer.provideMerge(screen.layer)
        )
        yield* Effect.scoped(Effect.provide(Gateway.run({ banner: "BANNER" }), layer))
        const shown = screen.screen()
        expect(shown, `cut at ${cut}`).toContain("Here it is: ")
        expect(shown, `cut at ${cut}`).toContain("Turn failed: ")
        const longest = cut >= Secrets.MIN_PREFIX ? [key.slice(0, Secrets.MIN_PREFIX)] : []
        expect([...longest, ...forms(key)].filter((form) => shown.includes(form)), `cut at ${cut}`).toEqual([])
        cases++
      }
      console.log(`a stream dropped inside the key: ${cases} cuts, no 4 characters of it shown`)
    }), 120_000)

  it("every key, sendable or not: a record holding it encodes without it in any form; streamed in any pieces, it is never shown", () => {
    const records = (key: string): ReadonlyArray<SessionRecord> => [
      { type: "user_input", turn_id: "t", text: `my key ${key}, and a tab\there` },
      {
        type: "model_response",
        turn_id: "t",
        output: [
          { type: "reasoning", id: "rs", encrypted_content: `x${key}y`, summary: [{ type: "summary_text", text: `I saw ${key}` }] },
          { type: "function_call", call_id: "c", name: "bash", arguments: JSON.stringify({ command: `echo ${key}` }) },
          { type: "message", role: "assistant", content: [{ type: "output_text", text: `"${key}"\\` }], [`field ${key}`]: 1 }
        ]
      },
      { type: "turn_end", turn_id: "t", status: "failed", reason: `invalid response: two tool calls share call_id "${key}"` }
    ]
    let cases = 0
    fc.assert(
      fc.property(keyArb([...JSON_ESCAPED, ...SCREEN_ESCAPED, ...MULTI_BYTE]), fc.uniqueArray(fc.nat(60), { maxLength: 6 }), (key, cuts) => {
        const secrets = Secrets.make(key)
        for (const record of records(key)) {
          const line = encode(record, secrets.redact)
          expect(Either.isRight(line)).toBe(true)
          const text = Either.getOrElse(line, () => "")
          expect(leaks("line", text, key)).toEqual([])
          expect(text).toContain("[redacted]")
        }
        const stream = Secrets.streamRedactor(secrets)
        const pieces = cutAt(`The key ${key} (again: ${key}).`, cuts)
        const shown = pieces.map((piece) => stream.push(piece)).join("") + stream.flush()
        expect(shown).toBe("The key [redacted] (again: [redacted]).")
        cases++
      }),
      { numRuns: 300 }
    )
    console.log(`keys over every kind of character: ${cases} keys, each in 3 records and a stream in pieces, no leak`)
  })
})
