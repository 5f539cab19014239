/**
 * Mino runs on macOS and Linux by mechanisms both have: outside `src/platform/`, no code names
 * `/proc`, runs util-linux's `flock` program, or holds a shell script that needs bash 4 (macOS ships
 * bash 3.2). Code is read as TypeScript sees it: string and template text and regular
 * expressions are checked, comments are not (they may say what is avoided and why). Files in
 * `src` that are not TypeScript (a helper script) are checked whole, but for `#` comment lines.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import ts from "typescript"

const SRC = fileURLToPath(new URL("../../src/", import.meta.url))
const PLATFORM = Path.join(SRC, "platform") + Path.sep

/** Each construct, with the reason it is Linux-only. */
export const LINUX_ONLY: ReadonlyArray<readonly [RegExp, string]> = [
  [/\/proc(?![\w-])/, "/proc (macOS has none)"],
  [/(?<![\w.(-])flock(?![\w(.-])/, "the util-linux flock program (macOS has none)"],
  [/\b(?:declare|typeset|local)\s+-[a-zA-Z]*A/, "an associative array (bash 4)"],
  [/\bcoproc\b/, "coproc (bash 4)"],
  [/\bread\b[^\n;|&]*\s-[a-zA-Z]*N/, "read -N (bash 4)"],
  [/(?<!\$)\{[A-Za-z_]\w*\}\s*(?:<>|>>|>&|<&|>|<)/, "a {fd} redirection (bash 4.1)"],
  [/\$\{?EPOCH(?:REALTIME|SECONDS)\b/, "$EPOCHREALTIME / $EPOCHSECONDS (bash 5)"],
  [/\$\{[#!]?[A-Za-z_]\w*(?:\[[^\]]*\])?(?:,,|\^\^|,|\^)[^}]*\}/, "${var,,} / ${var^^} case change (bash 4)"],
  [/\b(?:mapfile|readarray)\b/, "mapfile / readarray (bash 4)"],
  [/\bwait\s+-n\b/, "wait -n (bash 4.3)"],
  [/\bshopt\s+-s\s+(?:globstar|lastpipe)\b/, "globstar / lastpipe (bash 4)"],
  [/\$\{\w+@[QEPAa]\}/, "${var@Q} transformations (bash 4.4)"],
  [/&>>|\|&/, "&>> / |& (bash 4)"],
  [/\$\{?BASH_ARGV0\b|\bBASH_ARGV0=/, "BASH_ARGV0 (bash 5)"]
]

export interface Violation {
  readonly file: string
  readonly line: number
  readonly why: string
  readonly text: string
}

/** The texts of code a construct can hide in: strings, template pieces, regular expressions; with their lines. */
const codeTexts = (fileName: string, source: string): ReadonlyArray<readonly [number, string]> => {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
  const found: Array<readonly [number, string]> = []
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node) || ts.isRegularExpressionLiteral(node)) {
      found.push([file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1, node.text])
    }
    ts.forEachChild(node, visit)
  }
  visit(file)
  return found
}

/** A script's lines, but for comment lines. */
const scriptTexts = (source: string): ReadonlyArray<readonly [number, string]> =>
  source.split("\n").flatMap((line, index) => (/^\s*#/.test(line) ? [] : [[index + 1, line] as const]))

/** The Linux-only constructs in one file's text. */
export const violations = (file: string, source: string): ReadonlyArray<Violation> =>
  (/\.[cm]?[jt]sx?$/.test(file) ? codeTexts(file, source) : scriptTexts(source)).flatMap(([first, text]) =>
    // A script in a template literal spans lines: each is reported at its own line.
    text.split("\n").flatMap((piece, offset) =>
      LINUX_ONLY.flatMap(([pattern, why]) => (pattern.test(piece) ? [{ file, line: first + offset, why, text: piece.trim().slice(0, 80) }] : []))
    )
  )

const filesUnder = (dir: string): ReadonlyArray<string> =>
  Fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = Path.join(dir, entry.name)
    return entry.isDirectory() ? filesUnder(path) : [path]
  })

describe("no Linux-only construct outside src/platform", () => {
  it("the checker finds each construct in code, and not in comments or in look-alikes", () => {
    const shell = [
      "declare -A due", "local -A seen", "coproc watcher { cat; }", "read -r -N 1 byte", "exec {fd}>file", "exec {gate}<&0",
      "t=$EPOCHREALTIME", "s=${EPOCHSECONDS}", "echo ${name,,}", "echo ${name^^}", "mapfile -t lines", "readarray lines", "wait -n",
      "shopt -s globstar", "echo ${v@Q}", "cmd &>> log", "a |& b", "BASH_ARGV0=x", "echo $BASH_ARGV0", "cat /proc/$$/fd/3", "flock -n 3",
      "/usr/bin/flock --nonblock 3"
    ]
    let found = 0
    for (const line of shell) {
      for (const wrap of [(s: string) => JSON.stringify(s), (s: string) => `\`${s.replace(/\$\{/g, "\\${")}\``, (s: string) => `\`before \${x} ${s.replace(/\$\{/g, "\\${")} \${y} after\``]) {
        const hits = violations("sample.ts", `const script = ${wrap(line)}\n`)
        expect(hits.length, `${wrap(line)}`).toBeGreaterThan(0)
        found++
      }
      // In a helper script file too.
      expect(violations("helper.sh", `${line}\n`).length, line).toBeGreaterThan(0)
      // Never in a comment.
      expect(violations("sample.ts", `// ${line}\n/* ${line} */\nconst x = 1\n`)).toEqual([])
      expect(violations("helper.sh", `# ${line}\n`)).toEqual([])
    }
    console.log(`Linux-only constructs found: ${found} samples in code, ${shell.length} in scripts, none in comments`)
    // Look-alikes that are portable.
    for (const fine of [
      "flock(2) through perl", "the lock's flock(STDIN, 6)", "a = { ...x }", "`${a}` > b", "echo ${name}", "echo ${name:-x}",
      "echo ${#name}", "read -r line", "/process", "procfs", "EPOCHREALTIME", "BASH_ARGV0", "exec 3>file", "f() { :; }"
    ]) {
      expect(violations("sample.ts", `const s = ${JSON.stringify(fine)}\n`), fine).toEqual([])
    }
    // A template's own substitutions are TypeScript, not shell: `${a}>` there is not a redirection.
    expect(violations("sample.ts", "const s = `${a}> ${b}<`\n")).toEqual([])
  })

  it("src holds none, outside src/platform", () => {
    const files = filesUnder(SRC).filter((file) => !file.startsWith(PLATFORM))
    const found = files.flatMap((file) => violations(Path.relative(SRC, file), Fs.readFileSync(file, "utf8")))
    console.log(`files checked: ${files.length}; Linux-only constructs: ${found.length}`)
    expect(found.map((v) => `src/${v.file}:${v.line}: ${v.why}: ${v.text}`)).toEqual([])
  })
})
