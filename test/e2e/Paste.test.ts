/**
 * A paste never types: the built `mino` in a real pseudo-terminal, pasted into
 * as a terminal that does not filter the bracketed-paste end marker (tmux) would
 * paste. An end marker inside the pasted text, then text and a CR, neither sends
 * a question nor answers the approval prompt; a pasted answer never approves;
 * Enter a moment later acts as usual. Pastes of 64 KiB and 1 MiB become one
 * question, byte for byte; Ctrl+C during a paste exits. (How long those take is
 * measured by `node scripts/bench-input.mjs`, not asserted here.)
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ResponsesServer from "../../src/model/ResponsesServer.js"
import { QUIET_MS } from "../../src/terminal/KeyDecoder.js"
import type * as Pty from "../support/Pty.js"
import {
  bashCall,
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

const PASTE_START = "\u001b[200~"
const PASTE_END = "\u001b[201~"

const questions = (records: ReadonlyArray<Json>): ReadonlyArray<unknown> =>
  records.filter((record) => record["type"] === "user_input").map((record) => record["text"])

/** Enter as a person presses it after a paste: once the paste has been read and its quiet spell is over. */
const enterAMomentLater = (mino: Pty.Pty) => Effect.zipRight(Effect.sleep(`${QUIET_MS * 3} millis`), mino.write("\r"))

/** Text of `size` bytes: words, line breaks and a few wide and accented characters, ending in a marker. */
const pasteText = (size: number): string => {
  const words = ["alpha", "beta", "γάμμα", "δέλτα", "界", "😀", "x=1;", "$(echo)", "'q'", "\"dq\""]
  const parts: Array<string> = []
  let bytes = 0
  for (let n = 0; bytes < size - 32; n++) {
    const part = words[n % words.length] + (n % 11 === 10 ? "\n" : " ")
    parts.push(part)
    bytes += Buffer.byteLength(part)
  }
  return parts.join("") + "END-OF-PASTE"
}

describe("a paste never types", () => {
  it.scopedLive("an end marker inside a paste, then text and CR, sends no question: Enter later sends one, all of it", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const server = yield* scriptedServer([ResponsesServer.textResponse("One question.")])
      const { mino } = yield* startReady(box, server.url)
      // As tmux pastes a buffer holding the marker: the paste "ends" early, then more text, CRs and markers follow.
      yield* mino.write(`${PASTE_START}echo safe${PASTE_END}touch PWNED\r${PASTE_END}${PASTE_START}more\r${PASTE_END}`)
      yield* mino.waitFor("echo safetouch PWNED↵more↵")
      yield* enterAMomentLater(mino)
      yield* mino.waitFor("Assistant> One question.")
      yield* mino.waitFor("You> ")
      yield* mino.write("\x04")
      yield* exitsWith(mino, { code: 0, signal: null })
      expect(questions(sessionRecords(box))).toEqual(["echo safetouch PWNED\nmore\n"])
      expect((yield* server.requests).length).toBe(1)
    }), 60_000)

  it.scopedLive("at the approval prompt a paste answers nothing, and a line holding pasted text never approves", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const server = yield* scriptedServer([
        ResponsesServer.toolCallResponse([bashCall("c1", "touch one"), bashCall("c2", "touch two")]),
        ResponsesServer.textResponse("Nothing ran.")
      ])
      const { mino } = yield* startReady(box, server.url)
      yield* mino.write("make two files\r")
      yield* mino.waitFor("Approve this operation? [y/N] ")
      // A pasted `y` with the marker and a CR after it: no answer yet.
      yield* mino.write(`${PASTE_START}y${PASTE_END}\r`)
      yield* mino.waitFor("y↵")
      yield* enterAMomentLater(mino)
      yield* mino.waitFor("Denied: the answer held pasted text; only y or yes typed at the prompt approves.\n")
      // Pasted, then erased and typed over: still held pasted text.
      yield* mino.waitFor("Approve this operation? [y/N] ")
      yield* mino.write(`${PASTE_START}yes${PASTE_END}`)
      yield* mino.waitFor("yes")
      yield* Effect.sleep(`${QUIET_MS * 3} millis`)
      yield* mino.write("\x15y\r")
      yield* mino.waitFor("Denied: the answer held pasted text; only y or yes typed at the prompt approves.\n")
      yield* mino.waitFor("Assistant> Nothing ran.")
      yield* mino.write("\x04")
      yield* exitsWith(mino, { code: 0, signal: null })
      expect(fs.existsSync(path.join(box.cwd, "one"))).toBe(false)
      expect(fs.existsSync(path.join(box.cwd, "two"))).toBe(false)
      expect(recordSummary(sessionRecords(box))).toEqual([
        "user_input",
        "model_response",
        "tool_result:denied",
        "tool_result:denied",
        "model_response",
        "turn_end:completed"
      ])
    }), 60_000)

  for (const size of [64 * 1024, 1024 * 1024]) {
    it.scopedLive(`a paste of ${size / 1024} KiB is one question, byte for byte`, () =>
      Effect.gen(function*() {
        const box = yield* sandbox
        const server = yield* scriptedServer([ResponsesServer.textResponse("Got it.")])
        const { mino } = yield* startReady(box, server.url)
        const text = pasteText(size)
        yield* mino.write(`${PASTE_START}${text}${PASTE_END}`)
        // The line is shown as a window around the cursor: its end, then the count of what is left out.
        yield* mino.waitFor("END-OF-PASTE", 60_000)
        yield* enterAMomentLater(mino)
        yield* mino.waitFor("Assistant> Got it.", 60_000)
        yield* mino.write("\x04")
        yield* exitsWith(mino, { code: 0, signal: null }, 30_000)
        expect(questions(sessionRecords(box))).toEqual([text])
        const [request] = yield* requestsReceived(server, 1)
        const user = inputOf(request!).filter((item) => item["role"] === "user").at(-1)?.["content"]
        expect(Array.isArray(user) ? (user[0] as Json)["text"] : undefined).toBe(text)
        expect((yield* server.requests).length).toBe(1)
      }), 120_000)
  }

  it.scopedLive("Ctrl+C during a megabyte paste exits 130, and nothing is asked", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const server = yield* scriptedServer([])
      const { mino } = yield* startReady(box, server.url)
      // The key arrives behind the paste's bytes, as a terminal queues it; the paste never ends.
      yield* mino.write(`${PASTE_START}${pasteText(1024 * 1024)}\x03`)
      yield* exitsWith(mino, { code: 130, signal: null }, 60_000)
      expect((yield* server.requests).length).toBe(0)
    }), 90_000)
})
