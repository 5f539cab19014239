/**
 * A large request body's memory is used again, but never while a socket may
 * still read it: given back by the transport only once every request made with
 * it (a redirect's too) has closed. Real HTTP servers on loopback, the real transport.
 */
import * as Crypto from "node:crypto"
import * as Http from "node:http"
import type * as Net from "node:net"
import { describe, expect, it } from "@effect/vitest"
import * as BodyBuffers from "../../src/model/request/BodyBuffers.js"
import * as HttpTransport from "../../src/model/transport/HttpTransport.js"

const MIB = 1 << 20

/** A server on loopback; `handler` answers; `bodies` holds each request body's SHA-256, in arrival order. */
const serve = async (handler: (request: Http.IncomingMessage, response: Http.ServerResponse, body: Buffer) => void) => {
  const bodies: Array<string> = []
  const server = Http.createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const body = Buffer.concat(chunks)
      bodies.push(Crypto.createHash("sha256").update(body).digest("hex"))
      handler(request, response, body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as Net.AddressInfo
  return { url: `http://127.0.0.1:${port}`, bodies, close: () => new Promise<void>((resolve) => server.close(() => resolve())) }
}

/** A body of `size` random bytes, taken from the pool, and its SHA-256. */
const body = (size: number) => {
  const bytes = BodyBuffers.take(size)
  Crypto.randomFillSync(bytes)
  return { bytes, sha: Crypto.createHash("sha256").update(bytes).digest("hex") }
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 5))

/** Until the transport has given `bytes` back: its last request closed (however long a loaded machine takes). */
const givenBack = async (bytes: Uint8Array) => {
  while (BodyBuffers.isLent(bytes)) await settle()
}

describe("request bodies' memory", () => {
  it("is used again once the request that sent it has closed, and a small body is never pooled", async () => {
    const server = await serve((_request, response) => response.end("ok"))
    const transport = HttpTransport.make()
    const first = body(2 * MIB)
    const response = await transport.fetch(`${server.url}/a`, { method: "POST", body: first.bytes })
    expect(await response.text()).toBe("ok")
    await givenBack(first.bytes)
    const second = BodyBuffers.take(2 * MIB)
    expect(second.buffer).toBe(first.bytes.buffer)
    BodyBuffers.give(second)
    const small = BodyBuffers.take(MIB - 1)
    expect(small.buffer).not.toBe(first.bytes.buffer)
    expect(server.bodies).toEqual([first.sha])
    await server.close()
  })

  it("is never lent again while its request is open: 20 rounds of a held request beside new bodies, every body arrives whole", async () => {
    const rounds = 20
    const held: Array<() => void> = []
    const server = await serve((request, response) => {
      if (request.url === "/hold") held.push(() => response.end("late"))
      else response.end("ok")
    })
    const transport = HttpTransport.make()
    const expected: Array<string> = []
    for (let round = 0; round < rounds; round++) {
      const slow = body(3 * MIB)
      expected.push(slow.sha)
      const answered = transport.fetch(`${server.url}/hold`, { method: "POST", body: slow.bytes })
      while (held.length === 0) await settle()
      // The held request is open: its memory is not lent, so these bodies are other memory.
      for (let i = 0; i < 3; i++) {
        const other = body(2 * MIB)
        expect(other.bytes.buffer).not.toBe(slow.bytes.buffer)
        expected.push(other.sha)
        expect(await (await transport.fetch(`${server.url}/now`, { method: "POST", body: other.bytes })).text()).toBe("ok")
      }
      held.shift()!()
      expect(await (await answered).text()).toBe("late")
      await givenBack(slow.bytes)
    }
    console.log(`held requests beside new bodies: ${rounds} rounds, ${expected.length} bodies, each compared by SHA-256`)
    expect([...server.bodies].sort()).toEqual([...expected].sort())
    await server.close()
  })

  it("is kept through a same-origin redirect until the redirected request has closed", async () => {
    let redirected: (() => void) | undefined
    const server = await serve((request, response) => {
      if (request.url === "/from") {
        response.writeHead(307, { location: "/to" })
        response.end()
      } else redirected = () => response.end("moved")
    })
    const transport = HttpTransport.make()
    const sent = body(2 * MIB)
    const answered = transport.fetch(`${server.url}/from`, { method: "POST", body: sent.bytes })
    while (redirected === undefined) await settle()
    // The redirected request is open: the memory is still lent, not lent again.
    expect(BodyBuffers.isLent(sent.bytes)).toBe(true)
    const meanwhile = BodyBuffers.take(2 * MIB)
    expect(meanwhile.buffer).not.toBe(sent.bytes.buffer)
    redirected()
    expect(await (await answered).text()).toBe("moved")
    await givenBack(sent.bytes)
    expect(BodyBuffers.take(2 * MIB).buffer).toBe(sent.bytes.buffer)
    expect(server.bodies).toEqual([sent.sha, sent.sha])
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
      // Answered at once, the body unread; the connection is reset once the client has the answer
      // (a case a red-team session found).
      response.writeHead(200, { "content-length": "2" })
      response.end("ok")
      reset = () => request.socket.resetAndDestroy()
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const { port } = server.address() as Net.AddressInfo
    const transport = HttpTransport.make()
    expect(await (await transport.fetch(`http://127.0.0.1:${port}/warm`, { method: "POST", body: "x" })).text()).toBe("warm")
    // Larger than the sockets' buffers: the body is still being written when the connection is reset.
    const sent = body(48 * MIB)
    expect(await (await transport.fetch(`http://127.0.0.1:${port}/big`, { method: "POST", body: sent.bytes })).text()).toBe("ok")
    reset()
    // Given back: every request made with it has closed, so a retry would already have arrived.
    await givenBack(sent.bytes)
    expect(arrivals).toBe(2)
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
})
