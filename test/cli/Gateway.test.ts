import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Approver } from "../../src/approval/Approver.js"
import * as ChatCommands from "../../src/cli/ChatCommands.js"
import * as Gateway from "../../src/cli/Gateway.js"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import * as EchoTool from "../support/EchoTool.js"
import { agentLayer, API_KEY, inputOf, scriptedModel, tempDir } from "../support/Harness.js"
import * as Screen from "../support/Screen.js"

const chat = (typed: ReadonlyArray<string>, replies: Parameters<typeof scriptedModel>[0]) =>
  Effect.gen(function*() {
    const server = yield* scriptedModel(replies)
    const screen = Screen.make(typed, { interactive: true, apiKey: API_KEY })
    const layer = agentLayer({ home: tempDir("gateway"), url: server.url, tools: [EchoTool.make()], approver: Approver.layer }).pipe(
      Layer.provideMerge(screen.layer)
    )
    yield* Effect.scoped(Effect.provide(Gateway.run({ banner: "BANNER" }), layer))
    return { screen: screen.screen(), requests: yield* server.requests }
  })

describe("Gateway", () => {
  it.scopedLive("shows a whole tool turn in the chapter's layout and exits at end of input", () =>
    Effect.gen(function*() {
      const { screen } = yield* chat(["echo hi", "y"], [
        ResponsesServer.toolCallResponse([{ call_id: "c1", name: "echo", arguments: "{\"text\":\"hi there\"}" }]),
        ResponsesServer.textResponse("It echoed hi there.")
      ])
      expect(screen).toBe([
        "BANNER",
        "",
        "You> ",
        "Assistant>",
        "[Tool: echo]",
        "Text: hi there",
        "Approve this operation? [y/N] ",
        "[Tool result: completed]",
        "hi there",
        "",
        "Assistant> It echoed hi there.",
        "",
        "You> ",
        ""
      ].join("\n"))
    }))

  it.scopedLive("model text and tool output cannot move the cursor, clear the screen or reorder text", () =>
    Effect.gen(function*() {
      const hostile = "\u001b[2J\u001b[1;1Hfake\rover\bback\u202etxt.exe\u0007"
      const { screen } = yield* chat(["go", "y"], [
        ResponsesServer.toolCallResponse([{ call_id: "c1", name: "echo", arguments: JSON.stringify({ text: hostile }) }]),
        ResponsesServer.textResponse(`model says ${hostile}`)
      ])
      expect(screen).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f\u202e]/)
      expect(screen).toContain("Text: \\e[2J\\e[1;1Hfake\\rover\\bback\\u202etxt.exe\\x07")
      expect(screen).toContain("model says \\e[2J\\e[1;1Hfake\\rover\\bback\\u202etxt.exe\\x07")
    }))

  it.scopedLive("a failed turn shows one clear line and the chat goes on", () =>
    Effect.gen(function*() {
      const { screen, requests } = yield* chat(["first", "second"], [
        ResponsesServer.httpError(500, "upstream exploded"),
        ResponsesServer.textResponse("second works")
      ])
      expect(screen).toContain("Turn failed: model request failed: HTTP 500: upstream exploded\n")
      expect(screen).toContain("Assistant> second works")
      expect(requests).toHaveLength(2)
    }))

  it.scopedLive("the API key never reaches the screen", () =>
    Effect.gen(function*() {
      const { screen } = yield* chat(["hi"], [ResponsesServer.textResponse(`leaked ${API_KEY} here`)])
      expect(screen).not.toContain(API_KEY)
      expect(screen).toContain("leaked [redacted] here")
    }))

  it.scopedLive("/help and an unknown /word are answered on the screen and never sent; // sends the line with one / removed; /exit ends", () =>
    Effect.gen(function*() {
      const { screen, requests } = yield* chat(["/help", "/nope, what is this?", "//etc/hosts: what is it?", "/exit", "never asked"], [
        ResponsesServer.textResponse("It maps names to addresses.")
      ])
      expect(screen).toContain(`You> \n${ChatCommands.HELP_TEXT}\nYou> `)
      expect(screen).toContain(`You> \n${ChatCommands.unknown("/nope,")}\n\nYou> `)
      expect(requests).toHaveLength(1)
      expect(JSON.stringify(inputOf(requests[0]!))).toContain("\"/etc/hosts: what is it?\"")
      expect(JSON.stringify(requests)).not.toContain("nope")
      expect(JSON.stringify(requests)).not.toContain("never asked")
    }))
})
