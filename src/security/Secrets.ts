/**
 * Keeping the API key off the screen, out of files and away from children.
 *
 * Only strings of at least `MIN_LENGTH` characters count as secrets: real keys
 * are dozens of characters long, while redacting a one-letter test "key" would
 * mangle ordinary text (every `x` on the screen).
 */
export const MIN_LENGTH = 8

export const REDACTED = "[redacted]"

/** The strings worth protecting among `secrets`. */
export const effective = (secrets: ReadonlyArray<string>): ReadonlyArray<string> =>
  secrets.filter((secret) => secret.length >= MIN_LENGTH)

/** `text` with every occurrence of each (effective) secret replaced. */
export const redact = (text: string, secrets: ReadonlyArray<string>): string =>
  effective(secrets).reduce((current, secret) => current.split(secret).join(REDACTED), text)

/** Whether `text` holds any (effective) secret. */
export const contains = (text: string, secrets: ReadonlyArray<string>): boolean =>
  effective(secrets).some((secret) => text.includes(secret))

/**
 * Whether JSON text holds a secret as written or once its escapes are decoded
 * (`\u0073k-…` spells `sk-…`): every string in it, keys included, is checked.
 */
export const inJson = (text: string, secrets: ReadonlyArray<string>): boolean => {
  if (effective(secrets).length === 0) return false
  if (contains(text, secrets)) return true
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return false
  }
  const strings: Array<string> = []
  const walk = (value: unknown): void => {
    if (typeof value === "string") strings.push(value)
    else if (Array.isArray(value)) value.forEach(walk)
    else if (typeof value === "object" && value !== null) {
      for (const [key, inner] of Object.entries(value)) {
        strings.push(key)
        walk(inner)
      }
    }
  }
  walk(parsed)
  return strings.some((value) => contains(value, secrets))
}
