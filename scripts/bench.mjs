// `npm run bench [start|step|restore|scale|overflow]`: Mino's costs, each as a median
// and as a ratio to a floor measured in the same run, against the goals.
//
//   start     `node bin/mino.js` until its first `You> ` prompt  vs  `node -e 0`, through pipes
//             and in a pseudo-terminal (test/support/pty_driver.py) as a person sees it; and a
//             question typed at that first prompt until it reaches a loopback model  vs  the
//             next question of the same process
//   step      one Agent tool step (request, save, start, run `true`, save) with the real
//             layers and a loopback model in its own process  vs  one bash spawn + three
//             fsynced appends + one HTTP request for the same reply from the same model;
//             wall time, and the CPU time per step of Mino's process and its lifeline helper
//             (which starts the commands) against the floor's
//   restore   opening a ~100,000-record, ~50 MB session with SessionStore  vs  readFileSync +
//             split + JSON.parse; and its peak memory as a multiple of the file size
//   scale     sessions of 1k, 10k and 100k records: a turn's end until the next prompt's
//             questions are ready  vs  the same at 1k (flat: the goal); and the CPU of one
//             request (built from the kept history, sent, its reply read)  vs  writing the same
//             body to the same server with node:http and reading the same reply; and the
//             built mino's start-up in a directory whose conversation holds N records  vs  an
//             empty conversation's start-up + what restoring N records adds to an empty open.
//             The loopback model answers 30 ms after a request arrives, in its own process,
//             and parses nothing it is sent (its work on a 37 MB body is not Mino's)
//   overflow  BashRunner killing `yes` at the 64 KiB output limit  vs  BashRunner
//             running `head -c 65536 /dev/zero`; and a start of `true` through the lifeline's
//             gate (held until armed) beside bash spawned bare
//
//   long      a long session (200 turns of 8 requests and 16 calls printing 60 kB, the last turn
//             live): Mino's resident memory at its peak and after the turn  vs  the history it
//             sends (the last request's body)
//
// start (and scale's start-up rows) run the built CLI (npm run build); the others bundle
// scripts/bench-program.ts from src into a temporary directory, so they need no build.
// `--list` prints every row's name by section (JSON); `--json` prints the rows measured as
// JSON instead of the table; MINO_BENCH_LONG_TURNS=n makes the long session n turns
// (test/bench/BenchRows.test.ts runs a small one).
import { execFileSync, spawn } from "node:child_process"
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { availableParallelism, loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { performance } from "node:perf_hooks"
import { setTimeout } from "node:timers"
import { fileURLToPath } from "node:url"
import * as esbuild from "esbuild"

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const SCRATCH = realpathSync(mkdtempSync(join(tmpdir(), "mino-bench-")))
// MINO_BENCH_KEEP=1 leaves the scratch directory (its session files, the built bench program) for a closer look.
process.on("exit", () => process.env["MINO_BENCH_KEEP"] === undefined && rmSync(SCRATCH, { recursive: true, force: true }))

const GOALS = { start: 2, ptyStart: 1.7, firstQuestion: 1.5, step: 1.5, stepCpu: 2, restore: 1.3, restoreMemory: 2, overflow: 2, prompt: 1.5, request: 2, startWithRecords: 1, longMemory: 1.5, cliStep: 2 }

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

const ms = (value) => `${value.toFixed(1)} ms`

const row = (name, value, floor, ratio, goal, ...notes) => ({ name, value, floor, ratio, goal, notes })

/** The conversation sizes of the `scale` rows. */
const SIZES = [1_000, 10_000, 100_000]
const k = (n) => `${n / 1000}k`

/** Every row the bench prints, by section: a row not named here is an error (so this list is what the bench measures). */
export const ROWS = {
  start: ["a) start-up to first prompt", "   in a pseudo-terminal, 80x24", "   first question to the model"],
  step: ["b) loop overhead per tool step", "   CPU per tool step", "   tool step in the CLI, guard aside"],
  restore: ["c) restore a 100k-record session", "   peak memory of that restore"],
  overflow: ["d) overflow stop: `yes` to 64 KiB"],
  scale: [
    ...SIZES.map((n) => `e) turn end -> next prompt, ${k(n)} records`),
    ...SIZES.map((n) => `   request CPU, ${k(n)} records`),
    ...SIZES.map((n) => `   start-up, ${k(n)} records`)
  ],
  long: ["f) long session: peak memory", "   long session: memory after the turn"]
}

/** How long the loopback model of the `scale` rows takes to answer a request: a real one takes tens of milliseconds at least. */
const MODEL_DELAY_MS = 30

// ---------------------------------------------------------------------------
// a) start-up

/** A loopback port nobody listens on: the model endpoint is never reached before the prompt. */
const unusedPort = () =>
  new Promise((resolve) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })

