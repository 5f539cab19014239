/**
 * Mino's folders on floors: a file imports only from its own unit or from a
 * lower floor, so nothing runs upward and no two units import each other. The
 * floors are written down once, here (`FLOORS`); docs/architecture.md shows the
 * same table, and this test checks that it does. Every relative import in `src`
 * (type-only ones too, re-exports and `import()`) is checked; a failure names the
 * file, the import and the rule it breaks.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import ts from "typescript"
import { imports, type Source, sources, SRC } from "./Sources.js"

/** A unit: a folder (`tools/`: what is under it and under no longer entry) or named files. */
interface Unit {
  readonly name: string
  readonly paths: ReadonlyArray<string>
}

const folder = (path: string): Unit => ({ name: path, paths: [path] })
const files = (name: string, ...paths: ReadonlyArray<string>): Unit => ({ name, paths })

/** The floors, lowest first: each a few units that do not import each other. */
const FLOORS: ReadonlyArray<{ readonly what: string; readonly units: ReadonlyArray<Unit> }> = [
  {
    what: "ground: the Responses vocabulary, text safety and the key, what differs between operating systems, small values",
    units: [
      folder("protocol/"),
      folder("security/"),
      folder("platform/"),
      files("root utilities", "Json.ts", "Described.ts", "TextList.ts", "version.ts", "defaults.ts", "StopSignals.ts")
    ]
  },
  {
    what: "what a tool is, drawing text, the test server, the rules about endpoints and their errors",
    units: [folder("tools/"), folder("terminal/display/"), folder("testing/"), files("model rules", "model/Endpoint.ts", "model/ErrorBody.ts", "model/Adaptation.ts")]
  },
  {
    what: "bash, key input, request building, stream reading, the record format, the demo model",
    units: [folder("tools/bash/"), folder("terminal/input/"), folder("model/request/"), folder("model/stream/"), folder("session/records/"), folder("demo/")]
  },
  {
    what: "HTTP, the terminal service, the directory of conversations, the configuration",
    units: [folder("model/transport/"), folder("terminal/"), folder("session/directory/"), files("configuration", "Config.ts")]
  },
  { what: "the model client, the approver, one conversation's file", units: [folder("model/"), folder("approval/"), folder("session/conversation/")] },
  { what: "the session store", units: [folder("session/")] },
  { what: "the Agent", units: [folder("agent/")] },
  { what: "the composition root", units: [files("composition", "Mino.ts", "AgentParts.ts")] },
  { what: "the command line", units: [folder("cli/")] },
  { what: "entry points", units: [files("main", "main.ts"), files("library", "index.ts"), files("library's testing", "testing.ts")] }
]

/** Units that may hold no file yet (another change adds them). */
const MAY_BE_EMPTY: ReadonlySet<string> = new Set(["platform/"])

/**
 * Who may import the test server and its helpers (`src/testing/`): the library's
 * `mino-agent/testing`, the demo (a scripted model is a test server on loopback),
 * and the chat's practice request at start-up. Nothing else on a user's path.
 */
const TESTING_IMPORTERS: ReadonlyArray<string> = ["testing.ts", "demo/", "cli/ChatAgent.ts"]

interface Place {
  readonly floor: number
  readonly unit: Unit
}

/** Whether `entry` (a folder ending in `/`, or a file) covers `path`. */
const covers = (entry: string, path: string): boolean => entry.endsWith("/") ? path.startsWith(entry) : path === entry

/** The unit of `path`: the one with the longest entry covering it. */
const place = (path: string, floors: typeof FLOORS = FLOORS): Place | undefined => {
  let best: { place: Place; length: number } | undefined
  floors.forEach((floor, index) => {
    for (const unit of floor.units) {
      for (const entry of unit.paths) {
        if (covers(entry, path) && (best === undefined || entry.length > best.length)) {
          best = { place: { floor: index, unit }, length: entry.length }
        }
      }
    }
  })
  return best?.place
}

/** Lines holding an `import(` whose argument is not a string literal (comments and strings are skipped by the compiler's scanner). */
const computedImports = (file: Source): ReadonlyArray<number> => {
  const source = ts.createSourceFile(file.path, file.text, ts.ScriptTarget.Latest, true)
  const lines: Array<number> = []
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments
      if (argument === undefined || !ts.isStringLiteralLike(argument) || ts.isTemplateExpression(argument)) {
        lines.push(source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1)
      }
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return lines
}

