/**
 * Any thrown value as one line of text: an error's message, or the value as a
 * string. Whatever was thrown, describing it cannot throw again (an object whose
 * `toString` is not a function, a revoked proxy, a getter that throws).
 */
export const describe = (value: unknown): string => {
  try {
    return value instanceof Error ? String(value.message) : String(value)
  } catch {
    return "a value that cannot be shown"
  }
}
