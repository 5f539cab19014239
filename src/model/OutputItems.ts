/**
 * What Mino reads from the model's output items, and which of them the API can
 * take back as input. Items themselves stay verbatim in the session file.
 */

type Item = Readonly<Record<string, unknown>>

const isRecord = (value: unknown): value is Item => typeof value === "object" && value !== null

/** The text of a message item: its `output_text` parts and refusals, in order. */
export const messageText = (item: Item): string => {
  const content = item["content"]
  if (!Array.isArray(content)) return ""
  let text = ""
  for (const part of content) {
    if (!isRecord(part)) continue
    if (part["type"] === "output_text" && typeof part["text"] === "string") text += part["text"]
    if (part["type"] === "refusal" && typeof part["refusal"] === "string") text += part["refusal"]
  }
  return text
}

/** A message whose content is a refusal (and no other text): the model declined. */
export const isRefusal = (item: Item): boolean => {
  const content = item["content"]
  return Array.isArray(content) && content.some((part) => isRecord(part) && part["type"] === "refusal") &&
    !content.some((part) => isRecord(part) && part["type"] === "output_text" && part["text"] !== "")
}

/**
 * Whether an input item can be sent under `store: false`. A reasoning item is
 * resolved by the API from its `encrypted_content`; without it the API looks the
 * id up in storage that `store: false` never wrote, and answers 404.
 */
export const replayable = (item: unknown): boolean => {
  if (!isRecord(item) || item["type"] !== "reasoning") return true
  const encrypted = item["encrypted_content"]
  return typeof encrypted === "string" && encrypted.length > 0
}
