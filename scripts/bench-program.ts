/**
 * The in-process half of `npm run bench`: scripts/bench.mjs bundles this file
 * with esbuild into a temporary directory and runs it once per measurement,
 * `node bench-program.mjs <mode> <json options>`; it prints one JSON line.
 *
 * - `step`: Mino's Agent with its real layers (session store with fsync, BashRunner,
 *   model client over the openai SDK to a loopback Responses server, which runs in a
 *   child: `model` mode) and an Approver that approves everything, running turns of
 *   tool steps of `true` on the CLI's path (each turn given a cancel, which never
 *   fires); alternating with the floor: one bash spawn, three fsynced appends, one
 *   HTTP request to the same server.
 * - `restore-mino` / `restore-raw`: opening a large session with SessionStore, or
 *   reading and parsing its lines directly; time and peak memory.
 * - `overflow`: BashRunner running `yes` (killed at the output limit) and
 *   `head -c 65536 /dev/zero`, alternately; and `true` started through the
 *   lifeline (its gate, held until armed), against bash spawned bare.
 * - `scale`: a session of N records opened with the real layers, then text turns
 *   against the loopback model: the time from a turn's completed response to the
 *   next prompt's questions being ready, and the CPU of one request (built from the
 *   kept history, sent, its reply read) beside the CPU of writing the same body to
 *   the same server with `node:http` and reading the same reply.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Path from "node:path"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { Agent } from "../src/agent/Agent.js"
import type { AgentEvent } from "../src/agent/AgentEvent.js"
import { Approver } from "../src/approval/Approver.js"
import * as Mino from "../src/Mino.js"
import * as ModelClientModule from "../src/model/ModelClient.js"
import { ModelClient } from "../src/model/ModelClient.js"
import * as RequestBody from "../src/model/request/RequestBody.js"
import * as ResponsesServer from "../src/testing/ResponsesServer.js"
import { Secrets } from "../src/security/Secrets.js"
import { SessionStore } from "../src/session/SessionStore.js"
import { BashRunner, DEFAULT_OUTPUT_LIMIT_BYTES, DEFAULT_TIMEOUT_MS } from "../src/tools/bash/BashRunner.js"
import * as Lifeline from "../src/tools/bash/Lifeline.js"

const now = (): number => performance.now()
/** CPU time of this process so far (user + system), in ms. */
const cpu = (): number => {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}
/**
 * CPU time (user + system, in ms) of the lifeline's watchers this process
 * started (`/bin/sh` children), with that of the sleepers and sleeps they have
 * reaped (their children's time, which the kernel adds to theirs once reaped).
 * A command's bash is this process's child, not the watcher's: in neither this
 * nor the floor. /proc counts in clock ticks (10 ms); a turn's total is many of them.
 */
const helperCpu = (): number => {
  const watchers = Fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name)).flatMap((pid) => {
    try {
      const stat = Fs.readFileSync(`/proc/${pid}/stat`, "utf8")
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      if (Number(fields[1]) !== process.pid || !/\((sh|dash|bash)\)/.test(stat)) return []
      if (!Fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("armed=")) return []
      return [Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])]
    } catch {
      return []
    }
  })
  return watchers.reduce((sum, ticks) => sum + ticks, 0) * 10
}
const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN
}
/** A new directory inside `parent`, the bench's scratch directory, which bench.mjs removes. */
const tempDir = (parent: string, prefix: string): string => Fs.realpathSync(Fs.mkdtempSync(Path.join(parent, `${prefix}-`)))

// ---------------------------------------------------------------------------
// step

const StepOptions = Schema.Struct({
  /** The scratch directory for the session's home and the working directory. */
  dir: Schema.String,
  turns: Schema.Int,
  stepsPerTurn: Schema.Int,
  floorSamples: Schema.Int
})

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

