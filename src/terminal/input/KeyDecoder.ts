/**
 * Bytes from a terminal in raw mode, decoded into what the person did: typed
 * text, a key, pasted text, or a stop key. Pure and linear: each chunk is
 * scanned once, runs of typed or pasted text become one input, so a paste of a
 * megabyte is a handful of inputs, not a million. No clock: the two decisions
 * that wait for silence (the end of a paste, a lone ESC) are made when the
 * reader finds the terminal idle (`idle`), never from when a chunk was read.
 *
 * A paste never types. Between the bracketed-paste markers (`ESC[200~` …
 * `ESC[201~`) everything is text: line breaks become `\n`, tabs stay, every
 * escape sequence and control is dropped, and an Enter is a newline, never a
 * submit. A terminal that does not filter the end marker out of pasted text
 * (tmux does not) lets a paste end early, so an end marker is not trusted:
 *
 * - after one, everything is pasted (`trailing`) until the terminal has been
 *   quiet for `QUIET_MS`, which only the reader can tell: it drains the
 *   terminal and calls `idle` when nothing was left in it, so a process that
 *   was stopped or busy cannot mistake the rest of a paste for typing;
 * - and after that, an Enter read together with anything else is a pasted
 *   newline, until an Enter has been read alone (as a key a person presses is)
 *   and the terminal was idle after it: the rest of a paste that the terminal
 *   delivered after a pause arrives as one read, not as a lone Enter.
 *
 * A start marker whose ESC arrived a quiet spell before the rest of it (a slow
 * or split link) gives the Escape key, as a lone ESC must; but when the next
 * read begins with the rest of the marker (`[200~`), a paste starts there all
 * the same (`cut`), so the paste is never typed. (The rest cut once more,
 * `[2` then `00~`, is not recognised: it is typed.)
 *
 * Ctrl+C and Ctrl+\ stop Mino wherever they arrive, a paste included (stopping
 * is the safe direction).
 *
 * No escape sequence ever becomes text: a terminal's reply or report is decoded
 * and dropped whole, however it is cut across reads. That covers the control
 * strings (OSC `ESC ]`, DCS `ESC P`, SOS `ESC X`, PM `ESC ^`, APC `ESC _`), which
 * end at BEL or ST (`ESC \`; another ESC ends one too and starts a sequence of
 * its own), an X10 mouse report (`ESC [ M` and three characters), and a CSI of
 * any length, which ends at its final byte; a cursor position report is
 * decoded (`Report`) for whoever asked for it, and is never text. None of them is held in memory:
 * past its start it is skipped as it arrives (`skip`). A string or CSI the
 * terminal never ends is dropped until the terminal has been quiet for
 * `QUIET_MS` (`idle`), as a lone ESC is; what is typed after that pause is
 * typed. (So Alt+P, Alt+], Alt+X, Alt+^ and Alt+_ are not keys.)
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
  /**
   * The terminal's cursor position report (`ESC [ row ; column R`), its answer to
   * `ESC [ 6 n`: never text and never a key. Only typed input gives one; inside
   * a paste (and after one, while `trailing`) it is dropped like any sequence.
   */
  | { readonly _tag: "Report"; readonly row: number; readonly column: number }

/** What a person did at a line: everything but a stop key and a terminal's report. */
export type Typed = Exclude<Input, { readonly _tag: "Stop" } | { readonly _tag: "Report" }>

/**
 * After a paste ends, input counts as pasted until the terminal has held none
 * for this long; a lone ESC waits this long for the rest of its sequence.
 */
export const QUIET_MS = 100

/** The bracketed-paste start marker. */
const PASTE_START = "\u001b[200~"

/** A CSI longer than this is no key: it is skipped to its final byte, not held. */
const MAX_SEQUENCE = 64

