import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as KeyDecoder from "../../src/terminal/KeyDecoder.js"

type Input = KeyDecoder.Input

/** Decodes `chunks`, each arriving at its time (ms), into one list of inputs. */
const decodeAll = (chunks: ReadonlyArray<readonly [string | Uint8Array, number]>): Array<Input> => {
  let decoder = KeyDecoder.initial
  const inputs: Array<Input> = []
  for (const [chunk, at] of chunks) {
    const decoded = KeyDecoder.decode(decoder, typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk, at)
    decoder = decoded.decoder
    inputs.push(...decoded.inputs)
  }
  return inputs
}
const once = (text: string) => decodeAll([[text, 0]])

/** Adjacent texts of one kind joined: how a line sees them. */
const merged = (inputs: ReadonlyArray<Input>): Array<Input> =>
  inputs.reduce<Array<Input>>((out, input) => {
    const last = out.at(-1)
    if (last !== undefined && last._tag === input._tag && (input._tag === "Text" || input._tag === "Paste") && "text" in last) {
      out[out.length - 1] = { ...input, text: last.text + input.text }
    } else out.push(input)
    return out
  }, [])

const key = (name: string, ctrl = false, meta = false): Input => ({ _tag: "Key", name, ctrl, meta })
const PASTE_START = "\u001b[200~"
const PASTE_END = "\u001b[201~"