/** Tool calls of `true` until this turn has `steps` results, then a closing message. */
const stepModel = (steps: number) => {
  let calls = 0
  return (request: ResponsesServer.Request): Effect.Effect<ResponsesServer.Reply> => {
    const input = isRecord(request.body) && Array.isArray(request.body["input"]) ? request.body["input"].filter(isRecord) : []
    const lastUser = input.findLastIndex((item) => item["role"] === "user")
    const results = input.slice(lastUser + 1).filter((item) => item["type"] === "function_call_output").length
    return Effect.succeed(
      results < steps
        ? ResponsesServer.toolCallResponse([{ call_id: `call_bench_${++calls}`, name: "bash", arguments: JSON.stringify({ command: "true" }) }])
        : ResponsesServer.textResponse("Done: every command ran.")
    )
  }
}

const floorPhases = { spawn: Array<number>(), fsync: Array<number>(), http: Array<number>() }

/** The least one step must do: spawn bash, three fsynced appends (response, start, result), one loopback request. */
const floorSample = (file: number, agent: Http.Agent, port: number, cwd: string): Promise<number> => {
  const started = now()
  let mark = started
  const line = Buffer.from(`${JSON.stringify({ type: "tool_result", turn_id: "t", call_id: "c", result: { status: "completed", output: "" } })}\n`)
  return new Promise<void>((resolve, reject) => {
    const child = spawn("/bin/bash", ["--noprofile", "--norc", "-c", "true"], {
      cwd,
      env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin" },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true
    })
    child.stdout.resume()
    child.stderr.resume()
    child.on("error", reject)
    child.on("close", () => resolve())
  }).then(() => {
    floorPhases.spawn.push(now() - mark)
    mark = now()
    for (let i = 0; i < 3; i++) {
      Fs.writeSync(file, line)
      Fs.fsyncSync(file)
    }
    floorPhases.fsync.push(now() - mark)
    mark = now()
    return new Promise<number>((resolve, reject) => {
      const request = Http.request({ host: "127.0.0.1", port, method: "POST", path: "/v1/responses", agent }, (response) => {
        response.resume()
        response.on("end", () => {
          floorPhases.http.push(now() - mark)
          resolve(now() - started)
        })
      })
      request.on("error", reject)
      request.end(JSON.stringify({ model: "bench", input: [{ role: "user", content: "Run true." }], stream: true }))
    })
  })
}

/**
 * The loopback model runs in a process of its own, as a real endpoint would: its work
 * (parsing the growing request bodies, writing the events) is then not done on Mino's
 * event loop between Mino's own steps.
 */
const modelProcess = (mode: "model" | "long-model", options: Record<string, unknown>) =>
  Effect.acquireRelease(
    Effect.async<{ readonly child: ChildProcess; readonly url: string; readonly port: number }>((resume) => {
      const child = spawn(process.execPath, [process.argv[1] ?? "", mode, JSON.stringify(options)], { stdio: ["pipe", "pipe", "inherit"] })
      let output = ""
      child.stdout.setEncoding("utf8")
      child.stdout.on("data", (text: string) => {
        output += text
        if (!output.includes("\n")) return
        const { url, port } = Schema.decodeUnknownSync(Schema.parseJson(ModelAddress))(output.trim())
        resume(Effect.succeed({ child, url, port }))
      })
    }),
    ({ child }) => Effect.sync(() => child.kill())
  )

const ModelAddress = Schema.Struct({ url: Schema.String, port: Schema.Int })

const ModelOptions = Schema.Struct({
  steps: Schema.Int,
  announce: Schema.optional(Schema.Boolean),
  /** How long the model takes to answer once a request's body has arrived. */
  delayMs: Schema.optional(Schema.Number)
})

/**
 * Serves the step model until standard input closes. With `announce`, one line
 * `{"request":<epoch ms>}` on stdout as each request's body has arrived (the
 * start-up bench times a question from the keyboard to the model with it). With
 * `delayMs`, each answer starts that long after its request arrived, as a real
 * model's does: a client's work after sending (freeing a large body, a collection)
 * then falls in the wait, not in what follows the answer.
 */
