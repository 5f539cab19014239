/**
 * The refusals Mino answers by changing the request instead of failing the
 * turn, each change tried once per request and announced in one line:
 *
 * - `without_include`: the endpoint rejects `include: ["reasoning.encrypted_content"]`
 *   (gpt-4o, gpt-4o-mini, gpt-4.1-mini, gpt-5-chat on OpenAI and Azure, also through
 *   LiteLLM, which wraps the message in its own): HTTP 400 with `param: "include"`,
 *   whatever the message, or the message "Encrypted content is not supported with
 *   this model". The request is sent again without `include`, and the client
 *   remembers it for that endpoint and model for as long as it runs (it is not
 *   saved: the next start asks once more, which costs one refused request).
 * - `without_earlier_reasoning`: the endpoint cannot use the reasoning items of
 *   earlier turns: it cannot verify their encrypted content
 *   (`invalid_encrypted_content`, "The encrypted content ... could not be verified",
 *   seen when a proxy or the organisation changed), or the conversation began on
 *   another endpoint and this one cannot read what that one wrote: vLLM refuses any
 *   encrypted content ("Encrypted content is not supported."), llama.cpp any
 *   reasoning without content text (`item['content'] is not an array`, `... is
 *   empty`, `item['content']['text'] is not a string`: server-chat.cpp @ 03eb25f,
 *   the reasoning branch of server_chat_convert_responses_to_chatcmpl, the only
 *   place those messages are thrown). The request is sent again without the
 *   earlier turns' reasoning items, and the Agent keeps those turns' reasoning out
 *   of the later requests while it runs; turns answered after that keep theirs.
 *   It is not saved: after a restart the first request is refused once more and
 *   adapts again.
 *
 * vLLM's bare "Encrypted content is not supported." names no parameter: it is
 * read as the earlier reasoning first and, when the request carried none, as the
 * `include` (`asks` lists both, the client takes the first that can change the
 * request). The session file is never changed: the items stay there verbatim.
 */
import type { Said } from "./ErrorBody.js"
import type { Adaptation } from "../protocol/ModelEvent.js"

export type { Adaptation }

/** llama.cpp's refusals of a reasoning item without content text (server-chat.cpp @ 03eb25f). */
const LLAMA_CPP_REASONING = /^item\['content'\](\['text'\])? is (not an array|empty|not a string)$/

/** The adaptations a refusal asks for, the likelier first; none when it asks for none. */
export const asks = (status: number, said: Said): ReadonlyArray<Adaptation> => {
  if (status !== 400) return []
  const message = (said.message ?? "").trim()
  if (said.param === "include" || /encrypted content is not supported with this model/i.test(message)) return ["without_include"]
  if (
    said.code === "invalid_encrypted_content" || /encrypted content .*could not be verified/i.test(message) ||
    LLAMA_CPP_REASONING.test(message)
  ) return ["without_earlier_reasoning"]
  if (/^encrypted content is not supported\.?$/i.test(message)) return ["without_earlier_reasoning", "without_include"]
  return []
}

/** The line that announces an adaptation. */
export const announcement = (adaptation: Adaptation, model: string): string =>
  adaptation === "without_include"
    ? `the endpoint does not return encrypted reasoning for ${model}; asking again without it (remembered while Mino runs)`
    : "the endpoint could not use the reasoning of earlier turns; asking again without it (it stays out of later requests while Mino runs)"
