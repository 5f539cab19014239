/**
 * The `fetch` Mino gives the openai SDK: one request over `node:http` (or
 * `node:https`) with keep-alive sockets. A request body Mino wrote
 * (`RequestBody.Body`) is written as the Buffers it is made of, with its length:
 * the history's bytes go to the socket from where they are kept, never copied.
 *
 * Why not the SDK's default (undici `fetch`): on a streamed response it costs
 * several milliseconds of CPU more per request than `node:http`. What this keeps
 * of `fetch`: a WHATWG `Response` whose body is read chunk by chunk, with
 * back-pressure (the socket is paused while the reader is behind); an abort
 * destroys the socket at once, before or after the headers. What it changes on
 * purpose: only a same-origin 307/308 redirect is followed (the request is
 * replayed as is); a redirect to another origin fails, so the key in the
 * Authorization header never leaves the configured endpoint.
 */
import * as Http from "node:http"
import type * as Https from "node:https"
import type * as Stream from "node:stream"
import type * as Zlib from "node:zlib"
import { Body } from "../request/RequestBody.js"

/** The endpoint answered with a redirect to another origin; Mino does not follow it. */
export class CrossOriginRedirect extends Error {
  override readonly name = "CrossOriginRedirect"
  constructor(readonly from: string, readonly to: string) {
    super(`the model endpoint redirected to another origin (${to}); Mino does not follow it`)
  }
}

/** What a request is sent with: fetch's, or headers prepared once (`PreparedHeaders`). */
export type Init = Omit<RequestInit, "headers"> & {
  readonly headers?: RequestInit["headers"] | PreparedHeaders
  /** What a successful (2xx) reply's body is read through (the model stream's framing): the Response is made once, with it. */
  readonly reshape?: (body: ReadableStream<Uint8Array>) => ReadableStream<Uint8Array>
}

export type Fetch = (input: string | URL | Request, init?: Init) => Promise<Response>

export interface HttpTransport {
  readonly fetch: Fetch
  /** How many of its requests are open (sent, or being sent, and not closed): a redirect's and a retry's count too. */
  readonly open: () => number
  /** Closes the idle keep-alive sockets. */
  readonly close: () => void
}

const MAX_REDIRECTS = 5
/** How much of a response body may wait for the reader before the socket is paused. */
const HIGH_WATER_MARK = 64 * 1024
/** Statuses whose Response must have no body. */
const NULL_BODY = new Set([101, 204, 205, 304])

let httpsModule: Promise<typeof Https> | undefined
// Loaded on the first https request: TLS is not needed to start, nor for loopback.
const loadHttps = (): Promise<typeof Https> => (httpsModule ??= import("node:https"))

const abortReason = (signal: AbortSignal): Error =>
  signal.reason instanceof Error ? signal.reason : new DOMException("This operation was aborted", "AbortError")

/** A request body as the transport writes it: a string, bytes, or a body Mino wrote (its Buffers, in order). */
type Payload = string | Buffer | Body

/**
 * The body as node:http takes it. A string stays a string: node:http then sends
 * headers and body in one write (a Buffer would go as a second segment).
 */
const requestBody = (body: RequestInit["body"]): Payload | undefined => {
  if (body === undefined || body === null) return undefined
  if (body instanceof Body) return body
  if (typeof body === "string") return body
  if (body instanceof ArrayBuffer) return Buffer.from(body)
  if (ArrayBuffer.isView(body)) return Buffer.from(body.buffer, body.byteOffset, body.byteLength)
  // Mino's requests are its own bodies; uploads and other streams are not Mino's.
  throw new TypeError("the model transport sends only Mino's request bodies, strings or bytes")
}

/** Writes `body` and ends the request: a body of Buffers in one go (corked: one write of them all, as far as the socket takes it). */
const endWith = (request: Http.ClientRequest, body: Payload | undefined): void => {
  if (!(body instanceof Body)) {
    request.end(body)
    return
  }
  request.cork()
  for (const chunk of body.chunks) request.write(chunk)
  request.end()
  request.uncork()
}

let zlibModule: Promise<typeof Zlib> | undefined
// Loaded only for a compressed reply (Mino asks for none): start-up does not pay for it.
const loadZlib = (): Promise<typeof Zlib> => (zlibModule ??= import("node:zlib"))

/** A decoder for the reply's content-encoding, if it has one Mino can decode. */
const decoderFor = async (response: Http.IncomingMessage): Promise<Stream.Transform | undefined> => {
  const encoding = (response.headers["content-encoding"] ?? "").trim().toLowerCase()
  if (encoding === "gzip" || encoding === "x-gzip") return (await loadZlib()).createGunzip()
  if (encoding === "deflate") return (await loadZlib()).createInflate()
  if (encoding === "br") return (await loadZlib()).createBrotliDecompress()
  return undefined
}

