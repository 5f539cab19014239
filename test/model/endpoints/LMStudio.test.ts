/**
 * LM Studio (a local server, `http://localhost:1234/v1`) — recorded traffic.
 *
 * Streams: vercel/ai, packages/open-responses/src/responses/__fixtures__/ @ 8a4f19d31f5324ac6366f70f031a802501c30762
 * - lmstudio-basic.1.chunks.txt (text, with logprobs in every part)
 * - lmstudio-tool-call.1.chunks.txt (reasoning as `content` text, a message, then a call; renamed bash)
 * Error bodies: a context overflow answered with HTTP 400 and the error as a string, as
 * lmstudio-ai/lmstudio-bug-tracker#237 and dyad-sh/dyad#925 quote it ("... the model is loaded with context
 * length of only 2048 tokens ...").
 *
 * Input rules: LM Studio is closed source. Its documentation (lmstudio.ai/blog/lmstudio-v0.3.29) says it
 * implements `/v1/responses` after OpenAI's, and it is a member of the Open Responses specification, so
 * Rules.openResponses is that specification's input schema (openresponses/openresponses @ ebf2ab1). The only
 * recorded follow-up (vercel/ai lmstudio-tool-call.2) was built by a client that sends no reasoning back
 * (convert-to-open-responses-input.ts), so how LM Studio uses reasoning text sent back is not observed;
 * Mino sends it as the specification's `reasoning_text` content.
 */
import { describe } from "@effect/vitest"
import { conformance, type Family, load } from "./Driver.js"
import * as Rules from "./Rules.js"

const family: Family = {
  name: "LM Studio",
  model: "zai-org/glm-4.7-flash",
  text: load("lmstudio.text"),
  toolCall: load("lmstudio.tool-call"),
  accepts: Rules.openResponses,
  reasoning: "content",
  errors: [
    {
      name: "HTTP 400 context overflow as a string error",
      reply: {
        status: 400,
        body: {
          error: "Trying to keep the first 14538 tokens when context the overflows. However, the model is loaded with context length of only 2048 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input"
        }
      },
      line: /context window; start a new conversation with `mino --new`$/
    }
  ]
}

describe("endpoint conformance", () => {
  conformance(family)
})
