// Builds the two things the package ships:
// - dist/cli/: the `mino` command, bundled by esbuild so start-up does not walk
//   hundreds of modules. `main.js` is a small loader (scripts/cli-loader.mjs) that
//   runs `app.cjs`, the whole application, with a V8 code cache (`app.v8` is the one
//   made here); `openai.cjs`, the SDK, is loaded only on the first model request;
// - dist/lib/: the library entry point (`import ... from "mino-agent"`), compiled by tsc with types.
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { resolve } from "node:path"
import { Script } from "node:vm"
import * as esbuild from "esbuild"
import { wrap } from "./cli-loader.mjs"

const require = createRequire(import.meta.url)
rmSync("dist", { recursive: true, force: true })

const common = {
  outdir: "dist/cli",
  bundle: true,
  platform: "node",
  target: "node20",
  minify: true,
  legalComments: "none",
  logLevel: "warning"
}

// CommonJS, so the loader can compile it as a vm.Script with a code cache (Node 20
// has none for ES modules). `import()` becomes `require()`: the bundle has no
// module context to import from.
const cjs = { ...common, format: "cjs", outExtension: { ".js": ".cjs" }, supported: { "dynamic-import": false } }

// keepNames: the SDK builds its User-Agent from its class name (`OpenAI/JS 6.49.0`),
// and names its errors the same way; minified, both would read `x`.
await esbuild.build({ ...cjs, entryPoints: { openai: "openai" }, keepNames: true })

const sdkApart = {
  name: "openai-apart",
  setup: (build) => build.onResolve({ filter: /^openai$/ }, () => ({ path: "./openai.cjs", external: true }))
}
await esbuild.build({ ...cjs, entryPoints: { app: "src/main.ts" }, plugins: [sdkApart] })

const app = readFileSync("dist/cli/app.cjs", "latin1")
// V8 would accept a cache made for other code of the same length, so user caches are named by this hash.
const buildId = createHash("sha256").update(app, "latin1").digest("hex").slice(0, 16)
// The code cache of a plain compile (no run): most of the gain, for a first start
// on the Node that built the package.
writeFileSync("dist/cli/app.v8", new Script(wrap(app), { filename: resolve("dist/cli/app.cjs") }).createCachedData())
await esbuild.build({
  ...common,
  format: "esm",
  stdin: {
    contents: `import { start } from "./scripts/cli-loader.mjs"\nstart(new URL("./app.cjs", import.meta.url), ${JSON.stringify(buildId)})\n`,
    resolveDir: ".",
    sourcefile: "main.js"
  },
  outfile: "dist/cli/main.js",
  outdir: undefined
})

execFileSync(process.execPath, [require.resolve("typescript/bin/tsc"), "-p", "tsconfig.build.json"], { stdio: "inherit" })