/** The response body, decoded if the server compressed it, as a stream a reader pulls. */
const responseBody = (
  response: Http.IncomingMessage,
  request: Http.ClientRequest,
  decoder: Stream.Transform | undefined
): ReadableStream<Uint8Array> => {
  let source: Stream.Readable = response
  if (decoder !== undefined) {
    response.on("error", (cause) => decoder.destroy(cause))
    source = response.pipe(decoder)
  }
  let ended = false
  return new ReadableStream<Uint8Array>({
    start(controller) {
      // A decoder can still emit what it holds after the reader cancelled: the stream is closed then.
      source.on("data", (chunk: Buffer) => {
        if (ended) return
        controller.enqueue(chunk)
        if ((controller.desiredSize ?? 0) <= 0) source.pause()
      })
      source.on("end", () => {
        if (ended) return
        ended = true
        controller.close()
      })
      source.on("error", (cause) => {
        if (ended) return
        ended = true
        controller.error(cause)
      })
      // A socket closed before the body ended is an error, never a clean end.
      response.on("close", () => {
        if (ended || response.complete) return
        ended = true
        controller.error(new Error("the connection closed before the response ended"))
      })
    },
    pull() {
      source.resume()
    },
    cancel() {
      ended = true
      request.destroy()
      decoder?.destroy()
    }
  }, { highWaterMark: HIGH_WATER_MARK, size: (chunk) => chunk.byteLength })
}

const isStaleSocketError = (cause: unknown): boolean =>
  cause instanceof Error && "code" in cause && (cause.code === "ECONNRESET" || cause.code === "EPIPE")

/** What a reply means for the request that got it: a redirect to follow, one to refuse, or the answer. */
export type Reply =
  | { readonly _tag: "Follow"; readonly target: URL }
  | { readonly _tag: "CrossOrigin"; readonly target: URL }
  | { readonly _tag: "Answer" }

/**
 * The redirect rule, pure: a 3xx with a location to another origin is refused
 * (the key must not leave the endpoint); a same-origin 307/308 is followed, at
 * most `MAX_REDIRECTS` times; anything else is the answer (a 301/302/303 too:
 * replaying its request as is would not be what the server asked). A location
 * that is no URL throws, as `new URL` does.
 */
export const reply = (status: number, location: string | undefined, url: URL, redirects: number): Reply => {
  if (status < 300 || status >= 400 || location === undefined) return { _tag: "Answer" }
  const target = new URL(location, url)
  if (target.origin !== url.origin) return { _tag: "CrossOrigin", target }
  if ((status === 307 || status === 308) && redirects < MAX_REDIRECTS) return { _tag: "Follow", target }
  return { _tag: "Answer" }
}

/** What is known when a request fails, to decide whether it goes again. */
export interface Failure {
  /** Whether this is the request's first try (it goes again at most once). */
  readonly first: boolean
  /** Whether the server had answered (then it took the request: sending it again would ask twice). */
  readonly answered: boolean
  readonly reusedSocket: boolean
  readonly cause: unknown
  readonly aborted: boolean
}

/** A kept-alive socket the server closed meanwhile: sent again, once, on a fresh one (Node's advice). */
export const retriesOnFreshSocket = (failure: Failure): boolean =>
  failure.first && !failure.answered && failure.reusedSocket && isStaleSocketError(failure.cause) && !failure.aborted

/**
 * Headers checked and named as fetch names them (lower case), once: a client whose headers
 * do not change from request to request passes these, and no request builds a `Headers` again.
 */
export class PreparedHeaders {
  readonly record: Readonly<Record<string, string>>
  constructor(given: RequestInit["headers"]) {
    const record: Record<string, string> = {}
    // Checked as fetch checks them (a name or value it refuses throws here, not at a request).
    new Headers(given).forEach((value, name) => {
      record[name] = value
    })
    this.record = Object.freeze(record)
  }
}

/** The request's headers as node:http takes them, with the body's length. */
export const requestHeaders = (given: RequestInit["headers"] | PreparedHeaders, body: Payload | undefined): Record<string, string> => {
  let headers: Record<string, string> = {}
  if (given instanceof PreparedHeaders) {
    headers = { ...given.record }
  } else {
    new Headers(given).forEach((value, name) => {
      headers[name] = value
    })
  }
  if (body !== undefined) {
    headers["content-length"] = String(typeof body === "string" ? Buffer.byteLength(body) : body instanceof Body ? body.bytes : body.byteLength)
  }
  return headers
}

