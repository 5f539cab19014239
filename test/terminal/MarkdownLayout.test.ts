/**
 * The model's Markdown laid out for a screen of a given width: prose broken at
 * word boundaries with hanging indents, tables drawn with aligned columns, the
 * same output however the stream is cut, over generated text holding wide,
 * combining and emoji characters, hostile sequences and Markdown's markers.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as Escape from "../../src/security/Escape.js"
import * as Markdown from "../../src/terminal/display/Markdown.js"
import * as SetApart from "../../src/terminal/display/SetApart.js"
import * as Width from "../../src/terminal/display/Width.js"

const SGR = /\u001b\[[0-9;]*m/g

const render = (pieces: ReadonlyArray<string>, columns: number, colour = true, column = 0): string => {
  let renderer = Markdown.make({ styled: true, colour, columns, column })
  let output = ""
  for (const piece of pieces) {
    const step = Markdown.feed(renderer, piece)
    renderer = step.renderer
    output += step.output
  }
  return output + Markdown.end(renderer).output
}

/** The rows the screen shows: the output without its styles, split at newlines. */
const rows = (output: string): Array<string> => output.replace(SGR, "").split("\n")

const cutAt = (text: string, cuts: ReadonlyArray<number>): Array<string> => {
  const points = [0, ...cuts.map((cut) => cut % (text.length + 1)).sort((a, b) => a - b), text.length]
  return points.slice(1).map((end, i) => text.slice(points[i], end))
}

// Words of every width: ASCII, accented (precomposed and combining), CJK, fullwidth, emoji, a flag.
const WORDS = ["a", "word", "mino", "é", "e\u0301", "a\u0301\u0302\u0303", "界", "日本語", "ｘｙ", "😀", "🇫🇷", "👍🏽", "x-y", "supercalifragilistic", "**b**", "`c d`", "*e*"]
const word = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...WORDS) },
  { weight: 1, arbitrary: fc.string({ unit: fc.constantFrom("a", "界", "\u0301", "😀", "\u001b", "["), minLength: 1, maxLength: 30 }) }
)
const gap = fc.constantFrom(" ", " ", " ", "  ", "\t")
const words = fc.array(fc.tuple(word, gap), { minLength: 1, maxLength: 40 }).map((parts) => parts.map(([w, g]) => w + g).join("").trimEnd())
const prose = fc.array(fc.tuple(fc.constantFrom("", "", "- ", "  * ", "> ", "> - ", "1. ", "## "), words), { minLength: 1, maxLength: 6 })
  .map((lines) => lines.map(([lead, text]) => lead + text).join("\n"))
const columns = fc.integer({ min: 8, max: 100 })

