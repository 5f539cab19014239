/**
 * Red team: Mino's own reader of a successful streamed reply (HttpTransport.send,
 * EventFrames, SseMessages) attacked through the real client (`ModelClient.layer`)
 * and a real loopback server that writes raw bytes: line endings, keep-alive
 * comments, compression, cuts across reads, hostile data that echoes the key.
 * Each test asserts one promise of docs/endpoints.md / docs/safety.md; the comment
 * "Found by this red team" marks the seven breaks it found, six fixed, one documented.
 */
import * as fs from "node:fs"
import * as Http from "node:http"
import * as Net from "node:net"
import * as Zlib from "node:zlib"
import * as fc from "fast-check"
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import type * as Scope from "effect/Scope"
import { ModelClient, type ModelClientConfig, type ModelError, type ModelEvent, type ModelRequest } from "../../src/model/ModelClient.js"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import { Secrets } from "../../src/security/Secrets.js"
import { environment, sandbox, scriptedServer, sessionFile } from "../support/MinoProcess.js"
import * as Pty from "../support/Pty.js"
import { BIN } from "../support/MinoProcess.js"

const KEY = "sk-redteam-0123456789abcdefghijKLMN"
const request: ModelRequest = { model: "gpt-test", instructions: "Be brief.", input: [{ role: "user", content: "hi" }], tools: [] }

const swept: Record<string, number> = {}
const count = (name: string, n = 1) => void (swept[name] = (swept[name] ?? 0) + n)

/** One raw step of a reply: bytes to write (then flushed), a pause, or the end of the body / the socket. */
type Raw = { readonly bytes: Uint8Array | string } | { readonly delay: number } | "end" | "drop" | "hold"

interface RawReply {
  readonly status?: number
  readonly headers?: Readonly<Record<string, string>>
  /** Compress everything written with this encoding (each write flushed through the compressor). */
  readonly encoding?: "gzip" | "deflate" | "br"
  readonly steps: ReadonlyArray<Raw>
}

/** A loopback server answering every request with the next reply (the last one repeats); closed with the scope. */
const rawServer = (replies: ReadonlyArray<RawReply>): Effect.Effect<{ readonly url: string; readonly served: () => number }, never, Scope.Scope> =>
  Effect.gen(function*() {
    let served = 0
    const timers = new Set<NodeJS.Timeout>()
    const { port } = yield* ResponsesServer.listening(Http.createServer((req, res) => {
      req.resume()
      req.on("end", () => void play(replies[Math.min(served++, replies.length - 1)]!, res, req))
    }))
    // Run before the server closes (finalizers run last first): no step is played into a closed socket.
    yield* Effect.addFinalizer(() => Effect.sync(() => timers.forEach(clearTimeout)))
    const sleep = (ms: number) => new Promise<void>((resolve) => {
      const timer = setTimeout(() => (timers.delete(timer), resolve()), ms)
      timers.add(timer)
    })
    const play = async (reply: RawReply, res: Http.ServerResponse, req: Http.IncomingMessage) => {
      const headers: Record<string, string> = { ...(reply.headers ?? { "content-type": "text/event-stream" }) }
      if (reply.encoding !== undefined) headers["content-encoding"] = reply.encoding
      res.writeHead(reply.status ?? 200, headers)
      res.flushHeaders()
      const compressor = reply.encoding === "gzip" ? Zlib.createGzip() : reply.encoding === "deflate" ? Zlib.createDeflate() : reply.encoding === "br" ? Zlib.createBrotliCompress() : undefined
      compressor?.on("data", (chunk: Buffer) => res.write(chunk))
      compressor?.on("end", () => res.end())
      for (const step of reply.steps) {
        if (res.destroyed) return
        if (step === "end") {
          if (compressor === undefined) res.end()
          else compressor.end()
          return
        }
        if (step === "drop") {
          await sleep(20)
          req.socket.destroy()
          return
        }
        if (step === "hold") return
        if ("delay" in step) {
          await sleep(step.delay)
          continue
        }
        if (compressor === undefined) res.write(step.bytes)
        else {
          compressor.write(step.bytes)
          await new Promise<void>((resolve) => compressor.flush(() => resolve()))
        }
        // Each write its own read on the other side, as far as TCP allows.
        await new Promise<void>((resolve) => setImmediate(resolve))
      }
      if (compressor === undefined) res.end()
      else compressor.end()
    }
    return { url: `http://127.0.0.1:${port}/v1`, served: () => served }
  })

const clientFor = (url: string, config: ModelClientConfig = {}) =>
  Effect.provide(ModelClient, ModelClient.layer({ baseURL: url, maxRetries: 0, ...config }).pipe(Layer.provide(Secrets.layer(KEY))))

