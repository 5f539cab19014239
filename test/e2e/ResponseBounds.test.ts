/**
 * The built `mino` in a real terminal, under a small heap (64 MiB of V8 old
 * space), against an endpoint that streams 1 MiB reasoning items for ever and
 * never completes: the turn ends `failed` with one line naming the bound, no
 * V8 abort, the chat goes on, the terminal is back in its own modes after exit,
 * and the session holds nothing of the failed response, its turn closed.
 *
 * And an uncaught exception thrown inside the running chat (by a module the test
 * preloads with Node's own `--require`; Mino has no hook for it) ends Mino with
 * the terminal's modes restored; so do SIGUSR2 and SIGALRM sent from elsewhere,
 * which still end it by that signal, and SIGABRT, which ends it with 134 and no
 * core file (a core would hold the key) even where cores are allowed.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { childRunning } from "../support/Proc.js"
import * as Effect from "effect/Effect"
import * as ResponseBudget from "../../src/model/stream/ResponseBudget.js"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import * as Pty from "../support/Pty.js"
import { sttyAfterExit, API_KEY, BIN, environment, recordSummary, sandbox, scriptedServer, sessionRecords } from "../support/MinoProcess.js"

const MIB = 1024 * 1024
const OPAQUE = "E".repeat(MIB)

/** Reasoning items of 1 MiB, 4,000 of them (4 GiB), and no response.completed. */
const endless: ResponsesServer.Reply = [
  { type: "response.created", response: { id: "resp_endless", status: "in_progress", output: [] } },
  ...Array.from({ length: 4_000 }, (_, i): ResponsesServer.Step => ({
    type: "response.output_item.done",
    output_index: i,
    item: { id: `rs_${i}`, type: "reasoning", summary: [], encrypted_content: OPAQUE }
  })),
  "stall"
]


/** The modes `stty -a` reports on: each `echo`, `icanon`, `isig` on (`true`) or off (`-echo`). */
const modes = (stty: string) => ({
  echo: /(^|\s)echo(\s|$)/.test(stty),
  icanon: /(^|\s)icanon(\s|$)/.test(stty),
  isig: /(^|\s)isig(\s|$)/.test(stty)
})

describe("a response past the bound, in the built mino under a small heap", () => {
  it.scopedLive("1 MiB items for ever: one line, no abort, the chat goes on, the terminal restored at exit, nothing of it saved", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const server = yield* scriptedServer([endless, ResponsesServer.textResponse("Recovered.")])
      // A shell runs mino with 64 MiB of heap, then reports how it ended and the terminal's modes after it.
      const script = `"${process.execPath}" --max-old-space-size=64 "${BIN}"; echo "mino exited $?"; stty -a > after.txt`
      const mino = yield* Pty.spawn({ argv: ["/bin/bash", "-c", script], env: environment(box, server.url), cwd: box.cwd })
      yield* mino.waitFor("You> ")
      expect(yield* mino.termios).toEqual({ echo: false, icanon: false, isig: false })
      yield* mino.write("think for ever\r")
      const failed = yield* mino.waitFor(/Turn failed: [^\n]*\n/, 60_000)
      expect(failed).toContain(`Turn failed: the model's response grew past ${ResponseBudget.MAX_KEPT_BYTES / MIB} MiB before it completed`)
      yield* mino.waitFor("You> ")
      yield* mino.write("and now?\r")
      yield* mino.waitFor("Recovered.")
      yield* mino.waitFor("You> ")
      yield* mino.write("\x04")
      yield* mino.waitFor("mino exited 0", 30_000)
      const screen = yield* mino.screen
      expect(screen).not.toMatch(/heap out of memory|FATAL ERROR|Aborted|unexpected error/)
      expect(screen).not.toContain(API_KEY)
      expect(screen.match(/Turn failed/g)).toHaveLength(1)
      expect(modes(yield* sttyAfterExit(box))).toEqual({ echo: true, icanon: true, isig: true })
      expect(recordSummary(sessionRecords(box))).toEqual(["user_input", "turn_end:failed", "user_input", "model_response", "turn_end:completed"])
      expect(fs.readFileSync(path.join(box.home, ".mino", "sessions", fs.readdirSync(path.join(box.home, ".mino", "sessions")).find((name) => name.endsWith(".jsonl"))!), "utf8")).not.toContain("EEEEEEEE")
      expect(fs.readdirSync(box.cwd).filter((name) => name.startsWith("core"))).toEqual([])
    }), 120_000)
})

describe("a fatal error in the built mino", () => {
  it.scopedLive("an uncaught exception while the chat waits for input: the terminal's modes are restored", () =>
    Effect.gen(function*() {
      const box = yield* sandbox
      const server = yield* scriptedServer([])
      // Preloaded by Node itself: once Mino has put the terminal in raw mode, throw from a timer, as a defect would.
      const preload = path.join(box.cwd, "..", "defect.cjs")
      fs.writeFileSync(preload, [
        "const poll = setInterval(() => {",
        "  if (!process.stdin.isRaw) return",
        "  clearInterval(poll)",
        "  setTimeout(() => { throw new Error('an injected defect') }, 300)",
        "}, 20)",
        "poll.unref()"
      ].join("\n"))
      const script = `"${process.execPath}" --require "${preload}" "${BIN}"; echo "mino exited $?"; stty -a > after.txt`
      const mino = yield* Pty.spawn({ argv: ["/bin/bash", "-c", script], env: environment(box, server.url), cwd: box.cwd })
      yield* mino.waitFor("You> ")
      const exited = yield* mino.waitFor(/mino exited (\d+)/, 30_000)
      expect(exited).not.toMatch(/mino exited 0/)
      expect(yield* mino.screen).toContain("an injected defect")
      expect(modes(yield* sttyAfterExit(box))).toEqual({ echo: true, icanon: true, isig: true })
    }), 60_000)
})

describe("a signal that ends mino by its default action", () => {
  for (const [signal, status] of [["SIGUSR2", 140], ["SIGALRM", 142], ["SIGABRT", 134]] as const) {
    it.scopedLive(`${signal} at the prompt: mino ends with ${status}, with the terminal's modes restored and no core file`, () =>
      Effect.gen(function*() {
        const box = yield* sandbox
        const server = yield* scriptedServer([])
        // Cores allowed: by default SIGABRT would write one, the key in it, into the working directory.
        const script = `ulimit -c unlimited; "${process.execPath}" "${BIN}"; echo "mino exited $?"; stty -a > after.txt`
        const mino = yield* Pty.spawn({ argv: ["/bin/bash", "-c", script], env: environment(box, server.url), cwd: box.cwd })
        yield* mino.waitFor("You> ")
        expect(yield* mino.termios).toEqual({ echo: false, icanon: false, isig: false })
        const pid = childRunning(mino.pid, BIN)
        expect(pid).toBeGreaterThan(0)
        process.kill(pid, signal)
        yield* mino.waitFor(`mino exited ${status}`, 30_000)
        expect(modes(yield* sttyAfterExit(box))).toEqual({ echo: true, icanon: true, isig: true })
        expect(fs.readdirSync(box.cwd).filter((name) => name.startsWith("core"))).toEqual([])
      }), 60_000)
  }
})