/** What is wrong with each import of each file, as one line a reader can act on. */
const violations = (files: ReadonlyArray<Source>, floors: typeof FLOORS = FLOORS): ReadonlyArray<string> => {
  const known = new Set(files.map((file) => file.path))
  const found: Array<string> = []
  for (const file of files) {
    const from = place(file.path, floors)
    if (from === undefined) {
      found.push(`src/${file.path} is on no floor: add its folder to FLOORS in test/structure/Layering.test.ts (and the table in docs/architecture.md)`)
      continue
    }
    // An `import()` of a computed path names no file, so its direction cannot be checked.
    for (const computed of computedImports(file)) found.push(`src/${file.path}:${computed} imports a computed path: name the file, so its floor can be checked`)
    for (const imported of imports(file)) {
      const where = `src/${file.path}:${imported.line} imports "${imported.written}"`
      if (imported.target.startsWith("../")) {
        found.push(`${where}, outside src: src imports nothing from the tests or scripts`)
        continue
      }
      if (!known.has(imported.target)) {
        found.push(`${where}, which is no .ts file in src`)
        continue
      }
      if (imported.target.startsWith("testing/") && !TESTING_IMPORTERS.some((entry) => covers(entry, file.path)) && place(imported.target, floors)?.unit !== from.unit) {
        found.push(`${where}: only ${TESTING_IMPORTERS.join(", ")} may import src/testing/ (the test server is not on a user's path)`)
      }
      const to = place(imported.target, floors)
      if (to === undefined || to.unit === from.unit) continue
      if (to.floor >= from.floor) {
        const rule = to.floor === from.floor
          ? `${from.unit.name} and ${to.unit.name} share floor ${from.floor}, and units on one floor do not import each other`
          : `${from.unit.name} (floor ${from.floor}) imports only from lower floors, and ${to.unit.name} is on floor ${to.floor}`
        found.push(`${where} (src/${imported.target}): ${rule}`)
      }
    }
  }
  return found
}

/** The floors as the Markdown table docs/architecture.md shows, highest first (the way a reader looks down). */
const floorsTable = (floors: typeof FLOORS = FLOORS): string =>
  [
    "| floor | units (folders under `src/`, or files) | what |",
    "| ----- | --------------------------------------- | ---- |",
    ...floors.map((floor, index) => {
      const units = floor.units.map((unit) => unit.paths.length === 1 && unit.paths[0] === unit.name ? `\`${unit.name}\`` : `${unit.name} (${unit.paths.map((path) => `\`${path}\``).join(", ")})`)
      return `| ${index} | ${units.join(", ")} | ${floor.what} |`
    }).reverse()
  ].join("\n")

describe("src's layering", () => {
  const all = sources()

  it("every relative import runs down a floor or stays in its unit", () => {
    const count = all.reduce((sum, file) => sum + imports(file).length, 0)
    console.log(`src: ${all.length} files, ${count} relative imports checked against ${FLOORS.length} floors`)
    expect(all.length).toBeGreaterThan(50)
    expect(count).toBeGreaterThan(200)
    expect(violations(all)).toEqual([])
  })

  it("every unit of the table holds a file (none is left behind after a move)", () => {
    const empty = FLOORS.flatMap((floor) => floor.units)
      .filter((unit) => !MAY_BE_EMPTY.has(unit.name))
      .filter((unit) => !all.some((file) => place(file.path)?.unit === unit))
    expect(empty.map((unit) => unit.name)).toEqual([])
  })

  it("docs/architecture.md shows the same table", () => {
    const page = Fs.readFileSync(Path.join(SRC, "..", "docs", "architecture.md"), "utf8")
    expect(page).toContain(floorsTable())
  })

  it("the check names the file, the import and the rule when something runs upward, sideways, outside or into the test server", () => {
    const file = (path: string, ...lines: ReadonlyArray<string>): Source => ({ path, text: lines.join("\n") + "\n" })
    const found = violations([
      file("protocol/ResponseItem.ts", `import * as Agent from "../agent/Agent.js"`),
      file("agent/Agent.ts", `import type { X } from "../protocol/ResponseItem.js"`, `export { Y } from "../cli/Chat.js"`),
      file("cli/Chat.ts", `const later = () => import("../testing/ResponsesServer.js")`, `import "../../test/support/Harness.js"`),
      file("cli/Print.ts", `const name = "Chat"`, `const later = () => import(\`./\${name}.js\`)`, `// import("../agent/Agent.js")`),
      file("testing/ResponsesServer.ts", ``),
      file("tools/Tool.ts", `import { width } from "../terminal/display/Width.js"`),
      file("terminal/display/Width.ts", ``),
      file("Stray.ts", ``)
    ])
    expect(found).toEqual([
      `src/protocol/ResponseItem.ts:1 imports "../agent/Agent.js" (src/agent/Agent.ts): protocol/ (floor 0) imports only from lower floors, and agent/ is on floor 6`,
      `src/agent/Agent.ts:2 imports "../cli/Chat.js" (src/cli/Chat.ts): agent/ (floor 6) imports only from lower floors, and cli/ is on floor 8`,
      `src/cli/Chat.ts:1 imports "../testing/ResponsesServer.js": only testing.ts, demo/, cli/ChatAgent.ts may import src/testing/ (the test server is not on a user's path)`,
      `src/cli/Chat.ts:2 imports "../../test/support/Harness.js", outside src: src imports nothing from the tests or scripts`,
      `src/cli/Print.ts:2 imports a computed path: name the file, so its floor can be checked`,
      `src/tools/Tool.ts:1 imports "../terminal/display/Width.js" (src/terminal/display/Width.ts): tools/ and terminal/display/ share floor 1, and units on one floor do not import each other`,
      `src/Stray.ts is on no floor: add its folder to FLOORS in test/structure/Layering.test.ts (and the table in docs/architecture.md)`
    ])
  })
})