export interface Decoder {
  /** The bytes of a UTF-8 character cut by the end of the last chunk. */
  readonly bytes: Uint8Array
  /** An escape sequence cut by the end of the last chunk. */
  readonly held: string
  /** `typed`; `paste` between the markers; `trailing` after an end marker, until `idle`. */
  readonly mode: "typed" | "paste" | "trailing"
  /**
   * What an Enter is: `key`; `alone` since a paste ended: a key only when read
   * alone, else a pasted newline; `aloneUntilIdle` once one was read alone,
   * until the terminal is idle.
   */
  readonly enter: "key" | "alone" | "aloneUntilIdle"
  /** Inside a sequence being dropped as it arrives: a control `string`, or a long `csi`. */
  readonly skip: "none" | "string" | "csi"
  /**
   * The beginning of a paste's start marker set aside by the last thing decoded:
   * a lone ESC taken as the Escape key when the terminal went idle, or a cut
   * sequence `forget` let go of. When the next read holds the rest of the
   * marker, a paste starts there all the same.
   */
  readonly cut: string
}

export const initial: Decoder = { bytes: new Uint8Array(0), held: "", mode: "typed", enter: "key", skip: "none", cut: "" }

/** Whether the decoder waits to hear nothing more (the rest of a paste or of a lone ESC, or after a lone Enter): the reader then calls `idle`. */
export const waiting = (decoder: Decoder): boolean =>
  decoder.mode === "trailing" || (decoder.mode === "typed" && decoder.held === "\u001b") || decoder.enter === "aloneUntilIdle" ||
  decoder.skip !== "none"

/**
 * The terminal held nothing for `QUIET_MS` after the last input (the reader
 * drained it to know): a paste that had ended is over, what follows is typed;
 * a lone ESC was the Escape key; after a lone Enter, Enter is a key again; a
 * string or CSI never ended is over (dropped, with an ESC that may have begun its ST).
 */
export const idle = (decoder: Decoder): { readonly decoder: Decoder; readonly inputs: ReadonlyArray<Input> } => {
  const skipping = decoder.skip !== "none"
  const escape = !skipping && decoder.mode === "typed" && decoder.held === "\u001b"
  const enter = decoder.mode === "typed" && decoder.enter === "aloneUntilIdle" ? "key" : decoder.enter
  return {
    decoder: {
      ...decoder,
      mode: decoder.mode === "paste" ? "paste" : "typed",
      held: escape || skipping ? "" : decoder.held,
      enter,
      skip: "none",
      cut: escape ? "\u001b" : decoder.cut
    },
    inputs: escape ? [key("escape")] : []
  }
}

/**
 * Forgets a cut sequence that began before now, so no key can be made of bytes
 * from before and after this moment. Inside a paste it is kept: a cut end
 * marker must still end the paste; and so is a sequence being dropped, so its
 * rest is dropped too, never typed. A cut that may begin a paste's start
 * marker is set aside (`cut`): when the next read holds the rest of the
 * marker, a paste starts (the safe direction), so a paste cut at this moment
 * is never typed.
 */
export const forget = (decoder: Decoder): Decoder => {
  if (decoder.mode === "paste" || decoder.skip !== "none") return decoder
  const cut = decoder.held !== "" && PASTE_START.startsWith(decoder.held) ? decoder.held : decoder.held === "" ? decoder.cut : ""
  return { ...decoder, bytes: new Uint8Array(0), held: "", cut }
}

/**
 * The first stop key in a chunk, found before anything else in it is decoded,
 * so the reader can act on it at once. Its byte can be nothing else: UTF-8
 * continuation bytes and escape sequences never hold a C0 control.
 */
export const stopKey = (chunk: Uint8Array): StopKey | undefined => {
  const interrupt = chunk.indexOf(0x03)
  const quit = chunk.indexOf(0x1c)
  if (interrupt === -1 && quit === -1) return undefined
  return quit === -1 || (interrupt !== -1 && interrupt < quit) ? "interrupt" : "quit"
}

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
  | {
    readonly _tag: "Complete"
    readonly length: number
    readonly input?: Input
    readonly paste?: "start" | "end"
    /** The sequence goes on past `length`: the rest is dropped as it arrives. */
    readonly skip?: "string" | "csi"
  }

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

// What begins a control string: OSC, DCS, SOS, PM, APC.
const STRING_START = new Set(["]", "P", "X", "^", "_"])

