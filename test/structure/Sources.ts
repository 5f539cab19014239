/**
 * The TypeScript files of `src`, read for the structure tests: each by its path
 * under `src` (with `/`), its text, and the relative imports it makes, read with
 * the TypeScript compiler's own pre-processor (`import`, `import type`,
 * `export ... from`, `import()`), not a pattern.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import ts from "typescript"

export const SRC = Path.join(import.meta.dirname, "..", "..", "src")

export interface Source {
  /** The path under `src`, with `/`: `model/ModelClient.ts`. */
  readonly path: string
  readonly text: string
}

/** One relative import: as written, and the file it names (a path under `src`, `../` first when outside it). */
export interface Import {
  readonly written: string
  readonly target: string
  /** 1-based line of the import, for the failure message. */
  readonly line: number
}

/** Every `.ts` file under `folder`, by its path under it, sorted. */
export const sources = (folder: string = SRC): ReadonlyArray<Source> =>
  Fs.readdirSync(folder, { recursive: true, encoding: "utf8" })
    .map((name) => name.split(Path.sep).join("/"))
    .filter((name) => name.endsWith(".ts") && !name.endsWith(".d.ts"))
    .sort()
    .map((path) => ({ path, text: Fs.readFileSync(Path.join(folder, path), "utf8") }))

/** The relative imports of `source`, each resolved to the path under `src` it names (`.js` read as the `.ts` it is compiled from). */
export const imports = (source: Source): ReadonlyArray<Import> => {
  const { importedFiles } = ts.preProcessFile(source.text, true, true)
  return importedFiles
    .filter((imported) => imported.fileName.startsWith("./") || imported.fileName.startsWith("../"))
    .map((imported) => ({
      written: imported.fileName,
      target: Path.posix.normalize(Path.posix.join(Path.posix.dirname(source.path), imported.fileName)).replace(/\.js$/, ".ts"),
      line: source.text.slice(0, imported.pos).split("\n").length
    }))
}
