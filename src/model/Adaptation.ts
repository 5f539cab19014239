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
 * - `without_reasoning`: the endpoint takes no reasoning item in its input at all.
 *   Hugging Face's router (huggingface/responses.js, src/schemas.ts @ c0ac6ee: the
 *   `input` union has no reasoning member, so zod refuses the item with a 400 whose
 *   issue path is `["input", N]`) refuses the turn's own reasoning too, so leaving
 *   out only earlier turns' reasoning cannot help: every tool turn would fail after
 *   its command ran. A 400 whose error points at an input item (`at`: a zod path,
 *   or Groq's `'input.N'`) that is a reasoning item in the request sent asks for it.
 *   The request is sent again without any reasoning item, and the client remembers
 *   it for that endpoint (every model) while it runs.
 * - `without_optional`: the endpoint refuses a field Mino sends but does not need
 *   (`store`, `include`, `parallel_tool_calls`) or a reasoning item, without naming
 *   it as a `param` (Groq: "property 'store' is unsupported", its documentation lists
 *   `store` and `include` as unsupported; servers that only say a field is unknown or
 *   not permitted). The request is sent again once without all of them (and without
 *   reasoning items), and the client remembers it for that endpoint once a request
 *   so sent is taken. A refusal that names another field, or that says nothing about
 *   a field, asks for nothing: retrying could not change it.
 *
 * Each adaptation is tried at most once per request, so a server that refuses every
 * form fails the turn after at most one retry per kind (four at most), never a loop.
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

/** The fields Mino sends that a request can do without (`without_optional` leaves them out). */
export const OPTIONAL_FIELDS: ReadonlyArray<string> = ["store", "include", "parallel_tool_calls"]

/** A field, and a word that refuses it for being there, in either order (Groq's "property 'store' is unsupported", "Unknown parameter"). */
const FIELD = "(propert(y|ies)|parameters?|params?|fields?|arguments?|keys?)"
const REFUSAL = "(unsupported|not supported|unknown|unrecogni[sz]ed|not allowed|not permitted)"
const REFUSED_FIELD = new RegExp(`\\b${FIELD}\\b.*\\b${REFUSAL}\\b|\\b${REFUSAL}\\b.*\\b${FIELD}\\b|extra inputs are not permitted|additional propert(y|ies)`, "i")
/** A field named right after the word for it: `property 'store'`, `parameter "include"`, `` field `x` ``. */
const NAMED_FIELD = /\b(?:property|parameter|param|field|argument|key)[:\s]+['"`]([^'"`]+)['"`]/i
/** A place in the input as servers write it: Groq's `'input.3' : property 'x' is unsupported`, Ollama's `input[3]: ...`. */
const INPUT_PLACE = /(?:['"`]input\.(\d+)|\binput\[(\d+)\])/

/** The input item a refusal points at: a zod path `["input", N, ...]` or Groq's `'input.N'`. */
const inputIndex = (said: Said, message: string): number | undefined => {
  const at = said.at
  if (at !== undefined && at[0] === "input" && typeof at[1] === "number") return at[1]
  const place = INPUT_PLACE.exec(message)
  return place === null ? undefined : Number(place[1] ?? place[2])
}

/**
 * The adaptations a refusal asks for, the likelier first; none when it asks for
 * none. `typeAt` gives the type of the request's input item at an index (the
 * request that was refused), for refusals that point at an item.
 */
export const asks = (status: number, said: Said, typeAt: (index: number) => string | undefined = () => undefined): ReadonlyArray<Adaptation> => {
  if (status !== 400) return []
  const message = (said.message ?? "").trim()
  if (said.param === "include" || /encrypted content is not supported with this model/i.test(message)) return ["without_include"]
  if (
    said.code === "invalid_encrypted_content" || /encrypted content .*could not be verified/i.test(message) ||
    LLAMA_CPP_REASONING.test(message)
  ) return ["without_earlier_reasoning"]
  if (/^encrypted content is not supported\.?$/i.test(message)) return ["without_earlier_reasoning", "without_include"]
  const index = inputIndex(said, message)
  if (index !== undefined) return typeAt(index) === "reasoning" ? ["without_reasoning"] : []
  const param = said.param ?? ""
  if (param.length > 0) return OPTIONAL_FIELDS.includes(param) ? ["without_optional"] : []
  if (!REFUSED_FIELD.test(message)) return []
  const named = NAMED_FIELD.exec(message)?.[1]
  return named === undefined || OPTIONAL_FIELDS.includes(named) || named === "reasoning" ? ["without_optional"] : []
}

/** The line that announces an adaptation. */
export const announcement = (adaptation: Adaptation, model: string): string => {
  switch (adaptation) {
    case "without_include":
      return `the endpoint does not return encrypted reasoning for ${model}; asking again without it (remembered while Mino runs)`
    case "without_earlier_reasoning":
      return "the endpoint could not use the reasoning of earlier turns; asking again without it (it stays out of later requests while Mino runs)"
    case "without_reasoning":
      return "the endpoint takes no reasoning items in its input; asking again without them (remembered for this endpoint while Mino runs)"
    case "without_optional":
      return `the endpoint refused a field it does not support; asking again without the optional ones (${OPTIONAL_FIELDS.join(", ")}, reasoning items; remembered for this endpoint while Mino runs if it works)`
  }
}
