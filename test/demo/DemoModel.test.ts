import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Approver } from "../../src/approval/Approver.js"
import * as Gateway from "../../src/cli/Gateway.js"
import * as DemoModel from "../../src/demo/DemoModel.js"
import { agentLayer, sessionLines, tempDir, types } from "../support/Harness.js"
import * as Screen from "../support/Screen.js"

describe("demo model", () => {
  it("turns `run <command>` into that command, other questions into a harmless one", () => {
    expect(DemoModel.commandFor("run ls -la /tmp")).toBe("ls -la /tmp")
    expect(DemoModel.commandFor("RUN  echo 'a b'  ")).toBe("echo 'a b'")
    expect(DemoModel.commandFor("Which Go version is installed? Use go version")).toBe("go --version")
    expect(DemoModel.commandFor("what is the version of node?")).toBe("node --version")
    expect(DemoModel.commandFor("what day is it today?")).toBe("date")
    expect(DemoModel.commandFor("what machine is this?")).toBe("uname -a")
  })

  it.scopedLive("drives the real loop: approval, real bash, a saved turn and a summary of the paired result", () =>
    Effect.gen(function*() {
      const home = tempDir("demo")
      const work = tempDir("demo-work")
      const server = yield* DemoModel.start
      const screen = Screen.make(["run echo demo-ok > out.txt && cat out.txt", "y"], { interactive: true })
      const layer = agentLayer({ home, url: server.url, tools: [], bash: { cwd: work, parentEnv: process.env }, approver: Approver.layer }).pipe(
        Layer.provideMerge(screen.layer)
      )
      yield* Effect.scoped(Effect.provide(Gateway.run({ banner: "demo" }), layer))
      expect(Fs.readFileSync(Path.join(work, "out.txt"), "utf8")).toBe("demo-ok\n")
      expect(screen.screen()).toContain("Command: \"echo demo-ok > out.txt && cat out.txt\"")
      expect(screen.screen()).toContain("[Tool result: completed; exit code 0]\ndemo-ok\n")
      expect(screen.screen()).toContain("Assistant> The command completed, exit code 0. It printed: demo-ok")
      expect(types(sessionLines(home))).toEqual(["user_input", "model_response", "tool_start", "tool_result", "model_response", "turn_end"])
    }))
})
