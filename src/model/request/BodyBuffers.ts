/**
 * The memory of large request bodies, used again. A long conversation's request
 * is tens of megabytes, and memory the process has not touched costs a page
 * fault per page when first written: measured here, 110 ms for a 37 MB body,
 * more than sending it. A body is taken by the request writer and given back by
 * the transport once no request of it is open any more (every request that sent
 * it has closed, a redirect's and a retry's too), so no body is ever written while
 * a socket may still read it; one spare is kept, the largest given back.
 */
import { constants } from "node:buffer"

/** Bodies smaller than this come from Node's own pool, as any small Buffer. */
const REUSED = 1 << 20

const lent = new WeakSet<ArrayBufferLike>()
let spare: Buffer | undefined

/** A buffer of `size` bytes for a request body, its contents undefined. */
export const take = (size: number): Buffer => {
  if (size < REUSED) return Buffer.allocUnsafe(size)
  const reused = spare !== undefined && spare.length >= size ? spare : undefined
  if (reused !== undefined) spare = undefined
  // A quarter more than asked: the next body of a growing conversation fits (memory not written costs nothing).
  const whole = reused ?? Buffer.allocUnsafeSlow(Math.max(size, Math.min(size + (size >> 2), constants.MAX_LENGTH)))
  lent.add(whole.buffer)
  return whole.subarray(0, size)
}

/** Gives back a body `take` lent, once nothing reads it any more (anything else is ignored). */
export const give = (body: Uint8Array): void => {
  const memory = body.buffer
  if (!lent.delete(memory)) return
  if (spare === undefined || spare.length < memory.byteLength) spare = Buffer.from(memory, 0, memory.byteLength)
}

/** Whether `body`'s memory is lent out: taken and not yet given back. */
export const isLent = (body: Uint8Array): boolean => lent.has(body.buffer)
