/**
 * Escaping for everything shown on the terminal that Mino did not write itself:
 * model text, commands, directory names, environment values and command output.
 * Nothing escaped here can move the cursor, clear the screen, overwrite a line,
 * or reorder text (bidi controls), so the approval screen shows what will run.
 */

// C0 and C1 controls except \n and \t, DEL, format characters (bidi embeddings,
// overrides and isolates, marks, zero-width characters, BOM, tag characters),
// line/paragraph separators, lone surrogates, and every other default-ignorable
// code point (Hangul fillers, variation selectors…): each of these can move the
// cursor, reorder text, or hide text by rendering as nothing.
const UNSAFE = /(?![\n\t])[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Default_Ignorable_Code_Point}]/gu

/** The unsafe class, for a pattern built elsewhere (it matches one code point). */
export const UNSAFE_SOURCE = UNSAFE.source

// In displayed text, the text and emoji presentation selectors only choose how
// the character before them is drawn (❤️); commands show them escaped all the same.
const PRESENTATION = new Set(["\ufe0e", "\ufe0f"])

const NAMED: Readonly<Record<string, string>> = { "\r": "\\r", "\b": "\\b", "\f": "\\f", "\v": "\\v", "\u001b": "\\e" }

const hex4 = (unit: number): string => `\\u${unit.toString(16).padStart(4, "0")}`

const code = (ch: string): string => {
  const n = ch.codePointAt(0) ?? 0
  return n <= 0xff ? `\\x${n.toString(16).padStart(2, "0")}` : n <= 0xffff ? hex4(n) : `\\u{${n.toString(16)}}`
}

const escapeUnsafe = (text: string): string => text.replace(UNSAFE, (ch) => (PRESENTATION.has(ch) ? ch : NAMED[ch] ?? code(ch)))

// Characters a terminal draws on the cell before them without moving the cursor:
// combining marks, and the Hangul medial vowels and final consonants that join a
// leading consonant (wcwidth counts all of them as zero columns). A few in a row
// are writing (Vietnamese, Devanagari, Hebrew points); thousands are invisible
// bytes that only take time to reach a slow display.
const NON_MOVING = /[\p{M}\u1160-\u11ff\ud7b0-\ud7ff]/u

/** Non-moving characters in a row (on one character) that are drawn; each after them is shown escaped. */
export const MARKS_KEPT = 8

const NON_MOVING_RUNS = new RegExp(`${NON_MOVING.source}+`, "gu")

/**
 * `text` with every non-moving character that follows `MARKS_KEPT` others in a
 * row (counting `before`, the run that ended what was shown just before it) shown
 * as its escape, and the length of the run `text` ends with, for the next piece:
 * so streamed text is escaped the same however it is cut.
 */
export const marksFrom = (before: number, text: string, escape: (ch: string) => string = code): { readonly text: string; readonly marks: number } => {
  let marks = before
  let end = 0
  const shown = text.replace(NON_MOVING_RUNS, (run, at: number) => {
    const kept = at === 0 ? Math.max(0, MARKS_KEPT - before) : MARKS_KEPT
    const chars = Array.from(run)
    end = at + run.length
    marks = (at === 0 ? before : 0) + chars.length
    return chars.length <= kept ? run : chars.slice(0, kept).join("") + chars.slice(kept).map(escape).join("")
  })
  return { text: shown, marks: end === text.length && text.length > 0 ? marks : text.length === 0 ? before : 0 }
}

/** Escapes unsafe characters for display, keeping newlines and tabs; a long run of marks is shown escaped past `MARKS_KEPT`. */
export const forDisplay = (text: string): string => marksFrom(0, escapeUnsafe(text)).text

/**
 * `forDisplay` for a piece of streamed text, without the rule for runs of
 * marks, which a run cut between pieces would escape differently: the stream
 * applies it to what it writes, counting on across pieces (`marksFrom`, as
 * `terminal/display/SetApart` does for the model's text).
 */
export const forDisplayPiece = (text: string): string => escapeUnsafe(text)

/**
 * A value shown as one line whose escapes read back one way: backslashes are
 * doubled first, so a name holding the text `\n` differs from one holding a newline.
 */
export const forValue = (text: string): string => forLine(text.replace(/\\/g, "\\\\"))

/** Escapes for a single line: newlines and tabs are escaped too; blanks and runs of marks visible (`visible`). */
export const forLine = (text: string): string =>
  visible(forDisplay(text).replace(/\n/g, "\\n").replace(/\t/g, "\\t"))

