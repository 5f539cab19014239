/**
 * Mino owns the terminal's input: the built `mino` in a real pseudo-terminal, in
 * raw mode, with keys decoded and the line edited by Mino. Type-ahead never
 * approves; a bracketed paste is one question; ↑ recalls earlier questions of
 * the conversation; editing keys leave no escape bytes in what is saved; `/exit`
 * and Ctrl+D at the approval prompt end the chat with code 0; the terminal's
 * modes are re-asserted before every prompt and restored at exit.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import { QUIET_MS } from "../../src/terminal/input/KeyDecoder.js"
import * as Pty from "../support/Pty.js"
import { sttyAfterExit,
  answerPrompt,
  bashCall,
  BIN,
  environment,
  exitsWith,
  inputOf,
  type Json,
  recordSummary,
  requestsReceived,
  sandbox,
  scriptedServer,
  sessionRecords,
  startReady
} from "../support/MinoProcess.js"
import { childRunning, PROC } from "../support/Proc.js"

const UP = "\u001b[A"
const LEFT = "\u001b[D"
const HOME = "\u001b[H"
const END = "\u001b[F"
const DELETE = "\u001b[3~"
const BACKSPACE = "\u007f"
const PASTE_START = "\u001b[200~"
const PASTE_END = "\u001b[201~"

/** The text of every saved `user_input`, in order. */
const questions = (records: ReadonlyArray<Json>): ReadonlyArray<unknown> =>
  records.filter((record) => record["type"] === "user_input").map((record) => record["text"])

/** The text of the last user message of a request. */
const lastUserText = (request: ResponsesServer.LoggedRequest): unknown => {
  const content = inputOf(request).filter((item) => item["role"] === "user").at(-1)?.["content"]
  return Array.isArray(content) ? (content[0] as Json | undefined)?.["text"] : undefined
}


const ESCAPE_BYTES = /[\u0000-\u0008\u000b-\u001f\u007f]/

/** Enter, typed as a person does after a paste: once the paste is on the screen and its quiet spell is over. */
const enterAMomentLater = (mino: Pty.Pty) => Effect.zipRight(Effect.sleep(`${QUIET_MS * 3} millis`), mino.write("\r"))

/**
 * The built mino asked to make a file; while the model still thinks, `keys` are
 * typed; then the model asks to run `touch approved-marker`, which no answer
 * typed ahead may approve.
 */
const typedAhead = (keys: string) =>
  Effect.gen(function*() {
    const box = yield* sandbox
    const gate = yield* Deferred.make<void>()
    const server = yield* scriptedServer([
      [{ wait: Deferred.await(gate) }, ...ResponsesServer.toolCallResponse([bashCall("c1", "touch approved-marker")])],
      ResponsesServer.textResponse("Not run.")
    ])
    const { mino } = yield* startReady(box, server.url)
    yield* mino.write("make a file\r")
    yield* requestsReceived(server, 1)
    yield* mino.write(keys)
    // Give mino time to read the keys from the terminal, as it would long before a real reply.
    yield* Effect.sleep("500 millis")
    yield* Deferred.succeed(gate, undefined)
    return { box, mino }
  })

