import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as fc from "fast-check"
import * as ApprovalScreen from "../../src/approval/ApprovalScreen.js"
import * as Tool from "../../src/tools/Tool.js"
import * as Secrets from "../../src/security/Secrets.js"
import { BashRunner } from "../../src/tools/bash/BashRunner.js"
import * as BashTool from "../../src/tools/bash/BashTool.js"
import * as ChildEnvironment from "../../src/tools/bash/ChildEnvironment.js"

const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mino-bash-tool-")))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const API_KEY = "sk-test-0123456789abcdef"

const parentEnv: Readonly<Record<string, string>> = {
  PATH: process.env["PATH"] ?? "/usr/bin:/bin",
  HOME: dir,
  USER: "mino-tester",
  LANG: "en_US.UTF-8",
  OPENAI_API_KEY: API_KEY,
  MINO_PARENT_ONLY: "parent-only-value",
  // Defence in depth: a variable that is passed on, but holds the key, is dropped.
  TMPDIR: `/tmp/${API_KEY}`
}

const makeTool = (options: Partial<BashTool.BashToolOptions> = {}) =>
  BashTool.make({ cwd: dir, parentEnv, ...options }).pipe(Effect.provide(BashRunner.layer), Effect.provide(Secrets.Secrets.layer(API_KEY)))

const rejectionOf = (rawArguments: string) =>
  Effect.gen(function* () {
    const tool = yield* makeTool()
    const rejection = yield* Effect.flip(tool.prepare(rawArguments))
    expect(rejection._tag).toBe("Rejection")
    expect(rejection.result.status).toBe("invalid_arguments")
    expect(rejection.result.output).not.toContain("\n")
    return rejection.result.output
  })

const commandOf = (rawArguments: string) =>
  Effect.gen(function* () {
    const tool = yield* makeTool()
    const prepared = yield* tool.prepare(rawArguments)
    return prepared.operation.command
  })

const execute = (command: string, options: Partial<BashTool.BashToolOptions> = {}) =>
  Effect.gen(function* () {
    const tool = yield* makeTool(options)
    const { operation } = yield* tool.prepare(JSON.stringify({ command }))
    return yield* Effect.scoped(tool.execute(operation))
  })

describe("BashTool definition", () => {
  it.effect("declares one required string field, command, and nothing else", () =>
    Effect.gen(function* () {
      const { definition } = yield* makeTool()
      expect(definition.type).toBe("function")
      expect(definition.name).toBe("bash")
      expect(definition.strict).toBe(true)
      expect(definition.description).toContain("approve")
      expect(definition.parameters).toEqual({
        type: "object",
        properties: { command: { type: "string", description: expect.any(String) } },
        required: ["command"],
        additionalProperties: false
      })
    })
  )
})