/** Milliseconds from spawn until `marker` appears on stdout (or until exit, without one). */
const timeProcess = (args, env, cwd, marker) =>
  new Promise((resolve, reject) => {
    const started = process.hrtime.bigint()
    const child = spawn(process.execPath, args, { cwd, env, stdio: ["pipe", "pipe", "pipe"] })
    let output = ""
    let errors = ""
    let seen
    child.stdout.setEncoding("utf8")
    child.stdout.on("data", (text) => {
      output += text
      if (marker !== undefined && seen === undefined && output.includes(marker)) {
        seen = Number(process.hrtime.bigint() - started) / 1e6
        child.stdin.end()
      }
    })
    child.stderr.on("data", (text) => (errors += text))
    child.on("error", reject)
    child.on("close", () => {
      const elapsed = Number(process.hrtime.bigint() - started) / 1e6
      if (marker === undefined) return resolve(elapsed)
      if (seen === undefined) return reject(new Error(`no ${JSON.stringify(marker)} prompt from mino:\n${output}${errors}`))
      resolve(seen)
    })
    if (marker === undefined) child.stdin.end()
  })

const startup = async () => {
  const main = join(ROOT, "dist", "cli", "main.js")
  if (!existsSync(main)) throw new Error("dist/cli is missing: run `npm run build` first")
  const built = statSync(main).mtimeMs
  const stale = Math.max(newestSource(join(ROOT, "src")), statSync(join(ROOT, "scripts", "cli-loader.mjs")).mtimeMs) > built
  const cwd = join(SCRATCH, "work")
  mkdirSync(cwd, { recursive: true })
  const port = await unusedPort()
  const environment = (home) => {
    const env = { ...process.env, HOME: home, OPENAI_API_KEY: "fake", OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1` }
    for (const name of ["XDG_CACHE_HOME", "MINO_MODEL", "NODE_OPTIONS", "NODE_DISABLE_COMPILE_CACHE"]) delete env[name]
    return env
  }
  // One home for all runs, as a user has: the first (warm-up) start fills the code cache.
  const home = mkdtempSync(join(SCRATCH, "home-"))
  const mino = () => timeProcess([join(ROOT, "bin", "mino.js")], environment(home), cwd, "You> ")
  const bare = () => timeProcess(["-e", "0"], environment(home), cwd, undefined)
  const minoTimes = []
  const bareTimes = []
  for (let i = -2; i < 15; i++) {
    const a = await mino()
    const b = await bare()
    if (i < 0) continue
    minoTimes.push(a)
    bareTimes.push(b)
  }
  // For information: a first start, with only the build's code cache (no ~/.cache/mino yet).
  const cold = []
  for (let i = 0; i < 3; i++) cold.push(await timeProcess([join(ROOT, "bin", "mino.js")], environment(mkdtempSync(join(SCRATCH, "home-"))), cwd, "You> "))
  const value = median(minoTimes)
  const floor = median(bareTimes)
  return [
    row("a) start-up to first prompt", ms(value), `node -e 0 ${ms(floor)}`, value / floor, GOALS.start,
      ...(stale ? ["dist/cli is older than its sources: run `npm run build` first"] : []),
      `a first start, before ~/.cache/mino has a code cache: ${ms(median(cold))}`),
    ...(await ptyStartup())
  ]
}

// The pseudo-terminal: python3's pty module forks and execs the program (the driver reports
// `pid N` on stderr right after the fork, and `exit ...` once it has ended and its output is
// drained). Times run from the fork, so python's own start is in neither figure.
const DRIVER = join(ROOT, "test", "support", "pty_driver.py")

/**
 * Runs `argv` in a pty. `script` is called with each new piece of the screen and
 * `type(text)`; it returns true when the run is over (Ctrl+D is then sent). Resolves
 * the driver's exit time, relative to the fork.
 */
const inPty = (argv, env, cwd, script) =>
  new Promise((resolve, reject) => {
    const spec = JSON.stringify({ argv, env, cwd, columns: 80, rows: 24 })
    const child = spawn("python3", [DRIVER, spec], { stdio: ["pipe", "pipe", "pipe"] })
    let forked
    let screen = ""
    let control = ""
    let over = false
    const now = () => Number(process.hrtime.bigint() - forked) / 1e6
    const type = (text) => child.stdin.write(text)
    child.stdout.setEncoding("utf8")
    child.stdout.on("data", (text) => {
      screen += text
      if (!over && forked !== undefined && script(screen, now(), type)) {
        over = true
        type("\u0004")
      }
    })
    child.stderr.setEncoding("utf8")
    child.stderr.on("data", (text) => {
      control += text
      if (forked === undefined && /^pid \d+$/m.test(control)) forked = process.hrtime.bigint()
    })
    child.on("error", reject)
    child.on("close", (code) => {
      if (code !== 0 || forked === undefined) return reject(new Error(`pty_driver failed (${code}): ${control}${screen.slice(-500)}`))
      resolve(now())
    })
    child.stdin.on("error", () => {})
  })

/** Epoch milliseconds, comparable with the model process's announcements. */
const epoch = () => performance.timeOrigin + performance.now()

/**
 * The model for the pseudo-terminal rows: a loopback Responses server in its own process
 * (`steps` tool calls of `true`, then an answer), announcing each request's arrival, in
 * epoch milliseconds, into `arrivals`.
 */
const announcingModel = async (steps) => {
  const model = spawn(process.execPath, [await benchProgram(), "model", JSON.stringify({ steps, announce: true })], {
    cwd: SCRATCH,
    stdio: ["pipe", "pipe", "inherit"]
  })
  const arrivals = []
  let lines = ""
  const address = await new Promise((resolve, reject) => {
    model.on("error", reject)
    model.stdout.setEncoding("utf8")
    model.stdout.on("data", (text) => {
      lines += text
      const parts = lines.split("\n")
      lines = parts.pop()
      for (const line of parts) {
        // Its last line, at the end, is the mode's (empty) result.
        const parsed = line.startsWith("{") ? JSON.parse(line) : {}
        if (parsed.url !== undefined) resolve(parsed.url)
        else if (parsed.request !== undefined) arrivals.push(parsed.request)
      }
    })
  })
  return { model, address, arrivals }
}

/** A pseudo-terminal start's environment: a new HOME (a new, empty conversation), `cache` as its code cache, the model at `address`. */
const ptyEnvironment = (cache, address) => ({
  HOME: mkdtempSync(join(SCRATCH, "home-")),
  PATH: process.env["PATH"] ?? "/usr/bin:/bin",
  LANG: "C.UTF-8",
  TERM: "xterm-256color",
  XDG_CACHE_HOME: cache,
  OPENAI_API_KEY: "fake",
  OPENAI_BASE_URL: address
})

const ptyStartup = async () => {
  const cwd = join(SCRATCH, "pty-work")
  mkdirSync(cwd, { recursive: true })
  const { model, address, arrivals } = await announcingModel(0)
  // One code cache for every run, as a user has (the first, warm-up, start fills it); a new HOME
  // for each, so each start opens a new, empty conversation.
  const cache = mkdtempSync(join(SCRATCH, "cache-"))
  const environment = () => ptyEnvironment(cache, address)
  const mino = [process.execPath, join(ROOT, "bin", "mino.js")]
  const arrival = async (after) => {
    for (let i = 0; i < 1000 && !(arrivals.at(-1) > after); i++) await new Promise((r) => setTimeout(r, 1))
    return arrivals.at(-1) - after
  }
  // Typed this long after the prompt appears: a quick typist's first question.
  const TYPING_MS = Number(process.env["MINO_BENCH_TYPING_MS"] ?? 300)
  const prompts = []
  const firsts = []
  const seconds = []
  const bares = []
  for (let i = -2; i < 15; i++) {
    let prompt
    let stage = 0
    const waits = []
    await inPty(mino, environment(), cwd, (screen, at, type) => {
      const shown = screen.split("You> ").length - 1
      if (prompt === undefined && shown >= 1) {
        prompt = at
        setTimeout(() => {
          const sent = epoch()
          type("what is new?\r")
          waits.push(arrival(sent))
        }, TYPING_MS)
      }
      if (stage === 0 && shown >= 2) {
        stage = 1
        const sent = epoch()
        type("and then?\r")
        waits.push(arrival(sent))
      }
      return shown >= 3
    })
    const [first, second] = await Promise.all(waits)
    // The floor is seen as Mino's prompt is: node printing the prompt and nothing else, until it is on the
    // terminal. (Its exit is not: the driver notices an exit by polling, 50 ms apart when nothing is written,
    // which made this floor up to 50 ms longer and the ratio look better than it was.)
    let bare
    await inPty([process.execPath, "-e", "process.stdout.write('You> ')"], environment(), cwd, (screen, at) => {
      if (bare === undefined && screen.includes("You> ")) bare = at
      return false
    })
    if (i < 0) continue
    prompts.push(prompt)
    firsts.push(first)
    seconds.push(second)
    bares.push(bare)
  }
  model.stdin.end()
  const value = median(prompts)
  const floor = median(bares)
  return [
    row("   in a pseudo-terminal, 80x24", ms(value), `node -e 0 ${ms(floor)}`, value / floor, GOALS.ptyStart,
      "from the fork to the first `You> ` on the terminal; the floor is node printing `You> `, seen the same way"),
    row("   first question to the model", ms(median(firsts)), `the next one ${ms(median(seconds))}`, median(firsts) / median(seconds),
      GOALS.firstQuestion, `Enter to the request's arrival at a loopback model, typed ${TYPING_MS} ms after the first prompt`)
  ]
}

const newestSource = (dir) =>
  Math.max(...readdirSync(dir, { withFileTypes: true }).map((entry) =>
    entry.isDirectory() ? newestSource(join(dir, entry.name)) : statSync(join(dir, entry.name)).mtimeMs))

// ---------------------------------------------------------------------------
// The bench program (b, c, d)

let program
const benchProgram = async () => {
  if (program !== undefined) return program
  program = join(SCRATCH, "bench-program.mjs")
  await esbuild.build({
    entryPoints: [join(ROOT, "scripts", "bench-program.ts")],
    outfile: program,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "warning"
  })
  return program
}

const runProgram = async (mode, options, flags = []) => {
  const file = await benchProgram()
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...flags, file, mode, JSON.stringify(options)], { cwd: SCRATCH, stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    let errors = ""
    child.stdout.on("data", (text) => (output += text))
    child.stderr.on("data", (text) => (errors += text))
    child.on("error", reject)
    child.on("close", (code) => {
      if (code !== 0) return reject(new Error(`bench program ${mode} failed (${code}):\n${errors}`))
      resolve(JSON.parse(output))
    })
  })
}

