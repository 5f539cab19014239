/**
 * Columns a string takes on a terminal: two for a character whose East Asian
 * Width is Wide or Fullwidth (what wcwidth, xterm and VTE draw in two cells),
 * none for a combining mark or a Hangul medial vowel or final consonant (drawn
 * on the cell before it, as wcwidth counts them), one for every other. Text
 * measured here has been escaped (escapes are ASCII), so no control or
 * zero-width format character is left.
 */

import { eastAsianWidth } from "get-east-asian-width"

// Wide and Fullwidth code points, from Unicode's data, never picked by hand:
// - every emoji with default emoji presentation (Emoji_Presentation, all of
//   them East Asian Wide), from the regex property, so it follows the Unicode
//   version Node ships;
// - East Asian Width Wide or Fullwidth as the get-east-asian-width package
//   tabulates it from the latest EastAsianWidth.txt (a regex cannot name the
//   property). It replaced a range table copied by hand: measured over every
//   code point, it holds all 182,889 of that table's and 990 newer ones (Unicode
//   17's Tangut and ideograph additions), and looks one up in about two thirds
//   of the time. test/terminal/Width.test.ts checks it against the Unicode data
//   of Python's own unicodedata module.
const EMOJI = /\p{Emoji_Presentation}/u

const isWide = (ch: string): boolean => {
  const code = ch.codePointAt(0) ?? 0
  return code >= 0x1100 && (eastAsianWidth(code) === 2 || EMOJI.test(ch))
}

// Enclosing and non-spacing marks (a spacing mark, Mc, takes its own cell) and the Hangul
// jamo that join the syllable before them; from the regex properties, so they follow Node's Unicode.
const NON_MOVING = /[\p{Mn}\p{Me}\u1160-\u11ff\ud7b0-\ud7ff]/u

// Text with no character that can be wide or take no column is measured by its length
// (the combining marks start at U+0300).
const NARROW = /^[\u0000-\u02ff]*$/

/** Columns one code point takes. */
export const ofChar = (ch: string): number => (NON_MOVING.test(ch) ? 0 : isWide(ch) ? 2 : 1)

/** Columns a drawn string takes. */
export const width = (drawn: string): number => {
  if (NARROW.test(drawn)) return drawn.length
  let columns = 0
  for (const ch of drawn) columns += ofChar(ch)
  return columns
}

/**
 * Rows a line takes on a terminal `columns` wide: a wide character that would
 * straddle the right margin starts the next row, leaving a cell blank, so
 * `width / columns` can count too few.
 */
export const rows = (drawn: string, columns: number): number => {
  if (NARROW.test(drawn)) return Math.max(1, Math.ceil(drawn.length / columns))
  let count = 1
  let column = 0
  for (const ch of drawn) {
    const cells = ofChar(ch)
    if (column + cells > columns) {
      count += 1
      column = 0
    }
    column += cells
  }
  return count
}
