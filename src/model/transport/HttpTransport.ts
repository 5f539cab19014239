/**
 * How Mino sends a request: over `node:http` (or `node:https`) with keep-alive
 * sockets. A request body Mino wrote (`RequestBody.Body`) is written as the
 * Buffers it is made of, with its length: the history's bytes go to the socket
 * from where they are kept, never copied.
 *
 * `send` gives the answer as it is (status, headers, the body's reads), which is
 * how the model client reads a stream; `toResponse` makes a WHATWG `Response` of
 * it, which the openai SDK is given for an answer it classifies. Why not undici
 * `fetch`: on a streamed response it costs several milliseconds of CPU more per
 * request than `node:http`, and fetch's classes alone cost a request a tenth of
 * its CPU. What this keeps of `fetch`: the body is read piece by piece, with
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

/**
 * An answer Mino takes from no endpoint: a status outside 200-599 (none that
 * answers a request), a redirect whose location is no URL, or one to another
 * origin. Not a failed connection: it is not sent again.
 */
export class UnusableAnswer extends Error {
  override readonly name: string = "UnusableAnswer"
}

/** The endpoint answered with a redirect to another origin; Mino does not follow it (the key would go there). */
export class CrossOriginRedirect extends UnusableAnswer {
  override readonly name = "CrossOriginRedirect"
  constructor(readonly from: string, readonly to: string) {
    super(`the model endpoint redirected to another origin (${to}); Mino does not follow it`)
  }
}

/** What a request is sent with: fetch's, or headers prepared once (`PreparedHeaders`). */
export type Init = Omit<RequestInit, "headers"> & {
  readonly headers?: RequestInit["headers"] | PreparedHeaders
}

/** A body's pieces as they arrive: the next one, or `undefined` at its end; a read fails as the connection does. */
export interface BodyReads {
  readonly read: () => Promise<Uint8Array | undefined>
  /** Stops reading: the socket closes. */
  readonly cancel: () => void
}

/** What the server answered, as it is: no `Response` is made of it unless one is asked for (`toResponse`). */
export interface Answer {
  readonly url: string
  readonly status: number
  readonly statusText: string
  /** The header lines as they came: names and values, alternately. */
  readonly rawHeaders: ReadonlyArray<string>
  /** The body's reads, or null for a status or method that has no body. */
  readonly body: BodyReads | null
}

export interface HttpTransport {
  /** Sends a request and gives the answer as it is. */
  readonly send: (url: string | URL, init: Init) => Promise<Answer>
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

/**
 * The response body, decoded if the server compressed it, as reads: at most
 * `HIGH_WATER_MARK` bytes wait for the reader before the socket is paused. What
 * arrived before the connection failed is read first, then the failure.
 */
const bodyReads = (response: Http.IncomingMessage, request: Http.ClientRequest, decoder: Stream.Transform | undefined): BodyReads => {
  let source: Stream.Readable = response
  if (decoder !== undefined) {
    response.on("error", (cause) => decoder.destroy(cause))
    source = response.pipe(decoder)
  }
  const pieces: Array<Uint8Array> = []
  let taken = 0
  let waiting = 0
  let ended = false
  let failure: { readonly cause: unknown } | undefined
  let wake: (() => void) | undefined
  const woken = () => {
    const resume = wake
    wake = undefined
    resume?.()
  }
  // A decoder can still emit what it holds after the reader cancelled: nothing is kept then.
  source.on("data", (chunk: Buffer) => {
    if (ended) return
    pieces.push(chunk)
    waiting += chunk.byteLength
    if (waiting >= HIGH_WATER_MARK) source.pause()
    woken()
  })
  const end = (cause?: unknown) => {
    if (ended) return
    ended = true
    if (cause !== undefined) failure = { cause }
    woken()
  }
  source.on("end", () => end())
  source.on("error", (cause) => end(cause))
  // A socket closed before the body ended is an error, never a clean end.
  response.on("close", () => {
    if (!response.complete) end(new Error("the connection closed before the response ended"))
  })
  const read = async (): Promise<Uint8Array | undefined> => {
    while (true) {
      if (taken < pieces.length) {
        const piece = pieces[taken]!
        pieces[taken++] = EMPTY
        if (taken === pieces.length) {
          pieces.length = 0
          taken = 0
        }
        waiting -= piece.byteLength
        if (waiting < HIGH_WATER_MARK && source.isPaused() && !ended) source.resume()
        return piece
      }
      if (failure !== undefined) throw failure.cause
      if (ended) return undefined
      await new Promise<void>((resolve) => (wake = resolve))
    }
  }
  return {
    read,
    cancel: () => {
      end()
      pieces.length = 0
      request.destroy()
      decoder?.destroy()
    }
  }
}

const EMPTY = new Uint8Array(0)

/** A body's reads as a stream a reader pulls. */
const readable = (body: BodyReads): ReadableStream<Uint8Array> =>
  new ReadableStream<Uint8Array>({
    async pull(controller) {
      const piece = await body.read()
      if (piece === undefined) controller.close()
      else controller.enqueue(piece)
    },
    cancel: () => body.cancel()
  }, { highWaterMark: 0 })

/** An answer as fetch gives it (for the SDK). Throws for a status fetch cannot represent (below 200 or above 599). */
export const toResponse = (answer: Answer): Response => {
  const result = new Response(answer.body === null ? null : readable(answer.body), {
    status: answer.status,
    statusText: answer.statusText,
    headers: headersOf(answer)
  })
  Object.defineProperty(result, "url", { value: answer.url })
  return result
}

/** An answer's headers as fetch keeps them. */
export const headersOf = (answer: Answer): Headers => {
  const headers = new Headers()
  const raw = answer.rawHeaders
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!)
  return headers
}

