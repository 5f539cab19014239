/**
 * No function in `src` is over 80 lines of code (lines holding something besides
 * blanks and comments) unless it is data: a long closure over many `let`s is
 * where the next timing bug hides, and its decisions belong in a pure core over
 * a named state record, tested by table or property (`terminal/input/InputGate.ts`
 * and `LineEditor.ts` are written so).
 *
 * `ALLOWED` lists the functions over the limit today, being rewritten elsewhere.
 * It can only shrink: a function not on it fails the test when it passes 80
 * lines, and one on it fails the test once it is back under (remove it then).
 */
import { describe, expect, it } from "@effect/vitest"
import { functions, type Measured } from "./Functions.js"
import { type Source, sources } from "./Sources.js"

const LIMIT = 80

/** `path name`, with its length when this list was written (for information: a rewrite may move it). */
const ALLOWED: Readonly<Record<string, number>> = {
}

const key = (measured: Measured) => `${measured.path} ${measured.name}`

const long = (files: ReadonlyArray<Source>) => files.flatMap(functions).filter((measured) => measured.lines > LIMIT)

describe(`functions in src (at most ${LIMIT} lines of code)`, () => {
  it("none is longer, except the ones still allowed; none allowed is back under", () => {
    const all = sources()
    const measured = all.flatMap(functions)
    const over = long(all)
    console.log(`${measured.length} functions in ${all.length} files; over ${LIMIT} lines of code:\n` +
      over.map((entry) => `  ${entry.lines}\t${entry.path}:${entry.line}\t${entry.name}`).join("\n"))
    expect(measured.length).toBeGreaterThan(500)
    const fresh = over.filter((entry) => !(key(entry) in ALLOWED)).map((entry) => `${key(entry)}: ${entry.lines} lines (src/${entry.path}:${entry.line})`)
    expect(fresh).toEqual([])
    const back = Object.keys(ALLOWED).filter((name) => !over.some((entry) => key(entry) === name))
      .map((name) => `${name} is ${LIMIT} lines or fewer now (or gone): remove it from ALLOWED in test/structure/FunctionLength.test.ts`)
    expect(back).toEqual([])
  })

  it("counts lines of code, names a function by where it is defined, and counts an Effect.gen body once", () => {
    const text = [
      "/** A doc comment. */",
      "export const make = (a: number) =>",
      "  Effect.gen(function*() {",
      "    // a comment",
      "",
      "    const b = `one",
      "two`",
      "    return { run: () => a + b.length }",
      "  })",
      "class Box {",
      "  open(): void {}",
      "}"
    ].join("\n")
    expect(functions({ path: "x.ts", text }).map(({ lines, line, name }) => ({ lines, line, name }))).toEqual([
      { name: "make", line: 2, lines: 6 },
      { name: "make.run", line: 8, lines: 1 },
      { name: "Box.open", line: 11, lines: 1 }
    ])
  })
})
