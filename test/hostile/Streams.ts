/**
 * Reply builders for the hostile tests: a text response whose text arrives in
 * exactly the given deltas, so a test can split an escape sequence or a secret
 * across them.
 */
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"

const isDelta = (step: ResponsesServer.Step): step is ResponsesServer.ServerEvent =>
  typeof step === "object" && "type" in step && step.type === "response.output_text.delta"

/** A complete text response streamed as `pieces`, one delta each. */
export const textInPieces = (pieces: ReadonlyArray<string>): Array<ResponsesServer.Step> => {
  const steps = ResponsesServer.textResponse(pieces.join(""))
  const first = steps.findIndex(isDelta)
  const template = steps[first]
  if (template === undefined || !isDelta(template)) return steps
  const rest = steps.filter((step) => !isDelta(step))
  rest.splice(first, 0, ...pieces.map((delta) => ({ ...template, delta })))
  return rest
}

/** `text` cut at the given offsets (any order, out-of-range ones wrapped), empty pieces dropped. */
export const cutAt = (text: string, cuts: ReadonlyArray<number>): Array<string> => {
  const points = [0, ...cuts.map((cut) => cut % (text.length + 1)).sort((a, b) => a - b), text.length]
  return points.slice(1).map((end, i) => text.slice(points[i], end)).filter((piece) => piece.length > 0)
}
