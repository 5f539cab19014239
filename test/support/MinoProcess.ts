/**
 * Running the built `mino` (bin/mino.js) as a user would, for end-to-end tests:
 * a temporary HOME and working directory, a scripted loopback Responses server,
 * and readers for what mino leaves behind (the session file, processes).
 */
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import { HEADER_TYPE } from "../../src/session/directory/Conversations.js"
import * as Pty from "./Pty.js"
import { PROC } from "./Proc.js"

export const ROOT = fileURLToPath(new URL("../../", import.meta.url))
export const BIN = path.join(ROOT, "bin", "mino.js")
/** A fake key: it must never appear on the screen, in the session file or in a child's environment. */
export const API_KEY = "sk-e2e-fake-0123456789abcdef"

export const NOTICE =
  "An interrupted tool turn was retained but excluded from context. Commands it started may already have run; none was retried."

/** The notice for an interrupted turn that had asked for no tool. */
export const TEXT_NOTICE = "An interrupted turn was retained but excluded from context. It had requested no command, so nothing ran."

export const packageVersion = (): string =>
  Schema.decodeUnknownSync(Schema.Struct({ version: Schema.String }))(
    JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8"))
  ).version

// ---------------------------------------------------------------------------
// A temporary HOME and working directory, removed with the scope.

export interface Sandbox {
  readonly home: string
  /** The working directory mino starts in (resolved, as mino shows it). */
  readonly cwd: string
}

export const sandbox: Effect.Effect<Sandbox, never, Scope.Scope> = Effect.acquireRelease(
  Effect.sync(() => {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mino-e2e-")))
    fs.mkdirSync(path.join(root, "home"))
    fs.mkdirSync(path.join(root, "work"))
    return { home: path.join(root, "home"), cwd: path.join(root, "work") }
  }),
  (box) => Effect.sync(() => fs.rmSync(path.dirname(box.home), { recursive: true, force: true }))
)

/** The environment mino runs with: nothing from the test process but the essentials. */
export const environment = (box: Sandbox, url: string, extra: Readonly<Record<string, string>> = {}) => ({
  HOME: box.home,
  PATH: "/usr/local/bin:/usr/bin:/bin",
  LANG: "C.UTF-8",
  TERM: "xterm",
  NO_COLOR: "1",
  OPENAI_API_KEY: API_KEY,
  OPENAI_BASE_URL: url,
  ...extra
})

/** Starts `mino` in a pseudo-terminal. */
export const start = (box: Sandbox, url: string, args: ReadonlyArray<string> = []) =>
  Pty.spawn({ argv: [process.execPath, BIN, ...args], env: environment(box, url), cwd: box.cwd })

/** Starts mino and waits for its first prompt; returns the pty and what it showed before the prompt. */
export const startReady = (box: Sandbox, url: string) =>
  Effect.gen(function*() {
    const mino = yield* start(box, url)
    const opening = yield* mino.waitFor("You> ")
    return { mino, opening }
  })

/** Waits (at most `timeoutMs`) for the program to end with `expected`; otherwise fails showing the screen. */
export const exitsWith = (pty: Pty.Pty, expected: Pty.ExitStatus, timeoutMs = 10_000) =>
  Effect.gen(function*() {
    const status = yield* pty.exitedWithin(timeoutMs)
    if (status.code !== expected.code || status.signal !== expected.signal) {
      const screen = yield* pty.screen
      return yield* Effect.die(
        new Error(`expected exit ${JSON.stringify(expected)}, got ${JSON.stringify(status)}; screen:\n${screen.slice(-1500)}`)
      )
    }
  })

export interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs mino without a terminal to its end; `input` is piped to it (default: nothing). */
export const runPlain = (args: ReadonlyArray<string>, env: Readonly<Record<string, string>>, cwd: string, input = "") =>
  Effect.async<Run>((resume) => {
    const child = execFile(process.execPath, [BIN, ...args], { env, cwd, timeout: 15_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : null
      resume(Effect.succeed({ code, stdout, stderr }))
    })
    child.stdin?.end(input)
  })

// ---------------------------------------------------------------------------
// The model: a loopback server that plays one scripted reply per request, in order.

