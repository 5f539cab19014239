/**
 * Mino's key reader over streams instead of a terminal, for tests of its shell:
 * what it wrote to the screen, and the stop keys it asked to act on.
 */
import { PassThrough } from "node:stream"
import * as Effect from "effect/Effect"
import * as KeyReader from "../../src/terminal/input/KeyReader.js"

/** A key reader (animated, `guardMs` of guard) reading `input`, with everything it wrote and the stops it requested. */
export const streamKeys = (guardMs: number) =>
  Effect.gen(function*() {
    const input = new PassThrough()
    let written = ""
    const stops: Array<string> = []
    const keys = yield* KeyReader.make({
      input,
      output: new PassThrough(),
      raw: (text) => void (written += text),
      animated: true,
      onStopKey: (key) => void stops.push(key),
      guardMs
    })
    return { keys, input, screen: () => written, stops }
  })
