/** The bounds on one turn (chapter 2.2). */
export const MAX_REQUESTS = 8
export const MAX_TOOL_CALLS = 16

/**
 * Why a batch of `batchSize` calls may not run, given the requests already made
 * and the calls already run in this turn; `undefined` when it may.
 */
export const batchOverLimit = (requestsMade: number, callsMade: number, batchSize: number): string | undefined => {
  if (batchSize === 0) return undefined
  if (requestsMade >= MAX_REQUESTS) {
    return `the model still asked for tools after ${MAX_REQUESTS} requests, the limit for one turn`
  }
  if (callsMade + batchSize > MAX_TOOL_CALLS) {
    return `running ${batchSize} more tool call(s) would exceed the limit of ${MAX_TOOL_CALLS} per turn`
  }
  return undefined
}
