// Builds the two things the package ships:
// - dist/cli/: the `mino` command, bundled by esbuild so start-up does not walk
//   hundreds of modules (the openai SDK is split into a chunk loaded on first request);
// - dist/lib/: the library entry point (`import ... from "mino"`), compiled by tsc with types.
import { execFileSync } from "node:child_process"
import { rmSync } from "node:fs"
import { createRequire } from "node:module"
import * as esbuild from "esbuild"

const require = createRequire(import.meta.url)
rmSync("dist", { recursive: true, force: true })

await esbuild.build({
  entryPoints: { main: "src/main.ts" },
  outdir: "dist/cli",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  minify: true,
  legalComments: "none",
  logLevel: "warning",
  // Some CommonJS dependencies call require(); give the ESM bundle one.
  banner: { js: "import { createRequire as __minoCreateRequire } from 'node:module'; const require = __minoCreateRequire(import.meta.url);" }
})

execFileSync(process.execPath, [require.resolve("typescript/bin/tsc"), "-p", "tsconfig.build.json"], { stdio: "inherit" })