interface Outcome {
  readonly text: string
  readonly completed: boolean
  readonly error: ModelError | undefined
  readonly events: ReadonlyArray<ModelEvent>
}

/** One request through the real client: the text it streamed, whether it completed, its error. */
const ask = (url: string, config: ModelClientConfig = {}) =>
  Effect.gen(function*() {
    const client = yield* clientFor(url, config)
    const events: Array<ModelEvent> = []
    const ended = yield* Effect.either(Stream.runForEach(client.respond(request), (event) => Effect.sync(() => void events.push(event))))
    return {
      text: events.flatMap((event) => (event._tag === "TextDelta" ? [event.text] : [])).join(""),
      completed: events.some((event) => event._tag === "Completed"),
      error: Either.isLeft(ended) ? ended.left : undefined,
      events
    } satisfies Outcome
  })

/** The SSE text of a reply's event steps, with `eol` as every line end. */
const sse = (steps: ReadonlyArray<ResponsesServer.Step>, eol: string): Array<string> => {
  let sequence = 0
  return steps.flatMap((step) =>
    typeof step === "object" && "type" in step
      ? [`event: ${step.type}${eol}data: ${JSON.stringify({ ...step, sequence_number: sequence++ })}${eol}${eol}`]
      : []
  )
}

const TEXT = "Hello from the model, in several deltas."
const textReply = ResponsesServer.textResponse(TEXT)

afterAll(() => console.log(`ReaderAttack sweeps: ${JSON.stringify(swept)}`))