const model = (options: typeof ModelOptions.Type) =>
  Effect.gen(function*() {
    const reply = stepModel(options.steps)
    const delay = Math.max(0, options.delayMs ?? 0)
    const server = yield* ResponsesServer.make((request) =>
      Effect.zipRight(
        Effect.sync(() => {
          if (options.announce === true) process.stdout.write(JSON.stringify({ request: performance.timeOrigin + performance.now() }) + "\n")
        }),
        delay === 0 ? reply(request) : Effect.delay(reply(request), delay)
      )
    )
    process.stdout.write(JSON.stringify({ url: server.url, port: server.port }) + "\n")
    yield* Effect.async<void>((resume) => {
      process.stdin.on("end", () => resume(Effect.void))
      process.stdin.resume()
    })
  }).pipe(Effect.scoped)

/**
 * The real client with a mark: `opened` runs as a request's reply is opened, and what it returns
 * when the reply yields the completed response (a plain map of each read, so the mark costs next
 * to nothing).
 */
const marked = (baseURL: string, opened: () => () => void) =>
  Layer.effect(
    ModelClient,
    Effect.map(ModelClient, (client) =>
      ModelClientModule.fromReplies((request) =>
        Effect.suspend(() => {
          const completed = opened()
          return Effect.map(client.open(request), (reply) => ({
            next: Effect.map(reply.next, (events) => {
              if (events?.some((event) => event._tag === "Completed") === true) completed()
              return events
            })
          }))
        })))
  ).pipe(Layer.provide(ModelClient.layer({ baseURL })))

