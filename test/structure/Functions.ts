/**
 * The functions of a source file and their length in lines of code (lines with
 * something besides blanks and comments), read with the TypeScript compiler.
 * A function is named by where it is defined (`make`, `Conversations.list`,
 * `Agent.turn`); one nested in another of the same name and nearly the same
 * length (`make = () => Effect.gen(function*() {...})`) is the same function.
 */
import ts from "typescript"
import type { Source } from "./Sources.js"

export interface Measured {
  readonly path: string
  readonly name: string
  readonly line: number
  readonly lines: number
}

/** Lines of `node` that hold code: each line some token of it covers (comments are no tokens; a template spans its lines). */
export const codeLines = (node: ts.Node, file: ts.SourceFile): number => {
  const lines = new Set<number>()
  const mark = (piece: ts.Node) => {
    if (ts.isJSDoc(piece)) return
    const children = piece.getChildren(file)
    if (children.length > 0) return children.forEach(mark)
    const first = file.getLineAndCharacterOfPosition(piece.getStart(file)).line
    const last = file.getLineAndCharacterOfPosition(piece.getEnd()).line
    for (let line = first; line <= last; line++) lines.add(line)
  }
  mark(node)
  return lines.size
}

const isFunction = (node: ts.Node): node is ts.FunctionLikeDeclaration =>
  ts.isFunctionDeclaration(node) || ts.isFunctionExpression(node) || ts.isArrowFunction(node) || ts.isMethodDeclaration(node) ||
  ts.isConstructorDeclaration(node) || ts.isGetAccessorDeclaration(node) || ts.isSetAccessorDeclaration(node)

/** The name a reader would look for: the declaration's own, else the variable, property or class it is given to. */
const nameOf = (node: ts.Node): string | undefined => {
  const named = node as ts.Node & { name?: ts.Node }
  if (named.name !== undefined && (ts.isIdentifier(named.name) || ts.isStringLiteral(named.name) || ts.isPrivateIdentifier(named.name))) return named.name.text
  if (ts.isConstructorDeclaration(node)) return "constructor"
  return undefined
}

/** Every function of `source` with its length, outermost first. */
export const functions = (source: Source): ReadonlyArray<Measured> => {
  const file = ts.createSourceFile(source.path, source.text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
  const found: Array<Measured> = []
  const visit = (node: ts.Node, names: ReadonlyArray<string>, outer: Measured | undefined) => {
    const own = nameOf(node)
    const here = own !== undefined && (ts.isVariableDeclaration(node) || ts.isPropertyAssignment(node) || ts.isPropertyDeclaration(node) ||
        ts.isClassDeclaration(node) || ts.isMethodDeclaration(node) || ts.isFunctionDeclaration(node) || ts.isGetAccessorDeclaration(node))
      ? [...names, own]
      : names
    let measured = outer
    if (isFunction(node)) {
      const name = here.length === 0 ? "(anonymous)" : here.join(".")
      const lines = codeLines(node, file)
      const line = file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1
      // `make = () => Effect.gen(function*() {...})`: the inner function is the outer one's body.
      const same = outer !== undefined && outer.name === name && outer.lines - lines <= 3
      if (!same) found.push({ path: source.path, name, line, lines })
      measured = same ? outer : { path: source.path, name, line, lines }
    }
    ts.forEachChild(node, (child) => visit(child, here, measured))
  }
  visit(file, [], undefined)
  return found
}
