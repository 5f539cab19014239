/**
 * The commands that print and end: the help, the version, a shell's completion
 * script, `mino log` and `mino sessions`. Each fails with a `ExitWith` for an exit code other than 0.
 */
import * as Effect from "effect/Effect"
import * as MinoConfig from "../Config.js"
import * as Escape from "../security/Escape.js"
import * as Conversations from "../session/directory/Conversations.js"
import { VERSION } from "../version.js"
import { ExitWith } from "./Chat.js"
import * as CodeCache from "./CodeCache.js"
import * as Commands from "./Commands.js"
import * as Help from "./Help.js"
import * as Log from "./Log.js"
import * as Sessions from "./Sessions.js"

/** Nothing to check: a start that prints this may keep its code cache. */
const print = (text: string) =>
  Effect.sync(() => {
    CodeCache.configurationChecked()
    process.stdout.write(text)
  })

export const help = (settings?: Help.Settings) => Effect.suspend(() => print(Help.text(settings)))

export const version = print(`${VERSION}\n`)

export const completions = (shell: Commands.Shell) => Effect.flatMap(Commands.completions(shell), print)

/** `mino log` or `mino sessions`: what it reads is this directory's, unless it names a conversation. */
export const log = (invocation: Commands.Log | Commands.Sessions): Effect.Effect<void, ExitWith> =>
  Effect.gen(function*() {
    // `mino log | head`: a reader that stops early ends the log quietly.
    process.stdout.on("error", () => process.exit(0))
    // HOME as for a chat: unset, empty or relative is a configuration error, never guessed.
    const home = yield* Effect.orDie(MinoConfig.home)
    const directory = Conversations.startupDirectory()
    const output = yield* (invocation._tag === "Log"
      ? Log.show({ ...invocation, home, directory })
      : Sessions.show({ home, directory, demo: invocation.demo })).pipe(
      // A refused directory of conversations (a symlink, not a directory, another user's) is refused as a start refuses it: exit 1.
      Effect.catchTag("SessionOpenError", (e) => Effect.succeed({ stdout: "", stderr: `mino: ${e.message}\n`, code: 1 })),
      Effect.catchAll((e) => Effect.succeed({ stdout: "", stderr: `mino: ${Escape.forLine(e.message)}.\n`, code: 2 }))
    )
    if (output.code === 0) CodeCache.configurationChecked()
    process.stdout.write(output.stdout)
    process.stderr.write(output.stderr)
    if (output.code !== 0) return yield* new ExitWith({ code: output.code })
  })
