// `npm run bench:codex`: Mino against Codex CLI, side by side in one run, interleaved
// (Mino, Codex, floor, Mino, Codex, floor, ...), medians, on the same loopback model.
//
//   first prompt   the built `node bin/mino.js` until `You> ` is on the terminal  vs  `codex`
//                  until its composer ("Ask Codex to do anything") is  vs  node printing `You> `
//                  until it is; each from the fork in a pseudo-terminal (test/support/pty_driver.py)
//                  that answers the terminal queries a real terminal answers (cursor position,
//                  device attributes, colours), since Codex waits for those answers
//   idle RSS       the resident memory of the program's whole process tree, 1 s after that
//                  first prompt
//   tool step      the wall time of one step (request, response, run `true`, save, next
//                  request) with every command approved, against a loopback Responses model:
//                  Mino's Agent with its real layers (scripts/bench-program.ts `step`, the
//                  interval between two results of a turn, after a warm-up turn)  vs  `codex
//                  exec` (the interval between two of its requests at the model, inside one
//                  run of STEPS steps; and, to check, (run of STEPS steps - run of 1) / (STEPS - 1))
//                  vs  the step floor: one bash spawn + three fsynced appends + one request
//
// Codex CLI 0.171.0 is installed on first use with npm into $XDG_CACHE_HOME/mino-bench (or
// ~/.cache/mino-bench); without it (no network), only Mino and the floor are measured.
// The API key given to both is a fake value and the model is on 127.0.0.1: nothing leaves
// the machine. Needs `npm run build` (Mino's first prompt runs dist/).
import { spawn, spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { availableParallelism, cpus, homedir, loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { performance } from "node:perf_hooks"
import { clearTimeout, setTimeout } from "node:timers"
import { fileURLToPath } from "node:url"
import * as esbuild from "esbuild"

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const SCRATCH = realpathSync(mkdtempSync(join(tmpdir(), "mino-bench-codex-")))
process.on("exit", () => rmSync(SCRATCH, { recursive: true, force: true }))

const CODEX_VERSION = "0.171.0"
const ROUNDS = Number(process.env["MINO_BENCH_ROUNDS"] ?? 7)
const WARMUP = 2
const STEPS = 7
const FAKE_KEY = "sk-fake-loopback-only"

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}
const ms = (value) => (value === undefined ? "–" : `${value.toFixed(1)} ms`)
const mb = (kib) => (kib === undefined ? "–" : `${(kib / 1024).toFixed(1)} MB`)

// ---------------------------------------------------------------------------
// Codex, from the package registry, pinned

const CACHE = join(process.env["XDG_CACHE_HOME"] || join(homedir(), ".cache"), "mino-bench")
const CODEX_PREFIX = join(CACHE, `codex-${CODEX_VERSION}`)
const CODEX_BIN = join(CODEX_PREFIX, "node_modules", "@openai", "codex", "bin", "codex.js")

const installCodex = () => {
  const version = () => spawnSync(process.execPath, [CODEX_BIN, "--version"], { encoding: "utf8" }).stdout?.trim()
  if (existsSync(CODEX_BIN) && version() === `codex-cli ${CODEX_VERSION}`) return true
  mkdirSync(CODEX_PREFIX, { recursive: true })
  // The package pulls its platform's native binary (e.g. @openai/codex-linux-x64) as an optional dependency.
  const npm = spawnSync("npm", ["install", "--prefix", CODEX_PREFIX, "--no-audit", "--no-fund", "--save-exact", `@openai/codex@${CODEX_VERSION}`], {
    encoding: "utf8",
    timeout: 300_000
  })
  if (npm.status === 0 && existsSync(CODEX_BIN) && version() === `codex-cli ${CODEX_VERSION}`) return true
  // npm's first complaint says why (ENOTFOUND, ECONNREFUSED, ...); its last only where its log is.
  const reason = npm.error?.message ?? `${npm.stderr ?? ""}`.trim().split("\n")[0] ?? ""
  console.log(`Codex CLI ${CODEX_VERSION} could not be installed (npm: ${reason || `exit ${npm.status}`}); measuring Mino and the floor only.`)
  return false
}

// ---------------------------------------------------------------------------
// The loopback model: src/testing/ResponsesServer.ts in a process of its own, answering
// "Run true N times." with N tool calls of `true` (in whichever shell tool the client
// offers: Mino's `bash`, Codex's `exec_command`), then a closing message; one line on
// stdout per request, with its arrival time and how many results it carries.

const MODEL_SOURCE = `
import * as Effect from "effect/Effect"
import * as ResponsesServer from "../src/testing/ResponsesServer.js"

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null
let calls = 0
const reply = (request: ResponsesServer.Request): ResponsesServer.Reply => {
  const body = isRecord(request.body) ? request.body : {}
  const input = Array.isArray(body["input"]) ? body["input"].filter(isRecord) : []
  const tools = Array.isArray(body["tools"]) ? body["tools"].filter(isRecord) : []
  const names = tools.map((tool) => tool["name"])
  const lastUser = input.findLastIndex((item) => item["role"] === "user")
  const steps = Number(/Run true (\\d+) times/.exec(JSON.stringify(input[lastUser] ?? {}))?.[1] ?? 0)
  const results = input.slice(lastUser + 1).filter((item) => item["type"] === "function_call_output").length
  process.stdout.write(JSON.stringify({ request: performance.timeOrigin + performance.now(), results }) + "\\n")
  if (results >= steps) return ResponsesServer.textResponse("Done: every command ran.")
  // Codex's exec_command: bash without a login shell, as Mino runs bash --noprofile --norc.
  const call = names.includes("exec_command")
    ? { name: "exec_command", arguments: { cmd: "true", shell: "/bin/bash", login: false } }
    : { name: "bash", arguments: { command: "true" } }
  return ResponsesServer.toolCallResponse([{ call_id: "call_bench_" + ++calls, name: call.name, arguments: JSON.stringify(call.arguments) }])
}

Effect.runPromise(Effect.scoped(Effect.gen(function*() {
  const server = yield* ResponsesServer.make((request) => Effect.sync(() => reply(request)))
  process.stdout.write(JSON.stringify({ url: server.url }) + "\\n")
  yield* Effect.async<void>((resume) => {
    process.stdin.on("end", () => resume(Effect.void))
    process.stdin.resume()
  })
})))
`

const bundle = async (name, options) => {
  const outfile = join(SCRATCH, `${name}.mjs`)
  await esbuild.build({ ...options, outfile, bundle: true, platform: "node", format: "esm", target: "node20", logLevel: "warning" })
  return outfile
}

const startModel = async () => {
  const file = await bundle("model", { stdin: { contents: MODEL_SOURCE, loader: "ts", resolveDir: join(ROOT, "scripts") } })
  const child = spawn(process.execPath, [file], { stdio: ["pipe", "pipe", "inherit"] })
  const arrivals = []
  let lines = ""
  const url = await new Promise((resolve, reject) => {
    child.on("error", reject)
    child.stdout.setEncoding("utf8")
    child.stdout.on("data", (text) => {
      lines += text
      const parts = lines.split("\n")
      lines = parts.pop()
      for (const line of parts) {
        const parsed = JSON.parse(line)
        if (parsed.url !== undefined) resolve(parsed.url)
        else arrivals.push(parsed)
      }
    })
  })
  return { url, arrivals, stop: () => child.stdin.end() }
}

// ---------------------------------------------------------------------------
// A pseudo-terminal

const DRIVER = join(ROOT, "test", "support", "pty_driver.py")

/** What a real terminal (xterm) answers to the queries programs send at start. */
/* eslint-disable no-control-regex -- the queries are escape sequences */
const ANSWERS = [
  [/\x1b\[6n/y, "\x1b[1;1R"],
  [/\x1b\[0?c/y, "\x1b[?62;22c"],
  [/\x1b\]10;\?(?:\x1b\\|\x07)/y, "\x1b]10;rgb:ffff/ffff/ffff\x1b\\"],
  [/\x1b\]11;\?(?:\x1b\\|\x07)/y, "\x1b]11;rgb:0000/0000/0000\x1b\\"]
]
/* eslint-enable no-control-regex */

/** The pids of `root` and all its descendants, from /proc. */
const processTree = (root) => {
  const children = new Map()
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8")
      const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
      children.set(parent, [...(children.get(parent) ?? []), Number(name)])
    } catch {
      // gone meanwhile
    }
  }
  const tree = []
  const visit = (pid) => {
    tree.push(pid)
    for (const child of children.get(pid) ?? []) visit(child)
  }
  visit(root)
  return tree
}

