/**
 * The scripted model behind `mino --demo`: a loopback Responses server that
 * needs no key and no network. A question `run <command>` becomes a bash call of
 * that command; another question becomes a harmless command that answers it where
 * it can; after the paired result comes back, it answers with a short summary. A
 * question that mentions Markdown is answered at once with a sample of it, to
 * show how the model's Markdown is drawn.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Json from "../Json.js"
import * as ResponsesServer from "../testing/ResponsesServer.js"
import type { ResponseItem } from "../protocol/ResponseItem.js"

const isItem = (value: unknown): value is ResponseItem => typeof value === "object" && value !== null

const inputItems = (body: unknown): ReadonlyArray<ResponseItem> => {
  const input = isItem(body) ? body["input"] : undefined
  return Array.isArray(input) ? input.filter(isItem) : []
}

const userText = (item: ResponseItem): string | undefined => {
  if (item["role"] !== "user") return undefined
  const content = item["content"]
  if (typeof content === "string") return content
  if (!Array.isArray(content)) return undefined
  return content.filter(isItem).map((part) => (typeof part["text"] === "string" ? part["text"] : "")).join("")
}

const NOT_TOOLS = new Set(["the", "a", "which", "what", "my", "your", "this", "its", "installed", "current", "latest", "of"])

/** The command that answers a question, as far as a script can tell. */
export const commandFor = (question: string): string => {
  const run = /^\s*run\s+(.+)$/is.exec(question)
  if (run?.[1] !== undefined) return run[1].trim()
  const tool = /\bversions? of ([a-z][\w.+-]*)/i.exec(question)?.[1] ??
    [...question.matchAll(/\b([a-z][\w.+-]*)\s+(?:--)?version\b/gi)].map((m) => m[1]).find((w) => w !== undefined && !NOT_TOOLS.has(w.toLowerCase()))
  if (tool !== undefined) return `${tool.toLowerCase()} --version`
  if (/\b(date|time|day|today)\b/i.test(question)) return "date"
  return "uname -a"
}

const summary = (output: string): string => {
  const parsed = Json.parse(output)
  if (!isItem(parsed)) return "The tool returned a result I could not read."
  const status = String(parsed["status"])
  const text = typeof parsed["output"] === "string" ? parsed["output"].trim() : ""
  const first = text.split("\n")[0] ?? ""
  const exit = typeof parsed["exit_code"] === "number" ? `, exit code ${parsed["exit_code"]}` : ""
  switch (status) {
    case "completed":
      return first.length > 0 ? `The command completed${exit}. It printed: ${first}` : `The command completed${exit} and printed nothing.`
    case "denied":
      return "You did not approve the command, so I could not check."
    default:
      return `The command ended with status ${status}${exit}.${first.length > 0 ? ` It printed: ${first}` : ""}`
  }
}

/** The answer to a question about Markdown: one of each thing the terminal draws. */
export const MARKDOWN_SAMPLE = [
  "## What the demo model does",
  "",
  "It answers each question with **one bash command**, shown in full, which runs only if you type `y`:",
  "",
  "- `run <command>` asks for exactly that command",
  "- a question about a *version* asks for `<tool> --version`",
  "- anything else asks for `uname -a`",
  "",
  "> Every command waits for your answer; nothing runs unseen.",
  "",
  "```sh",
  "run ls -la **/*.ts",
  "```",
  "",
  "A real model needs `OPENAI_API_KEY`; its Markdown is drawn like this, as [CommonMark](https://commonmark.org) reads it."
].join("\n")

let calls = 0

const reply = (request: ResponsesServer.Request): ResponsesServer.Reply => {
  const items = inputItems(request.body)
  const last = items.at(-1)
  if (last !== undefined && last["type"] === "function_call_output") {
    return ResponsesServer.textResponse(summary(String(last["output"])), { model: "mino-demo" })
  }
  const question = last === undefined ? undefined : userText(last)
  if (question === undefined) return ResponsesServer.textResponse("Ask me something.", { model: "mino-demo" })
  if (/\bmarkdown\b/i.test(question)) return ResponsesServer.textResponse(MARKDOWN_SAMPLE, { model: "mino-demo" })
  const command = commandFor(question)
  return ResponsesServer.toolCallResponse(
    [{ call_id: `call_demo_${Date.now().toString(36)}_${++calls}`, name: "bash", arguments: JSON.stringify({ command }) }],
    { model: "mino-demo" }
  )
}

/** Starts the demo model on 127.0.0.1; the scope stops it. */
export const start: Effect.Effect<ResponsesServer.ResponsesServer, never, Scope.Scope> = ResponsesServer.make((request) =>
  Effect.succeed(reply(request))
)
