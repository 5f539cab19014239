/** A record's ISO time as people read it, in UTC: `2026-12-03 07:40` (or `:12` seconds too); undefined when unreadable. */
export const utc = (time: string | undefined, unit: "minute" | "second"): string | undefined => {
  const millis = time === undefined ? Number.NaN : Date.parse(time)
  if (Number.isNaN(millis)) return undefined
  return `${new Date(millis).toISOString().slice(0, unit === "minute" ? 16 : 19).replace("T", " ")} UTC`
}
