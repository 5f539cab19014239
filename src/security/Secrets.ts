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
