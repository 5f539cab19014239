/** `JSON.parse` that answers `undefined` (never a JSON value) instead of throwing. */
export const parse = (text: string): unknown => {
  try {
    return JSON.parse(text) as unknown
  } catch {
    return undefined
  }
}