// ---------------------------------------------------------------------------
// b) one tool step

/** The approval question's prompt, as the CLI writes it. */
const APPROVE = "Approve this operation? [y/N] "
/** What the CLI says (styled, on a line of its own) before asking again, of a line typed before it took answers. */
const IGNORED = "(ignored "

/**
 * A tool step in the built CLI, as a person drives it: in a pseudo-terminal, a question
 * whose answer is 7 calls of `true`, each approved by typing `y` Enter as soon as its
 * prompt is on the terminal. A step runs from one request's arrival at the loopback model
 * to the next's, less the approval's guard (from the screen on the terminal to its
 * prompt, 500 ms by design); the first step is left out, as the step bench's warm-up turn.
 */
const cliStep = async (floor) => {
  const main = join(ROOT, "dist", "cli", "main.js")
  if (!existsSync(main)) throw new Error("dist/cli is missing: run `npm run build` first")
  const STEPS = 7
  const { model, address, arrivals } = await announcingModel(STEPS)
  const cwd = join(SCRATCH, "cli-step-work")
  mkdirSync(cwd, { recursive: true })
  const cache = mkdtempSync(join(SCRATCH, "cache-"))
  const steps = []
  const guards = []
  // Steps whose `y` came before Mino took answers (it says it ignored the line and asks again, and the
  // answer is typed again): their time holds a second guard, so they are left out, and counted.
  let retyped = 0
  for (let round = 0; round < 4; round++) {
    arrivals.length = 0
    const screens = []
    const prompts = []
    /** How many times each screen's answer was typed again. */
    const again = new Map()
    const env = ptyEnvironment(cache, address)
    let asked = false
    await inPty([process.execPath, join(ROOT, "bin", "mino.js")], env, cwd, (screen, _at, type) => {
      if (!asked && screen.includes("You> ")) {
        asked = true
        type("run true seven times\r")
      }
      // Each screen and each prompt when first seen, on the model's clock (epoch milliseconds).
      while (screen.split("[Tool: bash]").length - 1 > screens.length) screens.push(epoch())
      // A screen's prompt (the answered line is drawn again with the prompt: only the first counts).
      const shown = screen.slice(screen.lastIndexOf("[Tool: bash]"))
      if (screens.length > prompts.length && shown.includes(APPROVE)) {
        prompts.push(epoch())
        type("y\r")
      } else if (screens.length === prompts.length && shown.split(IGNORED).length - 1 > (again.get(screens.length) ?? 0) &&
        shown.slice(shown.lastIndexOf(IGNORED)).includes(APPROVE)) {
        again.set(screens.length, (again.get(screens.length) ?? 0) + 1)
        type("y\r")
      }
      return screen.includes("Done: every command ran.") && screen.split("You> ").length - 1 >= 2
    })
    if (round === 0) continue // warms the code cache, as a user's earlier starts have
    if (arrivals.length !== STEPS + 1 || prompts.length !== STEPS) throw new Error(`cli step: ${arrivals.length} requests and ${prompts.length} prompts for ${STEPS} steps`)
    for (let i = 1; i < STEPS; i++) {
      if (again.has(i + 1)) {
        retyped++
        continue
      }
      const guard = prompts[i] - screens[i]
      guards.push(guard)
      steps.push(arrivals[i + 1] - arrivals[i] - guard)
    }
  }
  model.stdin.end()
  const value = median(steps)
  return row("   tool step in the CLI, guard aside", ms(value), `spawn+3 fsync+HTTP ${ms(floor)}`, value / floor, GOALS.cliStep,
    `${steps.length} steps of the built mino in a pseudo-terminal, each approved with y Enter as its prompt showed ` +
      `(${retyped} left out: the y came before answers were taken and was typed again); ` +
      `from a request's arrival at the model to the next's, less the guard (screen to prompt: ${ms(median(guards))})`)
}