const step = (options: typeof StepOptions.Type) =>
  Effect.gen(function*() {
    const home = tempDir(options.dir, "home")
    const cwd = tempDir(options.dir, "work")
    const server = yield* modelProcess("model", { steps: options.stepsPerTurn })
    // The real client, with a mark when its stream yields the completed response, to
    // tell the time spent getting the response from the time spent saving it.
    let completedAt = 0
    let completedCpu = 0
    const model = marked(server.url, () => () => {
      completedAt = now()
      completedCpu = cpu()
    })
    // Mino composed as the CLI composes it, with the wrapped client and an approver that approves everything.
    const layer = Mino.layer({
      apiKey: "bench",
      protectKey: false,
      modelClient: model,
      model: "bench",
      instructions: "Run the commands.",
      session: { home, sessionId: "bench" },
      bash: { cwd, parentEnv: process.env },
      approver: Approver.layerStatic(() => true)
    })

    const floorFile = Fs.openSync(Path.join(home, "floor.jsonl"), "a", 0o600)
    // The floor's request goes to the same loopback model and gets the same reply as a
    // step's, so the model's own latency is in both and the ratio shows Mino's.
    const port = server.port
    const keepAlive = new Http.Agent({ keepAlive: true })
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        keepAlive.destroy()
        Fs.closeSync(floorFile)
      })
    )

    return yield* Effect.gen(function*() {
      const agent = yield* Agent
      // The CLI's path: its turns are given a cancel (a stop request or closed output), which never fires here.
      const stop = yield* Deferred.make<string>()
      const outputClosed = yield* Deferred.make<string>()
      const cancel = Effect.raceFirst(Deferred.await(stop), Deferred.await(outputClosed))
      const steps: Array<number> = []
      const floors: Array<number> = []
      const turns: Array<number> = []
      const phases = { request: Array<number>(), save: Array<number>(), approve: Array<number>(), run: Array<number>() }
      // CPU time of this process and of the lifeline's helper (not of the command's bash), in ms: measured turns, and floor samples.
      let turnCpu = 0
      let turnHelperCpu = 0
      let floorCpu = 0
      const cpuPhases = { request: Array<number>(), save: Array<number>(), approve: Array<number>(), run: Array<number>() }
      // One turn to warm up (the SDK loads on the first request), then the measured ones.
      for (let turn = -1; turn < options.turns; turn++) {
        let last: number | undefined
        let [waiting, waitingCpu, responded, respondedCpu, running, runningCpu] = [0, 0, 0, 0, 0, 0]
        const started = now()
        // The helper's CPU is read by scanning /proc: before Mino's own clock starts, so the scan is not counted as Mino's.
        const helperStarted = helperCpu()
        const cpuStarted = cpu()
        const outcome = yield* agent.turn(`Run true ${options.stepsPerTurn} times.`, (event: AgentEvent) =>
          Effect.sync(() => {
            const at = now()
            const atCpu = cpu()
            if (event._tag === "ModelWaiting") [waiting, waitingCpu] = [at, atCpu]
            if (event._tag === "ModelResponded") [responded, respondedCpu] = [at, atCpu]
            if (event._tag === "ToolRunning") [running, runningCpu] = [at, atCpu]
            if (event._tag !== "ToolFinished") return
            if (event.result.status !== "completed") throw new Error(`a bench step failed: ${JSON.stringify(event.result)}`)
            if (turn >= 0) {
              // Where a step's time goes: the request until the completed response; validating
              // and saving it; approving and saving the start; running and saving the result.
              phases.request.push(completedAt - waiting)
              phases.save.push(responded - completedAt)
              phases.approve.push(running - responded)
              phases.run.push(at - running)
              cpuPhases.request.push(completedCpu - waitingCpu)
              cpuPhases.save.push(respondedCpu - completedCpu)
              cpuPhases.approve.push(runningCpu - respondedCpu)
              cpuPhases.run.push(atCpu - runningCpu)
            }
            // The interval between two results is one whole step: request, save, start, run, save.
            if (last !== undefined && turn >= 0) steps.push(at - last)
            last = at
          }), { cancel })
        if (outcome.status !== "completed") throw new Error(`a bench turn ended ${outcome.status}: ${outcome.reason ?? ""}`)
        if (turn < 0) {
          yield* Effect.promise(() => floorSample(floorFile, keepAlive, port, cwd))
          continue
        }
        turns.push(now() - started)
        turnCpu += cpu() - cpuStarted
        turnHelperCpu += helperCpu() - helperStarted
        const floorCpuStarted = cpu()
        for (let i = 0; i < options.floorSamples; i++) {
          floors.push(yield* Effect.promise(() => floorSample(floorFile, keepAlive, port, cwd)))
        }
        floorCpu += cpu() - floorCpuStarted
      }
      return {
        step: median(steps),
        floor: median(floors),
        steps: steps.length,
        floors: floors.length,
        turn: median(turns),
        // A turn is stepsPerTurn tool steps and one closing answer; its CPU is spread over the steps.
        cpuPerStep: turnCpu / (options.turns * options.stepsPerTurn),
        helperCpuPerStep: turnHelperCpu / (options.turns * options.stepsPerTurn),
        floorCpu: floorCpu / (options.turns * options.floorSamples),
        phases: { request: median(phases.request), save: median(phases.save), approve: median(phases.approve), run: median(phases.run) },
        cpuPhases: {
          request: median(cpuPhases.request),
          save: median(cpuPhases.save),
          approve: median(cpuPhases.approve),
          run: median(cpuPhases.run)
        },
        floorPhases: { spawn: median(floorPhases.spawn), fsync: median(floorPhases.fsync), http: median(floorPhases.http) }
      }
    }).pipe(Effect.provide(layer))
  }).pipe(Effect.scoped)

// ---------------------------------------------------------------------------
// restore

const RestoreOptions = Schema.Struct({ home: Schema.String, file: Schema.String })

const memoryResult = (baseline: number, ms: number, extra: Record<string, unknown>) => ({
  ms,
  // ru_maxrss is in KiB: the peak resident set since the process started.
  peakBytes: process.resourceUsage().maxRSS * 1024 - baseline,
  ...extra
})

/** The memory in use after a full collection: the heap, and Buffers outside it (the bench runs restore-mino with --expose-gc). */
const liveMemory = (): number => {
  const collect = (globalThis as { gc?: () => void }).gc
  if (collect === undefined) throw new Error("restore-mino runs with --expose-gc")
  collect()
  const usage = process.memoryUsage()
  return usage.heapUsed + usage.arrayBuffers
}

/** A key as a user has one (none in the file): the restore looks for it in every record it reads. */
const BENCH_KEY = "sk-bench-2Wq8Rt5YuP1oLk7JhG4fD0sA"

