// `npm run install:cli [-- <npm install options>]`: puts `mino` on PATH from a clone, in one command.
//
// The command is one bundle (dist/cli) that needs no package at run time, so what is
// installed is that bundle alone: a package `mino-agent` with no dependencies, packed
// from a staging folder and installed globally with npm. The library's users install
// the full package instead (`npm pack` of the clone, with its peer dependencies).
//
// - A clone without node_modules gets `npm ci` first (which builds); otherwise the
//   build runs again, so what is installed is the clone as it is now.
// - Options after `--` go to `npm install -g` (`--prefix ~/.local`, say).
// - `--prebuilt` installs the dist/ already built (the tests use it beside other tests).
// Nothing is fetched from the registry by the install itself: it works offline.
import { spawnSync } from "node:child_process"
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const ROOT = fileURLToPath(new URL("../", import.meta.url))
const NPM = process.platform === "win32" ? "npm.cmd" : "npm"

const args = process.argv.slice(2)
const prebuilt = args.includes("--prebuilt")
const npmOptions = args.filter((arg) => arg !== "--prebuilt")

/** Runs npm in `cwd`; stops the install with npm's own exit code if it fails. */
const npm = (cwd, npmArgs, quiet = false) => {
  const ran = spawnSync(NPM, npmArgs, {
    cwd,
    stdio: quiet ? ["ignore", "pipe", "inherit"] : "inherit",
    encoding: "utf8",
    env: { ...process.env, npm_config_update_notifier: "false", npm_config_fund: "false", npm_config_audit: "false" }
  })
  if (ran.status !== 0) {
    console.error(`mino install: \`npm ${npmArgs.join(" ")}\` failed (${ran.error?.message ?? `exit ${ran.status}`})`)
    process.exit(ran.status ?? 1)
  }
  return ran.stdout ?? ""
}

if (!prebuilt) {
  if (existsSync(join(ROOT, "node_modules", ".package-lock.json"))) npm(ROOT, ["run", "--silent", "build"])
  else npm(ROOT, ["ci"])
}
if (!existsSync(join(ROOT, "dist", "cli", "main.js"))) {
  console.error("mino install: dist/cli/main.js is missing; run `npm ci` in the clone first")
  process.exit(1)
}

const source = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"))
const stage = mkdtempSync(join(tmpdir(), "mino-install-"))
try {
  const pkg = join(stage, "package")
  for (const part of ["LICENSE", "bin", join("dist", "cli")]) cpSync(join(ROOT, part), join(pkg, part), { recursive: true })
  writeFileSync(join(pkg, "package.json"), JSON.stringify({
    name: source.name,
    version: source.version,
    description: source.description,
    license: source.license,
    bin: source.bin,
    engines: source.engines,
    files: ["LICENSE", "bin", "dist/cli"]
  }, null, 2) + "\n")
  const tarball = npm(pkg, ["pack", "--silent", "--pack-destination", stage], true).trim().split("\n").pop()
  npm(stage, ["install", "--global", "--no-audit", "--no-fund", ...npmOptions, join(stage, tarball)])
  console.log(`mino ${source.version} installed: \`mino --demo\` tries it; \`npm uninstall -g ${source.name}\` removes it (~/.mino and ~/.cache/mino stay).`)
} finally {
  rmSync(stage, { recursive: true, force: true })
}
