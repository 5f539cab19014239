/**
 * Disk faults stop the chat with one clear line and leave the committed records
 * intact: injected ENOSPC/EIO on write and on fsync, and a real full filesystem.
 */
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Approver } from "../../src/approval/Approver.js"
import * as Gateway from "../../src/cli/Gateway.js"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import { SessionStore } from "../../src/session/SessionStore.js"
import * as EchoTool from "../support/EchoTool.js"
import * as FaultyDisk from "../support/FaultyDisk.js"
import { agentLayer, scriptedModel, sessionLines, tempDir, types } from "../support/Harness.js"
import * as Screen from "../support/Screen.js"
import { Secrets } from "../../src/security/Secrets.js"

describe("disk faults", () => {
  // The fault is armed while the first turn's tool runs, so `after` counts that turn's
  // last three appends (tool_result, model_response, turn_end), then the second turn's:
  // user_input, model_response, tool_start, tool_result.
  const cases: ReadonlyArray<readonly [string, "write" | "sync", FaultyDisk.Errno, number, ReadonlyArray<string>]> = [
    ["ENOSPC on fsync of the input", "sync", "ENOSPC", 3, []],
    ["ENOSPC on write of the response", "write", "ENOSPC", 4, ["user_input"]],
    ["EIO on write of the start", "write", "EIO", 5, ["user_input", "model_response"]],
    ["EIO on fsync of the result", "sync", "EIO", 6, ["user_input", "model_response", "tool_start"]]
  ]
  // The first turn is completed before the fault is armed, so it must survive untouched.
  for (const [name, where, code, after, committedSecondTurn] of cases) {
    it.scopedLive(`${name}: the chat stops with one clear line; committed records stay intact`, () =>
      Effect.gen(function*() {
        const home = tempDir("disk")
        const ran: Array<string> = []
        const call = (id: string) => ResponsesServer.toolCallResponse([{ call_id: id, name: "echo", arguments: "{\"text\":\"t\"}" }])
        const server = yield* scriptedModel([call("c1"), ResponsesServer.textResponse("first done"), call("c2"), ResponsesServer.textResponse("second done")])
        const faults: FaultyDisk.Faults = {}
        const screen = Screen.make(["one", "y", "two", "y", "three"], { interactive: true })
        const layer = agentLayer({
          home,
          url: server.url,
          tools: [EchoTool.make((t) => {
            ran.push(t)
            // Arm the fault once the first turn's tool has run: counts start from its result.
            if (ran.length === 1) faults[where] = { code, after }
          })],
          approver: Approver.layer,
          disk: FaultyDisk.layer(faults)
        }).pipe(Layer.provideMerge(screen.layer))
        const exit = yield* Effect.exit(Effect.scoped(Effect.provide(Gateway.run({ banner: "B" }), layer)))

        expect(Exit.isFailure(exit)).toBe(true)
        const error = Exit.isFailure(exit) ? Cause.failureOption(exit.cause) : Option.none()
        expect(Option.isSome(error) && error.value._tag).toBe("SessionWriteError")
        const message = Option.isSome(error) ? error.value.message : ""
        expect(message).toMatch(new RegExp(`^cannot save the session to ${home}/\\.mino/sessions/\\S+\\.jsonl: ${code}`))
        expect(message).not.toContain("\n")
        // The third question was never read: the chat stopped.
        expect(screen.screen()).not.toContain("three")
        const lines = sessionLines(home)
        expect(types(lines.slice(0, 6))).toEqual(["user_input", "model_response", "tool_start", "tool_result", "model_response", "turn_end"])
        expect(lines[5]).toMatchObject({ status: "completed" })
        // After the fault, nothing but whole committed records.
        expect(types(lines.slice(6))).toEqual(committedSecondTurn)
        // The command whose start could not be saved never ran.
        expect(ran).toHaveLength(committedSecondTurn.includes("tool_start") ? 2 : 1)
      }))
  }

  const mounted = (() => {
    if (process.getuid?.() !== 0) return undefined
    const dir = tempDir("full")
    try {
      execFileSync("mount", ["-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs", dir], { stdio: "ignore" })
      return dir
    } catch {
      return undefined
    }
  })()

  it.skipIf(mounted === undefined)("a real full filesystem (a 256 KiB tmpfs as HOME) stops writes with ENOSPC and keeps committed records", () =>
    Effect.runPromise(Effect.gen(function*() {
      const home = mounted!
      const big = "x".repeat(40 * 1024)
      const result = yield* Effect.scoped(Effect.gen(function*() {
        const store = yield* SessionStore
        let committed = 0
        for (let i = 0; i < 20; i++) {
          const exit = yield* Effect.exit(store.append({ type: "user_input", turn_id: `t${i}`, text: big }))
          if (Exit.isFailure(exit)) return { committed, error: String(exit.cause), context: (yield* store.context).length }
          committed += 1
        }
        return { committed, error: "", context: committed }
      })).pipe(Effect.provide(SessionStore.layer({ home }).pipe(Layer.provide(Secrets.layerNone))))
      try {
        expect(result.error).toContain("ENOSPC")
        expect(result.committed).toBeGreaterThan(0)
        // Open turns give no context: memory holds nothing beyond what the disk committed.
        expect(result.context).toBe(0)
        const lines = sessionLines(home)
        // Every committed record is whole, and the partial one was taken back.
        expect(lines).toHaveLength(result.committed)
        expect(lines.every((line) => line["text"] === big)).toBe(true)
      } finally {
        execFileSync("umount", [home])
        Fs.rmSync(home, { recursive: true, force: true })
      }
    }).pipe(Effect.asVoid)))
})