describe("KeyDecoder", () => {
  it("decodes typed text, Enter, editing keys, Ctrl and Alt keys", () => {
    expect(once("ab c\r")).toEqual([{ _tag: "Text", text: "ab c" }, key("enter")])
    expect(once("\u001b[A\u001b[B\u001b[C\u001b[D\u001b[H\u001b[F\u001bOH\u001b[1~\u001b[4~\u001b[3~")).toEqual(
      ["up", "down", "right", "left", "home", "end", "home", "home", "end", "delete"].map((name) => key(name))
    )
    expect(once("\u007f\b\u0001\u0017\u001bx\u001b[1;5D")).toEqual([
      key("backspace"),
      key("backspace"),
      key("a", true),
      key("w", true),
      key("x", false, true),
      key("left", true)
    ])
    expect(once("\n")).toEqual([key("enter")])
    // NUL and C1 controls are nothing; an unknown sequence is a key that is never text.
    expect(once("\u0000\u009b2J\u001b[15~")).toEqual([{ _tag: "Text", text: "2J" }, key("function")])
  })

  it("Ctrl+C and Ctrl+\\ are stop keys, typed or pasted", () => {
    expect(once("a\u0003b\u001c")).toEqual([
      { _tag: "Text", text: "a" },
      { _tag: "Stop", key: "interrupt" },
      { _tag: "Text", text: "b" },
      { _tag: "Stop", key: "quit" }
    ])
    expect(once(`${PASTE_START}x\u0003y${PASTE_END}`)).toEqual([
      { _tag: "Paste", text: "x" },
      { _tag: "Stop", key: "interrupt" },
      { _tag: "Paste", text: "y" }
    ])
  })

  it("a bracketed paste is text: line breaks as \\n, tabs kept, sequences and controls dropped", () => {
    expect(once(`${PASTE_START}line one\nline two\rline\u001b[A three\tend\r\n${PASTE_END}`)).toEqual([
      { _tag: "Paste", text: "line one\nline two\nline three\tend\n" }
    ])
  })

  it("an empty paste is still a paste, so a line it touched counts as pasted", () => {
    expect(once(`${PASTE_START}${PASTE_END}`)).toEqual([{ _tag: "Paste", text: "" }])
  })

  it("an end marker inside the paste ends nothing: the rest of the chunk, CR included, is pasted", () => {
    const inputs = once(`${PASTE_START}echo safe${PASTE_END}touch PWNED\r${PASTE_END}`)
    expect(inputs).toEqual([{ _tag: "Paste", text: "echo safetouch PWNED\n" }])
  })

  it("after a paste, input is pasted until a quiet spell; a key a moment later acts", () => {
    const soon = decodeAll([[`${PASTE_START}a${PASTE_END}`, 1000], ["b\r", 1000 + KeyDecoder.QUIET_MS - 1]])
    expect(merged(soon)).toEqual([{ _tag: "Paste", text: "ab\n" }])
    const later = decodeAll([[`${PASTE_START}a${PASTE_END}`, 1000], ["\r", 1000 + KeyDecoder.QUIET_MS + 200]])
    expect(later).toEqual([{ _tag: "Paste", text: "a" }, key("enter")])
    // Each pasted chunk keeps the spell going.
    const chain = decodeAll([[`${PASTE_START}a${PASTE_END}`, 0], ["b", 80], ["c", 160], ["\r", 240]])
    expect(merged(chain)).toEqual([{ _tag: "Paste", text: "abc\n" }])
  })

  it("a marker, a sequence or a character cut between chunks is put back together", () => {
    const e = Buffer.from("é", "utf8")
    const inputs = decodeAll([
      ["\u001b[20", 0],
      [`0~x${PASTE_END.slice(0, 3)}`, 1],
      [`${PASTE_END.slice(3)}`, 2],
      [e.subarray(0, 1), 500],
      [Buffer.concat([e.subarray(1), Buffer.from("\u001b[")]), 501],
      ["D", 502]
    ])
    expect(inputs).toEqual([{ _tag: "Paste", text: "x" }, { _tag: "Text", text: "é" }, key("left")])
  })

  it("a lone ESC is the Escape key once nothing follows it for a while", () => {
    expect(decodeAll([["\u001b", 0], ["y", KeyDecoder.ESCAPE_WAIT_MS + 1]])).toEqual([key("escape"), { _tag: "Text", text: "y" }])
    expect(decodeAll([["\u001b", 0], ["y", 1]])).toEqual([key("y", false, true)])
  })

  it("forget drops a cut sequence from before, but never inside a paste", () => {
    const cut = KeyDecoder.decode(KeyDecoder.initial, Buffer.from("\u001b["), 0).decoder
    expect(KeyDecoder.decode(KeyDecoder.forget(cut), Buffer.from("A"), 1).inputs).toEqual([{ _tag: "Text", text: "A" }])
    const pasting = KeyDecoder.decode(KeyDecoder.initial, Buffer.from(`${PASTE_START}a\u001b[20`), 0).decoder
    expect(KeyDecoder.decode(KeyDecoder.forget(pasting), Buffer.from("1~"), 1).inputs).toEqual([])
  })

  it("a paste never types: 1,000 generated pastes, cut anywhere, arriving within the spell, give no key and no text", () => {
    const units = fc.constantFrom("a", " ", "\r", "\n", "\t", "y", "é", "\u001b", "[", "200~", "201~", PASTE_END, PASTE_START, "\u0004", "\u007f", "\u001b[A")
    fc.assert(
      fc.property(fc.string({ unit: units, maxLength: 60 }), fc.array(fc.nat(200), { maxLength: 6 }), (content, cuts) => {
        const bytes = Buffer.from(`${PASTE_START}${content}${PASTE_END}`, "utf8")
        const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b)
        const chunks = [0, ...points, bytes.length].slice(1).map((end, index, ends): readonly [Uint8Array, number] => [
          bytes.subarray(index === 0 ? 0 : ends[index - 1], end),
          index * 10
        ])
        const inputs = decodeAll(chunks)
        expect(inputs.filter((input) => input._tag === "Key" || input._tag === "Text")).toEqual([])
      }),
      { numRuns: 1_000 }
    )
  })

  it("cutting typed input anywhere, delivered at once, decodes it the same", () => {
    const units = fc.constantFrom("a", "b", "\r", "\u007f", "\u001b[A", "\u001b[3~", "é", "😀", "\u0001", "\u001bOF")
    fc.assert(
      fc.property(fc.string({ unit: units, maxLength: 40 }), fc.array(fc.nat(200), { maxLength: 6 }), (typed, cuts) => {
        const bytes = Buffer.from(typed, "utf8")
        const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b)
        const chunks = [0, ...points, bytes.length].slice(1).map((end, index, ends): readonly [Uint8Array, number] => [
          bytes.subarray(index === 0 ? 0 : ends[index - 1], end),
          0
        ])
        expect(merged(decodeAll(chunks))).toEqual(merged(once(typed)))
      }),
      { numRuns: 500 }
    )
  })

  it("a megabyte paste is a few inputs, decoded in one linear pass", () => {
    const text = "x".repeat(1 << 20)
    const inputs = once(`${PASTE_START}${text}${PASTE_END}`)
    expect(inputs).toEqual([{ _tag: "Paste", text }])
  })
})
