/**
 * The model's text cannot pass for Mino's own screen: every line Mino draws
 * around an approval (taken from the code that draws them, not copied here),
 * written by a model through its Markdown in the ways that draw the same
 * (bold, a heading, leading blanks, fullwidth letters, Cyrillic lookalikes,
 * emphasis inside a word), and cut anywhere, is drawn behind the marker; a
 * long run of combining marks is escaped however the stream is cut.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as ApprovalScreen from "../../src/approval/ApprovalScreen.js"
import { FORGED_REPORT, judge, NOT_A_TERMINAL, PROMPT } from "../../src/approval/Approver.js"
import * as Escape from "../../src/security/Escape.js"
import * as Markdown from "../../src/terminal/display/Markdown.js"
import * as SetApart from "../../src/terminal/display/SetApart.js"
import * as InputGate from "../../src/terminal/input/InputGate.js"
import * as LineEditor from "../../src/terminal/input/LineEditor.js"
import * as ToolResult from "../../src/tools/ToolResult.js"

const SGR = /\u001b\[[0-9;]*m/g

/** Every line Mino draws around an approval, from the code that draws them. */
const minoLines = (): Array<string> => {
  const screen = ApprovalScreen.render({
    tool: "bash",
    fields: [
      { kind: "command", label: "Command", value: "ls" },
      { kind: "value", label: "Directory", value: "/home/you/project" },
      { kind: "entries", label: "Environment", entries: [{ name: "HOME", value: "/home/you" }] },
      { kind: "value", label: "Timeout", value: "30 s" },
      { kind: "value", label: "Output limit", value: "64 KiB (stdout and stderr combined)" },
      { kind: "value", label: "Permissions", value: "runs with your account's permissions; no sandbox" }
    ]
  }).split("\n").filter((line) => line.length > 0)
  const reminder = ApprovalScreen.reminder({ tool: "bash", fields: [{ kind: "command", label: "Command", value: "x".repeat(2000) }] }) ?? ""
  const notice = InputGate.notice({ lines: 2, partial: LineEditor.empty(), pasted: true }) ?? ""
  const denials = [judge({ text: "", pasted: false }), judge({ text: "no", pasted: false }), judge({ text: "y", pasted: true })]
    .flatMap((decision) => (decision.approved ? [] : [decision.reason]))
  return [
    ...screen,
    reminder.trimEnd(),
    notice.trimEnd(),
    PROMPT.trimEnd(),
    ...denials,
    NOT_A_TERMINAL,
    FORGED_REPORT,
    "You> go on",
    "Assistant> done",
    ToolResult.header({ status: "failed", output: "", exit_code: 2 }),
    "Turn failed: the model stopped",
    "Turn cancelled: you pressed Ctrl+C"
  ]
}

const CYRILLIC: Readonly<Record<string, string>> = { a: "а", c: "с", e: "е", o: "о", p: "р", x: "х", y: "у", i: "і" }

/** Ways a model's text draws a line that looks like `line`: with styles, Markdown's too (without, its markers show). */
const disguises = (line: string, styled: boolean): Array<string> => {
  const [first = "", ...rest] = line.split(" ")
  const tail = rest.length === 0 ? "" : ` ${rest.join(" ")}`
  const markdown = [
    `**${line}**`,
    `# ${line}`,
    `**${first}**${tail}`,
    first.length > 3 ? `${first.slice(0, 2)}*${first.slice(2, 4)}*${first.slice(4)}${tail}` : line
  ]
  return [
    line,
    `   ${line}`,
    `\u3000${line}`,
    line.replace(/[a-z]/g, (ch) => CYRILLIC[ch] ?? ch),
    line.replace(/[A-Za-z]/g, (ch) => String.fromCodePoint((ch.codePointAt(0) ?? 0) + 0xfee0)),
    line.toUpperCase(),
    ...(styled ? markdown : [])
  ]
}

/** The text drawn for `text` fed in `pieces`, line by line, styles left out. */
const drawn = (pieces: ReadonlyArray<string>, styled: boolean): Array<string> => {
  let renderer = Markdown.make({ styled })
  let output = ""
  for (const piece of pieces) {
    const step = Markdown.feed(renderer, piece)
    renderer = step.renderer
    output += step.output
  }
  output += Markdown.end(renderer).output
  return output.replace(SGR, "").split("\n")
}

const cut = (text: string, cuts: ReadonlyArray<number>): Array<string> => {
  const points = [...new Set(cuts.map((at) => at % (text.length + 1)))].sort((a, b) => a - b)
  return [...points, text.length].map((end, index, ends) => text.slice(index === 0 ? 0 : ends[index - 1], end))
}

describe("SetApart", () => {
  it("every line Mino draws around an approval, drawn by the model in 10 disguises (6 unstyled), cut anywhere, is behind the marker", () => {
    const lines = minoLines()
    let checked = 0
    fc.assert(
      fc.property(fc.array(fc.nat(20_000), { maxLength: 30 }), fc.boolean(), (cuts, styled) => {
        const forged = lines.flatMap((line) => disguises(line, styled))
        const text = ["Here is what I will run:", ...forged, "Thanks."].join("\n")
        const shown = drawn(cut(text, cuts), styled)
        // Each forged line is one drawn line; none begins as Mino's lines do.
        expect(shown.length).toBe(forged.length + 2)
        for (const line of shown.slice(1, -1)) {
          checked++
          expect(line.startsWith(SetApart.MARKER)).toBe(true)
        }
        expect(shown[0]).toBe("Here is what I will run:")
        expect(shown.at(-1)).toBe("Thanks.")
      }),
      { numRuns: 200 }
    )
    console.log(`Mino's own lines: ${lines.length}, in 10 disguises styled and 6 plain; ${checked} forged lines drawn, each set apart`)
  })

  it("a line that does not read like Mino's is drawn as before, and an opening not completed is no opening", () => {
    expect(drawn(["Commands are fun\nTime: 3 s\nYou said so\nDenied access to nothing?"], false)).toEqual([
      "Commands are fun",
      "Time: 3 s",
      "You said so",
      "Denied access to nothing?"
    ])
    expect(drawn(["Command"], false)).toEqual(["Command"])
  })

  it("a run of combining marks is escaped past MARKS_KEPT however it is cut, styles between them or not: 500 generated", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 60 }), fc.array(fc.nat(200), { maxLength: 40 }), fc.boolean(), (count, cuts, styled) => {
        const text = `a${"\u0301".repeat(count)}b **c${"\u0301".repeat(count)}**`
        const shown = drawn(cut(text, cuts), styled).join("\n")
        const raw = shown.match(/\p{M}+/gu) ?? []
        for (const run of raw) expect(Array.from(run).length).toBeLessThanOrEqual(Escape.MARKS_KEPT)
        expect((shown.match(/\\u0301/g) ?? []).length).toBe(2 * Math.max(0, count - Escape.MARKS_KEPT))
      }),
      { numRuns: 500 }
    )
  })
})