const restoreMino = (options: typeof RestoreOptions.Type) =>
  Effect.gen(function*() {
    const heapBefore = liveMemory()
    const baseline = process.memoryUsage().rss
    const started = now()
    return yield* Effect.gen(function*() {
      const store = yield* SessionStore
      // Restore is the open: the file read, checked and replayed, ready for the first request.
      const ms = now() - started
      const restored = memoryResult(baseline, ms, { notices: store.notices.length })
      // What the open keeps (the peak also holds the garbage of reading, until V8 collects it).
      const keptBytes = liveMemory() - heapBefore
      // Not part of restore: the kept history parsed into items (store.context, for embedders; a request joins the kept text).
      const building = now()
      const context = yield* store.context
      return { ...restored, keptBytes, contextItems: context.length, contextMs: now() - building }
    }).pipe(Effect.provide(SessionStore.layer({ home: options.home, sessionId: "bench" })), Effect.provide(Secrets.layer(BENCH_KEY)))
  })

const restoreRaw = (options: typeof RestoreOptions.Type) =>
  Effect.sync(() => {
    const baseline = process.memoryUsage().rss
    const started = now()
    const records = Fs.readFileSync(options.file, "utf8").split("\n").filter((line) => line.length > 0).map((line): unknown => JSON.parse(line))
    const ms = now() - started
    return memoryResult(baseline, ms, { records: records.length })
  })

// ---------------------------------------------------------------------------
// overflow

const OverflowOptions = Schema.Struct({ dir: Schema.String, runs: Schema.Int })

const overflow = (options: typeof OverflowOptions.Type) =>
  Effect.gen(function*() {
    const runner = yield* BashRunner
    const cwd = tempDir(options.dir, "work")
    const run = (command: string) =>
      Effect.gen(function*() {
        const started = now()
        const result = yield* Effect.scoped(runner.run({
          command,
          cwd,
          env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin" },
          timeoutMs: DEFAULT_TIMEOUT_MS,
          outputLimitBytes: DEFAULT_OUTPUT_LIMIT_BYTES
        }))
        const ms = now() - started
        // `head` fills the capture exactly; `yes` overflows it, and its output is cut to fit 64 KiB with its note.
        const bytes = Buffer.byteLength(result.output)
        if (result.truncated === true ? bytes > DEFAULT_OUTPUT_LIMIT_BYTES : bytes !== DEFAULT_OUTPUT_LIMIT_BYTES) {
          throw new Error(`${command}: expected ${DEFAULT_OUTPUT_LIMIT_BYTES} bytes of output, got ${bytes}`)
        }
        return { ms, truncated: result.truncated === true }
      })
    const yes: Array<number> = []
    const head: Array<number> = []
    let truncated = true
    for (let i = -2; i < options.runs; i++) {
      const a = yield* run("yes")
      const b = yield* run("head -c 65536 /dev/zero")
      truncated &&= a.truncated
      if (i < 0) continue
      yes.push(a.ms)
      head.push(b.ms)
    }
    // What arm-before-run adds to a start: `true` through the lifeline's gate, vs bash spawned bare.
    const lifeline = yield* Lifeline.make
    const closed = (child: ChildProcess) => new Promise<void>((resolve) => child.on("close", () => resolve()))
    const env = { PATH: process.env["PATH"] ?? "/usr/bin:/bin" }
    const launched = Effect.async<void, Error>((resume) => {
      lifeline.launch({ command: "true", cwd, env, timeoutMs: DEFAULT_TIMEOUT_MS }, {
        running: (_group, output) => void output.resume(),
        exited: () => resume(Effect.void),
        lost: (reason) => resume(Effect.fail(new Error(reason))),
        failed: (message) => resume(Effect.fail(new Error(message)))
      })
    })
    const bare: Array<number> = []
    const throughSpawner: Array<number> = []
    for (let i = -2; i < options.runs * 2; i++) {
      let started = now()
      yield* Effect.promise(() =>
        closed(spawn("/bin/bash", ["--noprofile", "--norc", "-c", "true"], { cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: true }))
      )
      const bareMs = now() - started
      started = now()
      yield* launched
      if (i < 0) continue
      bare.push(bareMs)
      throughSpawner.push(now() - started)
    }
    return { yes: median(yes), head: median(head), truncated, bareSpawn: median(bare), spawnerStart: median(throughSpawner) }
  }).pipe(Effect.scoped, Effect.provide(BashRunner.layer), Effect.provide(Secrets.layerNone))

