/**
 * Retries before a stream starts: how long to wait, and the line that says so.
 * The client retries HTTP 429 and 5xx and failed connections, never a stream
 * that already started.
 */

/** `retry-after-ms`, else `retry-after` (seconds or an HTTP date), in milliseconds. */
export const retryAfterMs = (headers: Headers | undefined): number | undefined => {
  const ms = Number.parseFloat(headers?.get("retry-after-ms") ?? "")
  if (Number.isFinite(ms) && ms >= 0) return ms
  const value = headers?.get("retry-after")
  if (value === null || value === undefined) return undefined
  const seconds = Number.parseFloat(value)
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now())
}

/** A wait as a person reads it: `3 s`, `1.5 s`, `200 ms`. */
export const formatWait = (ms: number): string =>
  ms >= 1000 ? `${Number((ms / 1000).toFixed(1))} s` : `${Math.round(ms)} ms`


/**
 * The wait before retry number `attempt` (from 1): what `retry-after` asks, else
 * 1 s, then 2 s; never more than `capMs`.
 */
export const waitMs = (afterMs: number | undefined, attempt: number, capMs: number): number =>
  Math.min(capMs, afterMs ?? 1000 * attempt)

/** `HTTP 429 from the model endpoint; retrying in 3 s (1/2)` */
export const announcement = (what: string, waitMs: number, attempt: number, maxRetries: number): string =>
  `${what}; retrying in ${formatWait(waitMs)} (${attempt}/${maxRetries})`
