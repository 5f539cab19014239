/**
 * A request's body is written from the history's kept bytes (no copy of the
 * history per request, none kept beside it): the body is a list of Buffers, the
 * history's part views of the memory that keeps its texts, and the transport
 * writes them in order with the body's length, again for a redirect. Generated
 * histories against their JSON; real HTTP servers on loopback, the real transport.
 */
import * as Crypto from "node:crypto"
import * as Http from "node:http"
import type * as Net from "node:net"
import { describe, expect, it } from "@effect/vitest"
import * as fc from "effect/FastCheck"
import type { ResponseItem } from "../../src/protocol/ResponseItem.js"
import * as History from "../../src/model/request/History.js"
import * as RequestBody from "../../src/model/request/RequestBody.js"
import * as HttpTransport from "../../src/model/transport/HttpTransport.js"

const MIB = 1 << 20

const sha = (bytes: Uint8Array): string => Crypto.createHash("sha256").update(bytes).digest("hex")

/** A server on loopback; `handler` answers; `bodies` holds each request body's SHA-256 and declared length, in arrival order. */
const serve = async (handler: (request: Http.IncomingMessage, response: Http.ServerResponse) => void) => {
  const bodies: Array<{ readonly sha: string; readonly length: string | undefined; readonly bytes: number }> = []
  const server = Http.createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const body = Buffer.concat(chunks)
      bodies.push({ sha: sha(body), length: request.headers["content-length"], bytes: body.length })
      handler(request, response)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as Net.AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    bodies,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/** A body of `size` random bytes cut into `cuts` Buffers of random sizes (views of one memory, as the history's are). */
const randomBody = (size: number, cuts: number) => {
  const bytes = Crypto.randomBytes(size)
  const at = [0, ...Array.from({ length: cuts }, () => Crypto.randomInt(0, size + 1)).sort((a, b) => a - b), size]
  const chunks = at.slice(1).map((end, i) => bytes.subarray(at[i], end))
  return { body: new RequestBody.Body(chunks, size), sha: sha(bytes) }
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 5))

/** Until every request of `transport` has closed (however long a loaded machine takes). */
const allClosed = async (transport: HttpTransport.HttpTransport) => {
  while (transport.open() > 0) await settle()
}

// Generated turns: questions (any text, astral characters and lone surrogates too), outputs with
// and without reasoning (some empty), results of any size up to past a slab's share (256 KiB).
const text = fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: "grapheme", maxLength: 20 }), fc.string({ unit: "binary", maxLength: 20 }))
const output = fc.oneof(
  fc.constant<ReadonlyArray<ResponseItem>>([]),
  text.map((t): ReadonlyArray<ResponseItem> => [{ id: "m", type: "message", role: "assistant", content: [{ type: "output_text", text: t, annotations: [] }] }]),
  fc.constant<ReadonlyArray<ResponseItem>>([
    { id: "rs", type: "reasoning", encrypted_content: "gAAAA-x", summary: [] },
    { id: "fc", type: "function_call", call_id: "c", name: "bash", arguments: "{}" }
  ]),
  // Reasoning an endpoint takes in its own form (reshaped once, then kept).
  fc.constant<ReadonlyArray<ResponseItem>>([{ id: "rs_s", type: "reasoning", summary: [{ type: "summary_text", text: "s" }] }])
)
const result = fc.oneof(
  { arbitrary: text, weight: 9 },
  { arbitrary: fc.integer({ min: 0, max: 300 * 1024 }).map((n) => "x\n".repeat(n >> 1)), weight: 1 }
)
const turn = fc.tuple(text, fc.array(fc.tuple(output, fc.array(result, { maxLength: 3 })), { maxLength: 3 }))

const pieces = ([question, steps]: [string, ReadonlyArray<[ReadonlyArray<ResponseItem>, ReadonlyArray<string>]>]) => [
  History.question(question),
  ...steps.flatMap(([items, results]) => [History.items(items), ...results.map((output, i) => History.result(`call_${i}`, { status: "completed", output }))])
]