const step = async () => {
  const result = await runProgram("step", { dir: SCRATCH, turns: 12, stepsPerTurn: 7, floorSamples: 6 })
  const { phases, floorPhases } = result
  // A step saves three records (response, start, result), so the floor has three fsyncs;
  // earlier figures used two, given beside it for comparison.
  const withTwo = result.floor - floorPhases.fsync / 3
  return [
    row("b) loop overhead per tool step", ms(result.step), `spawn+3 fsync+HTTP ${ms(result.floor)}`, result.step / result.floor, GOALS.step,
      `${result.steps} steps: request ${ms(phases.request)}, save response ${ms(phases.save)}, ` +
        `approve+save start ${ms(phases.approve)}, run+save result ${ms(phases.run)}`,
      `floor: spawn ${ms(floorPhases.spawn)}, 3 fsyncs ${ms(floorPhases.fsync)}, HTTP ${ms(floorPhases.http)}; ` +
        `with two fsyncs ${ms(withTwo)} (${(result.step / withTwo).toFixed(2)}x)`),
    row("   CPU per tool step", ms(result.cpuPerStep + result.helperCpuPerStep), `the floor's ${ms(result.floorCpu)}`,
      (result.cpuPerStep + result.helperCpuPerStep) / result.floorCpu, GOALS.stepCpu,
      `CPU time of Mino's process, ${ms(result.cpuPerStep)} (turns' own work spread over their steps), and of the lifeline's ` +
        `helper, which starts the commands, ${ms(result.helperCpuPerStep)}; the command's bash is in neither`,
      `by phase: request ${ms(result.cpuPhases.request)}, save response ${ms(result.cpuPhases.save)}, ` +
        `approve+save start ${ms(result.cpuPhases.approve)}, run+save result ${ms(result.cpuPhases.run)}`),
    await cliStep(result.floor)
  ]
}

