/**
 * A paste never types: the built `mino` in a real pseudo-terminal, pasted into
 * as a terminal that does not filter the bracketed-paste end marker (tmux) would
 * paste. An end marker inside the pasted text, then text and a CR, neither sends
 * a question nor answers the approval prompt, even when the rest of the paste
 * reaches the terminal while Mino is stopped; a pasted answer never approves;
 * Enter a moment later acts as usual. Pastes of 64 KiB and 1 MiB become one
 * question, byte for byte, within a second; Ctrl+C during a paste is acted on
 * (the terminal given back) within 100 ms of the key.
 * Times are the driver's (when it put a key in the terminal's input queue, and
 * when it read Mino's output), so the test's own scheduling does not count.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import { QUIET_MS } from "../../src/terminal/input/KeyDecoder.js"
import * as Pty from "../support/Pty.js"
import {
  bashCall,
  BIN,
  environment,
  exitsWith,
  inputOf,
  type Json,
  recordSummary,
  requestsReceived,
  type Sandbox,
  sandbox,
  scriptedServer,
  sessionRecords,
  startReady
} from "../support/MinoProcess.js"

const PASTE_START = "\u001b[200~"
const PASTE_END = "\u001b[201~"
/** What Mino writes as it gives the terminal back (bracketed paste off): the moment a stop key was acted on. */
const PASTE_OFF = "\u001b[?2004l"

/**
 * Mino at its first prompt, with the driver recording when it read each piece
 * of output; a second later, once it has loaded the rest of itself (which it
 * does while the first prompt waits for a question, in one synchronous stretch).
 */
const startStamped = (box: Sandbox, url: string) =>
  Effect.gen(function*() {
    const mino = yield* Pty.spawn({ argv: [process.execPath, BIN], env: environment(box, url), cwd: box.cwd, stamps: true })
    yield* mino.waitFor("You> ")
    yield* Effect.sleep("1 second")
    return mino
  })

