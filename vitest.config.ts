import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

/**
 * MINO_TEST_MAC_LACKS=1: the tests that depend on the system run with what a Mac lacks taken away
 * (`test/support/mac-lacks.sh`: as root, in a mount namespace of its own whose /proc is empty and
 * whose flock programs are /dev/null), on Linux, so that Linux needs none of it either and macOS's
 * path runs somewhere. Outside that namespace this process runs itself again inside it.
 */
const MAC_LACKS = process.env["MINO_TEST_MAC_LACKS"] === "1"
/**
 * The second pass runs what reaches the system through `src/platform` or the lifeline (the session lock,
 * the terminal found by its device number, the watcher and its gate, signals, crash recovery), not the
 * pure cores or the screen's drawing, which a missing /proc cannot change: the pass stays short.
 */
const MAC_LACKS_TESTS = [
  "test/platform/**/*.test.ts",
  "test/bash/**/*.test.ts",
  "test/session/SessionLock.test.ts",
  "test/session/Conversations.test.ts",
  "test/agent/Instructions.test.ts",
  "test/terminal/KeyReader.test.ts",
  "test/terminal/Terminal.test.ts",
  ...[
    "Busy", "Cancel", "CliStart", "Conversations", "CrashRecovery", "Environment", "Helpers", "Key", "Keys",
    "Lifeline", "Piped", "Signals", "ToolTurn", "TornTail", "TypeAhead", "VerbatimCrash"
  ].map((name) => `test/e2e/${name}.test.ts`)
]

if (MAC_LACKS && process.env["MINO_TEST_PROC"] === undefined) {
  const script = fileURLToPath(new URL("./test/support/mac-lacks.sh", import.meta.url))
  const inside = spawnSync(script, [process.execPath, ...process.argv.slice(1)], { stdio: "inherit" })
  process.exit(inside.status ?? 1)
}
if (MAC_LACKS && Fs.existsSync("/proc/self")) throw new Error("MINO_TEST_MAC_LACKS=1, but /proc is mounted: run vitest as root, and not with MINO_TEST_PROC set")

export default defineConfig({
  // `examples/` import the package by name, as its users do.
  resolve: {
    alias: [
      { find: /^mino-agent\/testing$/, replacement: fileURLToPath(new URL("./src/testing.ts", import.meta.url)) },
      { find: /^mino-agent$/, replacement: fileURLToPath(new URL("./src/index.ts", import.meta.url)) }
    ]
  },
  test: {
    include: MAC_LACKS ? MAC_LACKS_TESTS : ["test/**/*.test.ts"],
    // Real processes, sockets and fsyncs: keep per-test limits generous but finite.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Both cores of the 2-core machine (the default leaves one idle): the suite runs in about 6 minutes
    // instead of 9, and every test runs beside another, as on a loaded machine.
    maxWorkers: 2,
    minWorkers: 1,
    ...(MAC_LACKS ? { poolOptions: { forks: { execArgv: ["--import", fileURLToPath(new URL("./test/support/mac-lacks-worker.mjs", import.meta.url))] } } } : {})
  }
})
