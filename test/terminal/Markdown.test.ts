import { PassThrough } from "node:stream"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fc from "fast-check"
import * as Gateway from "../../src/cli/Gateway.js"
import * as Escape from "../../src/security/Escape.js"
import { Secrets } from "../../src/security/Secrets.js"
import * as Markdown from "../../src/terminal/display/Markdown.js"
import { Terminal } from "../../src/terminal/Terminal.js"
import { cutAt as cutText, textInPieces } from "../hostile/Streams.js"
import { agentLayer, API_KEY, scriptedModel, tempDir } from "../support/Harness.js"
import * as Screen from "../support/Screen.js"

// ---------------------------------------------------------------------------
// Helpers

/** Feeds the pieces in turn, then ends: everything written. */
const render = (pieces: ReadonlyArray<string>, styled = true, spanLimit = Markdown.SPAN_LIMIT): string => {
  let renderer = Markdown.make({ styled, spanLimit })
  let output = ""
  for (const piece of pieces) {
    const step = Markdown.feed(renderer, piece)
    renderer = step.renderer
    output += step.output
  }
  return output + Markdown.end(renderer).output
}

/** The styles Markdown.ts writes: a reset, or parameters from its own set. */
const OWN_STYLE = /\u001b\[(?:0|(?:1|2|3|4|9|36)(?:;(?:1|2|3|4|9|36))*)m/g

/** Styles shown readably: `{1}bold{0}`. */
const readable = (output: string): string => output.replace(OWN_STYLE, (sgr) => `{${sgr.slice(2, -1)}}`)

/** What the screen draws: the text without the styles. */
const drawn = (output: string): string => output.replace(OWN_STYLE, "")

const styledText = (text: string): string => readable(render([text]))

/** `text` cut at the given offsets. */
const cutAt = (text: string, cuts: ReadonlyArray<number>): Array<string> => {
  const points = [0, ...cuts.map((cut) => cut % (text.length + 1)).sort((a, b) => a - b), text.length]
  return points.slice(1).map((end, i) => text.slice(points[i], end))
}

// Anything that can reach the screen raw and move the cursor, recolour, hide or reorder text.
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Default_Ignorable_Code_Point}]/u
const rawUnsafe = (text: string): Array<string> => [...text].filter((ch) => UNSAFE.test(ch) && ch !== "\ufe0e" && ch !== "\ufe0f")

const HOSTILE = [
  "\u001b[2J",
  "\u001b[1A\u001b[2K",
  "\u001b]8;;https://evil.example\u001b\\",
  "\u001b]52;c;cm0gLXJm\u0007",
  "\u009b31m",
  "\r",
  "\b",
  "\u202e",
  "\u2066",
  "\u200b",
  "\u{e0041}",
  "\ud800",
  "\udc00",
  "\u001b[1m"
]
const MARKUP = ["*", "**", "***", "*****", "`````", "--------", "_", "__", "`", "``", "```", "~~", "[", "]", "(", ")", "![", "<", ">", "#", "## ", "- ", "* ", "> ", "\\", "\n", "\n\n", "  ", "\t", "1. ", "---", "http://x.y/"]

/** Text built from Markdown markers, hostile sequences, words and arbitrary (non-ASCII, control) strings. */
const markdownish = fc
  .array(
    fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...MARKUP) },
      { weight: 2, arbitrary: fc.constantFrom(...HOSTILE) },
      { weight: 3, arbitrary: fc.constantFrom("word", "a", "b c", "snake_case", "2*3", "😀", "é", "x.y", ":", "sk-") },
      { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 4 }) }
    ),
    { maxLength: 40 }
  )
  .map((parts) => parts.join(""))

/** Span limits: small ones make the generated texts reach them. */
const limit = fc.constantFrom(4, 12, Markdown.SPAN_LIMIT)

// ---------------------------------------------------------------------------

