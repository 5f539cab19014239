/**
 * The one thing the openai SDK prints whatever its `logLevel`: an SSE event named
 * `thread.…` whose data is not JSON goes to `console.error` with its raw text
 * (`Could not parse message into JSON: …`), straight onto the terminal, past
 * Mino's escaping and redaction. An endpoint that sent `event: thread.x` and
 * `data: {sk-… ESC[2J` would have put the key and a clear-screen on the screen.
 *
 * Mino needs no event names (each event's data carries its `type`), so an
 * `event:` line whose value begins `thread.` is renamed, byte for byte, to a
 * field the SSE parser ignores (`_vent:`); its data then takes the SDK's quiet
 * path, and a malformed one ends the stream as malformed data, said by Mino.
 *
 * A line is matched as the SDK reads it: after `\n`, `\r` or the stream's start,
 * with an optional byte order mark (the SDK decodes each line on its own, which
 * drops one), `event:`, an optional space, then `thread.`. A line split across
 * reads is held back until it can be told apart.
 */

const ascii = (text: string): ReadonlyArray<number> => Array.from(text, (char) => char.charCodeAt(0))
const BOM: ReadonlyArray<number> = [0xef, 0xbb, 0xbf]

/** Every spelling of a renamed line's start, and where in it the `e` of `event` is. */
const PATTERNS: ReadonlyArray<{ readonly bytes: ReadonlyArray<number>; readonly event: number }> = [
  { bytes: ascii("event:thread."), event: 0 },
  { bytes: ascii("event: thread."), event: 0 },
  { bytes: [...BOM, ...ascii("event:thread.")], event: BOM.length },
  { bytes: [...BOM, ...ascii("event: thread.")], event: BOM.length }
]
const RENAMED = "_".charCodeAt(0)
const LF = 0x0a
const CR = 0x0d

/** Whether `bytes` holds the first `length` bytes of `pattern` at `at`. */
const matches = (bytes: Uint8Array, at: number, pattern: ReadonlyArray<number>, length: number): boolean => {
  if (at + length > bytes.length) return false
  for (let i = 0; i < length; i++) if (bytes[at + i] !== pattern[i]) return false
  return true
}

/** The index of the `e` to rename when a line to rename starts at `at`, else -1. */
const eventAt = (bytes: Uint8Array, at: number): number => {
  const found = PATTERNS.find((pattern) => matches(bytes, at, pattern.bytes, pattern.bytes.length))
  return found === undefined ? -1 : at + found.event
}

/** Whether the bytes from `at` to the end could still become the start of a line to rename. */
const couldBecome = (bytes: Uint8Array, at: number): boolean => {
  const rest = bytes.length - at
  return rest > 0 && PATTERNS.some((pattern) => rest < pattern.bytes.length && matches(bytes, at, pattern.bytes, rest))
}

/**
 * For one read, left to right: the start of the line after the one at `at` (-1:
 * none begins in `bytes`). Each `\n` and `\r` is looked for once, not once per
 * line (a read of 64 KiB of `\n` with no `\r` would otherwise be scanned 65,536 times).
 */
const lineStarts = (bytes: Uint8Array) => {
  let lf = bytes.indexOf(LF)
  let cr = bytes.indexOf(CR)
  return (at: number): number => {
    if (lf !== -1 && lf < at) lf = bytes.indexOf(LF, at)
    if (cr !== -1 && cr < at) cr = bytes.indexOf(CR, at)
    const end = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr)
    return end === -1 ? -1 : end + 1
  }
}

/** A renamer for one stream: `push` each chunk as it is read, then `end` once; together they give the stream renamed. */
export const renamer = () => {
  // The start of a line that may yet be one to rename, held until the next chunk tells.
  let held = new Uint8Array(0)
  // Whether the next byte begins a line.
  let lineStart = true
  return {
    push: (chunk: Uint8Array): Uint8Array => {
      let bytes = chunk
      let copied = false
      if (held.length > 0) {
        bytes = new Uint8Array(held.length + chunk.length)
        bytes.set(held)
        bytes.set(chunk, held.length)
        copied = true
      }
      let last = -1
      // Renaming changes no line end: the starts found in `bytes` hold for its copy.
      const nextLine = lineStarts(bytes)
      for (let at = lineStart ? 0 : nextLine(0); at !== -1; at = at < bytes.length ? nextLine(at) : -1) {
        last = at
        const event = eventAt(bytes, at)
        if (event === -1) continue
        if (!copied) {
          bytes = Uint8Array.from(bytes)
          copied = true
        }
        bytes[event] = RENAMED
      }
      if (last !== -1 && couldBecome(bytes, last)) {
        held = bytes.slice(last)
        lineStart = true
        return bytes.subarray(0, last)
      }
      held = new Uint8Array(0)
      if (bytes.length > 0) lineStart = bytes[bytes.length - 1] === LF || bytes[bytes.length - 1] === CR
      return bytes
    },
    end: (): Uint8Array => held
  }
}

/** `body` with every `thread.` event renamed; reading and cancelling pass through. */
export const unnamed = (body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> => {
  const reader = body.getReader()
  const rename = renamer()
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      while (true) {
        const { done, value } = await reader.read()
        if (done) {
          const rest = rename.end()
          if (rest.length > 0) controller.enqueue(rest)
          return controller.close()
        }
        const out = rename.push(value)
        if (out.length > 0) return controller.enqueue(out)
      }
    },
    cancel: (reason) => reader.cancel(reason)
  }, { highWaterMark: 0 })
}
