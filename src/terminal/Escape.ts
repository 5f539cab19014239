/**
 * Escaping for everything shown on the terminal that Mino did not write itself:
 * model text, commands, directory names, environment values and command output.
 * Nothing escaped here can move the cursor, clear the screen, overwrite a line,
 * or reorder text (bidi controls), so the approval screen shows what will run.
 */

// C0 controls except \n and \t, DEL, C1 controls, and the invisible or
// reordering format characters: bidi embeddings/overrides/isolates, marks,
// zero-width characters, line/paragraph separators, BOM, and lone surrogates.
const UNSAFE =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ufff9-\ufffb]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g

const NAMED: Readonly<Record<string, string>> = { "\r": "\\r", "\b": "\\b", "\f": "\\f", "\v": "\\v", "\u001b": "\\e" }

const code = (ch: string): string => {
  const n = ch.charCodeAt(0)
  return n <= 0xff ? `\\x${n.toString(16).padStart(2, "0")}` : `\\u${n.toString(16).padStart(4, "0")}`
}

/** Escapes unsafe characters for display, keeping newlines and tabs. */
export const forDisplay = (text: string): string => text.replace(UNSAFE, (ch) => NAMED[ch] ?? code(ch))

/** Escapes for a single line: newlines and tabs are escaped too. */
export const forLine = (text: string): string =>
  forDisplay(text).replace(/\n/g, "\\n").replace(/\t/g, "\\t")

/**
 * A JSON string literal that is also safe on a terminal: `JSON.stringify` escapes
 * C0 controls and lone surrogates but leaves DEL, C1 and format characters raw.
 */
export const jsonString = (text: string): string =>
  JSON.stringify(text).replace(UNSAFE, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`)
