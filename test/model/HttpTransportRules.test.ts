/**
 * The transport's decisions as pure functions (`model/transport/HttpTransport.ts`):
 * which reply is a redirect to follow or to refuse, when a failed request goes
 * again on a fresh socket, and the headers node:http is given. The requests
 * themselves are tested against real servers in HttpTransport.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as HttpTransport from "../../src/model/transport/HttpTransport.js"

const URL_HERE = new URL("https://api.example.com/v1/responses?api-version=1")

const stale = Object.assign(new Error("socket hang up"), { code: "ECONNRESET" })

describe("HttpTransport's rules", () => {
  it("reply: a table of statuses, locations and redirect counts", () => {
    const table: ReadonlyArray<readonly [number, string | undefined, number, string]> = [
      [200, undefined, 0, "Answer"],
      [200, "/elsewhere", 0, "Answer"],
      [307, undefined, 0, "Answer"],
      [307, "/v2/responses", 0, "Follow https://api.example.com/v2/responses"],
      [308, "https://api.example.com/other", 4, "Follow https://api.example.com/other"],
      [308, "/again", 5, "Answer"],
      [301, "/moved", 0, "Answer"],
      [302, "/moved", 0, "Answer"],
      [303, "/see", 0, "Answer"],
      [307, "https://evil.example.net/steal", 0, "CrossOrigin https://evil.example.net"],
      [302, "http://api.example.com/v1/responses", 0, "CrossOrigin http://api.example.com"],
      [301, "https://api.example.com:8443/", 0, "CrossOrigin https://api.example.com:8443"],
      [308, "//evil.example.net/x", 9, "CrossOrigin https://evil.example.net"]
    ]
    const said = (status: number, location: string | undefined, redirects: number) => {
      const what = HttpTransport.reply(status, location, URL_HERE, redirects)
      if (what._tag === "Answer") return "Answer"
      return what._tag === "Follow" ? `Follow ${what.target.href}` : `CrossOrigin ${what.target.origin}`
    }
    for (const [status, location, redirects, expected] of table) {
      expect({ status, location, redirects, said: said(status, location, redirects) }).toEqual({ status, location, redirects, said: expected })
    }
    expect(() => HttpTransport.reply(307, "http://[::1", URL_HERE, 0)).toThrow(TypeError)
  })

  it("reply: whatever the status and the count, a location on another origin is never followed", () => {
    let cases = 0
    fc.assert(
      fc.property(fc.integer({ min: 100, max: 599 }), fc.webUrl(), fc.nat(10), (status, location, redirects) => {
        cases += 1
        const what = HttpTransport.reply(status, location, URL_HERE, redirects)
        if (what._tag === "Follow") expect(what.target.origin).toBe(URL_HERE.origin)
        if (status < 300 || status >= 400) expect(what._tag).toBe("Answer")
        if (status >= 300 && status < 400 && new URL(location).origin !== URL_HERE.origin) expect(what._tag).toBe("CrossOrigin")
      }),
      { numRuns: 2000 }
    )
    console.log(`reply: ${cases} generated statuses and locations`)
  })

  it("retriesOnFreshSocket: only a first try that failed on a reused socket, before an answer, unaborted, with a stale-socket error", () => {
    const base = { first: true, answered: false, reusedSocket: true, cause: stale as unknown, aborted: false }
    expect(HttpTransport.retriesOnFreshSocket(base)).toBe(true)
    expect(HttpTransport.retriesOnFreshSocket({ ...base, cause: Object.assign(new Error("pipe"), { code: "EPIPE" }) })).toBe(true)
    for (const change of [
      { first: false },
      { answered: true },
      { reusedSocket: false },
      { aborted: true },
      { cause: Object.assign(new Error("refused"), { code: "ECONNREFUSED" }) },
      { cause: "ECONNRESET" },
      { cause: undefined }
    ]) {
      expect({ change, retries: HttpTransport.retriesOnFreshSocket({ ...base, ...change }) }).toEqual({ change, retries: false })
    }
  })

  it("requestHeaders: lower-case names as fetch gives them, and the body's length in bytes", () => {
    expect(HttpTransport.requestHeaders({ Authorization: "Bearer k", "X-Two": "a" }, "é")).toEqual({
      authorization: "Bearer k",
      "x-two": "a",
      "content-length": "2"
    })
    expect(HttpTransport.requestHeaders([["Accept", "text/event-stream"]], Buffer.from("abc"))).toEqual({
      accept: "text/event-stream",
      "content-length": "3"
    })
    expect(HttpTransport.requestHeaders(undefined, undefined)).toEqual({})
  })
})
