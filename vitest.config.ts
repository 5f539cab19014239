import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

export default defineConfig({
  // `examples/` import the package by name, as its users do.
  resolve: {
    alias: [
      { find: /^mino-agent\/testing$/, replacement: fileURLToPath(new URL("./src/testing.ts", import.meta.url)) },
      { find: /^mino-agent$/, replacement: fileURLToPath(new URL("./src/index.ts", import.meta.url)) }
    ]
  },
  test: {
    include: ["test/**/*.test.ts"],
    // Real processes, sockets and fsyncs: keep per-test limits generous but finite.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Both cores of the 2-core machine (the default leaves one idle): the suite runs in about 6 minutes
    // instead of 9, and every test runs beside another, as on a loaded machine.
    maxWorkers: 2,
    minWorkers: 1
  }
})
