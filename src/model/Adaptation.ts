/**
 * The two refusals Mino answers by changing the request instead of failing the
 * turn, each tried once per request and announced in one line:
 *
 * - The endpoint rejects `include: ["reasoning.encrypted_content"]` (gpt-4o,
 *   gpt-4o-mini, gpt-4.1-mini, gpt-5-chat on OpenAI and Azure, also through
 *   LiteLLM, which wraps the message in its own): HTTP 400 with `param: "include"`,
 *   or the message "Encrypted content is not supported with this model". The
 *   request is sent again without `include`, and the client remembers it for that
 *   endpoint and model for as long as it runs (it is not saved: the next start
 *   asks once more, which costs one refused request).
 * - The endpoint cannot verify the encrypted reasoning of earlier turns
 *   (`invalid_encrypted_content`: "The encrypted content ... could not be
 *   verified", seen when a proxy or the organisation changed), or takes no
 *   encrypted reasoning at all (vLLM: "Encrypted content is not supported.", when
 *   the conversation began on another endpoint): the request is sent again
 *   without the earlier turns' reasoning items, and the Agent keeps those turns'
 *   reasoning out of the later requests while it runs; turns answered after that
 *   keep theirs. It is not saved: after a restart the first request is refused
 *   once more and adapts again.
 *
 * The session file is never changed: the items stay there verbatim.
 */
import type { Said } from "./ErrorBody.js"

export type Adaptation = "without_include" | "without_earlier_reasoning"

/** Whether a refusal asks for `adaptation`. */
export const asks = (status: number, said: Said): Adaptation | undefined => {
  if (status !== 400) return undefined
  const message = said.message ?? ""
  if (said.param === "include" || /encrypted content is not supported with this model/i.test(message)) return "without_include"
  if (
    said.code === "invalid_encrypted_content" || /encrypted content .*could not be verified/i.test(message) ||
    /^encrypted content is not supported\.?$/i.test(message.trim())
  ) return "without_earlier_reasoning"
  return undefined
}

/** The line that announces an adaptation. */
export const announcement = (adaptation: Adaptation, model: string): string =>
  adaptation === "without_include"
    ? `the endpoint does not return encrypted reasoning for ${model}; asking again without it (remembered while Mino runs)`
    : "the endpoint could not use the reasoning of earlier turns; asking again without it (it stays out of later requests while Mino runs)"