// Characters that render as blank or as nothing, from Unicode's own data (the
// regex properties, so the list follows the Unicode version Node ships):
// White_Space (every Zs space, the line and paragraph separators),
// Default_Ignorable_Code_Point (zero-width characters, fillers, variation
// selectors, tags), private use (Co) and unassigned (Cn) code points, which a
// terminal draws with whatever its font has, often nothing; and the blank
// glyphs no property covers, found by scanning the character names for BLANK,
// FILLER, SPACE and NULL: U+2800 BRAILLE PATTERN BLANK, U+303F IDEOGRAPHIC HALF
// FILL SPACE, U+16FE4 KHITAN SMALL SCRIPT FILLER, and U+1D159 MUSICAL SYMBOL
// NULL NOTEHEAD (a placeholder that music fonts draw as nothing, of category
// So). The other invisible placeholders of that kind are in the properties:
// U+115F, U+1160, U+3164 and U+FFA0 (Hangul fillers), U+17B4 and U+17B5 (Khmer
// inherent vowels), U+180E, U+2061–U+2064 (invisible operators) and
// U+1D173–U+1D17A (musical beam and phrase controls) are default-ignorable.
// (U+16FE4 is a combining mark: outside the class, so it is matched alone.)
export const BLANK = /[\p{White_Space}\p{Default_Ignorable_Code_Point}\p{Co}\p{Cn}\u2800\u303f\u{1d159}]|\u{16fe4}/u

/** Plain spaces in a row from this many on can push text out of sight, so they are shown escaped. */
export const BLANK_RUN = 8

// A run of blanks, each with the marks that ride on it (a mark on a blank draws nothing of its own).
const BLANKS = new RegExp(`(?:(?:${BLANK.source})${NON_MOVING.source}*)+`, "gu")
const RIDING_MARK = new RegExp(`^${NON_MOVING.source}$`, "u")

const escapeUnits = (ch: string): string => Array.from({ length: ch.length }, (_, i) => hex4(ch.charCodeAt(i))).join("")

/**
 * The one rule for blanks on the approval screen, applied to text already
 * escaped by `jsonString` or `forValue` (so `\uXXXX` means the same character
 * there): every blank-looking character but U+0020 is shown as its `\uXXXX`
 * escape, and so is every space of a run of `BLANK_RUN` or more blanks, and
 * every combining mark on a blank (a space and a mark, repeated, would keep each
 * run short and still draw rows of nothing). Nothing blank can then hide what
 * follows it, and the text still reads back exactly.
 */
export const visibleBlanks = (escaped: string): string =>
  escaped.replace(BLANKS, (run) => {
    const chars = Array.from(run)
    const blanks = chars.filter((ch) => !RIDING_MARK.test(ch)).length
    return chars.map((ch) => (ch === " " && blanks < BLANK_RUN ? ch : escapeUnits(ch))).join("")
  })

/**
 * A JSON string literal that is also safe on a terminal: `JSON.stringify` escapes
 * C0 controls and lone surrogates but leaves DEL, C1 and format characters raw.
 * A character outside the BMP is escaped as its surrogate pair, as JSON requires.
 */
export const jsonString = (text: string): string =>
  visible(JSON.stringify(text).replace(UNSAFE, escapeUnits))

/**
 * JSON text (a record's line, as `JSON.stringify` wrote it) made safe on a
 * terminal without changing its value: the characters `JSON.stringify` leaves
 * raw can only be inside strings, where a `\uXXXX` escape means the same
 * character, and each string is made `visible` like any value.
 */
export const jsonText = (text: string): string =>
  text.replace(JSON_PARTS, (part) =>
    part.startsWith("\"")
      ? visible(part.replace(UNSAFE, escapeUnits))
      // Between strings only JSON's punctuation, literals and insignificant whitespace: a long run of it is one space.
      : part.replace(UNSAFE, escapeUnits).replace(/[ \t\r\n]{2,}/g, " "))

// A JSON string literal, or a stretch between them.
const JSON_PARTS = /"(?:[^"\\]|\\.)*"?|[^"]+/gsu

/**
 * The one rule for untrusted text shown as a value (a command, a question, a
 * directory, an id, a file name, on the approval screen, in notices, in `mino
 * log` and `mino sessions`, in the banner), applied to text already escaped by
 * `forLine`, `forValue`, `jsonString` or `jsonText`, which all end with it: the
 * blank rule (`visibleBlanks`), and every non-moving character after
 * `MARKS_KEPT` in a row shown as its `\uXXXX` escape. Nothing can then hide
 * text behind blanks or take time on a slow display while drawing nothing.
 */
export const visible = (escaped: string): string => marksFrom(0, visibleBlanks(escaped), escapeUnits).text