/** The length of `count` code points of `text` from `from`, or undefined when it holds fewer. */
const codePoints = (text: string, from: number, count: number): number | undefined => {
  let end = from
  for (let i = 0; i < count; i++) {
    const cp = text.codePointAt(end)
    if (cp === undefined) return undefined
    end += cp > 0xffff ? 2 : 1
  }
  return end - from
}

const INCOMPLETE: Sequence = { _tag: "Incomplete" }

/** The escape sequence starting at `text[at]` (an ESC). */
const sequence = (text: string, at: number): Sequence => {
  const next = text[at + 1]
  if (next === undefined) return INCOMPLETE
  if (STRING_START.has(next)) return { _tag: "Complete", length: 2, skip: "string" }
  if (next === "[") return text[at + 2] === "M" ? mouse(text, at) : csi(text, at)
  if (next === "O") {
    const final = text[at + 2]
    return final === undefined ? INCOMPLETE : { _tag: "Complete", length: 3, input: key(FINAL[final] ?? "function") }
  }
  if (next === "\u001b") return { _tag: "Complete", length: 1, input: key("escape") }
  return alt(text, at)
}

/** An X10 mouse report: its three characters (button, column, row) may be anything. */
const mouse = (text: string, at: number): Sequence => {
  const report = codePoints(text, at + 3, 3)
  return report === undefined ? INCOMPLETE : { _tag: "Complete", length: 3 + report }
}

/** A CSI: parameters and intermediates up to a final byte, read whole when short, else skipped as it arrives. */
const csi = (text: string, at: number): Sequence => {
  let end = at + 2
  while (end < text.length && end - at < MAX_SEQUENCE) {
    const code = text.charCodeAt(end)
    if (code >= 0x40 && code <= 0x7e) break
    if (code < 0x20 || code > 0x3f) return { _tag: "Complete", length: end - at } // not a CSI: drop what was read
    end++
  }
  if (end - at >= MAX_SEQUENCE) return { _tag: "Complete", length: end - at, skip: "csi" }
  if (end >= text.length) return INCOMPLETE
  return { _tag: "Complete", length: end + 1 - at, ...csiMeaning(text.slice(at + 2, end), text[end] ?? "") }
}

/** What a whole CSI is, by its parameters and final byte (`TILDE`, `FINAL`): a paste marker, a report, a key. */
const csiMeaning = (params: string, final: string): { readonly input?: Input; readonly paste?: "start" | "end" } => {
  if (final === "~") {
    const first = params.split(";")[0] ?? ""
    if (first === "200") return { paste: "start" }
    if (first === "201") return { paste: "end" }
    const { ctrl, meta } = modifiers(params)
    return { input: key(TILDE[first] ?? "function", ctrl, meta) }
  }
  const position = final === "R" ? /^(\d{1,5});(\d{1,5})$/.exec(params) : null
  if (position !== null) return { input: { _tag: "Report", row: Number(position[1]), column: Number(position[2]) } }
  const name = FINAL[final]
  if (name === undefined) return { input: key("unknown") }
  const { ctrl, meta } = modifiers(params)
  return { input: key(name, ctrl, meta) }
}

/** Alt+key arrives as ESC and the key (ESC and a control: Alt+Ctrl+letter). */
const alt = (text: string, at: number): Sequence => {
  const ch = String.fromCodePoint(text.codePointAt(at + 1) ?? 0)
  const code = ch.codePointAt(0) ?? 0
  const name = code < 0x20 ? String.fromCharCode(code + 0x60) : ch
  return { _tag: "Complete", length: 1 + ch.length, input: key(name, code < 0x20, true) }
}

const PRINTABLE = /[^\u0000-\u001f\u007f-\u009f]+/y
// Where a control string may end: BEL, or an ESC (of ST, or of a sequence that cuts it short).
const STRING_END = /[\u0007\u001b]/g
// Where a CSI's parameters and intermediates end.
const CSI_END = /[^\u0020-\u003f]/g

/**
 * Drops what `skip` is inside of, from `text[at]`: where decoding goes on, and
 * what is still skipped there. An ESC that ends the text may begin ST: it is held.
 */