describe("Markdown", () => {
  it("draws headings, emphasis, code, lists, quotes, rules and links with styles, markers taken away", () => {
    expect(styledText("# Title\n## Summary\n")).toBe("{1;4}Title{0}\n{1}Summary{0}\n")
    expect(styledText("**`tsc`** passes, *quickly*, ***both***, __strong__, _em_ and ~~gone~~.")).toBe(
      "{1;36}tsc{0} passes, {3}quickly{0}, {1;3}both{0}, {1}strong{0}, {3}em{0} and {9}gone{0}."
    )
    expect(styledText("- one\n  * nested `x`\n+ three\n1. first\n")).toBe("• one\n  • nested {36}x{0}\n• three\n1. first\n")
    expect(styledText("> quoted *em*\n>> deeper\n")).toBe("{2}┃ {0}quoted {3}em{0}\n{2}┃ ┃ {0}deeper\n")
    expect(styledText("---\n* * *\n")).toBe(`{2}${"─".repeat(40)}{0}\n{2}${"─".repeat(40)}{0}\n`)
    expect(styledText("See [the docs](https://x.y/a_(b)) or <https://c.d>, ![logo](l.png), [https://e.f](https://e.f).")).toBe(
      "See {4}the docs{0}{2} (https://x.y/a_(b)){0} or {4}https://c.d{0}, {4}logo{0}{2} (l.png){0}, {4}https://e.f{0}."
    )
    expect(styledText("## Use `npm test`")).toBe("{1}Use {0}{1;36}npm test{0}")
  })

  it("leaves what is not markup as written: intraword underscores, lone stars, unclosed markers, escapes", () => {
    for (
      const text of [
        "snake_case_name and file__name__x",
        "2 * 3 = 6",
        "**not closed",
        "`not closed",
        "[not a link] and [x]",
        "a < b > c",
        "#hashtag",
        "####### seven"
      ]
    ) expect(styledText(text)).toBe(text)
    expect(styledText("\\*not em\\* and \\`tick\\`")).toBe("*not em* and `tick`")
  })

  it("keeps a fenced code block verbatim behind a gutter, its info shown, nothing inside parsed", () => {
    const text = "Run:\n\n```sh title\nnpm test -- *.ts **x**\n\tindented `y`\n\n```\nafter *em*\n"
    expect(styledText(text)).toBe(
      "Run:\n\n{2}╭─ sh title{0}\n{2}│ {0}npm test -- *.ts **x**\n{2}│ {0}\tindented `y`\n{2}│ {0}\n{2}╰─{0}\nafter {3}em{0}\n"
    )
    // A longer fence holds a shorter one; a tilde fence; indentation moves before the gutter.
    expect(styledText("````md\n```\nin\n```\n````\n  ~~~\n  code\n ~~~\n")).toBe(
      "{2}╭─ md{0}\n{2}│ {0}```\n{2}│ {0}in\n{2}│ {0}```\n{2}╰─{0}\n  {2}╭─{0}\n  {2}│ {0}code\n  {2}╰─{0}\n"
    )
  })

  it("shows hostile text in code spans, links, URLs, headings and code blocks escaped", () => {
    const text = [
      "`\u001b[2J\u001b[H` and **\u001b]52;c;x\u0007**",
      "[click\u009b8m\u2066here](https://evil.example/\u001b]8;;https://evil.example\u0007\u001b[1A\u202e)",
      "<https://a.b/\u009b2J>",
      "# \u001b[8mhidden",
      "```\u001b[31m",
      "\u001b[2Kcode\r",
      "```"
    ].join("\n")
    const output = render([text])
    expect(rawUnsafe(drawn(output))).toEqual([])
    expect(readable(output)).toBe(
      [
        "{36}\\e[2J\\e[H{0} and {1}\\e]52;c;x\\x07{0}",
        "{4}click\\x9b8m\\u2066here{0}{2} (https://evil.example/\\e]8;;https://evil.example\\x07\\e[1A\\u202e){0}",
        "{4}https://a.b/\\x9b2J{0}",
        "{1;4}\\e[8mhidden{0}",
        "{2}╭─ \\e[31m{0}",
        "{2}│ {0}\\e[2Kcode\\r",
        "{2}╰─{0}"
      ].join("\n")
    )
  })

  it("unstyled (NO_COLOR, TERM=dumb, not a terminal) writes the text as written, escaped", () => {
    const text = "## Summary\n**`tsc`** [a](u)\n```js\nx\u001b[2J\n```\n"
    expect(render([text], false)).toBe(Escape.forDisplay(text))
  })

  it("writes text as it streams: plain text at once, a span when it closes, a line's start once it is known", () => {
    let renderer = Markdown.make({ styled: true })
    const step = (piece: string) => {
      const next = Markdown.feed(renderer, piece)
      renderer = next.renderer
      return readable(next.output)
    }
    expect(step("Hello wor")).toBe("Hello wor")
    expect(step("ld, **bo")).toBe("ld, ")
    expect(step("ld** and `co")).toBe("{1}bold{0} and ")
    expect(step("de` done\n- ")).toBe("{36}code{0} done\n")
    expect(step("item\n```")).toBe("• item\n")
    expect(step("ts\nconst")).toBe("{2}╭─ ts{0}\n{2}│ {0}const")
    expect(step(" a = 1\n``")).toBe(" a = 1\n")
    expect(step("`\nbye")).toBe("{2}╰─{0}\nbye")
    expect(readable(Markdown.end(renderer).output)).toBe("")
  })

  it(`an opening marker waits at most ${Markdown.SPAN_LIMIT} characters for its closer, then shows as typed`, () => {
    const long = "x".repeat(Markdown.SPAN_LIMIT + 10)
    const first = Markdown.feed(Markdown.make({ styled: true }), `say **${long}`)
    expect(first.output).toBe(`say **${long}`)
    const open = Markdown.feed(Markdown.make({ styled: true }), `say **${long.slice(0, 100)}`)
    expect(open.output).toBe("say ")
  })

  it("cut anywhere into pieces, the output is the same as for the whole text (3,000 texts × cuts, styled and plain)", () => {
    fc.assert(
      fc.property(markdownish, fc.array(fc.nat(400), { maxLength: 12 }), fc.boolean(), limit, (text, cuts, styled, spanLimit) => {
        expect(render(cutAt(text, cuts), styled, spanLimit)).toBe(render([text], styled, spanLimit))
      }),
      { numRuns: 3_000 }
    )
  })

  it("fed one UTF-16 unit at a time, the output is the same as for the whole text (1,000 texts)", () => {
    fc.assert(
      fc.property(markdownish, limit, (text, spanLimit) => {
        expect(render(text.split(""), true, spanLimit)).toBe(render([text], true, spanLimit))
      }),
      { numRuns: 1_000 }
    )
  })

  /** Whatever has come, at most this much of it waits: the span limit, and a delimiter run and what follows it. */
  const mostWaiting = (spanLimit: number) => spanLimit + 24

  it("keeps text appearing: at most the span limit (and a marker) ever waits (2,000 texts)", () => {
    fc.assert(
      fc.property(markdownish, limit, (text, spanLimit) => {
        let renderer = Markdown.make({ styled: true, spanLimit })
        let waited = 0
        for (const unit of text) {
          renderer = Markdown.feed(renderer, unit).renderer
          waited = Math.max(waited, renderer.pending.length)
        }
        expect(waited).toBeLessThanOrEqual(mostWaiting(spanLimit))
      }),
      { numRuns: 2_000 }
    )
  })

  it("a 20,000-character run of one marker streams with a bounded wait and the same output as whole", () => {
    for (const line of ["*", "`", "-", "_", "~", "#", ">", " ", "[", "\\"].map((ch) => ch.repeat(20_000))) {
      let renderer = Markdown.make({ styled: true })
      let output = ""
      let waited = 0
      for (let at = 0; at < line.length; at += 7) {
        const step = Markdown.feed(renderer, line.slice(at, at + 7))
        renderer = step.renderer
        output += step.output
        waited = Math.max(waited, renderer.pending.length)
      }
      expect(waited).toBeLessThanOrEqual(mostWaiting(Markdown.SPAN_LIMIT))
      expect(output + Markdown.end(renderer).output).toBe(render([line]))
    }
  })

  it("never writes an escape sequence but its own styles, nor any raw control, format or invisible character (3,000 texts)", () => {
    fc.assert(
      fc.property(markdownish, fc.array(fc.nat(400), { maxLength: 6 }), limit, (text, cuts, spanLimit) => {
        const output = render(cutAt(text, cuts), true, spanLimit)
        expect(rawUnsafe(drawn(output))).toEqual([])
        // Every style is closed by the end.
        expect(/\u001b\[(?!0m)[0-9;]*m(?![^]*\u001b\[0m)/.test(output)).toBe(false)
        expect(rawUnsafe(render([text], false))).toEqual([])
      }),
      { numRuns: 3_000 }
    )
  })

  it("loses nothing the model wrote: its letters and digits are all drawn, in order (3,000 texts)", () => {
    const alphanumerics = (text: string) => text.replace(/[^\p{L}\p{N}]/gu, "")
    fc.assert(
      fc.property(markdownish, limit, (text, spanLimit) => {
        expect(alphanumerics(drawn(render([text], true, spanLimit)))).toBe(alphanumerics(Escape.forDisplay(text)))
      }),
      { numRuns: 3_000 }
    )
  })

  it("a paragraph without markup is drawn exactly as its escaped text, with no style (2,000 texts)", () => {
    const paragraph = fc
      .string({ unit: fc.oneof(fc.constantFrom("a", "Z", "0", " ", ".", ",", ":", "é", "😀", "\n", "\t", "\u001b", "\u202e", "\r"), fc.string({ unit: "binary", minLength: 1, maxLength: 1 })) })
      .filter((text) => !/[\\`*_~[!<#>+-]/.test(text))
    fc.assert(
      fc.property(paragraph, (text) => {
        expect(render([text])).toBe(Escape.forDisplay(text))
      }),
      { numRuns: 2_000 }
    )
  })
})

// ---------------------------------------------------------------------------
// Through the Gateway, and the API key drawn across styles

/** One question answered with `pieces` of text, on a screen with or without styles. */
const answered = (pieces: ReadonlyArray<string>, decorated: boolean) =>
  Effect.gen(function*() {
    const server = yield* scriptedModel([textInPieces(pieces)])
    const screen = Screen.make(["hi"], { interactive: true, decorated, apiKey: API_KEY })
    const layer = agentLayer({ home: tempDir("markdown-home"), url: server.url, tools: [] }).pipe(Layer.provideMerge(screen.layer))
    yield* Effect.scoped(Effect.provide(Gateway.run({ banner: "BANNER" }), layer))
    return screen.screen()
  })

describe("the model's Markdown on the chat screen", () => {
  const answer = "## Summary\n**`tsc`** passes; see [docs](https://x.y).\n```sh\nnpm test\n```\nDone."

  it.scopedLive("is drawn styled as it streams, and plain (as written) without styles", () =>
    Effect.gen(function*() {
      const pieces = cutText(answer, [3, 9, 14, 22, 40, 41, 60, 70])
      const styled = yield* answered(pieces, true)
      expect(readable(styled)).toContain(
        "{36}Assistant>{0} {1}Summary{0}\n{1;36}tsc{0} passes; see {4}docs{0}{2} (https://x.y){0}.\n{2}╭─ sh{0}\n{2}│ {0}npm test\n{2}╰─{0}\nDone.\n"
      )
      const plainScreen = yield* answered(pieces, false)
      expect(plainScreen).toContain(`Assistant> ${answer}\n`)
      expect(plainScreen).not.toContain("\u001b")
    }))

  it.scopedLive("never shows the API key, even spelled across Markdown so that styles fall inside it (20 ways)", () =>
    Effect.gen(function*() {
      const forms = [
        `**${API_KEY.slice(0, 5)}**${API_KEY.slice(5)}`,
        `\`${API_KEY.slice(0, 9)}\`${API_KEY.slice(9)}`,
        `[${API_KEY.slice(0, 3)}**${API_KEY.slice(3, 7)}**${API_KEY.slice(7)}](https://x.y)`,
        `${API_KEY.slice(0, 4)}*${API_KEY.slice(4, 10)}*${API_KEY.slice(10)}`,
        `\n## ${API_KEY.slice(0, 6)}\`${API_KEY.slice(6)}\``
      ]
      for (const form of forms) {
        const text = `The key: ${form} end`
        for (const cuts of [[], [12], [14, 20], [text.length - 6]]) {
          const screen = yield* answered(cutText(text, cuts), true)
          expect(drawn(screen)).not.toContain(API_KEY)
          expect(drawn(screen)).toContain("[redacted]")
        }
      }
    }))

  it("the terminal redacts the key as drawn, styles anywhere in it, however the writes are cut (500 runs)", async () => {
    const KEY = API_KEY
    const STYLES = ["\u001b[1m", "\u001b[0m", "\u001b[1;36m", "\u001b[2m"]
    // Atoms: characters of text and whole style sequences; writes are cut between atoms.
    const atom = fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom(...Array.from(KEY), " ", "x") },
      { weight: 1, arbitrary: fc.constantFrom(...STYLES) }
    )
    const atoms = fc.array(fc.oneof(atom.map((a) => [a]), fc.constant(Array.from(KEY))), { maxLength: 12 }).map((groups) => groups.flat())
    const styled = fc.tuple(atoms, fc.array(fc.nat(60), { maxLength: 6 })).map(([list, stylesAt]) => {
      const out = [...list]
      for (const at of stylesAt) out.splice(at % (out.length + 1), 0, STYLES[at % STYLES.length] ?? "")
      return out
    })
    await fc.assert(
      fc.asyncProperty(styled, fc.array(fc.nat(80), { maxLength: 6 }), async (list, cuts) => {
        const points = [0, ...cuts.map((cut) => cut % (list.length + 1)).sort((a, b) => a - b), list.length]
        const writes = points.slice(1).map((end, i) => list.slice(points[i], end).join(""))
        const output = new PassThrough()
        let written = ""
        output.on("data", (chunk: Buffer) => void (written += chunk.toString("utf8")))
        await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
          const terminal = yield* Terminal.make({ input: new PassThrough(), output, interactive: true, decorated: true }).pipe(
            Effect.provide(Secrets.layer(KEY))
          )
          for (const text of writes) yield* terminal.write(text)
        })))
        await new Promise((resolve) => setImmediate(resolve))
        const whole = list.join("")
        expect(drawn(written)).not.toContain(KEY)
        expect(drawn(written)).toBe(drawn(whole).split(KEY).join("[redacted]"))
        // The styles are all still there, in order.
        expect(written.match(OWN_STYLE) ?? []).toEqual(whole.match(OWN_STYLE) ?? [])
      }),
      { numRuns: 500 }
    )
  })
})