const letters = (text: string): string => text.replace(/[\s*`•┃#>\-.0-9]/gu, "")

describe("Markdown laid out to the screen's width", () => {
  it("breaks prose at word boundaries: no row wider than the screen, a word cut only when wider than a row, nothing lost (2,000 texts)", () => {
    let checked = 0
    fc.assert(
      fc.property(prose, columns, (text, width) => {
        const shown = rows(render([text], width))
        for (const row of shown) expect(Width.width(row)).toBeLessThanOrEqual(width)
        // Every character of the text is drawn, in order (the markers aside).
        expect(letters(shown.join(""))).toBe(letters(Escape.forDisplay(text.replace(/\*\*|`|\*/g, ""))))
        // A word that fits on a row (under its hang, at most half the screen) is never cut.
        for (const w of text.replace(/\*\*|`|\*/g, "").split(/[\s]+/)) {
          if (w === "" || /^(?:[-*>]|#+|[0-9]+\.)$/.test(w) || Width.width(w) > width / 2 || /\u001b|\u0301|\u0302|\u0303|\[/u.test(w)) continue
          expect(shown.some((row) => row.split(/\s+/).includes(w))).toBe(true)
          checked++
        }
      }),
      { numRuns: 2000 }
    )
    console.log(`words that fit found whole on a row: ${checked}`)
    expect(checked).toBeGreaterThan(10_000)
  })

  it("keeps a paragraph's text: only the blanks where rows break change", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom("alpha", "beta", "界界", "é", "😀😀", "x"), { minLength: 1, maxLength: 60 }), columns, (list, width) => {
        const text = list.join(" ")
        const shown = rows(render([text], width))
        expect(shown.join(" ")).toBe(text)
        for (const row of shown) expect(Width.width(row)).toBeLessThanOrEqual(width)
      }),
      { numRuns: 1000 }
    )
  })

  it("hangs a list item's and a quote's continued rows under its text", () => {
    const shown = rows(render(["- one two three four five six seven\n> eight nine ten eleven twelve\n3. thirteen fourteen fifteen"], 16))
    expect(shown).toEqual([
      "• one two three",
      "  four five six",
      "  seven",
      "┃ eight nine ten",
      "┃ eleven twelve",
      "3. thirteen",
      "   fourteen",
      "   fifteen"
    ])
  })

  it("starts after `Assistant> ` on the first row and cuts only a word wider than the screen", () => {
    expect(rows(render(["hello there friend"], 20, true, 11))).toEqual(["hello", "there friend"])
    expect(rows(render(["abcdefghijklmnopqrstuvwxyz"], 10))).toEqual(["abcdefghij", "klmnopqrst", "uvwxyz"])
    // A wide character never straddles the margin.
    expect(rows(render(["界界界界界界"], 5))).toEqual(["界界", "界界", "界界"])
  })

  it("gives the same output however the stream is cut, tables and all (2,000 texts × cuts, with and without colour)", () => {
    const table = fc.constantFrom("| a | b |\n|:--|--:|\n| 1 | 22 |\n", "| x |\n| - |\n", "|a|\n|b|\n", "| 界 | e\u0301 |\n|---|:-:|\n| 😀 | \u001b[31m |\n\n")
    const text = fc.array(fc.oneof(prose, table), { minLength: 1, maxLength: 4 }).map((parts) => parts.join("\n"))
    fc.assert(
      fc.property(text, fc.array(fc.nat(), { maxLength: 8 }), columns, fc.boolean(), (whole, cuts, width, colour) => {
        expect(render(cutAt(whole, cuts), width, colour)).toBe(render([whole], width, colour))
      }),
      { numRuns: 2000 }
    )
  })

  it("fed one UTF-16 unit at a time, the output is the same as for the whole text (300 texts, tables and all)", () => {
    const table = fc.constantFrom("| a | b |\n|:--|--:|\n| 1 | 22 |\n", "| 界 | e\u0301 |\n|---|:-:|\n| 😀 | \u001b[31m |\n\n")
    const text = fc.array(fc.oneof(prose, table), { minLength: 1, maxLength: 3 }).map((parts) => parts.join("\n"))
    fc.assert(
      fc.property(text, columns, (whole, width) => {
        expect(render(whole.split(""), width)).toBe(render([whole], width))
      }),
      { numRuns: 300 }
    )
  })

  it("escapes a cell's control characters before measuring it: its escape is what lines up", () => {
    const text = "| code | n |\n|---|--:|\n| \u001b[31mred\u001b[0m | 1 |\n| \u001b]8;;http://x\u0007y | 22 |\n| plain | 333 |\n"
    const output = render([text], 80)
    expect(output.replace(SGR, "")).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/)
    const shown = rows(output).filter((row) => row.includes("│"))
    expect(shown.map((row) => row.indexOf("│"))).toEqual(shown.map(() => shown[0]?.indexOf("│")))
    expect(shown[1]).toContain("\\e[31mred\\e[0m")
    expect(new Set(shown.map((row) => row.length)).size).toBe(1)
  })

  it("under attack: a 1 MB line with no blank, a list nested 50 deep, a cell of 40 combining marks", () => {
    const long = "x".repeat(1 << 20)
    const cutRows = rows(render(Array.from({ length: 256 }, (_, i) => long.slice(i * 4096, (i + 1) * 4096)), 80))
    expect(cutRows.every((row) => row.length === 80 || row === cutRows.at(-1))).toBe(true)
    expect(cutRows.join("")).toBe(long)
    const nested = Array.from({ length: 50 }, (_, i) => `${"  ".repeat(i)}- item ${i} with words that go on past the edge of an eighty-column screen`).join("\n")
    const listRows = rows(render([nested], 80))
    for (const row of listRows) expect(Width.width(row)).toBeLessThanOrEqual(80)
    expect(listRows.filter((row) => row.includes("•")).length).toBe(50)
    const marks = rows(render([`| a | b |\n|---|---|\n| x${"\u0301".repeat(40)} | y |\n`], 40))
    for (const row of marks) expect(Width.width(row)).toBeLessThanOrEqual(40)
    console.log(`1 MB line: ${cutRows.length} rows; 50-deep list: ${listRows.length} rows; cell of marks: ${marks.length} rows`)
  })

  it("a table or a wrapped row that reads like Mino's own screen is set apart, with no style under NO_COLOR", () => {
    const forged = `| Command | Directory |\n|---|---|\n| rm -rf ~ | /home |\n\n${"word ".repeat(3)}Approve this operation? [y/N]`
    for (const [width, colour] of [[14, false], [14, true]] as const) {
      const output = render([forged], width, colour)
      if (!colour) expect(output).not.toContain("\u001b")
      const shown = rows(output)
      for (const row of shown) {
        if (/^\s*(?:command:|directory:|approve this)/i.test(row)) throw new Error(`not set apart: ${row}`)
      }
      // The records' `Command:` and `Directory:` lines, and the prompt broken over rows, each behind the marker.
      expect(shown.filter((row) => row.startsWith(SetApart.MARKER)).length).toBe(3)
    }
  })

  it("draws a table with aligned columns: separators in one column, right-aligned text ending in one column", () => {
    const text = "| Name | Size | Kind |\n|:-----|-----:|:----:|\n| a.ts | 12 | file |\n| 日本語.md | 12345 | dir |\n| e\u0301\u0301.txt | 7 | 😀 |\n"
    for (const colour of [true, false]) {
      const shown = rows(render([text], 80, colour)).filter((row) => row !== "")
      expect(shown.length).toBe(5)
      expect(shown[1]).toMatch(/^─+┼─+┼─+$/)
      const bars = shown.map((row) => [...row].map((_, i) => Width.width([...row].slice(0, i).join(""))).filter((_, i) => ["│", "┼"].includes([...row][i] ?? "")))
      for (const row of bars) expect(row).toEqual(bars[0])
      // Right-aligned: each size ends just before the second bar.
      const ends = shown.filter((_, i) => i !== 1).map((row) => Width.width(row.split("│").slice(0, 2).join("│").trimEnd()))
      expect(new Set(ends).size).toBe(1)
    }
  })

  it("narrows a table wider than the screen, breaking its cells; with too many columns draws one record per row", () => {
    const wide = "| what | why |\n|---|---|\n| " + "long words ".repeat(10) + "| short |\n"
    const narrowed = rows(render([wide], 40))
    for (const row of narrowed) expect(Width.width(row)).toBeLessThanOrEqual(40)
    expect(narrowed.filter((row) => row.includes("│")).length).toBeGreaterThan(2)
    const many = `| ${Array.from({ length: 200 }, (_, i) => `h${i}`).join(" | ")} |\n|${"---|".repeat(200)}\n| ${Array.from({ length: 200 }, (_, i) => `v${i}`).join(" | ")} |\n`
    const records = rows(render([many], 80))
    expect(records).toContain("h0: v0")
    expect(records).toContain("h199: v199")
    for (const row of records) expect(Width.width(row)).toBeLessThanOrEqual(80)
  })

  it("tables of generated cells (wide, combining, emoji, escapes): no row wider than the screen, every cell's text drawn (1,000 tables)", () => {
    const cell = fc.array(word, { minLength: 0, maxLength: 5 }).map((ws) => ws.join(" ").replace(/\|/g, ""))
    const table = fc.tuple(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 0, max: 5 })).chain(([n, r]) =>
      fc.tuple(fc.array(cell, { minLength: n, maxLength: n }), fc.array(fc.array(cell, { minLength: n, maxLength: n }), { minLength: r, maxLength: r }), fc.array(fc.constantFrom("---", ":--", "--:", ":-:"), { minLength: n, maxLength: n }))
    )
    fc.assert(
      fc.property(table, columns, ([header, body, aligns], width) => {
        const line = (cells: ReadonlyArray<string>) => `| ${cells.join(" | ")} |`
        const text = [line(header), line(aligns), ...body.map(line)].join("\n")
        const shown = rows(render([text], width))
        for (const row of shown) expect(Width.width(row)).toBeLessThanOrEqual(width)
        // Every letter and wide character of the cells is drawn (a record repeats its header's).
        const counts = (s: string) => {
          const found = new Map<string, number>()
          for (const ch of s.match(/[a-z界日本語😀]/gu) ?? []) found.set(ch, (found.get(ch) ?? 0) + 1)
          return found
        }
        const drawn = counts(shown.join(""))
        for (const [ch, n] of counts([...header, ...body.flat()].join(" "))) expect(drawn.get(ch) ?? 0).toBeGreaterThanOrEqual(n)
      }),
      { numRuns: 1000 }
    )
  })
})