export const scriptedServer = (replies: ReadonlyArray<ResponsesServer.Reply>) => {
  let next = 0
  return ResponsesServer.make(() =>
    Effect.sync(() => replies[next++] ?? ResponsesServer.httpError(500, "the test scripted no reply for this request"))
  )
}

/** Replies that never complete: the request is logged, then nothing more is sent. */
export const stall: ResponsesServer.Reply = ["stall"]

export const bashCall = (callId: string, command: string): ResponsesServer.ToolCall => ({
  call_id: callId,
  name: "bash",
  arguments: JSON.stringify({ command })
})

export type Json = Readonly<Record<string, unknown>>
const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })
const RequestBody = Schema.Struct({ input: Schema.Array(JsonObject) })

/** The `input` items of a logged request. */
export const inputOf = (request: ResponsesServer.LoggedRequest): ReadonlyArray<Json> =>
  Schema.decodeUnknownSync(RequestBody)(request.body).input

/** A request's body, decoded as a JSON object. */
export const bodyOf = (request: ResponsesServer.LoggedRequest): Json => Schema.decodeUnknownSync(JsonObject)(request.body)

/** Waits until the server has received `count` requests in all; returns the log. */
export const requestsReceived = (server: ResponsesServer.ResponsesServer, count: number, timeoutMs = Pty.DEFAULT_TIMEOUT_MS) =>
  eventually(`${count} model request(s)`, timeoutMs, Effect.map(server.requests, (log) => log.length >= count ? log : undefined))

// ---------------------------------------------------------------------------
// What mino leaves behind.

/** The conversation file; there is exactly one per HOME. */
export const sessionFile = (box: Sandbox): string => {
  const dir = path.join(box.home, ".mino", "sessions")
  const files = fs.readdirSync(dir).filter((name) => name.endsWith(".jsonl"))
  if (files.length !== 1) throw new Error(`expected one session file in ${dir}, found ${JSON.stringify(files)}`)
  return path.join(dir, files[0] ?? "")
}

/**
 * Every line of the session file after its header (the conversation's first
 * line, saying where it started), each parsed as a JSON object (a line that does
 * not parse fails the test).
 */
export const sessionRecords = (box: Sandbox): ReadonlyArray<Json> => {
  const text = fs.readFileSync(sessionFile(box), "utf8")
  if (text.length > 0 && !text.endsWith("\n")) throw new Error("the session file ends in a partial line")
  const lines = text.split("\n").filter((line) => line.length > 0).map((line, index) => {
    try {
      return Schema.decodeUnknownSync(JsonObject)(JSON.parse(line))
    } catch (error) {
      throw new Error(`session line ${index + 1} is not a JSON object: ${line}`, { cause: error })
    }
  })
  return lines[0]?.["type"] === HEADER_TYPE ? lines.slice(1) : lines
}

/** `type` of each record, with the status of tool results and turn ends: `tool_result:unknown`. */
export const recordSummary = (records: ReadonlyArray<Json>): ReadonlyArray<string> =>
  records.map((record) => {
    const result = record["result"]
    const status = record["type"] === "turn_end"
      ? record["status"]
      : typeof result === "object" && result !== null && "status" in result
      ? result.status
      : undefined
    return status === undefined ? String(record["type"]) : `${String(record["type"])}:${String(status)}`
  })

/** The lines of a file in the working directory (0 when it does not exist). */
export const lineCount = (file: string): number =>
  fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n").filter((line) => line.length > 0).length : 0

