/**
 * The README is a front door and the depth is in `docs/`: the README stays short,
 * every page is linked from it, and every relative link in the README and the
 * pages leads somewhere: to a file that exists and, with a `#fragment`, to a
 * heading of that file as GitHub names it.
 *
 * Words are counted as `wc -w` counts them: every whitespace-separated token of
 * the file, code blocks, tables and link targets included.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"

const ROOT = Path.resolve(import.meta.dirname, "../..")
const README = Path.join(ROOT, "README.md")
const DOCS = Path.join(ROOT, "docs")
const MAX_README_WORDS = 2_500

const pages = (): ReadonlyArray<string> =>
  Fs.readdirSync(DOCS).filter((name) => name.endsWith(".md")).sort().map((name) => Path.join(DOCS, name))

const words = (text: string): number => text.split(/\s+/).filter((token) => token !== "").length

/** The text with fenced code blocks blanked (line for line), so neither their links nor their `#` lines count. */
const outsideFences = (text: string): string => {
  let fence: string | undefined
  return text.split("\n").map((line) => {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1]
    if (fence === undefined) {
      if (marker !== undefined) {
        fence = marker
        return ""
      }
      return line
    }
    if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) fence = undefined
    return ""
  }).join("\n")
}

/** Inline code spans removed (a link written inside backticks is not a link), a span of n backticks closed by n. */
const withoutCodeSpans = (line: string): string => line.replace(/(`+)(?!`)[\s\S]*?(?<!`)\1(?!`)/g, "")

/**
 * GitHub's heading anchors (github-slugger): the heading's text as rendered (code
 * spans and emphasis unwrapped, a link's text kept), lower-cased, every character
 * that is not a letter, mark, number, connector, space or hyphen removed, spaces
 * made hyphens; a repeated slug gets `-1`, `-2`, ...
 */