describe("the reader, attacked", () => {
  // Found by this red team, fixed: a stream whose lines end with a lone CR holds its last event back until another
  // event comes (the `\r` is decided by the next byte, and EventFrames drops a block that makes
  // no event, keep-alive comments included, before the line reader sees that byte). A server that
  // ends each line with `\r`, sends `response.completed`, then keeps the stream open with
  // keep-alive comments (as the SDK's reader completed: the comment's first byte decides the `\r`)
  // gets a timeout line after the idle limit instead of the completed answer. With `\n` line ends
  // the same stream completes (the control below).
  it.scopedLive("CR line ends, then keep-alive comments: the turn completes (as with LF, and as the SDK's reader did)", () =>
    Effect.gen(function*() {
      for (const eol of ["\n", "\r\n", "\r"]) {
        const events = sse(textReply, eol)
        const comments = Array.from({ length: 40 }, (): Array<Raw> => [{ delay: 100 }, { bytes: `: keep-alive${eol}${eol}` }]).flat()
        const server = yield* rawServer([{ steps: [...events.map((bytes) => ({ bytes })), ...comments, "hold"] }])
        const outcome = yield* ask(server.url, { idleTimeoutMs: 3_000 })
        count("line-end variants with keep-alive after completed")
        expect({ eol: JSON.stringify(eol), completed: outcome.completed, text: outcome.text, error: outcome.error?.message }).toEqual({
          eol: JSON.stringify(eol),
          completed: true,
          text: TEXT,
          error: undefined
        })
      }
    }), 60_000)
  // Held: generated streams: every line end per line, a BOM before a line, comments, `id:`/`retry:`
  // and unknown fields, `thread.…` and `error`-looking event names on ordinary events, multi-line
  // JSON data, `[DONE]` after response.completed, cut into reads anywhere, plain or compressed,
  // with or without a content-type: the text is exactly the model's and the turn completes.
  it.scopedLive("generated well-formed streams, cut anywhere, plain or compressed: completed with exactly the model's text", () =>
    Effect.gen(function*() {
      const eolArb = fc.constantFrom("\n", "\r\n", "\r")
      const lineArb = (text: string) => fc.tuple(eolArb, fc.boolean()).map(([eol, bom]) => [`${bom ? "\uFEFF" : ""}${text}${eol}`, eol] as const)
      const eventArb = (step: ResponsesServer.ServerEvent, sequence: number) =>
        fc.record({
          name: fc.constantFrom(step.type, `thread.${step.type}`, "error", "thread.run.failed", ""),
          split: fc.boolean(),
          extra: fc.subarray([": comment", "id: 7", "retry: 10", "foo: bar", ":"]),
        }).chain(({ name, split, extra }) => {
          const json = JSON.stringify({ ...step, sequence_number: sequence }, null, split ? 1 : undefined)
          const dataLines = json.split("\n").map((line) => `data: ${line}`)
          const lines = [...extra, ...(name === "" ? [] : [`event: ${name}`]), ...dataLines]
          // The blank line that ends the event is the last line's own line end (a lone `\r` then `\n` would be one CRLF).
          return fc.tuple(...lines.map(lineArb)).map((parts) => parts.map(([line]) => line).join("") + parts[parts.length - 1]![1])
        })
      const events = textReply.filter((step): step is ResponsesServer.ServerEvent => typeof step === "object" && "type" in step)
      const streamArb = fc.record({
        body: fc.tuple(...events.map((step, i) => eventArb(step, i))).map((parts) => parts.join("")),
        done: fc.boolean(),
        keepalives: fc.nat(3),
        cuts: fc.array(fc.nat(), { maxLength: 12 }),
        encoding: fc.constantFrom(undefined, "gzip", "deflate", "br"),
        contentType: fc.constantFrom("text/event-stream", "text/event-stream; charset=utf-8", undefined)
      })
      let runs = 0
      const failures: Array<string> = []
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(streamArb, async ({ body, done, keepalives, cuts, encoding, contentType }) => {
            const text = Buffer.from(body + (done ? "data: [DONE]\n\n" : "") + ": ka\n\n".repeat(keepalives))
            const at = [...new Set(cuts.map((cut) => cut % Math.max(1, text.length)))].sort((a, b) => a - b)
            const pieces: Array<Raw> = []
            let from = 0
            for (const cut of [...at, text.length]) {
              if (cut > from) pieces.push({ bytes: text.subarray(from, cut) })
              from = cut
            }
            const reply: RawReply = {
              headers: contentType === undefined ? {} : { "content-type": contentType },
              ...(encoding === undefined ? {} : { encoding }),
              steps: [...pieces, "end"]
            }
            const outcome = await Effect.runPromise(Effect.scoped(Effect.flatMap(rawServer([reply]), (server) => ask(server.url, { idleTimeoutMs: 5_000 }))))
            runs += 1
            const ok = outcome.completed && outcome.text === TEXT && outcome.error === undefined
            if (!ok) failures.push(JSON.stringify({ body: body.slice(0, 400), encoding, contentType, at, error: outcome.error?.message, text: outcome.text }))
            return ok
          }),
          { numRuns: 120, seed: 20261205 }
        ))
      count("generated streams", runs)
      expect(failures).toEqual([])
    }), 240_000)

  // Held: compressed replies cut or corrupted, a body that says one encoding and sends
  // another: one line, never a hang past the idle limit, nothing completed.
  it.scopedLive("a compressed reply cut short, corrupt, or mislabelled: one line, no hang", () =>
    Effect.gen(function*() {
      const whole = Buffer.from(sse(textReply, "\n").join(""))
      const gz = Zlib.gzipSync(whole)
      const cases: Array<[string, RawReply]> = [
        ["gzip cut in the middle, body ended", { headers: { "content-type": "text/event-stream", "content-encoding": "gzip" }, steps: [{ bytes: gz.subarray(0, gz.length >> 1) }, "end"] }],
        ["gzip cut in the middle, socket dropped", { headers: { "content-type": "text/event-stream", "content-encoding": "gzip" }, steps: [{ bytes: gz.subarray(0, gz.length >> 1) }, "drop"] }],
        ["gzip label, plain body", { headers: { "content-type": "text/event-stream", "content-encoding": "gzip" }, steps: [{ bytes: whole }, "end"] }],
        ["br label, gzip body", { headers: { "content-type": "text/event-stream", "content-encoding": "br" }, steps: [{ bytes: gz }, "end"] }],
        ["deflate label, garbage", { headers: { "content-type": "text/event-stream", "content-encoding": "deflate" }, steps: [{ bytes: Buffer.from([0x78, 0x9c, 0xff, 0xff, 0x00, 0x01]) }, "end"] }],
        ["unknown encoding", { headers: { "content-type": "text/event-stream", "content-encoding": "zstd" }, steps: [{ bytes: gz }, "end"] }],
        ["gzip then trailing garbage", { headers: { "content-type": "text/event-stream", "content-encoding": "gzip" }, steps: [{ bytes: Buffer.concat([Zlib.gzipSync(Buffer.from(sse(textReply.slice(0, 3), "\n").join(""))), Buffer.from("garbage")]) }, "end"] }]
      ]
      for (const [what, reply] of cases) {
        const server = yield* rawServer([reply])
        const outcome = yield* ask(server.url, { idleTimeoutMs: 4_000 })
        count("compression faults")
        expect({ what, completed: outcome.completed, oneLine: outcome.error !== undefined && !/\n/.test(outcome.error.message) && outcome.error.reason !== "timeout" }).toEqual({
          what,
          completed: false,
          oneLine: true
        })
      }
    }), 60_000)

  // Held: a gzip bomb of keep-alive comments (a few hundred KiB that inflate to ~1 GiB) is read
  // as it inflates, bounded, and ends at the idle limit with its one line.
  it.scopedLive("a gzip bomb of keep-alive comments ends at the idle limit, memory bounded", () =>
    Effect.gen(function*() {
      const block = Buffer.from(": keep-alive keep-alive keep-alive\n\n".repeat(30_000))
      const bomb = Zlib.gzipSync(Buffer.concat(Array.from({ length: 800 }, () => block)), { level: 9 })
      const server = yield* rawServer([{ headers: { "content-type": "text/event-stream", "content-encoding": "gzip" }, steps: [{ bytes: bomb }, "hold"] }])
      const before = process.memoryUsage().rss
      const outcome = yield* ask(server.url, { idleTimeoutMs: 4_000 })
      const grew = process.memoryUsage().rss - before
      count("bomb bytes (compressed)", bomb.length)
      expect(outcome.error?.reason).toBe("timeout")
      expect(grew).toBeLessThan(512 * 1024 * 1024)
    }), 120_000)
  // Held: the key echoed in a successful stream's error event (SSE `error`, an object with an
  // `error` field, a `thread.…` event name), at every offset around the 300-character line cut,
  // or inside malformed data torn at every offset: no 4 characters of it reach the error line.
  it.scopedLive("the key in an error event or in malformed data, at every offset around the cuts: no 4 characters of it in the line", () =>
    Effect.gen(function*() {
      const shapes: Array<[string, (message: string) => string]> = [
        ["error event", (m) => `event: error\ndata: ${JSON.stringify({ type: "error", code: "server_error", message: m })}\n\n`],
        ["data with error", (m) => `data: ${JSON.stringify({ type: "response.output_text.delta", error: { message: m } })}\n\n`],
        ["thread event", (m) => `event: thread.run.failed\ndata: ${JSON.stringify({ error: { message: m, code: "x" } })}\n\n`],
        ["error string", (m) => `data: ${JSON.stringify({ error: m })}\n\n`],
        ["response.failed", (m) => `event: response.failed\ndata: ${JSON.stringify({ type: "response.failed", response: { error: { message: m, code: "server_error" } } })}\n\n`]
      ]
      const bodies: Array<[string, string]> = []
      for (const [shape, make] of shapes) {
        for (let offset = 240; offset <= 300; offset += 2) bodies.push([`${shape} @${offset}`, make(`${"x".repeat(offset)}${KEY} trailing words`)])
      }
      const torn = `data: {"type":"response.output_text.delta","delta":"${KEY}","item_id":"m"}`
      for (let cut = 20; cut < torn.length; cut += 3) bodies.push([`malformed @${cut}`, `${torn.slice(0, cut)}\n\n`])
      for (const [what, body] of bodies) {
        const server = yield* rawServer([{ steps: [{ bytes: sse(textReply.slice(0, 5), "\n").join("") }, { bytes: body }, "end"] }])
        const outcome = yield* ask(server.url, { idleTimeoutMs: 4_000 })
        count("key echoed in errors and malformed data")
        expect({ what, completed: outcome.completed, leaked: leakedPieces(outcome.error?.message ?? "") }).toEqual({ what, completed: false, leaked: [] })
      }
    }), 120_000)

  // Found by this red team, fixed: an HTTP error body that spells the key with a JSON escape in its text (`\u0073k-…`, the
  // escape itself in the message) is refused whole ([redacted]: ModelClient.withoutEncodedKey), but
  // the same message in a successful stream's `error` event reaches the line as it is: all of the
  // key but its first letter is on the screen and in the session file.
  it.scopedLive("the key JSON-escaped in an error message: held back in a stream's error event as in an HTTP error body", () =>
    Effect.gen(function*() {
      const message = `bad key: \\u0073${KEY.slice(1)}`
      const http = yield* rawServer([{ status: 400, headers: { "content-type": "application/json" }, steps: [{ bytes: JSON.stringify({ error: { message, type: "invalid_request_error" } }) }, "end"] }])
      const refused = yield* ask(http.url)
      const streamed = yield* rawServer([{ steps: [{ bytes: `event: error\ndata: ${JSON.stringify({ type: "error", message })}\n\n` }, "end"] }])
      const failed = yield* ask(streamed.url)
      count("escaped key shapes", 2)
      expect({ http: leakedPieces(refused.error?.message ?? "missing"), stream: leakedPieces(failed.error?.message ?? "missing") }).toEqual({ http: [], stream: [] })
    }), 30_000)

  // Held: whatever an endpoint puts in an event that is not the Responses API's (a `thread.…`
  // name, unknown types, an `error` name on ordinary data) is read as any other event.
  it.scopedLive("thread.… and error names on ordinary events, unknown types with the key: the turn completes with the model's text only", () =>
    Effect.gen(function*() {
      const noise = [
        `event: thread.message.delta\ndata: ${JSON.stringify({ type: "thread.message.delta", delta: { content: [{ text: { value: KEY } }] } })}\n\n`,
        `event: error\ndata: ${JSON.stringify({ type: "response.in_progress", note: KEY })}\n\n`,
        `event: thread.run.step.created\ndata: ${JSON.stringify({ type: "x", error: "" , key: KEY })}\n\n`,
        `data: ${JSON.stringify({ type: "response.reasoning_text.delta", delta: KEY })}\n\n`
      ]
      const events = sse(textReply, "\n")
      const server = yield* rawServer([{ steps: [...[...events.slice(0, 4), ...noise, ...events.slice(4)].map((bytes) => ({ bytes })), "end"] }])
      const outcome = yield* ask(server.url)
      count("foreign events")
      expect({ completed: outcome.completed, text: outcome.text, error: outcome.error?.message }).toEqual({ completed: true, text: TEXT, error: undefined })
    }), 30_000)
})