describe("BashTool prepare rejects", () => {
  it.effect("arguments that are not a JSON object", () =>
    Effect.gen(function* () {
      expect(yield* rejectionOf("{\"command\": \"ls\"")).toMatch(/not valid JSON/)
      expect(yield* rejectionOf("")).toMatch(/not valid JSON/)
      expect(yield* rejectionOf("[\"ls\"]")).toMatch(/must be a JSON object, not an array/)
      expect(yield* rejectionOf("null")).toMatch(/must be a JSON object, not null/)
      expect(yield* rejectionOf("42")).toMatch(/must be a JSON object, not a number/)
      expect(yield* rejectionOf("\"ls\"")).toMatch(/must be a JSON object, not a string/)
    })
  )

  it.effect("a missing or non-string command", () =>
    Effect.gen(function* () {
      expect(yield* rejectionOf("{}")).toBe("missing required field \"command\"")
      expect(yield* rejectionOf("{\"command\": 1}")).toBe("\"command\" must be a string, not a number")
      expect(yield* rejectionOf("{\"command\": [\"ls\"]}")).toBe("\"command\" must be a string, not an array")
      expect(yield* rejectionOf("{\"command\": null}")).toBe("\"command\" must be a string, not null")
    })
  )

  it.effect("an empty or whitespace-only command", () =>
    Effect.gen(function* () {
      expect(yield* rejectionOf("{\"command\": \"\"}")).toBe("\"command\" is empty")
      expect(yield* rejectionOf("{\"command\": \" \\n\\t \"}")).toBe("\"command\" is empty")
    })
  )

  it.effect("unknown fields", () =>
    Effect.gen(function* () {
      expect(yield* rejectionOf("{\"command\": \"ls\", \"cwd\": \"/\"}")).toBe(
        "unknown field \"cwd\"; the only field is \"command\""
      )
      expect(yield* rejectionOf("{\"__proto__\": {}, \"command\": \"ls\"}")).toMatch(/unknown field "__proto__"/)
      // An unknown field with terminal controls in its name is reported escaped.
      expect(yield* rejectionOf("{\"command\": \"ls\", \"\\u001b[2J\": 1}")).toBe(
        "unknown field \"\\u001b[2J\"; the only field is \"command\""
      )
    })
  )

  it.effect("duplicate fields, which JSON.parse would silently collapse", () =>
    Effect.gen(function* () {
      expect(yield* rejectionOf("{\"command\": \"ls\", \"command\": \"rm -rf ~\"}")).toBe(
        "duplicate field \"command\""
      )
      // The same key written with an escape is the same key.
      expect(yield* rejectionOf("{\"command\": \"ls\", \"comm\\u0061nd\": \"rm -rf ~\"}")).toBe(
        "duplicate field \"command\""
      )
      expect(yield* rejectionOf("{ \"command\" : {\"a\": 1, \"b\": [1, \"}\"]} ,\n\"command\":\"ls\" }")).toBe(
        "duplicate field \"command\""
      )
    })
  )

  it.effect("lone surrogates, whether escaped or raw", () =>
    Effect.gen(function* () {
      const message = "\"command\" contains invalid text (an unpaired UTF-16 surrogate)"
      expect(yield* rejectionOf("{\"command\": \"echo \\ud800\"}")).toBe(message)
      expect(yield* rejectionOf("{\"command\": \"echo \\udc00 x\"}")).toBe(message)
      expect(yield* rejectionOf("{\"command\": \"echo \ud800\"}")).toBe(message)
      expect(yield* rejectionOf("{\"command\": \"echo \\ude00\\ud83d\"}")).toBe(message)
      // A proper pair is text like any other.
      expect(yield* commandOf("{\"command\": \"echo \\ud83d\\ude00\"}")).toBe("echo 😀")
    })
  )

  it.effect("U+FFFD, which is what invalid UTF-8 on the wire decodes to", () =>
    Effect.gen(function* () {
      const message = "\"command\" contains invalid text (U+FFFD, the mark of undecodable UTF-8)"
      const invalidUtf8 = new TextDecoder().decode(new Uint8Array([0x65, 0x63, 0x68, 0x6f, 0x20, 0xff, 0xfe]))
      expect(yield* rejectionOf(JSON.stringify({ command: invalidUtf8 }))).toBe(message)
      expect(yield* rejectionOf("{\"command\": \"echo \\ufffd\"}")).toBe(message)
    })
  )

  it.effect("NUL characters", () =>
    Effect.gen(function* () {
      expect(yield* rejectionOf("{\"command\": \"echo a\\u0000b\"}")).toBe("\"command\" contains a NUL character")
    })
  )

  it.effect("commands over 16 KiB of UTF-8, and accepts exactly 16 KiB", () =>
    Effect.gen(function* () {
      const args = (command: string) => JSON.stringify({ command })
      const ascii = "a".repeat(16_384)
      expect(yield* commandOf(args(ascii))).toBe(ascii)
      expect(yield* rejectionOf(args(`${ascii}a`))).toBe(
        "\"command\" is 16385 bytes; the limit is 16384 bytes (16 KiB) of UTF-8"
      )
      // "€" is 3 bytes: 1 + 3 × 5461 = 16384.
      const euros = `a${"€".repeat(5_461)}`
      expect(Buffer.byteLength(euros)).toBe(16_384)
      expect(yield* commandOf(args(euros))).toBe(euros)
      expect(yield* rejectionOf(args(`${euros}a`))).toMatch(/is 16385 bytes/)
      // An emoji is 4 bytes and two UTF-16 units: the limit counts bytes, not units.
      const emoji = "😀".repeat(4_096)
      expect(yield* commandOf(args(emoji))).toBe(emoji)
      expect(yield* rejectionOf(args(`${emoji}a`))).toMatch(/is 16385 bytes/)
    })
  )
})