/** When the driver read the first `needle` Mino wrote at or after byte `from` of its output (wall-clock ms); it must be relayed already. */
const shownAt = (mino: Pty.Pty, needle: string, from = 0) =>
  Effect.gen(function*() {
    const raw = yield* mino.rawOutput
    const at = raw.indexOf(needle, from)
    const time = at === -1 ? undefined : yield* mino.relayedAt(at + Buffer.byteLength(needle) - 1)
    if (time === undefined) return yield* Effect.die(new Error(`${JSON.stringify(needle)} was not relayed`))
    return time
  })

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

  for (const hold of [300, 1500]) {
    it.scopedLive(`the rest of a paste after an end marker inside it, arriving while Mino is stopped ${hold} ms, is still pasted: no second question`, () =>
      Effect.gen(function*() {
        const box = yield* sandbox
        const server = yield* scriptedServer([ResponsesServer.textResponse("One question.")])
        const { mino } = yield* startReady(box, server.url)
        // The first part of the paste, up to the marker inside it, is read and drawn...
        yield* mino.write(`${PASTE_START}about markdown${PASTE_END}`)
        yield* mino.waitFor("about markdown")
        // ...then Mino is stopped (descheduled, busy) while the terminal delivers the rest, long past the quiet spell.
        yield* mino.stop
        yield* mino.typeAcked(`\rrun touch PWNED\r${PASTE_END}`)
        yield* Effect.sleep(`${hold} millis`)
        yield* mino.kill("SIGCONT")
        yield* mino.waitFor("↵run touch PWNED↵")
        // Nothing was asked until a person presses Enter, and then everything pasted is one question.
        yield* Effect.sleep(`${QUIET_MS * 3} millis`)
        expect((yield* server.requests).length).toBe(0)
        yield* enterAMomentLater(mino)
        yield* mino.waitFor("Assistant> One question.")
        yield* mino.waitFor("You> ")
        yield* mino.write("\x04")
        yield* exitsWith(mino, { code: 0, signal: null })
        expect(questions(sessionRecords(box))).toEqual(["about markdown\nrun touch PWNED\n"])
        expect((yield* server.requests).length).toBe(1)
      }), 60_000)
  }

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
      // Keys as a person presses them: Ctrl+U, `y`, then Enter on its own.
      yield* mino.write("\x15y")
      yield* mino.waitFor(`\u001b[J${"Approve this operation? [y/N] "}`)
      yield* mino.waitFor("y")
      yield* enterAMomentLater(mino)
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

  it.scopedLive("a paste whose ESC reaches Mino 200 ms before the rest of its start marker never approves", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const server = yield* scriptedServer([ResponsesServer.toolCallResponse([bashCall("c1", "touch PWNED")]), ResponsesServer.textResponse("Nothing ran.")])
      const { mino } = yield* startReady(box, server.url)
      yield* mino.write("make a file\r")
      yield* mino.waitFor("Approve this operation? [y/N] ")
      // The ESC alone, then (past the quiet spell that makes it the Escape key) the rest of the
      // marker and a paste of DELs to erase it, y and CR.
      yield* mino.write("\u001b")
      yield* Effect.sleep(`${QUIET_MS * 2} millis`)
      yield* mino.write(`[200~${"\u007f".repeat(5)}y\r${PASTE_END}`)
      yield* mino.waitFor("y↵")
      yield* enterAMomentLater(mino)
      yield* mino.waitFor("Denied: the answer held pasted text; only y or yes typed at the prompt approves.\n")
      yield* mino.waitFor("Assistant> Nothing ran.")
      yield* mino.write("\x04")
      yield* exitsWith(mino, { code: 0, signal: null })
      expect(fs.existsSync(path.join(box.cwd, "PWNED"))).toBe(false)
    }), 60_000)

  /**
   * The terminal's own part of a paste: a bare Node program in the same kind of
   * pseudo-terminal, in raw mode, that only reads until it has seen the paste's end.
   */
  const bareRead = (box: Sandbox, text: string) =>
    Effect.scoped(Effect.gen(function*() {
      const program = [
        "process.stdin.setRawMode(true)",
        "let seen = ''",
        "process.stdout.write('You> ')",
        "process.stdin.on('data', (chunk) => { seen = (seen + chunk.toString('latin1')).slice(-32); if (seen.includes('END-OF-PASTE')) { process.stdout.write('END-OF-PASTE'); process.exit(0) } })"
      ].join(";")
      const bare = yield* Pty.spawn({ argv: [process.execPath, "-e", program], env: { PATH: "/usr/bin:/bin" }, cwd: box.cwd, stamps: true })
      yield* bare.waitFor("You> ")
      const typed = Date.now()
      yield* bare.write(`${PASTE_START}${text}${PASTE_END}`)
      yield* bare.exitedWithin(60_000)
      return (yield* shownAt(bare, "END-OF-PASTE")) - typed
    }))

  for (const size of [64 * 1024, 1024 * 1024]) {
    it.scopedLive(`a paste of ${size / 1024} KiB is one question, byte for byte, in under a second more than the terminal takes to deliver it`, () =>
      Effect.gen(function*() {
        const box = yield* sandbox
        const asked: Array<number> = []
        const server = yield* ResponsesServer.make(() =>
          Effect.sync(() => {
            asked.push(Date.now())
            return ResponsesServer.textResponse("Got it.")
          })
        )
        const mino = yield* startStamped(box, server.url)
        const text = pasteText(size)
        const from = (yield* mino.rawOutput).length
        const typed = Date.now()
        yield* mino.write(`${PASTE_START}${text}${PASTE_END}`)
        // The line is shown as a window around the cursor: its end, then the count of what is left out.
        yield* mino.waitFor("END-OF-PASTE", 60_000)
        yield* mino.flushOutput
        const read = (yield* shownAt(mino, "END-OF-PASTE", from)) - typed
        yield* Effect.sleep(`${QUIET_MS * 3} millis`)
        const entered = yield* mino.typeAcked("\r")
        yield* mino.waitFor("Assistant> Got it.", 60_000)
        const sent = (asked[0] ?? Infinity) - entered
        const floor = yield* bareRead(box, text)
        console.log(
          `paste of ${size / 1024} KiB: read and drawn ${read.toFixed(0)} ms after its first byte was typed ` +
            `(a bare raw-mode reader in the same terminal: ${floor.toFixed(0)} ms); Enter to the model having it ${sent.toFixed(0)} ms`
        )
        expect(read - floor + sent).toBeLessThan(1000)
        yield* mino.write("\x04")
        yield* exitsWith(mino, { code: 0, signal: null }, 30_000)
        expect(questions(sessionRecords(box))).toEqual([text])
        const [request] = yield* requestsReceived(server, 1)
        const user = inputOf(request!).filter((item) => item["role"] === "user").at(-1)?.["content"]
        expect(Array.isArray(user) ? (user[0] as Json)["text"] : undefined).toBe(text)
        expect((yield* server.requests).length).toBe(1)
      }), 120_000)
  }

  /** Ctrl+C typed behind `before`: from the key in the terminal's input queue until Mino gave the terminal back, and until it exited. */
  const interrupt = (before: string) =>
    Effect.scoped(Effect.gen(function*() {
      const box = yield* sandbox
      const server = yield* scriptedServer([])
      const mino = yield* startStamped(box, server.url)
      const from = (yield* mino.rawOutput).length
      // Both go through the driver's one command channel, so the key is queued right behind the last
      // byte of the paste, while Mino is still reading and drawing it, as a terminal queues a key.
      const started = Date.now()
      const [pasted, queued] = yield* Effect.all([mino.typeAcked(before), mino.typeAcked("\x03")], { concurrency: 2 })
      yield* exitsWith(mino, { code: 130, signal: null }, 60_000)
      const exited = Date.now()
      expect((yield* server.requests).length).toBe(0)
      return { restored: (yield* shownAt(mino, PASTE_OFF, from)) - queued, exited: exited - queued, delivered: pasted - started }
    }))

  it.live("Ctrl+C during a megabyte paste gives the terminal back within 100 ms of the key, exits 130, and nothing is asked", () =>
    Effect.gen(function*() {
      const idle = yield* interrupt("")
      // The paste never ends: its bytes keep the terminal's input queue full in front of the key.
      const pasting = yield* interrupt(`${PASTE_START}${pasteText(1024 * 1024)}`)
      console.log(
        `Ctrl+C, key in the input queue until the terminal is given back: idle ${idle.restored.toFixed(0)} ms, behind a 1 MiB paste ${pasting.restored.toFixed(0)} ms` +
          ` (until exit, seen by the test: ${idle.exited.toFixed(0)} ms and ${pasting.exited.toFixed(0)} ms; the paste took ${pasting.delivered.toFixed(0)} ms to go into the terminal as Mino read it, the key right behind it)`
      )
      // Both times are the driver's: when the key was in the terminal's input queue, and when it read
      // Mino's first byte of giving the terminal back. Found before the chunk is decoded, the key costs a
      // few milliseconds; 100 ms leaves room for a loaded machine's scheduling, not for decoding or
      // editing a megabyte in front of it (which took seconds before the key was looked for first).
      expect(pasting.restored).toBeLessThan(100)
    }), 120_000)
})