/** Retries `probe` every 20 ms until it returns a value. */
export const eventually = <A>(what: string, timeoutMs: number, probe: Effect.Effect<A | undefined>) =>
  Effect.gen(function*() {
    const deadline = Date.now() + timeoutMs
    while (true) {
      const value = yield* probe
      if (value !== undefined) return value
      if (Date.now() > deadline) return yield* Effect.die(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`))
      yield* Effect.sleep(Duration.millis(20))
    }
  })

/** Pids of the live (not zombie) processes in a process group, from /proc (or where the tests see it). */
export const groupMembers = (pgid: number): ReadonlyArray<number> =>
  fs.readdirSync(PROC).filter((name) => /^\d+$/.test(name)).flatMap((name) => {
    try {
      const stat = fs.readFileSync(`${PROC}/${name}/stat`, "utf8")
      // "pid (comm) state ppid pgrp ...": comm may contain spaces and parentheses.
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      return Number(pgrp) === pgid && state !== "Z" ? [Number(name)] : []
    } catch {
      return [] // it exited while we looked
    }
  })

/** Kills what is left of a process group; for commands a SIGKILLed mino could not stop. */
export const killGroup = (pgid: number): void => {
  try {
    process.kill(-pgid, "SIGKILL")
  } catch {
    // ESRCH: nothing left.
  }
}

/**
 * Asks `question`, approves the call it brings (once the prompt is shown, which
 * is after Mino's approval guard: an answer typed earlier would be discarded, as
 * a person's would), and waits until the command's
 * process group has `members` live processes. The command must write `$$` to
 * `bash.pid` (bash leads its own group, so that names the group); the group is
 * killed when the test's scope closes, whatever happened.
 */
/**
 * Answers the approval prompt on the screen (`prompt`: Mino's, or a test's own) with `answer` Enter, as a person does. Keys that
 * reach Mino before it has drained the terminal once more after writing the prompt (Mino held
 * between the two, as a loaded machine does to it) count as typed before the prompt was seen:
 * Mino draws the prompt again under its notice, and the answer is typed again (at most 5 times).
 */
export const answerPrompt = (mino: Pty.Pty, answer: string, prompt = "Approve this operation? [y/N] ") =>
  Effect.gen(function*() {
    for (let attempt = 0; attempt < 5; attempt++) {
      const before = (yield* mino.screen).length
      yield* mino.write(`${answer}\r`)
      // What Mino writes next ends a line: the answered line, or the notice above the prompt drawn again.
      const next = yield* eventually("Mino's reply to the answer", 60_000, Effect.map(mino.screen, (screen) => {
        const after = screen.slice(before)
        return after.includes("\n") ? after : undefined
      }))
      if (!next.includes("typed before this question)")) return
      yield* mino.waitFor(prompt)
    }
  })

export const approvedGroup = (box: Sandbox, mino: Pty.Pty, question: string, members: number) =>
  Effect.gen(function*() {
    yield* mino.write(`${question}\r`)
    yield* mino.waitFor("Approve this operation? [y/N] ")
    yield* answerPrompt(mino, "y")
    const group = yield* pidFrom(path.join(box.cwd, "bash.pid"))
    yield* Effect.addFinalizer(() => Effect.sync(() => killGroup(group)))
    yield* eventually(`${members} processes in group ${group}`, 10_000, Effect.sync(() => groupMembers(group).length >= members || undefined))
    return group
  })

/** Reads a pid a command wrote (`echo $$ > file`), once the file is complete. */
export const pidFrom = (file: string, timeoutMs = Pty.DEFAULT_TIMEOUT_MS) =>
  eventually(`a pid in ${file}`, timeoutMs, Effect.sync(() => {
    const text = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : ""
    return /^\d+\n$/.test(text) ? Number(text.trim()) : undefined
  }))

/**
 * Mino at its first prompt asked to make a file: the model (answering "Done." after the call)
 * has received the question, and the approval screen for `touch approved-marker` is on its way.
 */
export const askedToMakeAFile = (box: Sandbox, extra: Readonly<Record<string, string>> = {}, rows?: number) =>
  Effect.gen(function*() {
    const server = yield* scriptedServer([
      ResponsesServer.toolCallResponse([bashCall("c1", "touch approved-marker")]),
      ResponsesServer.textResponse("Done.")
    ])
    const mino = yield* Pty.spawn({ argv: [process.execPath, BIN], env: environment(box, server.url, extra), cwd: box.cwd, ...(rows === undefined ? {} : { rows }) })
    yield* mino.waitFor("You> ")
    yield* mino.write("make a file\r")
    yield* requestsReceived(server, 1)
    return mino
  })

/**
 * What `stty -a > after.txt`, run by a shell after mino (`…; echo "mino exited $?"; stty -a > after.txt`),
 * wrote: the shell echoes the exit status first, so the file may come a moment after it is on the screen.
 */
export const sttyAfterExit = (box: Sandbox) =>
  eventually("stty's report in after.txt", 30_000, Effect.sync(() => {
    const file = path.join(box.cwd, "after.txt")
    const text = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : ""
    return text.endsWith("\n") ? text : undefined
  }))
