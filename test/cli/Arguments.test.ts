/**
 * The command line as a person types it: short and long spellings, a question
 * after the options, and one line naming the flag for each mistake.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Arguments from "../../src/cli/Arguments.js"
import * as Help from "../../src/cli/Help.js"

const parsed = (...args: Array<string>) => {
  const result = Arguments.parse(args)
  if (Either.isLeft(result)) throw new Error(`expected ${JSON.stringify(args)} to parse, got: ${result.left.message}`)
  return result.right
}

const refused = (...args: Array<string>) => {
  const result = Arguments.parse(args)
  if (Either.isRight(result)) throw new Error(`expected ${JSON.stringify(args)} to be refused, got ${JSON.stringify(result.right)}`)
  expect(result.left.message).not.toContain("\n")
  expect(result.left.message).toMatch(/^mino: /)
  return result.left.message
}

describe("the command line", () => {
  it("no arguments: a chat with the model from the environment", () => {
    expect(parsed()).toEqual({ _tag: "Chat", model: undefined, demo: false, conversation: "newest", question: undefined })
  })

  it("-m, --model NAME and --model=NAME choose the model", () => {
    expect(parsed("-m", "gpt-x")).toMatchObject({ _tag: "Chat", model: "gpt-x" })
    expect(parsed("--model", "gpt-x")).toMatchObject({ model: "gpt-x" })
    expect(parsed("--model=gpt-x")).toMatchObject({ model: "gpt-x" })
    expect(parsed("-mgpt-x")).toMatchObject({ model: "gpt-x" })
    expect(parsed("-m=gpt-x")).toMatchObject({ model: "gpt-x" })
  })

  it("a question after the options is the first question; words are joined, `--` ends the options", () => {
    expect(parsed("why is the build failing?")).toMatchObject({ _tag: "Chat", question: "why is the build failing?" })
    expect(parsed("-m", "gpt-x", "why", "so", "slow?")).toMatchObject({ model: "gpt-x", question: "why so slow?" })
    expect(parsed("--demo", "--", "--help me")).toMatchObject({ demo: true, question: "--help me" })
    expect(parsed("   ")).toMatchObject({ question: undefined })
  })

  it("-h/--help and -V/--version, whatever else is given", () => {
    expect(parsed("-h")).toEqual({ _tag: "Help" })
    expect(parsed("--help")).toEqual({ _tag: "Help" })
    expect(parsed("--demo", "question", "--help")).toEqual({ _tag: "Help" })
    expect(parsed("-V")).toEqual({ _tag: "Version" })
    expect(parsed("--version")).toEqual({ _tag: "Version" })
  })

  it("`mino help` alone is `mino --help`; `mino -- help` and `mino help me fix it` ask", () => {
    expect(parsed("help")).toEqual({ _tag: "Help" })
    expect(parsed("--", "help")).toMatchObject({ _tag: "Chat", question: "help" })
    expect(parsed("help", "me", "fix", "it")).toMatchObject({ _tag: "Chat", question: "help me fix it" })
  })

  it("a flag without its value is one line naming the flag", () => {
    expect(refused("--model")).toBe("mino: --model needs a value (NAME), as in `mino --model gpt-5.1`.")
    expect(refused("-m")).toBe("mino: -m needs a value (NAME), as in `mino -m gpt-5.1`.")
    expect(refused("--model=")).toContain("--model needs a value")
    // Not `--demo` taken as a model's name.
    expect(refused("--model", "--demo")).toContain("--model needs a value")
  })

  it("an unknown option, or a value for a switch, is one line naming it", () => {
    expect(refused("--bogus")).toBe("mino: unknown option --bogus; `mino --help` lists the options.")
    expect(refused("-v")).toBe("mino: unknown option -v (did you mean -V?); `mino --help` lists the options.")
    expect(refused("--modle", "x")).toContain("unknown option --modle (did you mean --model?)")
    expect(refused("--demo=yes")).toBe("mino: --demo takes no value.")
    // @effect/cli's built-ins are gone.
    for (const builtIn of ["--wizard", "--completions", "--log-level"]) expect(refused(builtIn)).toContain(`unknown option ${builtIn}`)
  })

  it("`mino log [ID]` with --json, --unknown or --demo; `mino -- log` asks the question", () => {
    expect(parsed("log")).toEqual({ _tag: "Log", id: undefined, demo: false, json: false, unknownOnly: false })
    expect(parsed("log", "--json")).toMatchObject({ _tag: "Log", json: true })
    expect(parsed("log", "--unknown", "20261203-074000-0123abcd")).toMatchObject({ unknownOnly: true, id: "20261203-074000-0123abcd" })
    expect(parsed("--demo", "log")).toMatchObject({ _tag: "Log", demo: true })
    expect(parsed("--", "log")).toMatchObject({ _tag: "Chat", question: "log" })
    expect(parsed("show", "the", "log")).toMatchObject({ _tag: "Chat", question: "show the log" })
    expect(refused("log", "-m", "x")).toBe("mino: -m does not apply to `mino log`; `mino --help` lists the options.")
    expect(refused("--json")).toBe("mino: --json applies only to `mino log`.")
    expect(refused("log", "--json", "--unknown")).toBe("mino: --json and --unknown cannot be combined.")
    expect(refused("log", "a", "b")).toContain("at most one conversation id")
  })

  it("`mino sessions` lists the conversations (the demo's with --demo); `mino -- sessions` asks the question", () => {
    expect(parsed("sessions")).toEqual({ _tag: "Sessions", demo: false })
    expect(parsed("sessions", "--demo")).toEqual({ _tag: "Sessions", demo: true })
    expect(parsed("--", "sessions")).toMatchObject({ _tag: "Chat", question: "sessions" })
    expect(refused("sessions", "--new")).toBe("mino: --new does not apply to `mino sessions`; `mino --help` lists the options.")
    expect(refused("sessions", "all")).toContain("`mino sessions` takes no arguments")
  })

  it("--new starts a conversation, --continue ID picks one; not both; with --demo too", () => {
    expect(parsed("--new")).toMatchObject({ _tag: "Chat", conversation: "new" })
    expect(parsed("--new", "why?")).toMatchObject({ conversation: "new", question: "why?" })
    expect(parsed("--continue", "20261203-074000-0123abcd")).toMatchObject({ conversation: { id: "20261203-074000-0123abcd" } })
    expect(refused("--continue")).toContain("--continue needs a value (ID)")
    expect(refused("--continue", "../../etc/passwd")).toContain("--continue takes a conversation id such as")
    expect(refused("--new", "--continue", "20261203-074000-0123abcd")).toBe("mino: --new and --continue cannot be combined: choose one conversation.")
    expect(parsed("--demo", "--new")).toMatchObject({ _tag: "Chat", demo: true, conversation: "new" })
    expect(parsed("--demo", "--continue", "20261203-074000-0123abcd")).toMatchObject({ demo: true, conversation: { id: "20261203-074000-0123abcd" } })
  })

  it("the help describes every option in the table", () => {
    const help = Help.text()
    for (const spec of Arguments.OPTIONS) {
      expect(help).toContain(`--${spec.name}`)
      expect(help).toContain(spec.description)
    }
  })
})
