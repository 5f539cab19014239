/**
 * A key that only a record's JSON encoding spells (its escapes or its quotes
 * around a string complete it) is still kept out of the file: the encoded line
 * is searched once more, and a line that redaction there would leave unreadable
 * is refused with one line. A turn's closing is still saved: a reason that cannot
 * be saved gives way to one that can.
 */
import * as Fs from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { Secrets } from "../../src/security/Secrets.js"
import { encode } from "../../src/session/records/Records.js"
import { SessionStore, UNSAVED_REASON } from "../../src/session/SessionStore.js"
import { interrupted } from "../../src/session/conversation/TurnClosing.js"
import { sessionFile, sessionLines, tempDir } from "../support/Harness.js"

// Ends in a backslash: the text `abcdefg"` is encoded `abcdefg\"`, which spells it.
const KEY = "abcdefg\\"

describe("a key only the encoding spells", () => {
  it("is taken out of the line when the line stays readable, and the record is refused when it would not", () => {
    const redact = (text: string) => text.split(KEY).join("[redacted]")
    // `\"` inside the key's span: the quote goes with it, and the line still reads.
    const readable = encode({ type: "user_input", turn_id: "t", text: "x abcdefg\"\"y" }, (text) => text.split("abcdefg\\\"").join("[redacted]"))
    expect(Either.getOrElse(readable, () => "")).toBe("{\"type\":\"user_input\",\"turn_id\":\"t\",\"text\":\"x [redacted]\\\"y\"}\n")
    const refused = encode({ type: "user_input", turn_id: "t", text: "abcdefg\"" }, redact)
    expect(refused).toEqual(Either.left("it holds the API key in a form that cannot be taken out of it"))
  })

  it.scoped("a user input that holds it is refused with one line, the file unchanged; a closing reason that holds it gives way, and the turn is closed", () =>
    Effect.gen(function*() {
      const home = tempDir("encoded-key")
      const layer = SessionStore.layer({ home }).pipe(Layer.provide(Secrets.layer(KEY)))
      yield* Effect.scoped(Effect.gen(function*() {
        const store = yield* SessionStore
        yield* store.append({ type: "user_input", turn_id: "t1", text: "hello" })
        const before = Fs.readFileSync(sessionFile(home)!, "utf8")
        const refused = yield* Effect.exit(store.append({ type: "user_input", turn_id: "t2", text: "my key is abcdefg\"" }))
        expect(Exit.isFailure(refused) && String(refused.cause)).toContain("cannot save the user input: it holds the API key in a form that cannot be taken out of it")
        expect(Fs.readFileSync(sessionFile(home)!, "utf8")).toBe(before)
        yield* store.closeTurn("t1", { ...interrupted, status: "failed", reason: "the model sent call_id abcdefg\"" })
      }).pipe(Effect.provide(layer)))
      const lines = sessionLines(home)
      expect(lines.map((line) => line["type"])).toEqual(["user_input", "turn_end"])
      expect(lines[1]).toMatchObject({ status: "failed", reason: UNSAVED_REASON })
      expect(Fs.readFileSync(sessionFile(home)!, "utf8")).not.toContain(KEY)
    }))
})