/** The keep-alive sockets of one transport; the https agent is made with the first https request; its requests open. */
interface Agents {
  readonly http: Http.Agent
  https: Https.Agent | undefined
  open: number
}

/** One request being sent: where, what, and how many redirects led here. */
interface Sending {
  readonly url: URL
  readonly init: Init
  readonly body: Payload | undefined
  readonly redirects: number
}

/** A request ready to go out: the module and agent that carry it, and its headers. */
interface Ready extends Sending {
  readonly agents: Agents
  readonly https: typeof Https | undefined
  readonly agent: Http.Agent
  readonly headers: Record<string, string>
}

/** Sends a request, following a same-origin redirect (its body, never changed, is written again). */
const send = async (agents: Agents, sending: Sending): Promise<Response> => {
  const { url, init } = sending
  if (init.signal?.aborted === true) throw abortReason(init.signal)
  const https = url.protocol === "https:" ? await loadHttps() : undefined
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new TypeError(`the model endpoint must be http or https, not ${url.protocol}`)
  }
  const agent = https === undefined ? agents.http : (agents.https ??= new https.Agent({ keepAlive: true }))
  return attempt({ ...sending, agents, https, agent, headers: requestHeaders(init.headers, sending.body) }, true)
}

/** One try of a ready request; a stale kept-alive socket's failure tries once more on a fresh one. */
const attempt = (ready: Ready, first: boolean): Promise<Response> =>
  new Promise<Response>((resolve, reject) => {
    const { url, init, https } = ready
    const signal = init.signal ?? undefined
    const options = { method: init.method ?? "GET", headers: ready.headers, agent: ready.agent }
    const request = https === undefined ? Http.request(url, options) : https.request(url, options)
    ready.agents.open += 1
    const onAbort = () => request.destroy(abortReason(signal!))
    signal?.addEventListener("abort", onAbort, { once: true })
    request.on("close", () => {
      ready.agents.open -= 1
      signal?.removeEventListener("abort", onAbort)
    })
    let answered = false
    request.on("error", (cause) => {
      const failure = { first, answered, reusedSocket: request.reusedSocket, cause, aborted: signal?.aborted === true }
      if (retriesOnFreshSocket(failure)) return resolve(attempt(ready, false))
      reject(cause)
    })
    request.on("response", (response) => {
      answered = true
      respond(ready, response, request).then(resolve, (cause: unknown) => {
        request.destroy()
        reject(cause)
      })
    })
    endWith(request, ready.body)
  })

/** The Response for what the server answered: a redirect followed, or refused, or the reply itself. */
const respond = async (ready: Ready, response: Http.IncomingMessage, request: Http.ClientRequest): Promise<Response> => {
  const status = response.statusCode ?? 0
  const what = reply(status, response.headers.location, ready.url, ready.redirects)
  if (what._tag === "CrossOrigin") throw new CrossOriginRedirect(ready.url.origin, what.target.origin)
  if (what._tag === "Follow") {
    response.resume()
    const { agents, init, body } = ready
    return send(agents, { url: what.target, init, body, redirects: ready.redirects + 1 })
  }
  // A redirect not followed is the answer, its body read as any other's (drained, it would never end).
  const headers = new Headers()
  const raw = response.rawHeaders
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!)
  const nullBody = NULL_BODY.has(status) || ready.init.method === "HEAD"
  if (nullBody) response.resume()
  const body = nullBody ? null : responseBody(response, request, await decoderFor(response))
  const reshape = status >= 200 && status < 300 ? ready.init.reshape : undefined
  // Throws for a status fetch cannot represent (below 200 or above 599).
  const result = new Response(body === null || reshape === undefined ? body : reshape(body), {
    status,
    statusText: response.statusMessage ?? "",
    headers
  })
  Object.defineProperty(result, "url", { value: ready.url.href })
  return result
}

export const make = (): HttpTransport => {
  const agents: Agents = { http: new Http.Agent({ keepAlive: true }), https: undefined, open: 0 }

  const fetch: Fetch = (input, init = {}) => {
    if (typeof input !== "string" && !(input instanceof URL)) {
      return Promise.reject(new TypeError("the model transport takes a URL, not a Request"))
    }
    try {
      return send(agents, { url: new URL(input), init, body: requestBody(init.body), redirects: 0 })
    } catch (cause) {
      return Promise.reject(cause)
    }
  }

  return {
    fetch,
    open: () => agents.open,
    close: () => {
      agents.http.destroy()
      agents.https?.destroy()
    }
  }
}