export const slug = (heading: string): string =>
  heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]+>/g, "")
    .replace(/[`*]/g, "")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-")

export const anchors = (markdown: string): ReadonlySet<string> => {
  const seen = new Map<string, number>()
  const result = new Set<string>()
  for (const line of outsideFences(markdown).split("\n")) {
    const heading = /^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/.exec(line)?.[1]
    if (heading === undefined) continue
    const base = slug(heading)
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    result.add(count === 0 ? base : `${base}-${count}`)
  }
  return result
}

/**
 * Every link outside code, with its line number: inline `[text](target)` (images
 * too), a reference definition `[label]: target`, and an HTML `href` or `src`.
 */
const links = (markdown: string): ReadonlyArray<{ readonly target: string; readonly line: number }> =>
  outsideFences(markdown).split("\n").flatMap((line, index) => {
    const text = withoutCodeSpans(line)
    const targets = [
      ...[...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1]),
      /^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?/.exec(text)?.[1],
      ...[...text.matchAll(/\b(?:href|src)\s*=\s*"([^"]*)"/g)].map((match) => match[1])
    ]
    return targets.filter((target) => target !== undefined).map((target) => ({ target, line: index + 1 }))
  })

const decoded = (text: string): string | undefined => {
  try {
    return decodeURIComponent(text)
  } catch {
    return undefined
  }
}

/** What is wrong with one relative link of `file`, or undefined when it resolves. */
const broken = (file: string, target: string): string | undefined => {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined
  const hash = target.indexOf("#")
  const pathPart = hash < 0 ? target : target.slice(0, hash)
  const fragment = hash < 0 ? undefined : decoded(target.slice(hash + 1))
  const pathDecoded = decoded(pathPart)
  if (pathDecoded === undefined || (hash >= 0 && fragment === undefined)) return "is not a valid URL"
  const resolved = pathPart === "" ? file : Path.resolve(Path.dirname(file), pathDecoded)
  if (!resolved.startsWith(ROOT + Path.sep)) return "leads outside the repository"
  if (!Fs.existsSync(resolved)) return "names no file"
  if (fragment === undefined) return undefined
  if (!resolved.endsWith(".md")) return "has a fragment on a file that is not Markdown"
  return anchors(Fs.readFileSync(resolved, "utf8")).has(fragment) ? undefined : "names no heading there"
}

describe("the README and docs/", () => {
  it("GitHub's anchors are computed as GitHub does", () => {
    expect(slug("Stopping: Ctrl+C and signals")).toBe("stopping-ctrlc-and-signals")
    expect(slug("The approval prompt: type-ahead, the guard, pastes")).toBe("the-approval-prompt-type-ahead-the-guard-pastes")
    expect(slug("What runs, and how it is bounded")).toBe("what-runs-and-how-it-is-bounded")
    expect(slug("`mino log` and `--json`")).toBe("mino-log-and---json")
    expect(slug("Against **Codex** CLI")).toBe("against-codex-cli")
    expect(slug("the [lifeline](#the-lifeline)")).toBe("the-lifeline")
    expect(slug("snake_case_name 2.0")).toBe("snake_case_name-20")
    expect([...anchors("# A\n## A\n```\n# B\n```\n### A ##\n")]).toEqual(["a", "a-1", "a-2"])
  })

  it(`the README is at most ${MAX_README_WORDS} words (whitespace-separated tokens, as wc -w counts)`, () => {
    const count = words(Fs.readFileSync(README, "utf8"))
    console.log(`README.md: ${count} words (at most ${MAX_README_WORDS})`)
    expect(count).toBeGreaterThan(0)
    expect(count).toBeLessThanOrEqual(MAX_README_WORDS)
  })

  it("every page in docs/ is linked from the README", () => {
    const targets = new Set(links(Fs.readFileSync(README, "utf8")).map(({ target }) => Path.resolve(ROOT, target.split("#")[0] ?? "")))
    const unlinked = pages().filter((page) => !targets.has(page)).map((page) => Path.relative(ROOT, page))
    expect(pages().length).toBeGreaterThan(0)
    expect(unlinked).toEqual([])
  })

  it("every relative link in README.md and docs/*.md leads to a file that exists, and a #fragment to a heading of it", () => {
    const files = [README, ...pages()]
    const checked: Array<string> = []
    const problems: Array<string> = []
    for (const file of files) {
      for (const { line, target } of links(Fs.readFileSync(file, "utf8"))) {
        checked.push(target)
        const problem = broken(file, target)
        if (problem !== undefined) problems.push(`${Path.relative(ROOT, file)}:${line}: ${target} ${problem}`)
      }
    }
    console.log(`${checked.length} links in ${files.length} files, ${checked.filter((target) => target.includes("#")).length} with a fragment`)
    expect(checked.length).toBeGreaterThan(files.length)
    expect(problems).toEqual([])
  })

  it("the link checker catches what it must", () => {
    expect(broken(README, "docs/no-such-page.md")).toBe("names no file")
    expect(broken(README, "#no-such-heading")).toBe("names no heading there")
    expect(broken(README, "docs/safety.md#no-such-heading")).toBe("names no heading there")
    expect(broken(README, "docs/safety.md#limits")).toBeUndefined()
    expect(broken(README, "../outside.md")).toBe("leads outside the repository")
    expect(broken(README, "https://example.com/#anything")).toBeUndefined()
    expect(broken(README, "#%E0%A4%A")).toBe("is not a valid URL")
    expect(links([
      "[a](b.md) `[c](d.md)` `` `[e](f.md)` `` ![img](g.png)",
      "```",
      "[h](i.md)",
      "```",
      "[j](k.md#l \"title\")",
      "[ref]: m.md#n",
      "<a href=\"o.md\">o</a>"
    ].join("\n")).map(({ target }) => target)).toEqual(["b.md", "g.png", "k.md#l", "m.md#n", "o.md"])
  })
})
