/**
 * The start-up loader (scripts/cli-loader.mjs) writes its V8 code cache at exit
 * only once the application says its configuration was checked and held, so a
 * start that was refused writes nothing.
 */

/** Says the configuration held: from here on, the loader may write its cache at exit. */
export const configurationChecked = (): void => void Reflect.set(globalThis, Symbol.for("mino.configurationChecked"), true)