// ---------------------------------------------------------------------------
// c) restoring a large session

/** About 500 bytes a record of completed turns: chats, and tool turns with a reasoning item, a call and its result. */
const writeSession = (file, records = 100_000) =>
  new Promise((resolve, reject) => {
    const out = createWriteStream(file, { mode: 0o600 })
    out.on("error", reject)
    const words = "the session keeps every record a turn made so that a restart replays only completed turns and nothing is lost".split(" ")
    const text = (n, seed) => Array.from({ length: n }, (_, i) => words[(i * 7 + seed) % words.length]).join(" ")
    let written = 0
    // The model's input items that the completed turns restore: what SessionStore must rebuild.
    let contextItems = 0
    let turn = 0
    let chunk = ""
    let time = Date.parse("2026-01-01T00:00:00Z")
    const put = (record) => {
      time += 1500
      chunk += JSON.stringify({ ...record, time: new Date(time).toISOString() }) + "\n"
      written += 1
    }
    const message = (turnId, n) => ({
      type: "model_response",
      turn_id: turnId,
      response_id: `resp_${turnId}_${n}`,
      output: [{
        id: `msg_${turnId}_${n}`,
        type: "message",
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text: text(100, turn + n), annotations: [] }]
      }]
    })
    while (written + 6 <= records) {
      turn += 1
      const turnId = `00000000-0000-4000-8000-${turn.toString(16).padStart(12, "0")}`
      put({ type: "user_input", turn_id: turnId, text: text(40, turn) })
      if (turn % 2 === 0) {
        const callId = `call_${turn}`
        put({
          type: "model_response",
          turn_id: turnId,
          response_id: `resp_${turnId}_0`,
          output: [
            { id: `rs_${turn}`, type: "reasoning", encrypted_content: `gAAAAB${"x".repeat(400)}`, summary: [] },
            { id: `fc_${turn}`, type: "function_call", status: "completed", arguments: JSON.stringify({ command: "ls -la src" }), call_id: callId, name: "bash" }
          ]
        })
        put({ type: "tool_start", turn_id: turnId, call_id: callId, name: "bash" })
        put({ type: "tool_result", turn_id: turnId, call_id: callId, name: "bash", result: { status: "completed", output: text(110, turn), exit_code: 0 } })
        put(message(turnId, 1))
        contextItems += 5 // the question, reasoning, call, its output, the answer
      } else {
        put(message(turnId, 0))
        contextItems += 2 // the question, the answer
      }
      put({ type: "turn_end", turn_id: turnId, status: "completed" })
      if (chunk.length > 1 << 20) {
        out.write(chunk)
        chunk = ""
      }
    }
    out.end(chunk, () => resolve({ records: written, contextItems, bytes: statSync(file).size }))
  })

