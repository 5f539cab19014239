/**
 * A Terminal over pipes: `input` lines are what the user types, `screen()` is
 * everything written so far.
 */
import { PassThrough } from "node:stream"
import { Terminal } from "../../src/terminal/Terminal.js"

export const make = (typed: string, options: { readonly interactive: boolean; readonly secrets?: ReadonlyArray<string> }) => {
  const input = new PassThrough()
  const output = new PassThrough()
  let written = ""
  output.on("data", (chunk: Buffer) => void (written += chunk.toString("utf8")))
  input.end(typed)
  return {
    layer: Terminal.layerStreams({ input, output, interactive: options.interactive, decorated: false, secrets: options.secrets ?? [] }),
    screen: () => written
  }
}

export type Screen = ReturnType<typeof make>