describe("BashTool prepare", () => {
  it.effect("reads the command exactly, through escapes and tricky nested text", () =>
    Effect.gen(function* () {
      expect(yield* commandOf(" \n{ \"command\" : \"echo \\\"}\\\", {\\\"command\\\": 1}\" }\n")).toBe(
        "echo \"}\", {\"command\": 1}"
      )
      expect(yield* commandOf("{\"comm\\u0061nd\":\"go version\"}")).toBe("go version")
    })
  )

  it.effect("never throws, whatever the input", () =>
    Effect.gen(function* () {
      const tool = yield* makeTool()
      const inputs = fc.sample(
        fc.oneof(
          fc.string({ unit: "binary" }),
          fc.json(),
          fc.dictionary(fc.string(), fc.jsonValue()).map((value) => JSON.stringify(value)),
          fc.string({ unit: "binary" }).map((command) => JSON.stringify({ command })),
          fc.string({ unit: "binary" }).map((command) => `{"command": ${JSON.stringify(command)}, "command": 1}`),
          fc.string().map((text) => `{"command":"${text}`)
        ),
        { numRuns: 3_000, seed: 3 }
      )
      for (const input of [...inputs, "{", "{\"", "{\"command\"", "[".repeat(100_000), "{\"a\":".repeat(10_000)]) {
        const exit = yield* Effect.exit(tool.prepare(input))
        if (Exit.isFailure(exit)) {
          expect(exit.cause._tag).toBe("Fail")
        }
      }
    })
  )

  it.effect("shows the command, directory, environment, limits and permissions, as raw text the screen escapes", () =>
    Effect.gen(function* () {
      const tool = yield* makeTool()
      const command = "printf '\u001b[2J'\necho \u202egnp.exe"
      const { display, operation } = yield* tool.prepare(JSON.stringify({ command }))
      expect(operation.command).toBe(command)
      expect(display.tool).toBe("bash")
      const fields = Object.fromEntries(display.fields.map((field) => [field.label, field.kind === "entries" ? field.entries : field.value]))
      expect(fields["Command"]).toBe(command)
      expect(ApprovalScreen.render(display)).toContain("Command: \"printf '\\u001b[2J'\\necho \\u202egnp.exe\"\n")
      expect(fields["Directory"]).toBe(dir)
      expect(fields["Environment"]).toEqual([
        { name: "PATH", value: parentEnv["PATH"] },
        { name: "HOME", value: dir },
        { name: "USER", value: "mino-tester" },
        { name: "LANG", value: "en_US.UTF-8" },
        { name: "TERM", value: "dumb" },
        { name: "SHELL", value: "/bin/bash" },
        { name: "PWD", value: dir }
      ])
      expect(Tool.bounds(display)).toEqual({ timeout: "30 s", outputLimit: "64 KiB" })
      expect(fields["Timeout"]).toBe("30 s")
      expect(fields["Output limit"]).toBe("64 KiB (stdout and stderr combined)")
      expect(fields["Permissions"]).toBe("runs with your account's permissions; no sandbox")
      expect(JSON.stringify(display)).not.toContain(API_KEY)
    })
  )

  it.effect("shows configured limits", () =>
    Effect.gen(function* () {
      const tool = yield* makeTool({ timeoutMs: 1_500, outputLimitBytes: 1_000 })
      const { display, operation } = yield* tool.prepare("{\"command\":\"ls\"}")
      const fields = Object.fromEntries(display.fields.map((field) => [field.label, field.kind === "entries" ? field.entries : field.value]))
      expect(fields["Timeout"]).toBe("1.5 s")
      expect(fields["Output limit"]).toBe("1000 bytes (stdout and stderr combined)")
      expect(operation).toMatchObject({ timeoutMs: 1_500, outputLimitBytes: 1_000, cwd: dir })
    })
  )

  it.effect("a directory holding the text \\n reads differently from one holding a newline", () =>
    Effect.gen(function* () {
      const shown = (cwd: string) =>
        makeTool({ cwd }).pipe(
          Effect.flatMap((tool) => tool.prepare("{\"command\":\"ls\"}")),
          Effect.map(({ display }) => {
            const field = display.fields.find((candidate) => candidate.label === "Directory")
            return field?.kind === "value" ? ApprovalScreen.valueText(field.value) : undefined
          })
        )
      expect(yield* shown("/tmp/a\\nb")).toBe("/tmp/a\\\\nb")
      expect(yield* shown("/tmp/a\nb")).toBe("/tmp/a\\nb")
    })
  )

  it.live("executes nothing; execute runs exactly the prepared operation", () =>
    Effect.gen(function* () {
      const tool = yield* makeTool()
      const marker = path.join(dir, "prepared-marker")
      const { operation } = yield* tool.prepare(JSON.stringify({ command: `echo ran > '${marker}'` }))
      expect(fs.existsSync(marker)).toBe(false)
      const result = yield* Effect.scoped(tool.execute(operation))
      expect(result).toEqual({ status: "completed", output: "", exit_code: 0 })
      expect(fs.readFileSync(marker, "utf8")).toBe("ran\n")
    })
  )
})