// ---------------------------------------------------------------------------
// scale

const ScaleOptions = Schema.Struct({
  dir: Schema.String,
  home: Schema.String,
  turns: Schema.Int,
  /** How long the loopback model takes to answer (see `model`). */
  modelDelayMs: Schema.optional(Schema.Number),
  /** Only open the session (the restore's time), no turns: the start-up floor's empty open. */
  openOnly: Schema.optional(Schema.Boolean)
})

/** One POST of `body` to the loopback model, its reply read to the end. */
const post = (agent: Http.Agent, port: number, body: string | Buffer): Promise<void> =>
  new Promise((resolve, reject) => {
    const request = Http.request(
      { host: "127.0.0.1", port, method: "POST", path: "/v1/responses", agent, headers: { "content-type": "application/json" } },
      (response) => {
        response.resume()
        response.on("end", () => resolve())
      }
    )
    request.on("error", reject)
    request.end(body)
  })

const scale = (options: typeof ScaleOptions.Type) =>
  Effect.gen(function*() {
    const cwd = tempDir(options.dir, "work")
    // Text answers only: every turn is one request. The model keeps and parses nothing it is sent:
    // parsing a 37 MB body (and collecting it) took the model process's core from under Mino's
    // turn end on a 2-core machine, a cost of the loopback model's, not of Mino's.
    const server = yield* modelProcess("long-model", { requests: 1, calls: 0, command: "true", delayMs: options.modelDelayMs ?? 0 })
    let completedAt = 0
    let respondCpu = 0
    const model = marked(server.url, () => {
      const started = cpu()
      return () => {
        completedAt = now()
        respondCpu = cpu() - started
      }
    })
    const opening = now()
    const layer = Mino.layer({
      apiKey: "bench",
      protectKey: false,
      modelClient: model,
      model: "bench",
      instructions: "Answer.",
      session: { home: options.home, sessionId: "bench" },
      bash: { cwd, parentEnv: process.env },
      approver: Approver.layerStatic(() => true)
    })
    const keepAlive = new Http.Agent({ keepAlive: true })
    yield* Effect.addFinalizer(() => Effect.sync(() => keepAlive.destroy()))
    return yield* Effect.gen(function*() {
      const agent = yield* Agent
      const store = yield* SessionStore
      const restoreMs = now() - opening
      if (options.openOnly === true) return { restoreMs }
      const toPrompt: Array<number> = []
      const requestCpu: Array<number> = []
      const floorCpu: Array<number> = []
      const write = RequestBody.writer("compatible")
      let floorBuffer = Buffer.alloc(0)
      let bodyBytes = 0
      // One turn to warm up (the SDK loads on the first request), then the measured ones.
      for (let turn = -1; turn < options.turns; turn++) {
        yield* agent.turn(`Question ${turn}?`, () => Effect.void)
        yield* agent.questions
        const prompt = now() - completedAt
        // The floor: the same body, as the next request would send it, written with node:http from one ready Buffer.
        const written = write({
          model: "bench",
          instructions: "Answer.",
          history: store.history,
          input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "Next?" }] }],
          tools: []
        }, { include: true, withoutReasoningBefore: 0 })
        // One Buffer for every turn's floor (made larger as the body grows): a new 37 MB Buffer a
        // turn would have the floor pay for collecting the last one, and for first touching its pages.
        if (floorBuffer.length < written.bytes) floorBuffer = Buffer.allocUnsafeSlow(written.bytes + (written.bytes >> 2))
        const body = floorBuffer.subarray(0, written.bytes)
        let at = 0
        for (const chunk of written.chunks) at += chunk.copy(body, at)
        // A kept-alive socket the server closed while the turn ran fails at once: send again.
        let floorStarted = cpu()
        yield* Effect.promise(() =>
          post(keepAlive, server.port, body).catch(() => {
            floorStarted = cpu()
            return post(keepAlive, server.port, body)
          })
        )
        const floor = cpu() - floorStarted
        if (turn < 0) continue
        toPrompt.push(prompt)
        requestCpu.push(respondCpu)
        floorCpu.push(floor)
        bodyBytes = written.bytes
      }
      return { restoreMs, toPrompt: median(toPrompt), requestCpu: median(requestCpu), floorCpu: median(floorCpu), bodyBytes }
    }).pipe(Effect.provide(layer))
  }).pipe(Effect.scoped)