const restore = async () => {
  const home = join(SCRATCH, "restore-home")
  const dir = join(home, ".mino", "sessions")
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const file = join(dir, "bench.jsonl")
  const { records, contextItems, bytes } = await writeSession(file)
  const mino = []
  const raw = []
  for (let i = 0; i < 3; i++) {
    mino.push(await runProgram("restore-mino", { home, file }, ["--expose-gc"]))
    raw.push(await runProgram("restore-raw", { home, file }))
  }
  if (mino[0].contextItems !== contextItems) {
    throw new Error(`SessionStore restored ${mino[0].contextItems} context items; the session has ${contextItems}`)
  }
  const value = median(mino.map((r) => r.ms))
  const floor = median(raw.map((r) => r.ms))
  const memory = median(mino.map((r) => r.peakBytes)) / bytes
  const rawMemory = median(raw.map((r) => r.peakBytes)) / bytes
  const mb = (n) => `${(n / 1e6).toFixed(1)} MB`
  return [
    row("c) restore a 100k-record session", ms(value), `read+split+parse ${ms(floor)}`, value / floor, GOALS.restore,
      `${records} records, ${mb(bytes)}`),
    row("   peak memory of that restore", mb(median(mino.map((r) => r.peakBytes))), `file ${mb(bytes)}`, memory, GOALS.restoreMemory,
      `peak RSS growth while restoring; read+split+parse peaks at ${rawMemory.toFixed(2)}x the file`,
      `kept after a full GC: ${mb(median(mino.map((r) => r.keptBytes)))} (${(median(mino.map((r) => r.keptBytes)) / bytes).toFixed(2)}x the file); the rest of the peak is V8's young generation and the garbage of reading`,
      `not in restore: parsing the kept history into items (store.context, for embedders; a request joins the kept text instead) takes ${ms(median(mino.map((r) => r.contextMs)))}`)
  ]
}

// ---------------------------------------------------------------------------
// e) cost with the size of the conversation

const scale = async () => {
  const rows = []
  let base
  const results = []
  for (const records of SIZES) {
    const home = join(SCRATCH, `scale-${records}`)
    const dir = join(home, ".mino", "sessions")
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    await writeSession(join(dir, "bench.jsonl"), records)
    results.push({ records, ...(await runProgram("scale", { dir: SCRATCH, home, turns: 9, modelDelayMs: MODEL_DELAY_MS })) })
  }
  // The open of an empty conversation, which the empty start-up already holds: taken off the
  // restore of N records in the start-up floor, so the floor counts one open, not two.
  const emptyOpens = []
  for (let i = 0; i < 3; i++) {
    const home = mkdtempSync(join(SCRATCH, "scale-empty-"))
    mkdirSync(join(home, ".mino", "sessions"), { recursive: true, mode: 0o700 })
    emptyOpens.push((await runProgram("scale", { dir: SCRATCH, home, turns: 0, openOnly: true })).restoreMs)
  }
  const emptyOpen = median(emptyOpens)
  for (const result of results) {
    base ??= result.toPrompt
    rows.push(row(`e) turn end -> next prompt, ${k(result.records)} records`, ms(result.toPrompt), `at 1k ${ms(base)}`, result.toPrompt / base, GOALS.prompt,
      `restore ${ms(result.restoreMs)}; the model answers ${MODEL_DELAY_MS} ms after a request arrives`))
  }
  for (const result of results) {
    rows.push(row(`   request CPU, ${k(result.records)} records`, ms(result.requestCpu), `node:http ${ms(result.floorCpu)}`, result.requestCpu / result.floorCpu, GOALS.request,
      `body ${(result.bodyBytes / 1e6).toFixed(2)} MB: built from the kept history, sent, its reply read; the floor writes the same bytes and reads the same reply`))
  }
  return [...rows, ...(await startWithRecords(results, emptyOpen))]
}

/**
 * The built mino's start-up to its first prompt in a directory whose newest
 * conversation holds N records, beside the floor of an empty conversation's
 * start-up plus what restoring those records adds to opening an empty one (all
 * measured in this run: the empty start-up holds one open already).
 */
const startWithRecords = async (results, emptyOpen) => {
  if (!existsSync(join(ROOT, "dist", "cli", "main.js"))) return [["   start-up with N records: dist/cli is missing: run `npm run build` first"]]
  const cwd = realpathSync(mkdtempSync(join(SCRATCH, "work-")))
  const environment = (home) => {
    const env = { ...process.env, HOME: home, OPENAI_API_KEY: "fake", OPENAI_BASE_URL: "http://127.0.0.1:9/v1" }
    for (const name of ["XDG_CACHE_HOME", "MINO_MODEL", "NODE_OPTIONS", "NODE_DISABLE_COMPILE_CACHE"]) delete env[name]
    return env
  }
  const homeWith = async (records) => {
    const home = mkdtempSync(join(SCRATCH, "start-home-"))
    const dir = join(home, ".mino", "sessions")
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    if (records === 0) return home
    const body = join(SCRATCH, `records-${records}.jsonl`)
    await writeSession(body, records)
    // A conversation started in `cwd`: its header, then the records.
    const header = JSON.stringify({ type: "conversation", turn_id: "", cwd, time: "2026-01-01T00:00:00.000Z" }) + "\n"
    writeFileSync(join(dir, "20260101-000000-0000beef.jsonl"), header + readFileSync(body, "utf8"), { mode: 0o600 })
    return home
  }
  const times = async (home) => {
    const mino = () => timeProcess([join(ROOT, "bin", "mino.js")], environment(home), cwd, "You> ")
    await mino() // fills this home's code cache
    const out = []
    for (let i = 0; i < 5; i++) out.push(await mino())
    return median(out)
  }
  const empty = await times(await homeWith(0))
  const rows = []
  for (const result of results) {
    const value = await times(await homeWith(result.records))
    const added = Math.max(0, result.restoreMs - emptyOpen)
    const floor = empty + added
    rows.push(row(`   start-up, ${k(result.records)} records`, ms(value), `empty ${ms(empty)} + restore ${ms(added)}`, value / floor, GOALS.startWithRecords,
      `restore: the open of ${k(result.records)} records (${ms(result.restoreMs)}) less an empty conversation's open (${ms(emptyOpen)}), which the empty start-up holds`))
  }
  return rows
}

