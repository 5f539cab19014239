// Opens the session under $HOME with the built library, says whether it opened,
// then holds it (and its lock) until stdin closes or the process is killed.
// Used by the lock tests: a real second process, a real SIGKILL.
import process from "node:process"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Secrets, SessionStore } from "../../dist/lib/index.js"

const program = Effect.gen(function*() {
  const store = yield* SessionStore
  // With HOLD_ASK, a question (and its turn's end) is saved first: a new conversation's file is made with it.
  if (process.env.HOLD_ASK === "1") {
    yield* store.append({ type: "user_input", turn_id: "held", text: "held" })
    yield* store.append({ type: "turn_end", turn_id: "held", status: "completed" })
  }
  process.stdout.write("opened\n")
  yield* Effect.async((resume) => {
    process.stdin.on("end", () => resume(Effect.void))
    process.stdin.resume()
  })
}).pipe(
  Effect.scoped,
  Effect.provide(SessionStore.layer({ home: process.env.HOME }).pipe(Layer.provide(Secrets.layerNone))),
  Effect.catchAll((error) => Effect.sync(() => process.stdout.write(`${error._tag}: ${error.message}\n`)))
)

Effect.runPromise(program).then(() => process.exit(0))