/** Every 4-character piece of the key (past its `sk-`) that `text` holds. */
const leakedPieces = (text: string): ReadonlyArray<string> => {
  const found: Array<string> = []
  for (let i = 1; i + 4 <= KEY.length; i++) if (text.includes(KEY.slice(i, i + 4))) found.push(KEY.slice(i, i + 4))
  return found
}

describe("the reader, attacked through the built mino", () => {
  // A key no path or banner on the screen can hold pieces of (the sandbox's paths hold "e2e").
  const E2E_KEY = "sk-QwZx9PlmRt7Vb3NcYh2KjU"
  /** Every 4-character piece of the key (past its `sk-`) that `text` holds. */
  const e2ePieces = (text: string): ReadonlyArray<string> => {
    const found: Array<string> = []
    for (let i = 1; i + 4 <= E2E_KEY.length; i++) if (text.includes(E2E_KEY.slice(i, i + 4))) found.push(E2E_KEY.slice(i, i + 4))
    return found
  }
  const startMino = (box: { readonly home: string; readonly cwd: string }, url: string) =>
    Pty.spawn({ argv: [process.execPath, BIN], env: { ...environment(box, url), OPENAI_API_KEY: E2E_KEY }, cwd: box.cwd })
  /**
   * The built mino, its first turn failed by a model that streamed `delta` and then sent `error` as an
   * `error` event (its second turn is answered "Fine."), back at its prompt.
   */
  const failedTurn = (box: { readonly home: string; readonly cwd: string }, delta: string, error: Record<string, unknown>) =>
    Effect.gen(function*() {
      const events = ResponsesServer.textResponse("x").slice(0, 4)
      const server = yield* scriptedServer([
        [...events, { type: "response.output_text.delta", item_id: "msg_0001", output_index: 0, content_index: 0, delta },
          { raw: `event: error\ndata: ${JSON.stringify(error)}\n\n` }],
        ResponsesServer.textResponse("Fine.")
      ])
      const mino = yield* startMino(box, server.url)
      yield* mino.waitFor("You> ")
      yield* mino.write("first\r")
      yield* mino.waitFor("Turn failed")
      yield* mino.waitFor("You> ")
      return mino
    })

  // Found by this red team, fixed: the key across an event boundary: the first 14 characters in a text delta, the rest in
  // the `error` event that ends the stream. The delta's held-back tail is redacted by the rule for
  // cuts, but the error line shows the key's last 11 characters as they came, on the screen and in
  // the session file (the turn's reason). The promise: an endpoint that echoes the key across event
  // boundaries gets no 4 characters of it onto the screen or into the file.
  it.scopedLive("the key split between a text delta and the error event after it: no 4 characters on the screen or in the file", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const mino = yield* failedTurn(box, `echo ${E2E_KEY.slice(0, 14)}`, { type: "error", code: "server_error", message: E2E_KEY.slice(14) })
      yield* mino.write("second\r")
      yield* mino.waitFor("Fine.")
      yield* mino.waitFor("You> ")
      const screen = yield* mino.screen
      const file = fs.readFileSync(sessionFile(box), "utf8")
      yield* mino.write("\x04")
      yield* mino.exited
      count("key split across a delta and an error event")
      expect({ screen: e2ePieces(screen), file: e2ePieces(file) }).toEqual({ screen: [], file: [] })
    }), 60_000)

  // Held?: escape sequences in a stream's error message and in its deltas are shown, never obeyed.
  it.scopedLive("escape sequences in an error event and in deltas never reach the terminal raw", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const hostile = "\u001b[2J\u001b]0;owned\u0007\u009b31m\u202eevil\u001b[8mHIDDEN"
      const mino = yield* failedTurn(box, hostile, { type: "error", message: hostile })
      const raw = (yield* mino.rawOutput).toString("utf8")
      yield* mino.write("\x04")
      yield* mino.exited
      count("escape-laden stream errors")
      expect({ clear: raw.includes("\u001b[2J"), title: raw.includes("\u001b]0;owned"), c1: raw.includes("\u009b31m"), bidi: raw.includes("\u202e"), conceal: raw.includes("\u001b[8m") })
        .toEqual({ clear: false, title: false, c1: false, bidi: false, conceal: false })
    }), 60_000)

  // Deep nesting: a response.completed whose message carries a field nested 200,000 deep (JSON.parse
  // reads it; anything that walks it by recursion overflows the stack). Mino must end the turn with
  // one line or complete it, and keep running.
  it.scopedLive("a completed message carrying a value nested 200,000 deep: one line or the answer, never a crash", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const depth = 200_000
      const nested = "[".repeat(depth) + "]".repeat(depth)
      const item = `{"id":"msg_deep","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Deep.","annotations":[]}],"extra":${nested}}`
      const server = yield* scriptedServer([
        [{ raw: `event: response.output_item.done\ndata: {"type":"response.output_item.done","output_index":0,"item":${item}}\n\n` },
          { raw: `event: response.completed\ndata: {"type":"response.completed","response":{"id":"resp_deep","status":"completed","output":[${item}]}}\n\n` }],
        ResponsesServer.textResponse("Fine.")
      ])
      const mino = yield* startMino(box, server.url)
      yield* mino.waitFor("You> ")
      yield* mino.write("first\r")
      const after = yield* Effect.either(Effect.zipRight(mino.waitFor(/Turn failed|Assistant> Deep/, 30_000), mino.waitFor("You> ", 30_000)))
      const screen = yield* mino.screen
      count("deep nesting depth", depth)
      expect({ promptAgain: Either.isRight(after), stack: /\n\s+at /.test(screen) || /RangeError|Maximum call stack/.test(screen) }).toEqual({ promptAgain: true, stack: false })
      yield* mino.write("second\r")
      yield* mino.waitFor("Fine.")
      yield* mino.write("\x04")
      yield* mino.exited
    }), 90_000)
})

