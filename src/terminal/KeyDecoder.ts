/**
 * Bytes from a terminal in raw mode, decoded into what the person did: typed
 * text, a key, pasted text, or a stop key. Pure and linear: each chunk is
 * scanned once, runs of typed or pasted text become one input, so a paste of a
 * megabyte is a handful of inputs, not a million.
 *
 * A paste never types. Between the bracketed-paste markers (`ESC[200~` …
 * `ESC[201~`) everything is text: line breaks become `\n`, tabs stay, every
 * escape sequence and control is dropped, and an Enter is a newline, never a
 * submit. A terminal that does not filter the end marker out of pasted text
 * (tmux does not) lets a paste end early; so after a paste ends, the rest of
 * its chunk and every chunk that arrives before `QUIET_MS` of silence are
 * pasted text too. Ctrl+C and Ctrl+\ stop Mino wherever they arrive, a paste
 * included (stopping is the safe direction).
 */

export type StopKey = "interrupt" | "quit"

export type Input =
  /** Printable characters typed in a row. */
  | { readonly _tag: "Text"; readonly text: string }
  /** A key that is not text: `enter`, `backspace`, `left`, a letter with `ctrl`... */
  | { readonly _tag: "Key"; readonly name: string; readonly ctrl: boolean; readonly meta: boolean }
  /** Pasted text (a paste may arrive as several); line breaks as `\n`, no control but `\t`. */
  | { readonly _tag: "Paste"; readonly text: string }
  /** Ctrl+C (`interrupt`) or Ctrl+\ (`quit`). */
  | { readonly _tag: "Stop"; readonly key: StopKey }

/** After a paste ends, input counts as pasted until this long passes with none. */
export const QUIET_MS = 100

/** A lone ESC at the end of a chunk waits this long for the rest of its sequence. */
export const ESCAPE_WAIT_MS = 100

/** An escape sequence longer than this is garbage, not a key: it is dropped. */
const MAX_SEQUENCE = 64

export interface Decoder {
  /** The bytes of a UTF-8 character cut by the end of the last chunk. */
  readonly bytes: Uint8Array
  /** An escape sequence cut by the end of the last chunk, and when it arrived. */
  readonly held: string
  readonly heldAt: number
  /** `typed`; `paste` between the markers; `after` a paste ended, until a quiet spell. */
  readonly mode: "typed" | "paste" | "after"
  /** When the last pasted input arrived. */
  readonly pastedAt: number
}

export const initial: Decoder = { bytes: new Uint8Array(0), held: "", heldAt: 0, mode: "typed", pastedAt: 0 }

/** Whether the decoder is inside a paste or its quiet spell: what arrives now is pasted. */
export const pasting = (decoder: Decoder, now: number): boolean =>
  decoder.mode === "paste" || (decoder.mode === "after" && now - decoder.pastedAt < QUIET_MS)

/**
 * Forgets a cut sequence that began before now, so no key can be made of bytes
 * from before and after this moment. Inside a paste it is kept: a cut end
 * marker must still end the paste.
 */
export const forget = (decoder: Decoder): Decoder =>
  decoder.mode === "paste" ? decoder : { ...decoder, bytes: new Uint8Array(0), held: "" }

/** How many bytes at the end of `bytes` begin a UTF-8 character that is not complete. */
const cutCharacter = (bytes: Uint8Array): number => {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const byte = bytes[bytes.length - back] ?? 0
    if ((byte & 0xc0) === 0x80) continue // a continuation byte: look further back
    const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1
    return needed > back ? back : 0
  }
  return 0
}

const utf8 = new TextDecoder("utf-8")

type Sequence =
  | { readonly _tag: "Incomplete" }
  | { readonly _tag: "Complete"; readonly length: number; readonly input?: Input; readonly paste?: "start" | "end" }

const key = (name: string, ctrl = false, meta = false): Input => ({ _tag: "Key", name, ctrl, meta })

const TILDE: Readonly<Record<string, string>> = {
  "1": "home",
  "7": "home",
  "4": "end",
  "8": "end",
  "3": "delete",
  "2": "insert",
  "5": "pageup",
  "6": "pagedown"
}
const FINAL: Readonly<Record<string, string>> = { A: "up", B: "down", C: "right", D: "left", H: "home", F: "end" }

/** Modifiers of a CSI key (`1;5D` is Ctrl+←): the second parameter, minus one, as bits. */
const modifiers = (params: string): { ctrl: boolean; meta: boolean } => {
  const bits = Number(params.split(";")[1] ?? "1") - 1
  return { ctrl: (bits & 4) !== 0, meta: (bits & 2) !== 0 }
}