/** Resident KiB of the tree under `root` (each process's VmRSS, summed). */
const treeRss = (root) => {
  const tree = processTree(root)
  const kib = tree.reduce((total, pid) => {
    try {
      const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))
      return total + (match === null ? 0 : Number(match[1]))
    } catch {
      return total
    }
  }, 0)
  return { kib, processes: tree.length }
}

/**
 * Runs `argv` in an 80x24 pty. With a `marker`, resolves the time from the fork until it is
 * on the screen and the tree's RSS 1 s later, then ends the program with `quit` (keys); without,
 * resolves the time from the fork until the program has exited.
 */
const inPty = (argv, env, cwd, marker, quit) =>
  new Promise((resolve, reject) => {
    const spec = JSON.stringify({ argv, env, cwd, columns: 80, rows: 24 })
    // fd 3 (the driver's command channel) is a pipe closed at once: no commands.
    const child = spawn("python3", [DRIVER, spec], { stdio: ["pipe", "pipe", "pipe", "pipe"] })
    child.stdio[3].end()
    let forked
    let pid
    let screen = ""
    let answered = 0
    let control = ""
    let prompt
    let rss
    let stuck
    let closed = false
    const now = () => Number(process.hrtime.bigint() - forked) / 1e6
    child.stdout.setEncoding("latin1")
    child.stdout.on("data", (text) => {
      screen += text
      // Answer each query once, in the order they came.
      for (let at = screen.indexOf("\x1b", answered); at !== -1; at = screen.indexOf("\x1b", at + 1)) {
        for (const [pattern, answer] of ANSWERS) {
          pattern.lastIndex = at
          if (pattern.test(screen)) child.stdin.write(answer)
        }
        answered = at + 1
      }
      if (marker !== undefined && prompt === undefined && screen.includes(marker)) {
        prompt = now()
        setTimeout(() => {
          if (closed) return
          rss = treeRss(pid)
          for (const [index, keys] of quit.entries()) setTimeout(() => child.stdin.write(keys), index * 300)
          // Whatever does not end on its keys is ended (not after the driver has reaped it: the pid may be reused).
          stuck = setTimeout(() => processTree(pid).forEach((each) => { try { process.kill(each, "SIGKILL") } catch { /* gone */ } }), 8000)
        }, 1000)
      }
    })
    child.stderr.setEncoding("utf8")
    child.stderr.on("data", (text) => {
      control += text
      const started = /^pid (\d+)$/m.exec(control)
      if (forked === undefined && started !== null) {
        forked = process.hrtime.bigint()
        pid = Number(started[1])
      }
    })
    child.on("error", reject)
    child.stdin.on("error", () => {})
    child.on("close", () => {
      closed = true
      clearTimeout(stuck)
      if (forked === undefined) return reject(new Error(`pty_driver failed: ${control}`))
      if (marker === undefined) return resolve({ prompt: now() })
      if (prompt === undefined) return reject(new Error(`no ${JSON.stringify(marker)} from ${argv.join(" ")}:\n${control}${screen.slice(-800)}`))
      if (rss === undefined) return reject(new Error(`${argv.join(" ")} ended within 1 s of its prompt:\n${screen.slice(-800)}`))
      resolve({ prompt, rss })
    })
  })

