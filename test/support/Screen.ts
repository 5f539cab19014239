/**
 * A Terminal over pipes, typed into like a person would: each line of `typed` is
 * entered only once a prompt (`You> ` or the approval prompt) is on the screen,
 * and input ends when the lines run out. `ahead` is typed at once, before any
 * prompt (type-ahead, or a whole piped script). `screen()` is everything written.
 */
import { PassThrough } from "node:stream"
import { PROMPT } from "../../src/approval/Approver.js"
import * as Layer from "effect/Layer"
import { Secrets } from "../../src/security/Secrets.js"
import { Terminal } from "../../src/terminal/Terminal.js"

export interface ScreenOptions {
  readonly interactive: boolean
  /** The API key the screen must never show (default: none). */
  readonly apiKey?: string
  readonly ahead?: string
  /** Colour and styles, as on a terminal without `NO_COLOR` (default: off). */
  readonly decorated?: boolean
}

export const make = (typed: ReadonlyArray<string>, options: ScreenOptions) => {
  const input = new PassThrough()
  const output = new PassThrough()
  const pending = [...typed]
  let written = ""
  output.on("data", (chunk: Buffer) => {
    written += chunk.toString("utf8")
    // A prompt is recognised as drawn, its style (when decorated) aside.
    const drawn = written.slice(-100).replace(/\u001b\[[0-9;]*m/g, "")
    if (drawn.endsWith("You> ") || drawn.endsWith(PROMPT)) {
      const line = pending.shift()
      setImmediate(() => (line === undefined ? input.end() : input.write(line + "\n")))
    }
  })
  if (options.ahead !== undefined) input.write(options.ahead)
  return {
    layer: Terminal.layerStreams({ input, output, interactive: options.interactive, decorated: options.decorated ?? false }).pipe(
      Layer.provideMerge(options.apiKey === undefined ? Secrets.layerNone : Secrets.layer(options.apiKey))
    ),
    screen: () => written
  }
}