describe("BashTool execute", () => {
  it.live("isolates the environment: parent variables and the API key do not reach the child", () =>
    Effect.gen(function* () {
      const result = yield* execute("env")
      expect(result.status).toBe("completed")
      expect(result.output).not.toContain("MINO_PARENT_ONLY")
      expect(result.output).not.toContain("parent-only-value")
      expect(result.output).not.toContain("OPENAI_API_KEY")
      expect(result.output).not.toContain(API_KEY)
      expect(result.output).toContain("TERM=dumb\n")
      expect(result.output).toContain(`PWD=${dir}\n`)
      expect(result.output).toContain("USER=mino-tester\n")
    })
  )

  it.live("starts every invocation in the startup directory", () =>
    Effect.gen(function* () {
      const tool = yield* makeTool()
      const run = (command: string) =>
        Effect.flatMap(tool.prepare(JSON.stringify({ command })), ({ operation }) =>
          Effect.scoped(tool.execute(operation))
        )
      expect((yield* run("cd /tmp && pwd")).output).toBe("/tmp\n")
      expect((yield* run("pwd")).output).toBe(`${dir}\n`)
    })
  )

  it.live("a nonzero exit is a failed result with its exit code", () =>
    Effect.gen(function* () {
      const result = yield* execute("ls /definitely/not/here")
      expect(result.status).toBe("failed")
      expect(result.exit_code).toBe(2)
      expect(result.output).toContain("/definitely/not/here")
    })
  )

  it.live("the configured timeout applies", () =>
    Effect.gen(function* () {
      const result = yield* execute("sleep 30", { timeoutMs: 300 })
      expect(result.status).toBe("failed")
      expect(result.timed_out).toBe(true)
      expect(result.output).toContain("timed out after 0.3 s")
    })
  )
})

describe("ChildEnvironment", () => {
  it("passes only the documented names, with defaults", () => {
    const env = ChildEnvironment.make({
      parentEnv: { SECRET: "x", LOGNAME: "me", EDITOR: "vi", BASH_ENV: "/etc/evil", PATH: "" },
      cwd: "/work",
      secrets: Secrets.make("")
    })
    expect(env).toEqual({
      PATH: "/usr/local/bin:/usr/bin:/bin",
      LOGNAME: "me",
      LANG: "C.UTF-8",
      TERM: "dumb",
      SHELL: "/bin/bash",
      PWD: "/work"
    })
    const documented: ReadonlyArray<string> = ChildEnvironment.CHILD_ENVIRONMENT_NAMES
    expect(Object.keys(env).filter((name) => !documented.includes(name))).toEqual([])
  })

  it("drops any value that contains a secret", () => {
    const env = ChildEnvironment.make({
      parentEnv: { HOME: `/home/${API_KEY}`, PATH: `/bin:${API_KEY}`, USER: "me", OPENAI_API_KEY: API_KEY },
      cwd: `/src/${API_KEY}`,
      secrets: Secrets.make(API_KEY)
    })
    expect(env).toEqual({
      PATH: "/usr/local/bin:/usr/bin:/bin",
      USER: "me",
      LANG: "C.UTF-8",
      TERM: "dumb",
      SHELL: "/bin/bash"
    })
  })
})
