/**
 * The command line as a person types it: short and long spellings, a question
 * after the options, one line naming the flag for each mistake; and, over
 * generated command lines, that nothing typed can break a message onto a second
 * line, draw on the screen, or turn a question's words into options or commands.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as fc from "effect/FastCheck"
import * as Arguments from "../../src/cli/Arguments.js"
import { PLAIN_CHAT } from "../../src/cli/Chat.js"
import * as Commands from "../../src/cli/Commands.js"
import * as Help from "../../src/cli/Help.js"
import * as Escape from "../../src/security/Escape.js"

const read = (args: ReadonlyArray<string>) => Effect.runSync(Effect.either(Arguments.parse(args)))

const parsed = (...args: Array<string>) => {
  const result = read(args)
  if (Either.isLeft(result)) throw new Error(`expected ${JSON.stringify(args)} to parse, got: ${result.left.message}`)
  return result.right
}

const refused = (...args: Array<string>) => {
  const result = read(args)
  if (Either.isRight(result)) throw new Error(`expected ${JSON.stringify(args)} to be refused, got ${JSON.stringify(result.right)}`)
  expect(result.left.message).toMatch(/^mino: /)
  // One line, with nothing from the command line left to draw on the screen.
  expect(Escape.forLine(result.left.message)).toBe(result.left.message)
  return result.left.message
}

const ID = "20261203-074000-0123abcd"

describe("the command line", () => {
  it("no arguments: a chat with the model from the environment, the chat `main.ts` starts without the reader", () => {
    expect(parsed()).toEqual({ _tag: "Chat", model: undefined, demo: false, conversation: "newest", question: undefined })
    expect(parsed()).toEqual(PLAIN_CHAT)
  })

  it("-m, --model NAME and --model=NAME choose the model", () => {
    expect(parsed("-m", "gpt-x")).toMatchObject({ _tag: "Chat", model: "gpt-x" })
    expect(parsed("--model", "gpt-x")).toMatchObject({ model: "gpt-x" })
    expect(parsed("--model=gpt-x")).toMatchObject({ model: "gpt-x" })
    expect(parsed("-mgpt-x")).toMatchObject({ model: "gpt-x" })
    expect(parsed("-m=gpt-x")).toMatchObject({ model: "gpt-x" })
    // A value given with `=` is the value, whatever it looks like; the last -m counts.
    expect(parsed("--model=--help")).toMatchObject({ _tag: "Chat", model: "--help" })
    expect(parsed("--model=a=b")).toMatchObject({ model: "a=b" })
    expect(parsed("-m", "a", "-m", "b")).toMatchObject({ model: "b" })
  })

  it("a question after the options is the first question; words are joined, `--` ends the options", () => {
    expect(parsed("why is the build failing?")).toMatchObject({ _tag: "Chat", question: "why is the build failing?" })
    expect(parsed("-m", "gpt-x", "why", "so", "slow?")).toMatchObject({ model: "gpt-x", question: "why so slow?" })
    expect(parsed("why", "--demo", "so")).toMatchObject({ demo: true, question: "why so" })
    expect(parsed("--demo", "--", "--help me")).toMatchObject({ demo: true, question: "--help me" })
    expect(parsed("--", "--version", "--")).toMatchObject({ _tag: "Chat", question: "--version --" })
    expect(parsed("   ")).toMatchObject({ question: undefined })
  })

  it("-h/--help and -V/--version, whatever else is given", () => {
    expect(parsed("-h")).toEqual({ _tag: "Help" })
    expect(parsed("--help")).toEqual({ _tag: "Help" })
    expect(parsed("--demo", "question", "--help")).toEqual({ _tag: "Help" })
    expect(parsed("log", "--help")).toEqual({ _tag: "Help" })
    expect(parsed("-V")).toEqual({ _tag: "Version" })
    expect(parsed("--version")).toEqual({ _tag: "Version" })
    expect(parsed("-V", "--json")).toEqual({ _tag: "Version" })
  })

  it("`mino help` alone is `mino --help`; `mino -- help` and `mino help me fix it` ask", () => {
    expect(parsed("help")).toEqual({ _tag: "Help" })
    expect(parsed("--", "help")).toMatchObject({ _tag: "Chat", question: "help" })
    expect(parsed("help", "me", "fix", "it")).toMatchObject({ _tag: "Chat", question: "help me fix it" })
  })

  it("--completions SHELL: bash, zsh or fish (sh is bash)", () => {
    expect(parsed("--completions", "bash")).toEqual({ _tag: "Completions", shell: "bash" })
    expect(parsed("--completions=zsh")).toEqual({ _tag: "Completions", shell: "zsh" })
    expect(parsed("--completions", "fish")).toEqual({ _tag: "Completions", shell: "fish" })
    expect(parsed("--completions", "sh")).toEqual({ _tag: "Completions", shell: "bash" })
    expect(refused("--completions")).toBe("mino: --completions needs a value (SHELL), as in `mino --completions bash`.")
    expect(refused("--completions", "tcsh")).toBe("mino: --completions takes bash, zsh or fish, not \"tcsh\".")
  })

  it("a flag without its value is one line naming the flag", () => {
    expect(refused("--model")).toBe("mino: --model needs a value (NAME), as in `mino --model gpt-5.1`.")
    expect(refused("-m")).toBe("mino: -m needs a value (NAME), as in `mino -m gpt-5.1`.")
    expect(refused("--model=")).toContain("--model needs a value")
    expect(refused("--model=--")).toContain("--model needs a value")
    // Not `--demo` taken as a model's name.
    expect(refused("--model", "--demo")).toContain("--model needs a value")
  })

  it("an unknown option, or a value for a switch, is one line naming it", () => {
    expect(refused("--bogus")).toBe("mino: unknown option --bogus; `mino --help` lists the options.")
    expect(refused("-v")).toBe("mino: unknown option -v (did you mean -V?); `mino --help` lists the options.")
    expect(refused("--modle", "x")).toContain("unknown option --modle (did you mean --model?)")
    expect(refused("--MODEL=x")).toContain("unknown option --MODEL")
    expect(refused("--demo=yes")).toBe("mino: --demo takes no value.")
    // @effect/cli's wizard and log level are not Mino's.
    for (const builtIn of ["--wizard", "--log-level"]) expect(refused(builtIn)).toContain(`unknown option ${builtIn};`)
    expect(refused("--log-level", "debug")).toContain("unknown option --log-level;")
  })

  it("`mino log [ID]` with --json, --unknown or --demo; `mino -- log` asks the question", () => {
    expect(parsed("log")).toEqual({ _tag: "Log", id: undefined, demo: false, json: false, unknownOnly: false })
    expect(parsed("log", "--json")).toMatchObject({ _tag: "Log", json: true })
    expect(parsed("log", "--unknown", ID)).toMatchObject({ unknownOnly: true, id: ID })
    expect(parsed("--demo", "log")).toMatchObject({ _tag: "Log", demo: true })
    expect(parsed("log", "--", "-x")).toMatchObject({ _tag: "Log", id: "-x" })
    expect(parsed("--", "log")).toMatchObject({ _tag: "Chat", question: "log" })
    expect(parsed("show", "the", "log")).toMatchObject({ _tag: "Chat", question: "show the log" })
    expect(refused("log", "-m", "x")).toBe("mino: -m does not apply to `mino log`; `mino --help` lists the options.")
    expect(refused("--json")).toBe("mino: --json applies only to `mino log`.")
    expect(refused("log", "--json", "--unknown")).toBe("mino: --json and --unknown cannot be combined.")
    expect(refused("log", "a", "b")).toBe("mino: \"b\" is one argument too many for `mino log`; `mino --help` lists the options.")
  })

  it("`mino sessions` lists the conversations (the demo's with --demo); `mino -- sessions` asks the question", () => {
    expect(parsed("sessions")).toEqual({ _tag: "Sessions", demo: false })
    expect(parsed("sessions", "--demo")).toEqual({ _tag: "Sessions", demo: true })
    expect(parsed("--", "sessions")).toMatchObject({ _tag: "Chat", question: "sessions" })
    expect(refused("sessions", "--new")).toBe("mino: --new does not apply to `mino sessions`; `mino --help` lists the options.")
    expect(refused("sessions", "all")).toBe("mino: \"all\" is one argument too many for `mino sessions`; `mino --help` lists the options.")
  })

  it("--new starts a conversation, --continue ID picks one; not both; with --demo too", () => {
    expect(parsed("--new")).toMatchObject({ _tag: "Chat", conversation: "new" })
    expect(parsed("--new", "why?")).toMatchObject({ conversation: "new", question: "why?" })
    expect(parsed("--continue", ID)).toMatchObject({ conversation: { id: ID } })
    expect(refused("--continue")).toContain("--continue needs a value (ID)")
    expect(refused("--continue", "../../etc/passwd")).toBe(
      "mino: --continue takes a conversation id such as 20261203-074000-0123abcd (the file name in ~/.mino/sessions without .jsonl), not \"../../etc/passwd\"."
    )
    expect(refused("--new", "--continue", ID)).toBe("mino: --new and --continue cannot be combined: choose one conversation.")
    expect(parsed("--demo", "--new")).toMatchObject({ _tag: "Chat", demo: true, conversation: "new" })
    expect(parsed("--demo", "--continue", ID)).toMatchObject({ _tag: "Chat", demo: true, conversation: { id: ID } })
  })

  it("hostile text in a flag or a value comes back escaped, on one line, cut short", () => {
    expect(refused("--\u001b[2Jx")).toBe("mino: unknown option --\\e[2Jx; `mino --help` lists the options.")
    expect(refused("--continue", "a\nb\u202e")).toContain("not \"a\\nb\\u202e\"")
    expect(refused("--completions", "\u0007")).toContain("not \"\\u0007\"")
    const long = refused(`--${"x".repeat(100_000)}`)
    expect(long.length).toBeLessThan(200)
  })

  // Any words at all, from any alphabet, with controls, dashes and command names among them.
  const word = fc.oneof(
    fc.string({ unit: "binary", maxLength: 12 }),
    fc.constantFrom("log", "help", "--", "-", "--help", "-V", "--model", "-m", "--json", "--completions", "--wizard", "\u001b[2J", "a\nb")
  )

  it.prop("any command line: an invocation, or one line starting `mino: ` with nothing left to draw (1,000 generated)", [fc.array(word, { maxLength: 8 })], ([args]) => {
    const result = read(args)
    if (Either.isLeft(result)) {
      expect(result.left.message.startsWith("mino: ")).toBe(true)
      expect(Escape.forLine(result.left.message)).toBe(result.left.message)
    }
  }, { fastCheck: { numRuns: 1000 } })

  it.prop("words after `--` are the question, exactly, never options or commands (1,000 generated)", [fc.array(word, { minLength: 1, maxLength: 8 })], ([words]) => {
    const question = words.join(" ")
    expect(parsed("--demo", "--", ...words)).toEqual({
      _tag: "Chat",
      model: undefined,
      demo: true,
      conversation: "newest",
      question: question.trim().length > 0 ? question : undefined
    })
  }, { fastCheck: { numRuns: 1000 } })

  // A chat's command line, as a person might spell it: each option in any of its forms, in any order.
  const chatLine = fc.record({
    model: fc.option(
      fc.oneof(
        fc.string({ unit: "binary", minLength: 1, maxLength: 16 }),
        fc.constantFrom("--help", "-h", "--version", "--completions", "--wizard", "--demo", "--new", "--model", "-m", "--continue", "-", "true", "no", " log ", "\n--demo")
      ),
      { nil: undefined }
    ),
    demo: fc.boolean(),
    fresh: fc.boolean(),
    continued: fc.option(fc.stringMatching(Commands.CONVERSATION_ID), { nil: undefined }),
    words: fc.array(word, { maxLength: 5 }),
    spelling: fc.array(fc.nat(4), { minLength: 2, maxLength: 2 }),
    order: fc.infiniteStream(fc.double({ min: 0, max: 1, noNaN: true }))
  }).filter((line) => line.model !== "--" && !(line.fresh && line.continued !== undefined) && !(line.demo && (line.fresh || line.continued !== undefined)))

  const spelled = (long: string, short: string | undefined, value: string, form: number): Array<string> => {
    const inline = [[`--${long}=${value}`], short === undefined ? [`--${long}=${value}`] : [`-${short}=${value}`], short === undefined ? [`--${long}=${value}`] : [`-${short}${value}`]]
    // Apart from its flag, a value must not start with a dash (`--model --demo` is a missing value).
    const apart = value.startsWith("-") ? inline : [[`--${long}`, value], short === undefined ? [`--${long}`, value] : [`-${short}`, value]]
    return [...inline, ...apart][form % (inline.length + apart.length)]!
  }

  it.prop("any chat command line, however spelled and ordered, reads as written (1,000 generated)", [chatLine], ([line]) => {
    const options = [
      ...(line.model === undefined ? [] : [spelled("model", "m", line.model, line.spelling[0]!)]),
      ...(line.continued === undefined ? [] : [spelled("continue", undefined, line.continued, line.spelling[1]!)]),
      ...(line.demo ? [["--demo"]] : []),
      ...(line.fresh ? [["--new"]] : [])
    ]
    const shuffled = options.map((option) => [line.order.next().value ?? 0, option] as const).sort(([a], [b]) => a - b).flatMap(([, option]) => option)
    const question = line.words.join(" ")
    expect(parsed(...shuffled, "--", ...line.words)).toEqual({
      _tag: "Chat",
      model: line.model,
      demo: line.demo,
      conversation: line.fresh ? "new" : line.continued !== undefined ? { id: line.continued } : "newest",
      question: question.trim().length > 0 ? question : undefined
    })
  }, { fastCheck: { numRuns: 1000 } })

  it.prop("--continue takes a conversation id and nothing else (1,000 generated)", [fc.string({ unit: "binary", maxLength: 30 })], ([id]) => {
    const result = read(["--continue", id])
    if (Commands.CONVERSATION_ID.test(id)) expect(Either.getOrThrow(result)).toMatchObject({ conversation: { id } })
    else expect(Either.isLeft(result)).toBe(true)
  }, { fastCheck: { numRuns: 1000 } })

  it("every option a command declares is in the help, with its description; the refused built-ins are not", () => {
    const help = Help.text()
    const declared = new Set([...Commands.declaredNames(Commands.chat), ...Commands.declaredNames(Commands.log)])
    for (const name of declared) expect(help).toMatch(new RegExp(`(^|[ ,])${name}( |,|$)`, "m"))
    for (const flag of [...Commands.FLAGS, ...Commands.BUILT_INS]) {
      expect(help).toContain(`--${flag.name}`)
      expect(help).toContain(flag.description)
    }
    // Each declared option is one of Mino's flags, so the strict reading knows it.
    for (const name of declared) expect(Commands.FLAGS.some((flag) => name === `--${flag.name}` || name === `-${flag.alias}`)).toBe(true)
    for (const refused of ["--wizard", "--log-level"]) expect(help).not.toContain(refused)
  })
})