describe("Mino owns the terminal's input", () => {
  it.scopedLive("a partial `y` typed while the model thinks, then Enter at the prompt, approves nothing", () =>
    Effect.gen(function*() {
      // The user types `y` (no Enter) before the approval screen exists.
      const { box, mino } = yield* typedAhead("y")
      const approval = yield* mino.waitFor("Approve this operation? [y/N] ")
      expect(approval).toContain("(ignored a partial line typed before this question)\n")
      yield* answerPrompt(mino, "")
      yield* mino.waitFor("[Tool result: denied]")
      yield* mino.waitFor("Assistant> Not run.")
      yield* mino.waitFor("You> ")
      expect(fs.existsSync(path.join(box.cwd, "approved-marker"))).toBe(false)
      yield* mino.write("\x04")
      yield* exitsWith(mino, { code: 0, signal: null })
      expect(recordSummary(sessionRecords(box))).toEqual([
        "user_input",
        "model_response",
        "tool_result:denied",
        "model_response",
        "turn_end:completed"
      ])
    }), 60_000)

  it.scopedLive("complete lines typed ahead are discarded too, and the screen says so", () =>
    Effect.gen(function*() {
      const { box, mino } = yield* typedAhead("yes\ry")
      const approval = yield* mino.waitFor("Approve this operation? [y/N] ")
      expect(approval).toContain("(ignored 1 line(s) and a partial line typed before this question)\n")
      yield* mino.write("no\r")
      yield* mino.waitFor("[Tool result: denied]")
      expect(fs.existsSync(path.join(box.cwd, "approved-marker"))).toBe(false)
    }), 60_000)

  it.scopedLive("a bracketed paste of several lines is one question, with its newlines and no escape bytes; Enter a moment later sends it", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const server = yield* scriptedServer([ResponsesServer.textResponse("One question.")])
      const { mino } = yield* startReady(box, server.url)
      // The paste's own CR, right after its end, is a newline: a paste never sends.
      yield* mino.write(`${PASTE_START}line one\nline two\rline${UP} three\tend${PASTE_END}\r`)
      yield* mino.waitFor("line one↵line two↵line three⇥end↵")
      yield* enterAMomentLater(mino)
      yield* mino.waitFor("Assistant> One question.")
      yield* mino.waitFor("You> ")
      yield* mino.write("\x04")
      yield* exitsWith(mino, { code: 0, signal: null })
      expect(questions(sessionRecords(box))).toEqual(["line one\nline two\nline three\tend\n"])
      expect((yield* server.requests).length).toBe(1)
    }), 60_000)

  it.scopedLive("editing keys edit the line and leave no escape bytes in the saved text", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const server = yield* scriptedServer([ResponsesServer.textResponse("First."), ResponsesServer.textResponse("Second.")])
      const { mino } = yield* startReady(box, server.url)
      // "wrld", Home, "hello ", End, "!", 4×←, "o", Ctrl+E, Backspace, Ctrl+A, Delete, "h", F5, Alt+x.
      yield* mino.write(`wrld${HOME}hello ${END}!${LEFT.repeat(4)}o\x05${BACKSPACE}\x01${DELETE}h\u001b[15~\u001bx\r`)
      yield* mino.waitFor("Assistant> First.")
      yield* mino.waitFor("You> ")
      // Ctrl+W deletes a word, Ctrl+U the line before the cursor, Ctrl+K the rest.
      yield* mino.write("junk words\x17\x15keep this\x01\x0bfinal\r")
      yield* mino.waitFor("Assistant> Second.")
      yield* mino.waitFor("You> ")
      yield* mino.write("\x04")
      yield* exitsWith(mino, { code: 0, signal: null })
      const saved = questions(sessionRecords(box))
      expect(saved).toEqual(["hello world", "final"])
      for (const request of yield* server.requests) expect(String(lastUserText(request))).not.toMatch(ESCAPE_BYTES)
    }), 60_000)

  it.scopedLive("↑ recalls this conversation's earlier questions, restored from the session on start", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const server = yield* scriptedServer([
        ResponsesServer.textResponse("A."),
        ResponsesServer.textResponse("B."),
        ResponsesServer.textResponse("Again.")
      ])
      const first = (yield* startReady(box, server.url)).mino
      yield* first.write("alpha question\r")
      yield* first.waitFor("Assistant> A.")
      yield* first.waitFor("You> ")
      yield* first.write("beta question\r")
      yield* first.waitFor("Assistant> B.")
      yield* first.waitFor("You> ")
      yield* first.write("\x04")
      yield* exitsWith(first, { code: 0, signal: null })

      const second = (yield* startReady(box, server.url)).mino
      // ↑ twice reaches the first question; Enter sends it as it was.
      yield* second.write(`${UP}${UP}\r`)
      yield* second.waitFor("Assistant> Again.")
      yield* second.waitFor("You> ")
      yield* second.write("\x04")
      yield* exitsWith(second, { code: 0, signal: null })
      const requests = yield* server.requests
      expect(requests.length).toBe(3)
      expect(lastUserText(requests[2]!)).toBe("alpha question")
      expect(questions(sessionRecords(box))).toEqual(["alpha question", "beta question", "alpha question"])
    }), 60_000)

  it.scopedLive("readline's keys: Ctrl+R finds an earlier question and Enter asks it; Ctrl+J and Alt+Enter give a question of several lines; Alt+B, Alt+D, Ctrl+Y edit by words", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const server = yield* scriptedServer([
        ResponsesServer.textResponse("A."),
        ResponsesServer.textResponse("B."),
        ResponsesServer.textResponse("C."),
        ResponsesServer.textResponse("D.")
      ])
      const { mino } = yield* startReady(box, server.url)
      // Ctrl+J (LF) and Alt+Enter (ESC CR) are line breaks; Enter (CR) sends.
      yield* mino.write("first line\nsecond line\u001b\rthird\r")
      yield* mino.waitFor("Assistant> A.")
      yield* mino.waitFor("You> ")
      yield* mino.write("git status please\r")
      yield* mino.waitFor("Assistant> B.")
      yield* mino.waitFor("You> ")
      // Ctrl+R, "first": the prompt says it searches, the line shows the question found; Enter asks it.
      yield* mino.write("\x12first")
      yield* mino.waitFor("(reverse-i-search)'first': ")
      yield* mino.write("\r")
      yield* mino.waitFor("Assistant> C.")
      yield* mino.waitFor("You> ")
      // "one two three", Alt+B Alt+B (before "two"), Alt+D cuts "two", Ctrl+E, Ctrl+Y puts it at the end.
      yield* mino.write("one two three\u001bb\u001bb\u001bd\x05\x19\r")
      yield* mino.waitFor("Assistant> D.")
      yield* mino.waitFor("You> ")
      yield* mino.write("\x04")
      yield* exitsWith(mino, { code: 0, signal: null })
      const multi = "first line\nsecond line\nthird"
      expect(questions(sessionRecords(box))).toEqual([multi, "git status please", multi, "one  threetwo"])
      const requests = yield* server.requests
      expect(requests.map(lastUserText)).toEqual([multi, "git status please", multi, "one  threetwo"])
    }), 60_000)

  it.scopedLive("TERM=dumb gets plain text: no escape sequence at all in the raw output, editing and approval included", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const gate = yield* Deferred.make<void>()
      const server = yield* scriptedServer([
        [{ wait: Deferred.await(gate) }, ...ResponsesServer.toolCallResponse([bashCall("c1", "echo ran > ran.txt")])],
        ResponsesServer.textResponse("**Done**.")
      ])
      // Colour is allowed (NO_COLOR unset): only TERM=dumb turns it off.
      const mino = yield* Pty.spawn({
        argv: [process.execPath, BIN],
        env: { ...environment(box, server.url), TERM: "dumb", NO_COLOR: "" },
        cwd: box.cwd
      })
      yield* mino.waitFor("You> ")
      // Editing keys redraw the line: with \r and \b only.
      yield* mino.write(`helo${LEFT}l${END}!${BACKSPACE}\r`)
      yield* requestsReceived(server, 1)
      // Long enough for a spinner to have redrawn, had there been one.
      yield* Effect.sleep("1500 millis")
      yield* Deferred.succeed(gate, undefined)
      yield* mino.waitFor("Approve this operation? [y/N] ")
      yield* answerPrompt(mino, "y")
      yield* mino.waitFor("Done")
      yield* mino.waitFor("You> ")
      yield* mino.write("\x04")
      yield* exitsWith(mino, { code: 0, signal: null })
      expect(questions(sessionRecords(box))).toEqual(["hello"])
      expect(fs.readFileSync(path.join(box.cwd, "ran.txt"), "utf8")).toBe("ran\n")
      const raw = (yield* mino.rawOutput).toString("utf8")
      expect(raw).toContain("[Tool: bash]")
      expect(raw.includes("\u001b[")).toBe(false)
      expect(raw.includes("\u001b")).toBe(false)
    }), 60_000)

  it.scopedLive("a denial says why on the screen, and the model's result says it too", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const server = yield* scriptedServer([
        ResponsesServer.toolCallResponse([bashCall("c1", "touch one"), bashCall("c2", "touch two")]),
        ResponsesServer.textResponse("Neither ran.")
      ])
      const { mino } = yield* startReady(box, server.url)
      yield* mino.write("make two files\r")
      yield* mino.waitFor("Approve this operation? [y/N] ")
      yield* mino.write("yes please\r")
      yield* mino.waitFor("Denied: the answer was \"yes please\"; only y or yes approves.\n")
      yield* mino.waitFor("Approve this operation? [y/N] ")
      yield* answerPrompt(mino, "")
      yield* mino.waitFor("Denied: no answer was typed (Enter alone); only y or yes approves.\n")
      yield* mino.waitFor("Assistant> Neither ran.")
      const [, second] = yield* requestsReceived(server, 2)
      const outputs = inputOf(second!).filter((item) => item["type"] === "function_call_output").map((item) => JSON.parse(String(item["output"])))
      expect(outputs).toEqual([
        { status: "denied", output: "Denied: the answer was \"yes please\"; only y or yes approves." },
        { status: "denied", output: "Denied: no answer was typed (Enter alone); only y or yes approves." }
      ])
      expect(fs.existsSync(path.join(box.cwd, "one"))).toBe(false)
      expect(fs.existsSync(path.join(box.cwd, "two"))).toBe(false)
      yield* mino.write("\x04")
      yield* exitsWith(mino, { code: 0, signal: null })
    }), 60_000)

  it.scopedLive("/exit at the prompt exits 0 and is never sent", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const server = yield* scriptedServer([])
      const { mino } = yield* startReady(box, server.url)
      yield* mino.write("/exit\r")
      yield* exitsWith(mino, { code: 0, signal: null })
      expect((yield* server.requests).length).toBe(0)
    }), 30_000)

  it.scopedLive("Ctrl+D at the approval prompt ends the turn cancelled, asks the model nothing more, and exits 0", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const server = yield* scriptedServer([
        ResponsesServer.toolCallResponse([bashCall("c1", "touch one"), bashCall("c2", "touch two")]),
        ResponsesServer.textResponse("must not be asked for")
      ])
      const { mino } = yield* startReady(box, server.url)
      yield* mino.write("make two files\r")
      yield* mino.waitFor("Approve this operation? [y/N] ")
      yield* mino.write("\x04")
      yield* exitsWith(mino, { code: 0, signal: null })
      const records = sessionRecords(box)
      expect(recordSummary(records)).toEqual([
        "user_input",
        "model_response",
        "tool_result:not_executed",
        "tool_result:not_executed",
        "turn_end:cancelled"
      ])
      expect(records.at(-1)?.["reason"]).toBe("end of input at the approval prompt")
      expect((yield* server.requests).length).toBe(1)
      expect(fs.existsSync(path.join(box.cwd, "one"))).toBe(false)
    }), 30_000)

  it.scopedLive("Ctrl+C at the approval prompt arrives as a key: the turn ends cancelled, nothing runs, exit 130", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const server = yield* scriptedServer([
        ResponsesServer.toolCallResponse([bashCall("c1", "touch one")]),
        ResponsesServer.textResponse("must not be asked for")
      ])
      const { mino } = yield* startReady(box, server.url)
      yield* mino.write("make a file\r")
      yield* mino.waitFor("Approve this operation? [y/N] ")
      yield* mino.write("\x03")
      yield* exitsWith(mino, { code: 130, signal: null })
      const records = sessionRecords(box)
      expect(recordSummary(records)).toEqual(["user_input", "model_response", "tool_result:not_executed", "turn_end:cancelled"])
      expect(records.at(-1)?.["reason"]).toMatch(/Ctrl\+C/)
      expect((yield* server.requests).length).toBe(1)
      expect(fs.existsSync(path.join(box.cwd, "one"))).toBe(false)
    }), 30_000)

  it.scopedLive("a command that changed the terminal's modes cannot leave them: raw mode is re-asserted, and restored at exit", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      let minoPid = 0
      let replies = 0
      const server = yield* ResponsesServer.make(() =>
        Effect.sync(() =>
          replies++ === 0
            ? ResponsesServer.toolCallResponse([
              // The command reaches Mino's terminal through /proc and turns echo, line mode and signals back on.
              bashCall("c1", `trap '' TTOU; stty -F ${PROC}/${minoPid}/fd/0 echo icanon isig; stty -F ${PROC}/${minoPid}/fd/0 -a > modes.txt`)
            ])
            : ResponsesServer.textResponse("Done.")
        )
      )
      // A shell runs mino, then reports the terminal's modes once mino has exited.
      const script = `"${process.execPath}" "${BIN}"; echo "mino exited $?"; stty -a > after.txt`
      const mino = yield* Pty.spawn({ argv: ["/bin/bash", "-c", script], env: environment(box, server.url), cwd: box.cwd })
      yield* mino.waitFor("You> ")
      const raw = yield* mino.termios
      expect(raw).toEqual({ echo: false, icanon: false, isig: false })
      minoPid = childRunning(mino.pid, BIN)
      expect(minoPid).toBeGreaterThan(0)
      yield* mino.write("change the terminal\r")
      yield* mino.waitFor("Approve this operation? [y/N] ")
      yield* answerPrompt(mino, "y")
      yield* mino.waitFor("Assistant> Done.")
      yield* mino.waitFor("You> ")
      // The command did change them…
      expect(fs.readFileSync(path.join(box.cwd, "modes.txt"), "utf8")).toMatch(/(^|\s)echo(\s|$)/)
      // …and Mino put its own back before this prompt.
      expect(yield* mino.termios).toEqual({ echo: false, icanon: false, isig: false })
      yield* mino.write("\x04")
      yield* mino.waitFor("mino exited 0")
      yield* exitsWith(mino, { code: 0, signal: null })
      const after = yield* sttyAfterExit(box)
      expect(after).toMatch(/(^|\s)echo(\s|$)/)
      expect(after).toMatch(/(^|\s)icanon(\s|$)/)
      expect(after).toMatch(/(^|\s)isig(\s|$)/)
    }), 60_000)
})
