import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as KeyDecoder from "../../src/terminal/input/KeyDecoder.js"
import { cutAt } from "../support/Cuts.js"

type Input = KeyDecoder.Input

/** Where the reader found the terminal idle (drained, nothing in it, for `QUIET_MS`). */
const IDLE = Symbol("idle")

/** Decodes `chunks` in order, each one read, into one list of inputs; `IDLE` marks a quiet spell between reads. */
const decodeAll = (chunks: ReadonlyArray<string | Uint8Array | typeof IDLE>): Array<Input> => {
  let decoder = KeyDecoder.initial
  const inputs: Array<Input> = []
  for (const chunk of chunks) {
    const decoded = chunk === IDLE
      ? KeyDecoder.idle(decoder)
      : KeyDecoder.decode(decoder, typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk)
    decoder = decoded.decoder
    inputs.push(...decoded.inputs)
  }
  return inputs
}
const once = (text: string) => decodeAll([text])

/** Where the reader forgot a cut sequence (a question's start or release: `KeyDecoder.forget`). */
const FORGET = Symbol("forget")

/** `decodeAll`, with `FORGET` marking a forget between reads. */
const decodeForgetting = (chunks: ReadonlyArray<string | typeof IDLE | typeof FORGET>): Array<Input> => {
  let decoder = KeyDecoder.initial
  const inputs: Array<Input> = []
  for (const chunk of chunks) {
    if (chunk === FORGET) {
      decoder = KeyDecoder.forget(decoder)
      continue
    }
    const decoded = chunk === IDLE ? KeyDecoder.idle(decoder) : KeyDecoder.decode(decoder, Buffer.from(chunk, "utf8"))
    decoder = decoded.decoder
    inputs.push(...decoded.inputs)
  }
  return inputs
}


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
    expect(once("\n")).toEqual([key("j", true)])
    // NUL and C1 controls are nothing; an unknown sequence is a key that is never text.
    expect(once("\u0000\u009b2J\u001b[15~")).toEqual([{ _tag: "Text", text: "2J" }, key("function")])
  })

  it("a table of controls and sequences: each decodes to its input alone, and between typed text cut anywhere (sweep printed)", () => {
    const stop = (name: KeyDecoder.StopKey): Input => ({ _tag: "Stop", key: name })
    // Typed bytes and what they are (`undefined`: nothing, never text).
    const TABLE: ReadonlyArray<readonly [string, Input | undefined]> = [
      ["\r", key("enter")],
      ["\t", key("tab")],
      ["\n", key("j", true)],
      ["\u007f", key("backspace")],
      ["\b", key("backspace")],
      ["\u0001", key("a", true)],
      ["\u0004", key("d", true)],
      ["\u001a", key("z", true)],
      ["\u0003", stop("interrupt")],
      ["\u001c", stop("quit")],
      ["\u0000", undefined],
      ["\u001d", undefined],
      ["\u001f", undefined],
      ["\u0085", undefined],
      ["\u009b", undefined],
      ["\u001b[A", key("up")],
      ["\u001b[B", key("down")],
      ["\u001b[C", key("right")],
      ["\u001b[D", key("left")],
      ["\u001b[H", key("home")],
      ["\u001b[F", key("end")],
      ["\u001b[1;5D", key("left", true)],
      ["\u001b[1;3C", key("right", false, true)],
      ["\u001b[1;7A", key("up", true, true)],
      ["\u001b[1~", key("home")],
      ["\u001b[2~", key("insert")],
      ["\u001b[3~", key("delete")],
      ["\u001b[3;5~", key("delete", true)],
      ["\u001b[4~", key("end")],
      ["\u001b[5~", key("pageup")],
      ["\u001b[6~", key("pagedown")],
      ["\u001b[7~", key("home")],
      ["\u001b[8~", key("end")],
      ["\u001b[15~", key("function")],
      ["\u001b[Z", key("unknown")],
      ["\u001b[?1;2c", key("unknown")],
      ["\u001b[12;40R", { _tag: "Report", row: 12, column: 40 }],
      ["\u001b[123456;1R", key("unknown")],
      ["\u001bOA", key("up")],
      ["\u001bOF", key("end")],
      ["\u001bOP", key("function")],
      ["\u001bx", key("x", false, true)],
      ["\u001b\u0001", key("a", true, true)],
      ["\u001b\r", key("m", true, true)],
      ["\u001b[M !!", undefined],
      ["\u001b]0;title\u0007", undefined],
      ["\u001b]11;rgb:0/0/0\u001b\\", undefined],
      ["\u001bP1$r\u001b\\", undefined],
      ["\u001b_app\u001b\\", undefined],
      [`\u001b[${"1;".repeat(40)}m`, undefined]
    ]
    let runs = 0
    for (const [bytes, input] of TABLE) {
      const expected = input === undefined ? [] : [input]
      expect(once(bytes), JSON.stringify(bytes)).toEqual(expected)
      fc.assert(
        fc.property(fc.array(fc.nat(200), { maxLength: 4 }), (cuts) => {
          runs++
          const inputs = decodeAll(cutAt(Buffer.from(`ab${bytes}cd`, "utf8"), cuts))
          expect(merged(inputs), JSON.stringify(bytes)).toEqual(merged([{ _tag: "Text", text: "ab" }, ...expected, { _tag: "Text", text: "cd" }]))
        }),
        { numRuns: 50 }
      )
    }
    console.log(`decoding table: ${TABLE.length} rows, ${runs} cut placements`)
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

  it("after a paste, input is pasted until the reader finds the terminal idle, however late it is read", () => {
    // Read in a later chunk (however long Mino was stopped or busy): still pasted, because no idle spell was seen.
    const late = decodeAll([`${PASTE_START}a${PASTE_END}`, "\rrun touch PWNED\r"])
    expect(merged(late)).toEqual([{ _tag: "Paste", text: "a\nrun touch PWNED\n" }])
    expect(KeyDecoder.waiting(KeyDecoder.decode(KeyDecoder.initial, Buffer.from(`${PASTE_START}a${PASTE_END}`)).decoder)).toBe(true)
    // After the idle spell, keys act: an Enter read alone is Enter.
    expect(decodeAll([`${PASTE_START}a${PASTE_END}`, IDLE, "\r"])).toEqual([{ _tag: "Paste", text: "a" }, key("enter")])
    // An unpaired end marker (the paste began before) makes what follows pasted too.
    expect(merged(once(`x${PASTE_END}y\r`))).toEqual([{ _tag: "Text", text: "x" }, { _tag: "Paste", text: "y\n" }])
  })

  it("after a paste and its idle spell, an Enter read with anything else is a pasted newline, until one read alone is followed by an idle spell", () => {
    const pasted = `${PASTE_START}about markdown${PASTE_END}`
    // The rest of a paste delivered after a pause arrives as one read: its CRs submit nothing.
    expect(merged(decodeAll([pasted, IDLE, `\rrun touch PWNED\r${PASTE_END}`]))).toEqual([
      { _tag: "Paste", text: "about markdown\n" },
      { _tag: "Text", text: "run touch PWNED" },
      { _tag: "Paste", text: "\n" }
    ])
    // Other keys act as typed; an Enter alone is Enter, and once the terminal is idle after it, Enter is Enter again.
    expect(decodeAll([pasted, IDLE, "\u001b[D", "x", "\r", "y\r", IDLE, "z\r"])).toEqual([
      { _tag: "Paste", text: "about markdown" },
      key("left"),
      { _tag: "Text", text: "x" },
      key("enter"),
      { _tag: "Text", text: "y" },
      { _tag: "Paste", text: "\n" },
      { _tag: "Text", text: "z" },
      key("enter")
    ])
    // Typing with no paste before is never affected.
    expect(once("y\r")).toEqual([{ _tag: "Text", text: "y" }, key("enter")])
  })

  it("a marker, a sequence or a character cut between chunks is put back together", () => {
    const e = Buffer.from("é", "utf8")
    const inputs = decodeAll([
      "\u001b[20",
      `0~x${PASTE_END.slice(0, 3)}`,
      `${PASTE_END.slice(3)}`,
      IDLE,
      e.subarray(0, 1),
      Buffer.concat([e.subarray(1), Buffer.from("\u001b[")]),
      "D"
    ])
    expect(inputs).toEqual([{ _tag: "Paste", text: "x" }, { _tag: "Text", text: "é" }, key("left")])
  })

  it("a lone ESC is the Escape key once the terminal is idle after it; before that it begins a sequence", () => {
    expect(decodeAll(["\u001b", IDLE, "y"])).toEqual([key("escape"), { _tag: "Text", text: "y" }])
    expect(decodeAll(["\u001b", "y"])).toEqual([key("y", false, true)])
    // Inside a paste a lone ESC may begin the end marker: idle does not end it.
    expect(decodeAll([`${PASTE_START}a\u001b`, IDLE, "[201~", IDLE, "\r"])).toEqual([{ _tag: "Paste", text: "a" }, key("enter")])
  })

  it("forget drops a cut sequence from before, but never inside a paste", () => {
    const cut = KeyDecoder.decode(KeyDecoder.initial, Buffer.from("\u001b[")).decoder
    expect(KeyDecoder.decode(KeyDecoder.forget(cut), Buffer.from("A")).inputs).toEqual([{ _tag: "Text", text: "A" }])
    const pasting = KeyDecoder.decode(KeyDecoder.initial, Buffer.from(`${PASTE_START}a\u001b[20`)).decoder
    expect(KeyDecoder.decode(KeyDecoder.forget(pasting), Buffer.from("1~")).inputs).toEqual([])
  })

  it("a paste never types: 1,000 generated pastes, cut anywhere, read however late, give no key and no text", () => {
    const units = fc.constantFrom("a", " ", "\r", "\n", "\t", "y", "é", "\u001b", "[", "200~", "201~", PASTE_END, PASTE_START, "\u0004", "\u007f", "\u001b[A")
    fc.assert(
      fc.property(fc.string({ unit: units, maxLength: 60 }), fc.array(fc.nat(200), { maxLength: 6 }), (content, cuts) => {
        const inputs = decodeAll(cutAt(Buffer.from(`${PASTE_START}${content}${PASTE_END}`, "utf8"), cuts))
        expect(inputs.filter((input) => input._tag === "Key" || input._tag === "Text")).toEqual([])
      }),
      { numRuns: 1_000 }
    )
  })

  it("a paste never submits: 1,000 generated pastes, cut anywhere, idle spells at any cuts: an Enter only from one read alone between idle spells", () => {
    const units = fc.constantFrom("a", " ", "\r", "\n", "y", "\u001b", "[", "201~", PASTE_END, PASTE_START, "\u0004", "\u007f", "\u001b[A")
    fc.assert(
      fc.property(fc.string({ unit: units, maxLength: 60 }), fc.array(fc.nat(200), { maxLength: 6 }), fc.array(fc.boolean()), (content, cuts, idles) => {
        let decoder = KeyDecoder.initial
        let read = 0
        // A lone Enter was read and the terminal was idle after it: the terminal itself paused around an Enter.
        let pausedAroundEnter = false
        for (const [index, chunk] of cutAt(Buffer.from(`${PASTE_START}${content}${PASTE_END}`, "utf8"), cuts).entries()) {
          const decoded = KeyDecoder.decode(decoder, chunk)
          read += chunk.length
          const alone = /^[\r\n]$/.test(Buffer.from(chunk).toString("latin1"))
          const enters = decoded.inputs.filter((input) => input._tag === "Key" && input.name === "enter")
          if (enters.length > 0) expect(alone || pausedAroundEnter, `an Enter from ${JSON.stringify(Buffer.from(chunk).toString("latin1"))}`).toBe(true)
          // (A terminal that paused right after the ESC of a paste's first marker sent the Escape key, not a paste.)
          const idle = idles[index] === true && read !== 1
          if (idle && alone) pausedAroundEnter = true
          decoder = idle ? KeyDecoder.idle(decoded.decoder).decoder : decoded.decoder
        }
      }),
      { numRuns: 1_000 }
    )
  })

  it("a stop key is found in a chunk before anything is decoded", () => {
    expect(KeyDecoder.stopKey(Buffer.from(`${PASTE_START}${"x".repeat(1000)}\u0003`))).toBe("interrupt")
    expect(KeyDecoder.stopKey(Buffer.from("a\u001cb\u0003"))).toBe("quit")
    expect(KeyDecoder.stopKey(Buffer.from("γάμμα 😀 \u001b[A"))).toBeUndefined()
  })

  it("cutting typed input anywhere, delivered at once, decodes it the same", () => {
    const units = fc.constantFrom("a", "b", "\r", "\u007f", "\u001b[A", "\u001b[3~", "é", "😀", "\u0001", "\u001bOF")
    fc.assert(
      fc.property(fc.string({ unit: units, maxLength: 40 }), fc.array(fc.nat(200), { maxLength: 6 }), (typed, cuts) => {
        expect(merged(decodeAll(cutAt(Buffer.from(typed, "utf8"), cuts)))).toEqual(merged(once(typed)))
      }),
      { numRuns: 500 }
    )
  })

  it("no escape sequence becomes text: 2,000 generated control strings, mouse reports and long CSIs in typed text, cut anywhere, leave exactly the typed text", () => {
    const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)), maxLength: 80 })
    const sequences = fc.oneof(
      // OSC, ended by BEL or ST (a terminal's colour or title reply).
      fc.tuple(fc.string({ unit: fc.constantFrom("1", "1;", "rgb:", "0000/", "é", "界", "😀", " ", "\\", "]"), maxLength: 30 }), fc.constantFrom("\u0007", "\u001b\\"))
        .map(([body, end]) => `\u001b]${body}${end}`),
      // DCS, SOS, PM, APC, ended by ST.
      fc.tuple(fc.constantFrom("P", "X", "^", "_"), printable).map(([start, body]) => `\u001b${start}${body}\u001b\\`),
      // An X10 mouse report: three characters, anything printable.
      fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)), minLength: 3, maxLength: 3 })
        .map((report) => `\u001b[M${report}`),
      // A CSI longer than any key's, up to its final byte.
      fc.tuple(fc.string({ unit: fc.constantFrom("1", ";", "0", "?", "<", " "), minLength: 65, maxLength: 300 }), fc.integer({ min: 0x40, max: 0x7e }))
        .map(([params, final]) => `\u001b[${params}${String.fromCharCode(final)}`)
    )
    const typed = fc.string({ unit: fc.constantFrom("a", "b", "y", " ", "[", "]", "M", "\\", "é", "😀", "~", "1"), maxLength: 12 })
    fc.assert(
      fc.property(fc.array(fc.tuple(typed, sequences), { maxLength: 5 }), typed, fc.array(fc.nat(2000), { maxLength: 8 }), (parts, last, cuts) => {
        const bytes = Buffer.from(parts.map(([text, sequence]) => text + sequence).join("") + last, "utf8")
        const inputs = decodeAll(cutAt(bytes, cuts))
        expect(inputs.filter((input) => input._tag !== "Text")).toEqual([])
        expect(inputs.map((input) => (input._tag === "Text" ? input.text : "")).join("")).toBe(parts.map(([text]) => text).join("") + last)
      }),
      { numRuns: 2_000 }
    )
  })

  it("a cursor position report is a report, never text or a key, however cut; inside or after a paste it is dropped: 1,000 generated", () => {
    const typed = fc.string({ unit: fc.constantFrom("a", "y", "\r", "[", "R", ";", "1", "é"), maxLength: 8 })
    const position = fc.tuple(fc.integer({ min: 1, max: 99_999 }), fc.integer({ min: 1, max: 99_999 }))
    let reports = 0
    fc.assert(
      fc.property(fc.array(fc.tuple(typed, position), { maxLength: 4 }), typed, fc.array(fc.nat(400), { maxLength: 6 }), (parts, last, cuts) => {
        const text = parts.map(([before, [row, column]]) => `${before}\u001b[${row};${column}R`).join("") + last
        const inputs = decodeAll(cutAt(Buffer.from(text, "utf8"), cuts))
        const found = inputs.filter((input) => input._tag === "Report")
        reports += found.length
        expect(found).toEqual(parts.map(([, [row, column]]) => ({ _tag: "Report", row, column })))
        const typedText = inputs.map((input) => (input._tag === "Text" ? input.text : "")).join("")
        expect(typedText).toBe(parts.map(([before]) => before.replace(/\r/g, "")).join("") + last.replace(/\r/g, ""))
        // The same reports pasted, or after a paste's end marker (a terminal that lets it through): none is a report.
        for (const pasted of [`\u001b[200~${text}\u001b[201~`, `\u001b[200~x\u001b[201~${text}`]) {
          expect(decodeAll(cutAt(Buffer.from(pasted, "utf8"), cuts)).filter((input) => input._tag === "Report")).toEqual([])
        }
      }),
      { numRuns: 1_000 }
    )
    console.log(`cursor position reports: 1,000 generated inputs, ${reports} reports decoded, none from a paste`)
  })

  it("a control string or CSI never ended is dropped until the terminal is idle; what is typed after is typed", () => {
    expect(decodeAll(["ab\u001b]11;rgb:0000/", "0000/0000 and more", IDLE, "typed"])).toEqual([
      { _tag: "Text", text: "ab" },
      { _tag: "Text", text: "typed" }
    ])
    expect(decodeAll(["\u001bP1$r", "\u001b", IDLE, "x"])).toEqual([{ _tag: "Text", text: "x" }])
    expect(decodeAll([`\u001b[${"1;".repeat(200)}`, IDLE, "x"])).toEqual([{ _tag: "Text", text: "x" }])
    // An ESC inside a string ends it and is a sequence of its own.
    expect(once("\u001b]0;title\u001b[Ax")).toEqual([{ _tag: "Key", name: "up", ctrl: false, meta: false }, { _tag: "Text", text: "x" }])
    // A string being dropped is not forgotten: its rest is never typed.
    const cut = KeyDecoder.decode(KeyDecoder.initial, Buffer.from("\u001b]11;rgb:")).decoder
    expect(KeyDecoder.decode(KeyDecoder.forget(cut), Buffer.from("0000\u0007y")).inputs).toEqual([{ _tag: "Text", text: "y" }])
    expect(KeyDecoder.waiting(cut)).toBe(true)
  })

  it("a paste whose ESC came a quiet spell before the rest of its start marker is a paste: 1,000 generated, cut anywhere after the marker", () => {
    const ESCAPE = { _tag: "Key", name: "escape", ctrl: false, meta: false }
    // The red team's answer: DELs to erase the marker's rest, then y and Enter.
    const attack = decodeAll(["\u001b", IDLE, `[200~\u007f\u007f\u007f\u007f\u007fy\r${PASTE_END}`])
    expect(attack).toEqual([ESCAPE, { _tag: "Paste", text: "y\n" }])
    // A person's Escape, then typing: typed.
    expect(decodeAll(["\u001b", IDLE, "[20y"])).toEqual([ESCAPE, { _tag: "Text", text: "[20y" }])
    expect(decodeAll(["\u001b", IDLE, "a", "[200~"])).toEqual([ESCAPE, { _tag: "Text", text: "a" }, { _tag: "Text", text: "[200~" }])
    const units = fc.constantFrom("a", " ", "\r", "\n", "y", "\u007f", "\u001b", "[", "201~", PASTE_END, "\u001b[A")
    fc.assert(
      fc.property(fc.string({ unit: units, maxLength: 60 }), fc.array(fc.nat(200), { maxLength: 6 }), (content, cuts) => {
        const rest = Buffer.from(`${content}${PASTE_END}`, "utf8")
        const chunks = cutAt(rest, cuts)
        const inputs = decodeAll(["\u001b", IDLE, Buffer.concat([Buffer.from("[200~"), chunks[0] ?? new Uint8Array(0)]), ...chunks.slice(1)])
        expect(inputs[0]).toEqual(ESCAPE)
        expect(inputs.slice(1).filter((input) => input._tag === "Key" || input._tag === "Text")).toEqual([])
      }),
      { numRuns: 1_000 }
    )
  })

  it("a start marker's beginning set aside stays set aside across reads of cursor position reports (an approval asked anew asks for one)", () => {
    const ESCAPE = { _tag: "Key", name: "escape", ctrl: false, meta: false }
    const REPORT = { _tag: "Report", row: 23, column: 11 }
    const rest = `\u0015y\r${PASTE_END}`
    const cases = [
      // Alone in its read, with more reports, or in one read with the marker's rest.
      [["\u001b", IDLE, "\u001b[23;11R", `[200~${rest}`], [ESCAPE, REPORT]],
      [["\u001b", IDLE, "\u001b[23;11R\u001b[23;11R", `[200~${rest}`], [ESCAPE, REPORT, REPORT]],
      [["\u001b", IDLE, `\u001b[23;11R[200~${rest}`], [ESCAPE, REPORT]],
      // A cut held when the question starts (forget), then a report, then the rest.
      ...["\u001b[", "\u001b[2", "\u001b[20", "\u001b[200"].map((cut) => [[cut, FORGET, "\u001b[23;11R", `${"\u001b[200~".slice(cut.length)}${rest}`], [REPORT]] as const)
    ] as const
    for (const [chunks, before] of cases) {
      const inputs = decodeForgetting(chunks)
      expect(inputs.slice(0, before.length)).toMatchObject(before)
      // The rest is one paste: never a key, never typed text.
      expect(inputs.slice(before.length)).toEqual([{ _tag: "Paste", text: "y\n" }])
    }
    console.log(`set-aside marker beginnings across reports: ${cases.length} cases`)
  })

  it("a megabyte paste is a few inputs, decoded in one linear pass", () => {
    const text = "x".repeat(1 << 20)
    const inputs = once(`${PASTE_START}${text}${PASTE_END}`)
    expect(inputs).toEqual([{ _tag: "Paste", text }])
  })
})
