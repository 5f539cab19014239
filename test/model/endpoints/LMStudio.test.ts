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
 * Input rules: LM Studio is closed source; its recorded follow-ups are the Open Responses shapes, reasoning
 * going back as its text (Rules.openResponses).
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