/** The escape sequence starting at `text[at]` (an ESC). */
const sequence = (text: string, at: number): Sequence => {
  const next = text[at + 1]
  if (next === undefined) return { _tag: "Incomplete" }
  if (next === "[") {
    let end = at + 2
    while (end < text.length && end - at < MAX_SEQUENCE) {
      const code = text.charCodeAt(end)
      if (code >= 0x40 && code <= 0x7e) break
      if (code < 0x20 || code > 0x3f) return { _tag: "Complete", length: end - at } // not a CSI: drop what was read
      end++
    }
    if (end - at >= MAX_SEQUENCE) return { _tag: "Complete", length: end - at }
    if (end >= text.length) return { _tag: "Incomplete" }
    const params = text.slice(at + 2, end)
    const final = text[end] ?? ""
    const length = end + 1 - at
    if (final === "~") {
      const first = params.split(";")[0] ?? ""
      if (first === "200") return { _tag: "Complete", length, paste: "start" }
      if (first === "201") return { _tag: "Complete", length, paste: "end" }
      const { ctrl, meta } = modifiers(params)
      return { _tag: "Complete", length, input: key(TILDE[first] ?? "function", ctrl, meta) }
    }
    const name = FINAL[final]
    if (name === undefined) return { _tag: "Complete", length, input: key("unknown") }
    const { ctrl, meta } = modifiers(params)
    return { _tag: "Complete", length, input: key(name, ctrl, meta) }
  }
  if (next === "O") {
    const final = text[at + 2]
    if (final === undefined) return { _tag: "Incomplete" }
    return { _tag: "Complete", length: 3, input: key(FINAL[final] ?? "function") }
  }
  if (next === "\u001b") return { _tag: "Complete", length: 1, input: key("escape") }
  // Alt+key arrives as ESC and the key.
  const ch = String.fromCodePoint(text.codePointAt(at + 1) ?? 0)
  const code = ch.codePointAt(0) ?? 0
  const name = code < 0x20 ? String.fromCharCode(code + 0x60) : ch
  return { _tag: "Complete", length: 1 + ch.length, input: key(name, code < 0x20, true) }
}

const PRINTABLE = /[^\u0000-\u001f\u007f-\u009f]+/y
// Controls inside pasted text: none is text but the tab and the newline; Ctrl+C and Ctrl+\ still stop.
const PASTE_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g

/** One typed control character. */
const control = (ch: string): Input | undefined => {
  switch (ch) {
    case "\r":
    case "\n":
      return key("enter")
    case "\t":
      return key("tab")
    case "\u007f":
    case "\b":
      return key("backspace")
    case "\u0003":
      return { _tag: "Stop", key: "interrupt" }
    case "\u001c":
      return { _tag: "Stop", key: "quit" }
  }
  const code = ch.charCodeAt(0)
  // Ctrl+A … Ctrl+Z; NUL, the other C0 controls and every C1 control are nothing.
  return code >= 1 && code <= 26 ? key(String.fromCharCode(code + 0x60), true) : undefined
}

/** Decodes one chunk read at `now` (milliseconds, any monotonic clock). */
export const decode = (
  decoder: Decoder,
  chunk: Uint8Array,
  now: number
): { readonly decoder: Decoder; readonly inputs: ReadonlyArray<Input> } => {
  const inputs: Array<Input> = []
  let pasted = ""
  // A paste that begins here is reported even when empty: a line it touched is a pasted line.
  let opened = false
  const flushPaste = () => {
    if (pasted.length > 0 || opened) inputs.push({ _tag: "Paste", text: pasted })
    pasted = ""
    opened = false
  }
  const paste = (segment: string) => {
    const text = segment.replace(/\r\n?/g, "\n")
    let from = 0
    for (const match of text.matchAll(PASTE_CONTROL)) {
      pasted += text.slice(from, match.index)
      from = match.index + 1
      const stop = match[0] === "\u0003" ? "interrupt" : match[0] === "\u001c" ? "quit" : undefined
      if (stop !== undefined) {
        flushPaste()
        inputs.push({ _tag: "Stop", key: stop })
      }
    }
    pasted += text.slice(from)
  }
  const push = (input: Input) => {
    flushPaste()
    inputs.push(input)
  }

  // Bytes to text, keeping a cut character for the next chunk.
  const bytes = decoder.bytes.length === 0 ? chunk : Buffer.concat([decoder.bytes, chunk])
  const cut = cutCharacter(bytes)
  let held = decoder.held
  // A lone ESC left waiting too long was the Escape key (inside a paste it may begin the end marker).
  if (held === "\u001b" && decoder.mode !== "paste" && now - decoder.heldAt >= ESCAPE_WAIT_MS) {
    push(key("escape"))
    held = ""
  }
  const text = held + utf8.decode(bytes.subarray(0, bytes.length - cut))
  let mode = decoder.mode === "after" && now - decoder.pastedAt >= QUIET_MS ? "typed" : decoder.mode
  let pastedAt = decoder.pastedAt
  let heldAt = decoder.heldAt
  held = ""

  let at = 0
  while (at < text.length) {
    if (mode !== "typed") {
      pastedAt = now
      const escape = text.indexOf("\u001b", at)
      paste(text.slice(at, escape === -1 ? text.length : escape))
      if (escape === -1) break
      const found = sequence(text, escape)
      if (found._tag === "Incomplete") {
        held = text.slice(escape)
        heldAt = now
        break
      }
      // Inside a paste a marker changes the mode and any other sequence is dropped, never a key.
      if (found.paste === "start") {
        mode = "paste"
        opened = true
      }
      else if (found.paste === "end") mode = "after"
      at = escape + found.length
      continue
    }
    PRINTABLE.lastIndex = at
    const run = PRINTABLE.exec(text)
    if (run !== null) {
      push({ _tag: "Text", text: run[0] })
      at += run[0].length
      continue
    }
    const ch = text[at] ?? ""
    if (ch !== "\u001b") {
      const input = control(ch)
      if (input !== undefined) push(input)
      at += 1
      continue
    }
    const found = sequence(text, at)
    if (found._tag === "Incomplete") {
      held = text.slice(at)
      heldAt = now
      break
    }
    // An end marker without its start means a paste is still arriving: what follows is pasted too.
    if (found.paste !== undefined) {
      mode = found.paste === "start" ? "paste" : "after"
      pastedAt = now
      opened = true
    } else if (found.input !== undefined) push(found.input)
    at += found.length
  }
  flushPaste()
  return { decoder: { bytes: bytes.slice(bytes.length - cut), held, heldAt, mode, pastedAt }, inputs }
}