describe("refusals and retries, attacked", () => {
  /** A raw TCP server: each connection gets `answer(n)` (n: the requests so far) once a request's head and body arrived. */
  const tcpServer = (answer: (n: number) => string | "reset") =>
    Effect.gen(function*() {
      let requests = 0
      const { port } = yield* ResponsesServer.listening(Net.createServer((socket) => {
        socket.on("error", () => {})
        let got = ""
        socket.on("data", (chunk) => {
          got += chunk.toString("latin1")
          const head = got.indexOf("\r\n\r\n")
          const length = Number(/content-length: (\d+)/i.exec(got)?.[1] ?? "0")
          if (head === -1 || got.length < head + 4 + length) return
          got = got.slice(head + 4 + length)
          const reply = answer(requests++)
          if (reply === "reset") socket.resetAndDestroy()
          else socket.write(Buffer.from(reply, "latin1"))
        })
      }))
      return { url: `http://127.0.0.1:${port}/v1`, requests: () => requests }
    })

  const retries = (outcome: Outcome) => outcome.events.filter((event) => event._tag === "Retrying").length

  // Found by this red team, fixed: an HTTP status outside 200-599 (which a WHATWG Response cannot represent): HttpTransport.
  // toResponse throws, the SDK takes that for a failed connection, and Mino retries it twice as
  // "cannot connect", ending with `cannot connect to …: init["status"] must be in the range of 200
  // to 599, inclusive. (after 2 retries)`. docs/endpoints.md: only 429 and 5xx (and an unreachable
  // endpoint) are retried; any other status fails at once with one line naming it.
  it.scopedLive("a status fetch cannot represent (600, 999) is not retried and is named, one line", () =>
    Effect.gen(function*() {
      for (const status of [600, 999]) {
        const body = JSON.stringify({ error: { message: "weird" } })
        const server = yield* tcpServer(() => `HTTP/1.1 ${status} Weird\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`)
        const outcome = yield* ask(server.url, { maxRetries: 2, retryWaitCapMs: 10 })
        count("statuses outside fetch's range")
        expect({ status, requests: server.requests(), retried: retries(outcome), message: outcome.error?.message })
          .toEqual({ status, requests: 1, retried: 0, message: expect.stringContaining(String(status)) })
      }
    }), 30_000)

  // Found by this red team, and documented (docs/endpoints.md) rather than changed: a request whose
  // kept-alive socket fails before any answer is sent once more on a fresh socket, unannounced
  // (Node's rule for a socket the server closed while it was idle), so a server that reads a request
  // whole and then resets that socket gets it twice. Every other try is announced.
  it.scopedLive("a resetting server gets each announced try, and one unannounced resend of the try on a kept-alive socket", () =>
    Effect.gen(function*() {
      const events = sse(textReply, "\n").join("")
      const ok = `HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: ${Buffer.byteLength(events)}\r\n\r\n${events}`
      // The first request is answered (its socket kept alive), every later one is read and reset.
      const server = yield* tcpServer((n) => (n === 0 ? ok : "reset"))
      const client = yield* clientFor(server.url, { maxRetries: 2, retryWaitCapMs: 10 })
      const first = yield* Effect.either(Stream.runCollect(client.respond(request)))
      expect(Either.isRight(first)).toBe(true)
      const before = server.requests()
      const announced: Array<string> = []
      const second = yield* Effect.either(Stream.runForEach(client.respond(request), (event) => Effect.sync(() => {
        if (event._tag === "Retrying") announced.push(event.message)
      })))
      count("reset requests")
      expect({ failed: Either.isLeft(second), received: server.requests() - before, tries: 1 + announced.length })
        .toEqual({ failed: true, received: 4, tries: 3 })
    }), 30_000)

  // Held: a stream that stalls or is cut after it started is not retried: one line, nothing completed.
  it.scopedLive("a stream stalled or cut mid-way is one line and no retry", () =>
    Effect.gen(function*() {
      const events = sse(textReply.slice(0, 7), "\n").join("")
      const stalled = yield* tcpServer(() => `HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n${Buffer.byteLength(events).toString(16)}\r\n${events}\r\n`)
      const stall = yield* ask(stalled.url, { maxRetries: 2, retryWaitCapMs: 10, idleTimeoutMs: 1_000 })
      expect({ requests: stalled.requests(), retried: retries(stall), completed: stall.completed, reason: stall.error?.reason }).toEqual({ requests: 1, retried: 0, completed: false, reason: "timeout" })
      for (let cut = 1; cut < events.length; cut += 97) {
        const cutServer = yield* rawServer([{ steps: [{ bytes: events.slice(0, cut) }, "drop"] }])
        const outcome = yield* ask(cutServer.url, { maxRetries: 2, retryWaitCapMs: 10, idleTimeoutMs: 4_000 })
        count("mid-stream cuts")
        expect({ cut, served: cutServer.served(), retried: retries(outcome), completed: outcome.completed, oneLine: outcome.error !== undefined && !outcome.error.message.includes("\n") })
          .toEqual({ cut, served: 1, retried: 0, completed: false, oneLine: true })
      }
    }), 60_000)

  // Found by this red team, fixed: a 307 whose location is no URL is an answer with a status (not a failed connection),
  // yet it is retried twice as "cannot connect to the model endpoint (ERR_INVALID_URL)".
  // docs/endpoints.md: statuses other than 429 and 5xx are not retried.
  it.scopedLive("a redirect whose location is no URL is not retried as a failed connection", () =>
    Effect.gen(function*() {
      const server = yield* tcpServer(() => "HTTP/1.1 307 Temporary Redirect\r\nlocation: http://[::1\r\ncontent-length: 0\r\n\r\n")
      const outcome = yield* ask(server.url, { maxRetries: 2, retryWaitCapMs: 10 })
      count("unreadable redirects")
      expect({ requests: server.requests(), retried: retries(outcome), failed: outcome.error !== undefined }).toEqual({ requests: 1, retried: 0, failed: true })
    }), 30_000)

  // Held: a redirect to another origin is refused, once, in one line, and nothing reaches it.
  // Found by this red team (second assertion), fixed: the line names the other origin, which the URL parser lowercases:
  // an endpoint that puts the key in the host name of its redirect gets the key, lowercased, past
  // the case-sensitive redaction onto the screen (every run of lowercase letters, digits and `-`
  // in the key: here 28 of its 35 characters).
  it.scopedLive("a redirect to another origin is refused once, and the line it makes holds no piece of the key", () =>
    Effect.gen(function*() {
      const server = yield* tcpServer(() => `HTTP/1.1 307 Temporary Redirect\r\nlocation: http://${KEY}.example.invalid/v1/responses\r\ncontent-length: 0\r\n\r\n`)
      const outcome = yield* ask(server.url, { maxRetries: 2, retryWaitCapMs: 10 })
      count("cross-origin redirects")
      expect({ requests: server.requests(), retried: retries(outcome), reason: outcome.error?.reason }).toEqual({ requests: 1, retried: 0, reason: "protocol" })
      expect(leakedPieces(outcome.error?.message ?? "")).toEqual([])
    }), 30_000)
  // Held: every way a server can stop short (silent after accepting, after the status line, after
  // the headers, inside a chunk-size line, a 101, an error body that trickles, keep-alive comments
  // for ever, events for ever, an endless comment line, an event with too many lines) ends the
  // request with one line within its limits; none is retried after its stream started.
  it.scopedLive("a server that stops short anywhere: one line within the idle or request limit", () =>
    Effect.gen(function*() {
      const ok = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
      const shapes: Array<[string, () => Effect.Effect<{ readonly url: string }, never, Scope.Scope>, string]> = [
        ["silent after accept", () => tcpServer(() => ""), "timeout"],
        ["status line only", () => tcpServer(() => "HTTP/1.1 200 OK\r\n"), "timeout"],
        ["headers, no body", () => tcpServer(() => ok), "timeout"],
        ["inside a chunk-size line", () => tcpServer(() => `${ok}1`), "timeout"],
        ["101 without upgrade", () => tcpServer(() => "HTTP/1.1 101 Switching Protocols\r\nconnection: upgrade\r\nupgrade: h2c\r\n\r\n"), "any"],
        ["500, body trickles", () => tcpServer(() => "HTTP/1.1 500 Oops\r\ncontent-type: text/plain\r\ncontent-length: 100000\r\n\r\nslow"), "timeout"],
        ["keep-alive comments for ever", () => rawServer([{ steps: [...Array.from({ length: 400 }, (): Array<Raw> => [{ bytes: ": ping\n\n" }, { delay: 25 }]).flat(), "hold"] }]), "timeout"],
        ["events for ever", () => rawServer([{ steps: [...Array.from({ length: 400 }, (_, i): Array<Raw> => [{ bytes: `data: {"type":"response.in_progress","sequence_number":${i}}\n\n` }, { delay: 25 }]).flat(), "hold"] }]), "timeout"],
        ["an endless comment line", () => rawServer([{ steps: [...Array.from({ length: 60 }, (): Raw => ({ bytes: ":" + "x".repeat(1024 * 1024) })), "hold"] }]), "too_large"],
        ["an event of too many lines", () => rawServer([{ steps: [{ bytes: "data: 1\n".repeat(150_000) }, "hold"] }]), "too_large"]
      ]
      // All at once: each waits for its own limit, none for another's.
      yield* Effect.forEach(shapes, ([what, make, reason]) =>
        Effect.gen(function*() {
          const server = yield* make()
          const outcome = yield* ask(server.url, { maxRetries: 0, idleTimeoutMs: 2_000, requestTimeoutMs: 6_000 })
          count("stop-short shapes")
          expect({ what, oneLine: outcome.error !== undefined && !outcome.error.message.includes("\n"), reason: reason === "any" ? "any" : outcome.error?.reason })
            .toEqual({ what, oneLine: true, reason })
        }), { concurrency: "unbounded", discard: true })
    }), 120_000)
  // Held: the key in a compressed error body (gzip, deflate, br: the SDK reads it through Mino's
  // transport now), in a status line's reason phrase, JSON-escaped, torn, or plain text across the
  // 200-character excerpt: no 4 characters of it in the line, and a 4xx is not retried.
  it.scopedLive("the key in a compressed error body or a reason phrase: no 4 characters in the line", () =>
    Effect.gen(function*() {
      const bodies = [
        JSON.stringify({ error: { message: `invalid key ${KEY}`, type: "invalid_request_error" } }),
        JSON.stringify({ error: { message: `invalid key \\u0073${KEY.slice(1)}` } }),
        `{"detail": "${KEY}`,
        ...[180, 185, 190, 195, 199].map((at) => `${"x".repeat(at)}${KEY} (plain text, cut by Mino at 200 characters)`)
      ]
      const compress = { gzip: Zlib.gzipSync, deflate: Zlib.deflateSync, br: Zlib.brotliCompressSync } as const
      for (const body of bodies) {
        for (const encoding of ["gzip", "deflate", "br"] as const) {
          const bytes = compress[encoding](Buffer.from(body))
          const server = yield* tcpServer(() => `HTTP/1.1 401 ${KEY}\r\ncontent-type: application/json\r\ncontent-encoding: ${encoding}\r\ncontent-length: ${bytes.length}\r\n\r\n` + bytes.toString("latin1"))
          const outcome = yield* ask(server.url, { maxRetries: 2, retryWaitCapMs: 10 })
          count("compressed error bodies with the key")
          expect({ body: body.slice(0, 12), encoding, requests: server.requests(), leaked: leakedPieces(outcome.error?.message ?? "missing") })
            .toEqual({ body: body.slice(0, 12), encoding, requests: 1, leaked: [] })
        }
      }
    }), 60_000)
})
