/**
 * The `/` commands that act on the chat — `/status`, `/new`, `/sessions`,
 * `/log`, `/model NAME` — as the text each shows. What a line asks for is
 * decided by `ChatCommands` (pure); this shell reads the session and changes it
 * (`ChatSession`), and every piece that came from outside is escaped where it is
 * formatted (`Status`, `Banner`, `Log`, `Sessions`).
 */
import * as Effect from "effect/Effect"
import type { AgentsFile } from "../agent/Instructions.js"
import * as Escape from "../security/Escape.js"
import type { SecretsShape } from "../security/Secrets.js"
import * as Banner from "./Banner.js"
import type * as ChatCommands from "./ChatCommands.js"
import * as ChatSession from "./ChatSession.js"
import * as Log from "./Log.js"
import * as Sessions from "./Sessions.js"
import * as Status from "./Status.js"

export interface SlashOptions {
  readonly session: ChatSession.ChatSession
  /** The endpoint as shown (`EndpointShown.shown`), and where it came from. */
  readonly endpoint: string
  readonly endpointFrom: string
  /** Where the starting model's name came from (`from --model`...). */
  readonly modelFrom: string
  readonly agents: AgentsFile
  readonly home: string | undefined
  readonly cwd: string
  readonly demo: boolean
  /** The key in use: taken out of what `/log` decodes (a call's command) and `/sessions` cuts (a last question) before either is escaped. */
  readonly secrets?: Pick<SecretsShape, "redact" | "redactCut">
}

/** A command that acts on the chat. */
export type Command = Extract<ChatCommands.Typed, { readonly _tag: "Status" | "New" | "Sessions" | "Log" | "Model" }>

/** What each command shows, from the session as it is now. */
export const make = (options: SlashOptions) => {
  const { session } = options
  let modelFrom = options.modelFrom

  const status = Effect.gen(function*() {
    const store = yield* session.store
    const records = yield* store.records
    return Status.text({
      model: yield* session.model,
      modelFrom,
      endpoint: options.endpoint,
      endpointFrom: options.endpointFrom,
      conversation: {
        id: store.info.id,
        path: store.path,
        saved: ChatSession.saved(store),
        turns: records.filter((record) => record.type === "user_input").length
      },
      agents: options.agents,
      tokens: Status.tokens(records)
    })
  })

  const renew = session.renew.pipe(
    Effect.map((store) => Banner.conversationLine(store.info, { demo: options.demo, which: "new", cwd: options.cwd })),
    Effect.catchAll((error) => Effect.succeed(`No new conversation: ${Escape.forLine(error.message)}. This one goes on.`))
  )

  const sessions = Sessions.show({ home: options.home, directory: options.cwd, demo: options.demo, ...(options.secrets === undefined ? {} : { secrets: options.secrets }) }).pipe(
    Effect.map((output) => output.stdout.trimEnd()),
    Effect.catchAll((error) => Effect.succeed(Escape.forLine(error.message)))
  )

  const log = Effect.gen(function*() {
    const records = yield* (yield* session.store).records
    return records.length === 0 ? "Nothing asked yet in this conversation." : Log.render(records, undefined, options.secrets?.redact).trimEnd()
  })

  const model = (name: string) =>
    Effect.gen(function*() {
      yield* session.setModel(name)
      modelFrom = "set by /model"
      const window = Status.windowOf(name)
      const known = window === undefined ? " (its context window is not one Mino knows: /status shows no meter)" : ""
      return `From the next question on, the model is ${Escape.forValue(name)}${known}.`
    })

  return (command: Command): Effect.Effect<string> => {
    switch (command._tag) {
      case "Status":
        return status
      case "New":
        return renew
      case "Sessions":
        return sessions
      case "Log":
        return log
      case "Model":
        return model(command.name)
    }
  }
}
