/**
 * The endpoint and the headers as Mino shows them (`--help`, the banner,
 * `/status`): an endpoint by scheme, host, port and path (never a user, a
 * password or a query, where a key could hide), headers by their names only.
 * Every piece is escaped.
 */
import * as Escape from "../security/Escape.js"

/** OpenAI's endpoint, used when none is configured. */
export const OPENAI = "https://api.openai.com/v1"

/** The endpoint without what could hold a secret; `OPENAI` when none is set. */
export const shown = (baseURL: string | undefined): string => {
  if (baseURL === undefined || baseURL === "") return OPENAI
  try {
    const url = new URL(baseURL)
    return Escape.forValue(`${url.protocol}//${url.host}${url.pathname === "/" ? "" : url.pathname}`)
  } catch {
    return "(not a URL)"
  }
}

/** `host:port` of an endpoint that is not OpenAI's (the banner names it); undefined for OpenAI's own. */
export const elsewhere = (baseURL: string | undefined): string | undefined => {
  if (baseURL === undefined || baseURL === "") return undefined
  try {
    const url = new URL(baseURL)
    if (url.hostname === "api.openai.com") return undefined
    const port = url.port !== "" ? url.port : url.protocol === "https:" ? "443" : url.protocol === "http:" ? "80" : ""
    return Escape.forValue(port === "" ? url.hostname : `${url.hostname}:${port}`)
  } catch {
    return "(not a URL)"
  }
}

/** The names of `Name: value` lines, or `none`. */
export const headerNames = (text: string | undefined): string => {
  const names = (text ?? "").split("\n").map((line) => line.split(":", 1)[0]?.trim() ?? "").filter((name) => name.length > 0)
  return names.length === 0 ? "none" : names.map((name) => Escape.forValue(name.slice(0, 60))).join(", ")
}