/** The value of header `name` (lower case) in an answer, its lines joined as fetch joins them; undefined when absent. */
export const header = (answer: Answer, name: string): string | undefined => {
  let value: string | undefined
  const raw = answer.rawHeaders
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() === name) value = value === undefined ? raw[i + 1]!.trim() : `${value}, ${raw[i + 1]!.trim()}`
  }
  return value
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
const sendFrom = async (agents: Agents, sending: Sending): Promise<Answer> => {
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
const attempt = (ready: Ready, first: boolean): Promise<Answer> =>
  new Promise<Answer>((resolve, reject) => {
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
const respond = async (ready: Ready, response: Http.IncomingMessage, request: Http.ClientRequest): Promise<Answer> => {
  const status = response.statusCode ?? 0
  if (status < 200 || status > 599) throw new UnusableAnswer(`the model endpoint answered with status ${status}, outside 200-599`)
  let what: Reply
  try {
    what = reply(status, response.headers.location, ready.url, ready.redirects)
  } catch {
    throw new UnusableAnswer(`the model endpoint redirected (HTTP ${status}) to a location that is no URL`)
  }
  if (what._tag === "CrossOrigin") throw new CrossOriginRedirect(ready.url.origin, what.target.origin)
  if (what._tag === "Follow") {
    response.resume()
    const { agents, init, body } = ready
    return sendFrom(agents, { url: what.target, init, body, redirects: ready.redirects + 1 })
  }
  // A redirect not followed is the answer, its body read as any other's (drained, it would never end).
  const nullBody = NULL_BODY.has(status) || ready.init.method === "HEAD"
  if (nullBody) response.resume()
  return {
    url: ready.url.href,
    status,
    statusText: response.statusMessage ?? "",
    rawHeaders: response.rawHeaders,
    body: nullBody ? null : bodyReads(response, request, await decoderFor(response))
  }
}

export const make = (): HttpTransport => {
  const agents: Agents = { http: new Http.Agent({ keepAlive: true }), https: undefined, open: 0 }

  const send = (input: string | URL, init: Init): Promise<Answer> => {
    try {
      return sendFrom(agents, { url: new URL(input), init, body: requestBody(init.body), redirects: 0 })
    } catch (cause) {
      return Promise.reject(cause)
    }
  }

  return {
    send,
    open: () => agents.open,
    close: () => {
      agents.http.destroy()
      agents.https?.destroy()
    }
  }
}