// ---------------------------------------------------------------------------
// long: a long session's memory

const LongOptions = Schema.Struct({
  dir: Schema.String,
  /** A home whose `bench` session holds the restored turns (written by bench.mjs). */
  home: Schema.String,
  /** Live turns run after the restore, each `requests` requests and `calls` calls in all (the last request: the answer). */
  turns: Schema.Int,
  requests: Schema.Int,
  calls: Schema.Int,
  /** About how many bytes each call's command prints. */
  outputBytes: Schema.Int
})

const LongModelOptions = Schema.Struct({
  requests: Schema.Int,
  calls: Schema.Int,
  command: Schema.String,
  /** How long it takes to answer once a request's body has arrived (see `model`). */
  delayMs: Schema.optional(Schema.Number)
})

/**
 * The model of the long session and of `scale`, in its own process: each turn `requests - 1`
 * responses with `calls` calls of `command` in all, then an answer (`requests: 1`: answers
 * only), each `delayMs` after its request arrived. It counts a request's bytes and keeps
 * none of them (the step model parses and keeps every request, which at tens or hundreds
 * of megabytes each is not what these rows measure). `GET /last` answers the size of the
 * last request's body.
 */
const longModel = (options: typeof LongModelOptions.Type) =>
  Effect.async<void>((resume) => {
    let served = 0
    let last = 0
    const server = Http.createServer((request, response) => {
      if (request.method === "GET") {
        response.end(JSON.stringify({ bytes: last }))
        return
      }
      let bytes = 0
      request.on("data", (chunk: Buffer) => (bytes += chunk.length))
      request.on("end", () => setTimeout(() => {
        last = bytes
        const n = served++
        const k = n % options.requests
        // The turn's calls spread over its requests but the last (bench.mjs `callsIn`).
        const calls = k === options.requests - 1 ? 0 : Math.floor((options.calls * (k + 1)) / (options.requests - 1)) - Math.floor((options.calls * k) / (options.requests - 1))
        const steps = k === options.requests - 1
          ? ResponsesServer.textResponse("Done.")
          : ResponsesServer.toolCallResponse(
            Array.from({ length: calls }, (_, i) => ({ call_id: `call_long_${n}_${i}`, name: "bash", arguments: JSON.stringify({ command: options.command }) })),
            { reasoning: { encrypted_content: `gAAAAB${"x".repeat(400)}` } }
          )
        response.writeHead(200, { "content-type": "text/event-stream" })
        let sequence = 0
        for (const step of steps) {
          if (typeof step === "object" && "type" in step) response.write(`event: ${step.type}\ndata: ${JSON.stringify({ ...step, sequence_number: sequence++ })}\n\n`)
        }
        response.end()
      }, options.delayMs ?? 0))
    })
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${port}/v1`, port }) + "\n")
    })
    process.stdin.on("end", () => server.close(() => resume(Effect.void)))
    process.stdin.resume()
  })

/** The resident set now, in bytes, after a full collection (the bench runs `long` with --expose-gc). */
const residentAfterCollection = (): number => {
  const collect = (globalThis as { gc?: () => void }).gc
  if (collect === undefined) throw new Error("long runs with --expose-gc")
  collect()
  return process.memoryUsage().rss
}

/** The size of the last request body the long model received. */
const lastRequestBytes = (port: number): Promise<number> =>
  new Promise((resolve, reject) => {
    Http.get({ host: "127.0.0.1", port, path: "/last" }, (response) => {
      let text = ""
      response.setEncoding("utf8")
      response.on("data", (chunk: string) => (text += chunk))
      response.on("end", () => resolve(Schema.decodeUnknownSync(Schema.parseJson(Schema.Struct({ bytes: Schema.Number })))(text).bytes))
    }).on("error", reject)
  })

/**
 * A long session: the one in `home` opened (restored), then `turns` live turns of
 * `requests` requests of `calls` calls each, with the real layers; the resident set
 * before opening it, at its peak, and after the turns (after a full collection),
 * beside the size of the last request's body (the history as sent).
 */
const long = (options: typeof LongOptions.Type) =>
  Effect.gen(function*() {
    const cwd = tempDir(options.dir, "work")
    // The commands' output: lines of a directory listing, about `outputBytes` of them.
    const line = "-rw-r--r--  1 mino mino   4096 Dec  4 12:00 src/model/request/History.ts\n"
    Fs.writeFileSync(Path.join(cwd, "listing.txt"), line.repeat(Math.ceil(options.outputBytes / line.length)).slice(0, options.outputBytes))
    const command = "cat listing.txt"
    const server = yield* modelProcess("long-model", { requests: options.requests, calls: options.calls, command })
    const before = residentAfterCollection()
    const layer = Mino.layer({
      apiKey: "bench",
      protectKey: false,
      modelClient: ModelClient.layer({ baseURL: server.url }),
      model: "bench",
      instructions: "Run the commands.",
      session: { home: options.home, sessionId: "bench" },
      bash: { cwd, parentEnv: process.env },
      approver: Approver.layerStatic(() => true)
    })
    return yield* Effect.gen(function*() {
      const agent = yield* Agent
      const restored = residentAfterCollection()
      const started = now()
      for (let turn = 0; turn < options.turns; turn++) {
        const outcome = yield* agent.turn(`Run the listing ${options.calls} times.`, () => Effect.void)
        if (outcome.status !== "completed") throw new Error(`a long-session turn ended ${outcome.status}: ${outcome.reason ?? ""}`)
      }
      const turnsMs = now() - started
      // The peak first: a collection can only lower what is resident.
      const peak = process.resourceUsage().maxRSS * 1024
      const after = residentAfterCollection()
      const history = yield* Effect.promise(() => lastRequestBytes(server.port))
      return { before, restored, peak, after, history, turnsMs, requests: options.turns * options.requests }
    }).pipe(Effect.provide(layer))
  }).pipe(Effect.scoped)

// ---------------------------------------------------------------------------

const [mode = "", json = "{}"] = process.argv.slice(2)
const options = <A, I>(schema: Schema.Schema<A, I>): A => Schema.decodeUnknownSync(Schema.parseJson(schema))(json)
const program: Effect.Effect<unknown, unknown> =
  mode === "step"
    ? Effect.suspend(() => step(options(StepOptions)))
    : mode === "restore-mino"
      ? Effect.suspend(() => restoreMino(options(RestoreOptions)))
      : mode === "restore-raw"
        ? Effect.suspend(() => restoreRaw(options(RestoreOptions)))
        : mode === "overflow"
          ? Effect.suspend(() => overflow(options(OverflowOptions)))
          : mode === "scale"
            ? Effect.suspend(() => scale(options(ScaleOptions)))
          : mode === "long"
            ? Effect.suspend(() => long(options(LongOptions)))
          : mode === "long-model"
            ? Effect.suspend(() => longModel(options(LongModelOptions)))
          : mode === "model"
            ? Effect.suspend(() => model(options(ModelOptions)))
          : Effect.fail(`unknown mode ${JSON.stringify(mode)}`)

Effect.runPromise(program).then(
  (result) => {
    process.stdout.write(JSON.stringify(result) + "\n")
    process.exit(0)
  },
  (error: unknown) => {
    process.stderr.write(`bench-program ${mode}: ${String(error)}\n`)
    process.exit(1)
  }
)