// ---------------------------------------------------------------------------
// f) a long session's memory

/**
 * The long session: `turns` turns of `requests` requests each (a turn's most), the
 * first `requests - 1` answered with `calls` calls in all (a turn's most), whose
 * results print `outputBytes` (lines of a listing), the last with a message: some
 * 200 MB of history.
 */
const LONG = { turns: Number(process.env["MINO_BENCH_LONG_TURNS"] ?? 200), requests: 8, calls: 16, outputBytes: 60_000 }

/** How many of a turn's `calls` calls its request `k` (of the first `requests - 1`) asks for. */
export const callsIn = (k, requests, calls) => Math.floor((calls * (k + 1)) / (requests - 1)) - Math.floor((calls * k) / (requests - 1))

/** Writes a session of `turns` completed turns of the long session's shape; resolves its size in bytes. */
export const writeLongSession = (file, { turns, requests, calls, outputBytes }) =>
  new Promise((resolve, reject) => {
    const out = createWriteStream(file, { mode: 0o600 })
    out.on("error", reject)
    const line = "-rw-r--r--  1 mino mino   4096 Dec  4 12:00 src/model/request/History.ts\n"
    const output = line.repeat(Math.ceil(outputBytes / line.length)).slice(0, outputBytes)
    let time = Date.parse("2026-01-01T00:00:00Z")
    let chunk = ""
    const put = (record) => {
      time += 10
      chunk += JSON.stringify({ ...record, time: new Date(time).toISOString() }) + "\n"
    }
    const write = async () => {
      for (let turn = 1; turn <= turns; turn++) {
        const turnId = `00000000-0000-4000-8000-${turn.toString(16).padStart(12, "0")}`
        put({ type: "user_input", turn_id: turnId, text: `Run the listing ${calls} times.` })
        for (let request = 0; request < requests - 1; request++) {
          const ids = Array.from({ length: callsIn(request, requests, calls) }, (_, i) => `call_${turn}_${request}_${i}`)
          put({
            type: "model_response",
            turn_id: turnId,
            response_id: `resp_${turn}_${request}`,
            output: [
              { id: `rs_${turn}_${request}`, type: "reasoning", encrypted_content: `gAAAAB${"x".repeat(400)}`, summary: [] },
              ...ids.map((callId, i) => ({
                id: `fc_${turn}_${request}_${i}`,
                type: "function_call",
                status: "completed",
                arguments: JSON.stringify({ command: "cat listing.txt" }),
                call_id: callId,
                name: "bash"
              }))
            ]
          })
          for (const callId of ids) {
            put({ type: "tool_start", turn_id: turnId, call_id: callId, name: "bash" })
            put({ type: "tool_result", turn_id: turnId, call_id: callId, name: "bash", result: { status: "completed", output, exit_code: 0 } })
          }
          if (chunk.length > 1 << 22 && !out.write(chunk)) await new Promise((r) => out.once("drain", r))
          if (chunk.length > 1 << 22) chunk = ""
        }
        put({
          type: "model_response",
          turn_id: turnId,
          response_id: `resp_${turn}_answer`,
          output: [{ id: `msg_${turn}`, type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text: "Done.", annotations: [] }] }]
        })
        put({ type: "turn_end", turn_id: turnId, status: "completed" })
      }
      out.end(chunk, () => resolve(statSync(file).size))
    }
    write().catch(reject)
  })

/** A long session in `home`'s `bench` conversation (`shape.turns` of them restored, then one more live); its memory. */
export const longSession = async (shape = LONG, runner = runProgram, scratch = SCRATCH) => {
  const home = mkdtempSync(join(scratch, "long-home-"))
  const dir = join(home, ".mino", "sessions")
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const fileBytes = await writeLongSession(join(dir, "bench.jsonl"), { ...shape, turns: shape.turns - 1 })
  const result = await runner("long", { dir: scratch, home, turns: 1, requests: shape.requests, calls: shape.calls, outputBytes: shape.outputBytes }, ["--expose-gc"])
  return { ...result, fileBytes }
}

