/**
 * Columns a string takes on a terminal. East Asian wide characters and emoji
 * take two; every other character takes one. Text measured here has been
 * escaped (escapes are ASCII), so no control or zero-width character is left.
 */

// East Asian wide and emoji code points take two columns.
const WIDE = /[\u1100-\u115f\u2e80-\u303e\u3041-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6\u{1f300}-\u{1f64f}\u{1f900}-\u{1f9ff}\u{20000}-\u{3fffd}]/u

// Text with no character that can be wide is measured by its length.
const NARROW = /^[\u0000-\u10ff]*$/

/** Columns one code point takes. */
export const ofChar = (ch: string): number => (WIDE.test(ch) ? 2 : 1)

/** Columns a drawn string takes. */
export const width = (drawn: string): number => {
  if (NARROW.test(drawn)) return drawn.length
  let columns = 0
  for (const ch of drawn) columns += ofChar(ch)
  return columns
}
