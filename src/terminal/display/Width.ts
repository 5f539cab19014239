/**
 * Columns a string takes on a terminal: two for a character whose East Asian
 * Width is Wide or Fullwidth (what wcwidth, xterm and VTE draw in two cells),
 * none for a combining mark or a Hangul medial vowel or final consonant (drawn
 * on the cell before it, as wcwidth counts them), one for every other. Text
 * measured here has been escaped (escapes are ASCII), so no control or
 * zero-width format character is left.
 */

// Wide and Fullwidth code points, from Unicode's data, never picked by hand:
// - every emoji with default emoji presentation (Emoji_Presentation, all of
//   them East Asian Wide), from the regex property, so it follows the Unicode
//   version Node ships;
// - the other Wide and Fullwidth ranges of EastAsianWidth-17.0.0.txt, which a
//   regex cannot name (there is no East_Asian_Width property), as tabulated by
//   the wcwidth 0.7.0 Python package with the Emoji_Presentation code points
//   taken out and adjacent ranges merged (combining marks, which wcwidth counts
//   as zero, are left out). test/terminal/Width.test.ts checks the result
//   against the Unicode data of Python's own unicodedata module.
const WIDE = /[\p{Emoji_Presentation}\u1100-\u115f\u2329-\u232a\u2630-\u2637\u268a-\u268f\u2e80-\u2e99\u2e9b-\u2ef3\u2f00-\u2fd5\u2ff0-\u3029\u3030-\u303e\u3041-\u3096\u309b-\u30ff\u3105-\u312f\u3131-\u3163\u3165-\u318e\u3190-\u31e5\u31ef-\u321e\u3220-\u3247\u3250-\ua48c\ua490-\ua4c6\ua960-\ua97c\uac00-\ud7a3\uf900-\ufaff\ufe10-\ufe19\ufe30-\ufe52\ufe54-\ufe66\ufe68-\ufe6b\uff01-\uff60\uffe0-\uffe6\u{16fe0}-\u{16fe3}\u{16ff2}-\u{16ff6}\u{17000}-\u{18cd5}\u{18cff}-\u{18d1e}\u{18d80}-\u{18df2}\u{1aff0}-\u{1aff3}\u{1aff5}-\u{1affb}\u{1affd}-\u{1affe}\u{1b000}-\u{1b122}\u{1b132}\u{1b150}-\u{1b152}\u{1b155}\u{1b164}-\u{1b167}\u{1b170}-\u{1b2fb}\u{1d300}-\u{1d356}\u{1d360}-\u{1d376}\u{1f200}\u{1f202}\u{1f210}-\u{1f219}\u{1f21b}-\u{1f22e}\u{1f230}-\u{1f231}\u{1f237}\u{1f23b}\u{1f240}-\u{1f248}\u{1f260}-\u{1f265}\u{20000}-\u{2fffd}\u{30000}-\u{3fffd}]/u

// Enclosing and non-spacing marks (a spacing mark, Mc, takes its own cell) and the Hangul
// jamo that join the syllable before them; from the regex properties, so they follow Node's Unicode.
const NON_MOVING = /[\p{Mn}\p{Me}\u1160-\u11ff\ud7b0-\ud7ff]/u

// Text with no character that can be wide or take no column is measured by its length
// (the combining marks start at U+0300).
const NARROW = /^[\u0000-\u02ff]*$/

/** Columns one code point takes. */
export const ofChar = (ch: string): number => (NON_MOVING.test(ch) ? 0 : WIDE.test(ch) ? 2 : 1)

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