// ---------------------------------------------------------------------------
// One tool step

const runJson = (file, args, cwd) =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [file, ...args], { cwd, stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    let errors = ""
    child.stdout.on("data", (text) => (output += text))
    child.stderr.on("data", (text) => (errors += text))
    child.on("error", reject)
    child.on("close", (code) => (code === 0 ? resolve(JSON.parse(output)) : reject(new Error(`${file} failed (${code}):\n${errors}`))))
  })

/** One `codex exec` of `steps` tool steps: its wall time and the intervals between its requests' arrivals. */
const codexExec = (codex, model, steps) =>
  new Promise((resolve, reject) => {
    const before = model.arrivals.length
    const started = performance.now()
    const child = spawn(process.execPath, [CODEX_BIN, "exec", "--skip-git-repo-check", `Run true ${steps} times.`], {
      cwd: codex.cwd,
      env: codex.env(),
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    child.stdout.on("data", (text) => (output += text))
    child.stderr.on("data", (text) => (output += text))
    child.on("error", reject)
    child.on("close", (code) => {
      const wall = performance.now() - started
      const arrivals = model.arrivals.slice(before)
      if (code !== 0 || arrivals.length !== steps + 1 || arrivals.at(-1).results !== steps) {
        return reject(new Error(`codex exec (${steps} steps) failed (${code}, ${arrivals.length} requests):\n${output.slice(-1500)}`))
      }
      // Between the request carrying result k and the one carrying result k + 1: one whole
      // step. The first (request 0 to 1) is left out, as Mino's first result is.
      const intervals = arrivals.slice(1).map((arrival, k) => (k === 0 ? undefined : arrival.request - arrivals[k].request)).filter((v) => v !== undefined)
      resolve({ wall, intervals })
    })
  })

// ---------------------------------------------------------------------------

const main = async () => {
  const dist = join(ROOT, "dist", "cli", "main.js")
  if (!existsSync(dist)) throw new Error("dist/cli is missing: run `npm run build` first")
  const loadBefore = loadavg()
  const haveCodex = installCodex()
  const model = await startModel()
  const benchProgram = await bundle("bench-program", { entryPoints: [join(ROOT, "scripts", "bench-program.ts")] })

  const cwd = join(SCRATCH, "work")
  mkdirSync(cwd, { recursive: true })
  // Only what a terminal session has; HOME and the caches apart from the user's.
  const base = { PATH: process.env["PATH"] ?? "/usr/bin:/bin", LANG: "C.UTF-8", TERM: "xterm-256color", OPENAI_API_KEY: FAKE_KEY }
  const minoCache = mkdtempSync(join(SCRATCH, "cache-"))
  const minoEnv = () => ({ ...base, HOME: mkdtempSync(join(SCRATCH, "home-")), XDG_CACHE_HOME: minoCache, OPENAI_BASE_URL: model.url })
  // Codex's home out of /tmp (it will not put its helper binaries under a temporary directory), kept for the whole run as a user's is.
  let codex
  if (haveCodex) {
    const home = mkdtempSync(join(CACHE, "home-"))
    process.on("exit", () => rmSync(home, { recursive: true, force: true }))
    const codexHome = join(home, ".codex")
    mkdirSync(codexHome)
    writeFileSync(join(codexHome, "config.toml"), [
      `model = "bench"`,
      `model_provider = "loopback"`,
      `approval_policy = "never"`,
      `sandbox_mode = "danger-full-access"`,
      `check_for_update_on_startup = false`,
      `[model_providers.loopback]`,
      `name = "loopback"`,
      `base_url = "${model.url}"`,
      `env_key = "OPENAI_API_KEY"`,
      `wire_api = "responses"`,
      `[projects."${cwd}"]`,
      `trust_level = "trusted"`,
      ""
    ].join("\n"))
    codex = { cwd, env: () => ({ ...base, HOME: home, CODEX_HOME: codexHome }) }
  }

  const figures = { minoPrompt: [], codexPrompt: [], floorPrompt: [], minoRss: [], codexRss: [], minoStep: [], stepFloor: [], codexStep: [], codexN: [], codexOne: [] }
  const treeSizes = { mino: 0, codex: 0 }
  for (let round = -WARMUP; round < ROUNDS; round++) {
    const keep = (name, value) => round >= 0 && figures[name].push(value)
    process.stderr.write(`round ${round + 1}/${ROUNDS}${round < 0 ? " (warm-up)" : ""}\n`)
    const mino = await inPty([process.execPath, join(ROOT, "bin", "mino.js")], minoEnv(), cwd, "You> ", ["\u0004"])
    keep("minoPrompt", mino.prompt)
    keep("minoRss", mino.rss.kib)
    treeSizes.mino = mino.rss.processes
    if (codex !== undefined) {
      const shown = await inPty([process.execPath, CODEX_BIN], codex.env(), cwd, "Ask Codex to do anything", ["\u0003", "\u0003"])
      keep("codexPrompt", shown.prompt)
      keep("codexRss", shown.rss.kib)
      treeSizes.codex = shown.rss.processes
    }
    // The floor is seen as the prompts are: node printing `You> ` (and staying 2 s, as the driver wants a
    // program alive 1 s after its prompt). Its exit would be seen late: the driver polls for it 50 ms apart.
    keep("floorPrompt", (await inPty([process.execPath, "-e", "process.stdout.write('You> '); setTimeout(() => {}, 2000)"], minoEnv(), cwd, "You> ", [])).prompt)

    const step = await runJson(benchProgram, ["step", JSON.stringify({ dir: SCRATCH, turns: 2, stepsPerTurn: STEPS, floorSamples: 6 })], SCRATCH)
    keep("minoStep", step.step)
    keep("stepFloor", step.floor)
    if (codex !== undefined) {
      const many = await codexExec(codex, model, STEPS)
      const one = await codexExec(codex, model, 1)
      keep("codexStep", median(many.intervals))
      keep("codexN", many.wall)
      keep("codexOne", one.wall)
    }
  }
  model.stop()
  const loadAfter = loadavg()

  const m = (name) => (figures[name].length === 0 ? undefined : median(figures[name]))
  const ratio = (a, b) => (a === undefined || b === undefined ? "" : ` (${(a / b).toFixed(2)}×)`)
  const derived = codex === undefined ? undefined : (m("codexN") - m("codexOne")) / (STEPS - 1)
  const rows = [
    ["first prompt visible in a pty", `${ms(m("minoPrompt"))}${ratio(m("minoPrompt"), m("floorPrompt"))}`,
      `${ms(m("codexPrompt"))}${ratio(m("codexPrompt"), m("floorPrompt"))}`, `node printing the prompt: ${ms(m("floorPrompt"))}`],
    ["wall per tool step (auto-approve, loopback model)", `${ms(m("minoStep"))}${ratio(m("minoStep"), m("stepFloor"))}`,
      `${ms(m("codexStep"))}${ratio(m("codexStep"), m("stepFloor"))}`, `spawn + 3 fsyncs + HTTP: ${ms(m("stepFloor"))}`],
    ["idle RSS of the process tree at the first prompt", mb(m("minoRss")), mb(m("codexRss")), ""]
  ]
  const cpu = cpus()[0]?.model ?? "unknown CPU"
  console.log(`\nMino ${JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version} vs Codex CLI ${haveCodex ? CODEX_VERSION : "(not installed)"}; ` +
    `${new Date().toISOString().slice(0, 10)}; ${availableParallelism()} × ${cpu}; Node ${process.versions.node}`)
  console.log(`load average ${loadBefore.map((v) => v.toFixed(2)).join(" ")} at the start, ${loadAfter.map((v) => v.toFixed(2)).join(" ")} at the end; ` +
    `medians of ${ROUNDS} interleaved rounds after ${WARMUP} warm-up rounds\n`)
  console.log("| figure | Mino | Codex | floor |\n| --- | --- | --- | --- |")
  for (const row of rows) console.log(`| ${row.join(" | ")} |`)
  if (codex !== undefined) {
    console.log(`\nMino ÷ Codex: first prompt ${(m("minoPrompt") / m("codexPrompt")).toFixed(2)}×, step ${(m("minoStep") / m("codexStep")).toFixed(2)}×, ` +
      `idle RSS ${(m("minoRss") / m("codexRss")).toFixed(2)}×`)
    console.log(`Codex per step from whole runs: (codex exec of ${STEPS} steps ${ms(m("codexN"))} - of 1 step ${ms(m("codexOne"))}) / ${STEPS - 1} = ${ms(derived)}`)
    console.log(`processes in the tree at the first prompt: Mino ${treeSizes.mino}, Codex ${treeSizes.codex}`)
    console.log(`Mino's step: the interval between two results of a warm turn (bench-program step); Codex's: between two requests inside one \`codex exec\` (a fresh process's first turn).`)
  }
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : String(error))
  process.exit(1)
})