const skipped = (text: string, at: number, skip: "string" | "csi"): { readonly at: number; readonly skip: Decoder["skip"]; readonly held: string } => {
  const end = skip === "string" ? STRING_END : CSI_END
  end.lastIndex = at
  const found = end.exec(text)
  if (found === null) return { at: text.length, skip, held: "" }
  const index = found.index
  if (skip === "csi") {
    // A final byte ends the CSI; any other byte was never part of it and is decoded.
    const code = text.charCodeAt(index)
    return { at: code >= 0x40 && code <= 0x7e ? index + 1 : index, skip: "none", held: "" }
  }
  if (text[index] === "\u0007") return { at: index + 1, skip: "none", held: "" }
  if (index + 1 >= text.length) return { at: text.length, skip, held: "\u001b" }
  // ST ends the string; an ESC before anything else ends it and begins its own sequence.
  return { at: text[index + 1] === "\\" ? index + 2 : index, skip: "none", held: "" }
}
// Controls inside pasted text: none is text but the tab and the newline; Ctrl+C and Ctrl+\ still stop.
const PASTE_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g

/**
 * What a typed control character is. Enter is CR in raw mode; LF is Ctrl+J, a
 * line break in the question (`LineEditor`). One not here (NUL, the other C0
 * controls, every C1 control) is nothing.
 */
const CONTROL: ReadonlyMap<string, Input> = new Map<string, Input>([
  // Ctrl+A … Ctrl+Z, but for the bytes the rows after these name otherwise.
  ...Array.from({ length: 26 }, (_, i): readonly [string, Input] => [String.fromCharCode(i + 1), key(String.fromCharCode(i + 0x61), true)]),
  ["\r", key("enter")],
  ["\t", key("tab")],
  ["\u007f", key("backspace")],
  ["\b", key("backspace")],
  ["\u0003", { _tag: "Stop", key: "interrupt" }],
  ["\u001c", { _tag: "Stop", key: "quit" }]
])

/**
 * One chunk's pass: where it is in the text, the decoder's modes as they stand
 * there, and what it has decoded so far. Local to `decode`, which stays pure.
 */
interface Scan {
  readonly text: string
  at: number
  mode: Decoder["mode"]
  enter: Decoder["enter"]
  skip: Decoder["skip"]
  /** A sequence cut by the end of the text, kept for the next chunk. */
  held: string
  readonly inputs: Array<Input>
  /** Pasted text not made an input yet: a run of it becomes one. */
  pasted: string
  /** A paste begins in this chunk: it is reported even when empty, since a line it touched is a pasted line. */
  opened: boolean
}

const flushPaste = (scan: Scan) => {
  if (scan.pasted.length > 0 || scan.opened) scan.inputs.push({ _tag: "Paste", text: scan.pasted })
  scan.pasted = ""
  scan.opened = false
}

const push = (scan: Scan, input: Input) => {
  flushPaste(scan)
  scan.inputs.push(input)
}

/** Pasted text: line breaks as `\n`, controls dropped but a stop key, which stops. */
const paste = (scan: Scan, segment: string) => {
  const text = segment.replace(/\r\n?/g, "\n")
  let from = 0
  for (const match of text.matchAll(PASTE_CONTROL)) {
    scan.pasted += text.slice(from, match.index)
    from = match.index + 1
    const stop = match[0] === "\u0003" ? "interrupt" : match[0] === "\u001c" ? "quit" : undefined
    if (stop !== undefined) push(scan, { _tag: "Stop", key: stop })
  }
  scan.pasted += text.slice(from)
}

/** The rest of the text is a sequence not complete yet: it waits for the next chunk. */
const hold = (scan: Scan, from: number) => {
  scan.held = scan.text.slice(from)
  scan.at = scan.text.length
}

/** Inside a control string or a long CSI: dropped up to its end. */
const skipStep = (scan: Scan, skip: "string" | "csi") => {
  const rest = skipped(scan.text, scan.at, skip)
  scan.at = rest.at
  scan.skip = rest.skip
  scan.held = rest.held
}

