// Builds the two things the package ships:
// - dist/cli/: the `mino` command, bundled by esbuild so start-up does not walk
//   hundreds of modules. `main.js` is a small loader (scripts/cli-loader.mjs) that
//   runs the application's CommonJS files, each with a V8 code cache (the `.v8`
//   beside it is the one made here):
//   - `app.cjs`, the command line and the chat's start: what the banner and the
//     first prompt need;
//   - `AgentParts-*.cjs` (the Agent loop, the model client, bash) and
//     `ChatAgent-*.cjs` (the chat's demo model and practice request), the rest of
//     the chat, loaded once the prompt is drawn (Mino.agentLayer and cli/Chat.ts
//     import them then);
//   - `Print-*.cjs`, the commands that only print (help, version, completions, log);
//   - `chunk-*.cjs`, the code these share, loaded with `app.cjs`;
//   - `openai.cjs`, the SDK, loaded when the model client first needs it (after the prompt).
//   Plain CommonJS (dist/cli/package.json says so), for Node's fastest start: no
//   ES module loader is set up for `mino`.
// - dist/lib/: the library entry point (`import ... from "mino-agent"`), compiled by tsc with types.
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { basename, resolve } from "node:path"
import { Script } from "node:vm"
import * as esbuild from "esbuild"
import { wrap } from "./cli-loader.mjs"

const require = createRequire(import.meta.url)
rmSync("dist", { recursive: true, force: true })

const common = {
  outdir: "dist/cli",
  outExtension: { ".js": ".cjs" },
  bundle: true,
  platform: "node",
  target: "node20",
  minify: true,
  legalComments: "none",
  logLevel: "warning"
}

// keepNames: the SDK builds its User-Agent from its class name (`OpenAI/JS 6.49.0`),
// and names its errors the same way; minified, both would read `x`.
await esbuild.build({ ...common, format: "cjs", entryPoints: { openai: "openai" }, keepNames: true })

const sdkApart = {
  name: "openai-apart",
  setup: (build) => build.onResolve({ filter: /^openai$/ }, () => ({ path: "./openai.cjs", external: true }))
}
// Split where the application imports code later (`import()`); esbuild splits only ES
// modules, so each file is then turned into CommonJS (the loader compiles CommonJS with
// a code cache: Node 20 has none for ES modules), its imports into `require`s.
const split = await esbuild.build({
  ...common,
  format: "esm",
  splitting: true,
  entryPoints: { app: "src/main.ts" },
  chunkNames: "[name]-[hash]",
  plugins: [sdkApart],
  write: false
})
for (const file of split.outputFiles) {
  const { code } = await esbuild.transform(file.text, { format: "cjs", platform: "node", target: "node20", minify: true, supported: { "dynamic-import": false } })
  writeFileSync(file.path, code)
}
writeFileSync("dist/cli/package.json", JSON.stringify({ type: "commonjs" }) + "\n")

const files = readdirSync("dist/cli").filter((name) => name.endsWith(".cjs")).sort()
// V8 would accept a cache made for other code of the same length, so user caches are named by this hash.
const hash = createHash("sha256")
for (const name of files) {
  const source = readFileSync(`dist/cli/${name}`, "latin1")
  hash.update(name).update(source, "latin1")
  // The code cache of a plain compile (no run): most of the gain, for a first start
  // on the Node that built the package.
  writeFileSync(`dist/cli/${basename(name, ".cjs")}.v8`, new Script(wrap(source), { filename: resolve(`dist/cli/${name}`) }).createCachedData())
}
const buildId = hash.digest("hex").slice(0, 16)

await esbuild.build({
  ...common,
  format: "cjs",
  stdin: {
    contents: `import { start } from "./scripts/cli-loader.mjs"\nstart(__dirname, "app.cjs", ${JSON.stringify(buildId)})\n`,
    resolveDir: ".",
    sourcefile: "main.js"
  },
  outfile: "dist/cli/main.js",
  outdir: undefined,
  outExtension: undefined
})

execFileSync(process.execPath, [require.resolve("typescript/bin/tsc"), "-p", "tsconfig.build.json"], { stdio: "inherit" })
