/**
 * `src` has no import cycle between its files, type-only imports included: each
 * module can be read (and loaded) after the ones it names. The imports are read with the
 * TypeScript compiler's own pre-processor (`import`, `import type`, `export ...
 * from`, `import()`), not a pattern.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import ts from "typescript"

const SRC = Path.join(import.meta.dirname, "..", "..", "src")

/** Each module under `folder`, by its path there, with the modules under it that it imports. */
const graph = (folder: string): ReadonlyMap<string, ReadonlyArray<string>> => {
  const files = Fs.readdirSync(folder, { recursive: true, encoding: "utf8" }).filter((name) => name.endsWith(".ts"))
  return new Map(files.map((file) => {
    const { importedFiles } = ts.preProcessFile(Fs.readFileSync(Path.join(folder, file), "utf8"), true, true)
    const local = importedFiles
      .map((imported) => imported.fileName)
      .filter((name) => name.startsWith("."))
      .map((name) => Path.join(Path.dirname(file), name).replace(/\.js$/, ".ts"))
    return [file, [...new Set(local)]]
  }))
}

/** Every cycle a depth-first walk finds, each as the path that closes it. */
const cycles = (edges: ReadonlyMap<string, ReadonlyArray<string>>): ReadonlyArray<ReadonlyArray<string>> => {
  const found: Array<ReadonlyArray<string>> = []
  const done = new Set<string>()
  const walk = (node: string, path: ReadonlyArray<string>) => {
    const at = path.indexOf(node)
    if (at !== -1) return void found.push([...path.slice(at), node])
    if (done.has(node)) return
    for (const next of edges.get(node) ?? []) walk(next, [...path, node])
    done.add(node)
  }
  for (const node of edges.keys()) walk(node, [])
  return found
}

describe("src's imports", () => {
  it("form no cycle", () => {
    const edges = graph(SRC)
    const count = [...edges.values()].reduce((sum, targets) => sum + targets.length, 0)
    console.log(`src: ${edges.size} modules, ${count} imports between them`)
    expect(edges.size).toBeGreaterThan(50)
    expect(edges.get(Path.join("model", "stream", "StreamEvents.ts"))).toContain(Path.join("model", "ErrorBody.ts"))
    expect(cycles(edges)).toEqual([])
  })

  it("the check finds a cycle when there is one", () => {
    expect(cycles(new Map([["A.ts", ["B.ts"]], ["B.ts", ["C.ts"]], ["C.ts", ["A.ts"]]]))).toEqual([["A.ts", "B.ts", "C.ts", "A.ts"]])
  })
})