describe("a request written from the history's kept bytes", () => {
  it.prop("its views are the history's request text, for every shape, as turns are added (100 generated histories)", [fc.array(turn, { minLength: 1, maxLength: 6 })], ([turns]) => {
    const history = new History.History()
    for (const each of turns) {
      history.add(pieces(each))
      // Asked after each turn, as a chat asks: the views of the shape sent last are extended, not made again.
      for (const [family, before] of [["openai", 0], ["compatible", 0], ["openai", Infinity], ["compatible", 1]] as const) {
        const sent = history.request(family, before)
        const joined = Buffer.concat(sent.chunks)
        expect(joined.length).toBe(sent.bytes)
        expect(joined.toString("utf8")).toBe(history.json(family, Number.isFinite(before) ? before : history.turns))
        JSON.parse(`[${joined.toString("utf8")}]`)
      }
    }
  }, { fastCheck: { numRuns: 100 } })

  it("a long history is a view per slab of kept bytes, not one per item, and the same memory from request to request", () => {
    const history = new History.History()
    const turns = 5000
    for (let i = 0; i < turns; i++) {
      history.add([History.question(`question ${i}`), History.items([]), History.result("c", { output: "y".repeat(i % 1000) })])
    }
    const first = history.request("openai")
    const items = history.items().length
    console.log(`a history of ${turns} turns, ${items} items, ${(first.bytes / MIB).toFixed(2)} MiB: ${first.chunks.length} views`)
    expect(first.chunks.length).toBeLessThanOrEqual(Math.ceil(first.bytes / (MIB - 256 * 1024)) + 1)
    history.add([History.question("one more")])
    const second = history.request("openai")
    // No copy: the earlier views are of the same memory, and only the last one grew.
    expect(second.chunks.slice(0, -1).every((chunk, i) => chunk.buffer === first.chunks[i]!.buffer && chunk.byteOffset === first.chunks[i]!.byteOffset)).toBe(true)
    expect(Buffer.concat(second.chunks).toString("utf8")).toBe(history.json("openai"))
  })

  it("a body's Buffers arrive whole, with their length, however they are cut (40 generated bodies up to 3 MiB)", async () => {
    const server = await serve((_request, response) => response.end("ok"))
    const transport = HttpTransport.make()
    const expected: Array<string> = []
    for (let i = 0; i < 40; i++) {
      const { body, sha: digest } = randomBody(Crypto.randomInt(0, 3 * MIB), Crypto.randomInt(0, 200))
      expected.push(digest)
      expect(await (await transport.send(`${server.url}/a`, { method: "POST", body }).then(HttpTransport.toResponse)).text()).toBe("ok")
    }
    expect(server.bodies.map((b) => b.sha)).toEqual(expected)
    expect(server.bodies.every((b) => b.length === String(b.bytes))).toBe(true)
    transport.close()
    await server.close()
  })

  it("a same-origin redirect sends the same body again, whole", async () => {
    const server = await serve((request, response) => {
      if (request.url === "/from") {
        response.writeHead(307, { location: "/to" })
        response.end()
      } else response.end("moved")
    })
    const transport = HttpTransport.make()
    const { body, sha: digest } = randomBody(2 * MIB, 50)
    expect(await (await transport.send(`${server.url}/from`, { method: "POST", body }).then(HttpTransport.toResponse)).text()).toBe("moved")
    expect(server.bodies.map((b) => b.sha)).toEqual([digest, digest])
    transport.close()
    await server.close()
  })

  it("a reused socket reset after the server answered is not sent again: the request is asked once", async () => {
    let arrivals = 0
    let reset = () => {}
    const server = Http.createServer((request, response) => {
      arrivals += 1
      if (request.url === "/warm") {
        request.resume()
        response.end("warm")
        return
      }
      // Answered at once, the body unread; the connection is reset once the client has the answer.
      response.writeHead(200, { "content-length": "2" })
      response.end("ok")
      reset = () => request.socket.resetAndDestroy()
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const { port } = server.address() as Net.AddressInfo
    const transport = HttpTransport.make()
    expect(await (await transport.send(`http://127.0.0.1:${port}/warm`, { method: "POST", body: "x" }).then(HttpTransport.toResponse)).text()).toBe("warm")
    // Larger than the sockets' buffers: the body is still being written when the connection is reset.
    const { body } = randomBody(48 * MIB, 100)
    expect(await (await transport.send(`http://127.0.0.1:${port}/big`, { method: "POST", body }).then(HttpTransport.toResponse)).text()).toBe("ok")
    reset()
    // Every request made with it has closed, so a retry would already have arrived.
    await allClosed(transport)
    expect(arrivals).toBe(2)
    transport.close()
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })

  it("a stream that is not a body Mino wrote is refused with one clear error, before anything is sent", async () => {
    const server = await serve((_request, response) => response.end("ok"))
    const transport = HttpTransport.make()
    const other = new ReadableStream<Uint8Array>({ pull: (controller) => controller.close() })
    await expect(transport.send(`${server.url}/a`, { method: "POST", body: other })).rejects.toThrow(
      "the model transport sends only Mino's request bodies, strings or bytes"
    )
    expect(server.bodies).toEqual([])
    transport.close()
    await server.close()
  })

  it("read as a stream, a body gives its bytes in order, once", async () => {
    const { body, sha: digest } = randomBody(MIB, 30)
    const read = Buffer.from(await new Response(body).arrayBuffer())
    expect(sha(read)).toBe(digest)
    expect(body.toString()).toBe(read.toString("utf8"))
  })
})