/** Inside a paste (or after its end marker): text up to the next sequence; a marker changes the mode, any other sequence is dropped, never a key. */
const pastedStep = (scan: Scan) => {
  const escape = scan.text.indexOf("\u001b", scan.at)
  paste(scan, scan.text.slice(scan.at, escape === -1 ? scan.text.length : escape))
  if (escape === -1) {
    scan.at = scan.text.length
    return
  }
  const found = sequence(scan.text, escape)
  if (found._tag === "Incomplete") return hold(scan, escape)
  if (found.skip !== undefined) scan.skip = found.skip
  else if (found.paste === "start") {
    scan.mode = "paste"
    scan.opened = true
  } else if (found.paste === "end") {
    scan.mode = "trailing"
    scan.enter = "alone"
  }
  scan.at = escape + found.length
}

/** Typed input: a run of printable text, a control character, or a sequence. */
const typedStep = (scan: Scan) => {
  PRINTABLE.lastIndex = scan.at
  const run = PRINTABLE.exec(scan.text)
  if (run !== null) {
    push(scan, { _tag: "Text", text: run[0] })
    scan.at += run[0].length
    return
  }
  const ch = scan.text[scan.at] ?? ""
  if (ch !== "\u001b") return controlStep(scan, ch)
  const found = sequence(scan.text, scan.at)
  if (found._tag === "Incomplete") return hold(scan, scan.at)
  // An end marker without its start means a paste is still arriving: what follows is pasted too.
  if (found.skip !== undefined) scan.skip = found.skip
  else if (found.paste !== undefined) {
    scan.mode = found.paste === "start" ? "paste" : "trailing"
    if (found.paste === "end") scan.enter = "alone"
    scan.opened = true
  } else if (found.input !== undefined) push(scan, found.input)
  scan.at += found.length
}

/** One typed control character; since a paste, only an Enter read alone is a key, one read with anything else is pasted. */
const controlStep = (scan: Scan, ch: string) => {
  const input = CONTROL.get(ch)
  scan.at += 1
  if (input === undefined) return
  if (input._tag !== "Key" || input.name !== "enter" || scan.enter === "key") return push(scan, input)
  if (scan.text.length !== 1) return paste(scan, "\n")
  push(scan, input)
  scan.enter = "aloneUntilIdle"
}

/** Cursor position reports at the start of a read, as `csiMeaning` reads one (at most 5 digits each). */
const REPORTS = /^(?:\u001b\[\d{1,5};\d{1,5}R)+/

/** Decodes one chunk. */
export const decode = (decoder: Decoder, chunk: Uint8Array): { readonly decoder: Decoder; readonly inputs: ReadonlyArray<Input> } => {
  // Bytes to text, keeping a cut character for the next chunk.
  const bytes = decoder.bytes.length === 0 ? chunk : Buffer.concat([decoder.bytes, chunk])
  const cut = cutCharacter(bytes)
  const read = decoder.held + utf8.decode(bytes.subarray(0, bytes.length - cut))
  // A paste's start marker whose ESC reached Mino a quiet spell before the rest (a slow
  // or split link), or whose beginning an approval's guard let go of as it ended: the
  // next read begins with the rest of the marker. It still starts a paste, so the paste never types.
  // The terminal's cursor position reports may come between (an approval asked anew asks for one).
  const reports = decoder.cut === "" ? "" : (REPORTS.exec(read)?.[0] ?? "")
  const after = read.slice(reports.length)
  const resumed = decoder.cut + after
  const text = decoder.cut !== "" && resumed.startsWith(PASTE_START) ? reports + resumed : read
  const scan: Scan = { text, at: 0, mode: decoder.mode, enter: decoder.enter, skip: decoder.skip, held: "", inputs: [], pasted: "", opened: false }
  while (scan.at < text.length) {
    if (scan.skip !== "none") skipStep(scan, scan.skip)
    else if (scan.mode !== "typed") pastedStep(scan)
    else typedStep(scan)
  }
  flushPaste(scan)
  const { held, mode, enter, skip } = scan
  // A read that decoded nothing yet (part of a character), or only reports, keeps what was set aside for the next.
  const setAside = after === "" ? decoder.cut : ""
  return { decoder: { bytes: bytes.slice(bytes.length - cut), held, mode, enter, skip, cut: setAside }, inputs: scan.inputs }
}