const long = async () => {
  const result = await longSession()
  const mb = (n) => `${(n / 1e6).toFixed(0)} MB`
  const peak = (result.peak - result.before) / result.history
  const after = (result.after - result.before) / result.history
  return [
    row("f) long session: peak memory", mb(result.peak - result.before), `history ${mb(result.history)}`, peak, GOALS.longMemory,
      `${LONG.turns} turns of ${LONG.requests} requests and ${LONG.calls} calls printing ${(LONG.outputBytes / 1000).toFixed(0)} kB each (the last turn live, ` +
        `${result.requests} requests in ${(result.turnsMs / 1000).toFixed(1)} s; the others restored from ${mb(result.fileBytes)})`,
      `resident set above the process's before the session opened (${mb(result.before)}); history: the last request's body`),
    row("   long session: memory after the turn", mb(result.after - result.before), `history ${mb(result.history)}`, after, GOALS.longMemory,
      `resident after a full collection; after the restore alone: ${mb(result.restored - result.before)} (${((result.restored - result.before) / result.history).toFixed(2)}x)`)
  ].map((r) => ({ ...r, bytes: { history: result.history, peak: result.peak - result.before, after: result.after - result.before } }))
}

// ---------------------------------------------------------------------------
// d) overflow stop

const overflow = async () => {
  const result = await runProgram("overflow", { dir: SCRATCH, runs: 15 })
  if (!result.truncated) throw new Error("`yes` was not stopped at the output limit")
  return [
    row("d) overflow stop: `yes` to 64 KiB", ms(result.yes), `head -c 65536 ${ms(result.head)}`, result.yes / result.head, GOALS.overflow,
      `a start of \`true\` through the lifeline's gate (held until armed): ${ms(result.spawnerStart)}, bash spawned bare ${ms(result.bareSpawn)}`)
  ]
}

// ---------------------------------------------------------------------------

/** The load average (1, 5, 15 min): a loaded machine moves absolute times; the ratios carry over better. */
const load = () => loadavg().map((n) => n.toFixed(2)).join(" ")

/** Which build this is: its commit, and whether the tree differs from it (then the figures are of uncommitted code). */
const build = () => {
  const git = (...args) => {
    try {
      return execFileSync("git", ["-C", ROOT, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim()
    } catch {
      return undefined
    }
  }
  const commit = git("rev-parse", "--short=12", "HEAD")
  if (commit === undefined) return "not a git checkout"
  const dirty = git("status", "--porcelain", "--untracked-files=no")
  return `commit ${commit}${dirty === "" ? "" : " + uncommitted changes"}`
}

const BENCHES = { start: startup, step, restore, overflow, scale, long }
const args = process.argv.slice(2)
const json = args.includes("--json")
const chosen = args.find((arg) => !arg.startsWith("--"))
if (args.includes("--list")) {
  process.stdout.write(JSON.stringify(ROWS) + "\n")
  process.exit(0)
}
if (chosen !== undefined && !(chosen in BENCHES)) {
  process.stderr.write(`usage: node scripts/bench.mjs [${Object.keys(BENCHES).join("|")}] [--json] | --list\n`)
  process.exit(2)
}

const started = Date.now()
const heading = `Mino bench: ${build()}, node ${process.version}, ${availableParallelism()} CPUs, load average ${load()}; ` +
  `medians, ratio to the floor measured in the same run`
if (!json) process.stdout.write(`${heading}\n\n`)
const header = ["", "median", "floor", "ratio", "goal", ""]
const lines = [header]
const measured = []
for (const [name, bench] of Object.entries(BENCHES)) {
  if (chosen !== undefined && chosen !== name) continue
  let rows
  try {
    rows = await bench()
    const unnamed = rows.find((r) => !Array.isArray(r) && !ROWS[name].includes(r.name))
    if (unnamed !== undefined) throw new Error(`the row ${JSON.stringify(unnamed.name)} is not in ROWS.${name}`)
  } catch (error) {
    process.exitCode = 1
    const message = error instanceof Error ? error.message : String(error)
    lines.push([`${name}: could not be measured: ${message}`])
    measured.push({ section: name, error: message })
    continue
  }
  for (const r of rows) {
    // A row of one cell is a notice (a build missing), not a measurement.
    if (Array.isArray(r)) {
      lines.push(r)
      continue
    }
    measured.push({ section: name, ...r, met: r.ratio <= r.goal })
    lines.push([r.name, r.value, r.floor, `${r.ratio.toFixed(2)}x`, `<= ${r.goal}x`, r.ratio <= r.goal ? "PASS" : "MISS"])
    for (const note of r.notes) lines.push([`     ${note}`])
  }
}
if (json) {
  process.stdout.write(JSON.stringify({ heading, rows: measured, loadAtEnd: load() }) + "\n")
} else {
  const widths = header.map((_, i) => Math.max(...lines.filter((l) => l.length > 1).map((l) => (l[i] ?? "").length)))
  for (const line of lines) {
    process.stdout.write((line.length === 1 ? line[0] : line.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join("  ")) + "\n")
  }
  process.stdout.write(`\n${((Date.now() - started) / 1000).toFixed(0)} s; load average at the end ${load()}\n`)
}
