// `node scripts/bench-input.mjs [paste|interrupt|guard|all]`: how fast Mino's
// terminal input is, measured on the built `mino` (npm run build) in a real
// pseudo-terminal (the tests' python3 driver), each figure as a median of runs:
//
//   paste      a bracketed paste of 64 KiB and of 1 MiB, from the first byte
//              typed until Mino has all of it (its end drawn on the screen), and
//              then from Enter until the model has the whole question
//   interrupt  Ctrl+C typed behind a 1 MiB paste that never ends: from the
//              moment the key is in the terminal's input queue until Mino exited
//   guard      an approval question: from its screen on the terminal until its
//              prompt (the guard, then the drain); and the terminal's round trip
//              (a key typed until its echo is back), for scale
//
// The promises (1 MiB in well under a second; Ctrl+C within 100 ms) are shown
// here, not asserted by a test: tests must pass on a loaded machine.
import { Buffer } from "node:buffer"
import { spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { fileURLToPath } from "node:url"
import * as Effect from "effect/Effect"
import * as Scope from "effect/Scope"
import * as Exit from "effect/Exit"

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const DRIVER = join(ROOT, "test", "support", "pty_driver.py")
const BIN = join(ROOT, "bin", "mino.js")
const { ResponsesServer } = await import(join(ROOT, "dist", "lib", "testing.js"))

const PASTE_START = "\u001b[200~"
const PASTE_END = "\u001b[201~"
const RUNS = Number(process.env["RUNS"] ?? 5)

const now = () => Number(process.hrtime.bigint()) / 1e6
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

/** A loopback model answering every request with `reply()`; `requests` logs arrival times and bodies. */
const startServer = async (reply) => {
  const scope = Effect.runSync(Scope.make())
  const requests = []
  const server = await Effect.runPromise(
    Scope.extend(
      ResponsesServer.make((request) =>
        Effect.sync(() => {
          requests.push({ at: now(), body: request.body })
          return reply(requests.length)
        })
      ),
      scope
    )
  )
  return { url: server.url, requests, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

/**
 * The floor for a paste: a bare Node program in the same pseudo-terminal, in raw
 * mode, that only reads its input and prints the marker once it has seen it.
 */
const FLOOR_PROGRAM = [
  "process.stdin.setRawMode(true)",
  "let seen = ''",
  "process.stdout.write('You> ')",
  "process.stdin.on('data', (chunk) => { seen = (seen + chunk.toString('latin1')).slice(-32); if (seen.includes('END-OF-PASTE')) { process.stdout.write('END-OF-PASTE'); process.exit(0) } })"
].join(";")

/** `mino` (or `argv`) in a pseudo-terminal: its screen, typing, driver commands, and its exit. */
const startMino = (url, argv = [process.execPath, BIN]) => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "mino-bench-input-")))
  mkdirSync(join(root, "home"))
  mkdirSync(join(root, "work"))
  const env = {
    HOME: join(root, "home"),
    PATH: "/usr/local/bin:/usr/bin:/bin",
    LANG: "C.UTF-8",
    TERM: "xterm",
    NO_COLOR: "1",
    OPENAI_API_KEY: "sk-bench",
    OPENAI_BASE_URL: url
  }
  const spec = JSON.stringify({ argv, env, cwd: join(root, "work") })
  const child = spawn("python3", [DRIVER, spec], { stdio: ["pipe", "pipe", "pipe", "pipe"] })
  let screen = ""
  let control = ""
  let pid = 0
  let exitedAt
  const acks = new Map()
  child.stdout.setEncoding("utf8")
  child.stdout.on("data", (text) => (screen += text))
  child.stderr.setEncoding("utf8")
  child.stderr.on("data", (text) => {
    control += text
    const lines = control.split("\n")
    control = lines.pop() ?? ""
    for (const line of lines) {
      const ack = /^ack (\d+) /.exec(line)
      if (ack !== null) acks.set(Number(ack[1]), now())
      else if (/^pid \d+$/.test(line)) pid = Number(line.slice(4))
      else if (/^exit /.test(line)) exitedAt = now()
    }
  })
  const closed = new Promise((resolve) => child.on("close", resolve))
  let nextId = 0
  const mino = {
    get screen() {
      return screen
    },
    get exitedAt() {
      return exitedAt
    },
    get pid() {
      return pid
    },
    write: (text) => child.stdin.write(text),
    /** Types through the command channel; resolves with the time the bytes were in the input queue. */
    typeAcked: async (text) => {
      const id = nextId++
      child.stdio[3].write(JSON.stringify({ id, type: Buffer.from(text, "utf8").toString("base64") }) + "\n")
      while (!acks.has(id)) await sleep(1)
      return acks.get(id)
    },
    /** Resolves with the time `needle` first appeared after `from` (polled every millisecond). */
    waitFor: async (needle, from = 0, timeoutMs = 60_000) => {
      const deadline = now() + timeoutMs
      while (screen.indexOf(needle, from) === -1) {
        if (now() > deadline || exitedAt !== undefined) throw new Error(`no ${JSON.stringify(needle)} on the screen:\n${screen.slice(-800)}`)
        await sleep(1)
      }
      return now()
    },
    close: async () => {
      if (exitedAt === undefined && pid > 0) {
        try {
          process.kill(pid, "SIGKILL")
        } catch {
          // gone
        }
      }
      await closed
      rmSync(root, { recursive: true, force: true })
    }
  }
  return mino
}

const pasteText = (size) => {
  const words = ["alpha", "beta", "γάμμα", "δέλτα", "界", "😀", "x=1;", "$(echo)", "'q'", "\"dq\""]
  const parts = []
  let bytes = 0
  for (let n = 0; bytes < size - 32; n++) {
    const part = words[n % words.length] + (n % 11 === 10 ? "\n" : " ")
    parts.push(part)
    bytes += Buffer.byteLength(part)
  }
  return parts.join("") + "END-OF-PASTE"
}

/** From the first byte of a paste until the program has all of it: Mino, or the bare reader. */
const pasteRead = async (size, argv) => {
  const server = await startServer(() => ResponsesServer.textResponse("Got it."))
  const mino = startMino(server.url, argv)
  try {
    await mino.waitFor("You> ")
    await sleep(100)
    const from = mino.screen.length
    const started = now()
    mino.write(`${PASTE_START}${pasteText(size)}${PASTE_END}`)
    return (await mino.waitFor("END-OF-PASTE", from)) - started
  } finally {
    await mino.close()
    await server.close()
  }
}

const paste = async (size) => {
  const floors = []
  for (let run = 0; run < RUNS; run++) floors.push(await pasteRead(size, [process.execPath, "-e", FLOOR_PROGRAM]))
  const reads = []
  const asks = []
  for (let run = 0; run < RUNS; run++) {
    const server = await startServer(() => ResponsesServer.textResponse("Got it."))
    const mino = startMino(server.url)
    try {
      await mino.waitFor("You> ")
      const text = pasteText(size)
      const from = mino.screen.length
      const started = now()
      mino.write(`${PASTE_START}${text}${PASTE_END}`)
      const read = await mino.waitFor("END-OF-PASTE", from)
      reads.push(read - started)
      await sleep(400)
      const entered = now()
      mino.write("\r")
      while (server.requests.length === 0) await sleep(1)
      asks.push(server.requests[0].at - entered)
      const content = server.requests[0].body.input.filter((item) => item.role === "user").at(-1).content[0].text
      if (content !== text) throw new Error("the question is not the paste")
      mino.write("\u0004")
    } finally {
      await mino.close()
      await server.close()
    }
  }
  return [
    `paste ${size / 1024} KiB: all of it read and drawn in ${median(reads).toFixed(0)} ms (runs: ${reads.map((v) => v.toFixed(0)).join(", ")}); ` +
    `a bare raw-mode reader in the same terminal: ${median(floors).toFixed(0)} ms (${(median(reads) / median(floors)).toFixed(2)}×)`,
    `  then Enter until the model has the question: ${median(asks).toFixed(0)} ms`
  ]
}

/** Ctrl+C typed behind `before` (typed first): from the key in the input queue until Mino exited. */
const interruptAfter = async (before) => {
  const latencies = []
  for (let run = 0; run < RUNS; run++) {
    const server = await startServer(() => ResponsesServer.textResponse("never"))
    const mino = startMino(server.url)
    try {
      await mino.waitFor("You> ")
      await sleep(100)
      if (before.length > 0) mino.write(before)
      // The key goes in behind whatever of the paste the terminal still holds.
      const queued = await mino.typeAcked("\u0003")
      while (mino.exitedAt === undefined) await sleep(1)
      latencies.push(mino.exitedAt - queued)
    } finally {
      await mino.close()
      await server.close()
    }
  }
  return latencies
}

const interrupt = async () => {
  const idle = await interruptAfter("")
  const pasting = await interruptAfter(`${PASTE_START}${pasteText(1024 * 1024)}`)
  const show = (values) => `${median(values).toFixed(0)} ms (runs: ${values.map((v) => v.toFixed(0)).join(", ")})`
  return [
    `Ctrl+C at an idle prompt, key in the input queue until Mino exited (the floor): ${show(idle)}`,
    `Ctrl+C behind a 1 MiB paste that never ends, the same: ${show(pasting)}; ${(median(pasting) - median(idle)).toFixed(0)} ms over the floor`
  ]
}

const guard = async () => {
  const guards = []
  const echoes = []
  const server = await startServer((n) =>
    n % 2 === 1
      ? ResponsesServer.toolCallResponse([{ call_id: `c${n}`, name: "bash", arguments: JSON.stringify({ command: "true" }) }])
      : ResponsesServer.textResponse("ok")
  )
  const mino = startMino(server.url)
  try {
    await mino.waitFor("You> ")
    for (let run = 0; run < RUNS * 2; run++) {
      await sleep(50)
      let from = mino.screen.length
      const typed = now()
      mino.write("x")
      echoes.push((await mino.waitFor("x", from)) - typed)
      mino.write("\r")
      const screen = await mino.waitFor("[Tool: bash]", from)
      from = mino.screen.indexOf("[Tool: bash]", from)
      const prompt = await mino.waitFor("Approve this operation? [y/N] ", from)
      guards.push(prompt - screen)
      mino.write("n\r")
      await mino.waitFor("You> ", mino.screen.indexOf("Approve this operation?", from))
    }
    mino.write("\u0004")
  } finally {
    await mino.close()
    await server.close()
  }
  return [
    `approval screen on the terminal until its prompt (guard ${500} ms, then the drain): ${median(guards).toFixed(0)} ms (max ${Math.max(...guards).toFixed(0)})`,
    `a key typed until its echo is back (the terminal's round trip): ${median(echoes).toFixed(1)} ms (max ${Math.max(...echoes).toFixed(1)})`
  ]
}

const which = process.argv[2] ?? "all"
const lines = []
if (which === "paste" || which === "all") lines.push(...(await paste(64 * 1024)), ...(await paste(1024 * 1024)))
if (which === "interrupt" || which === "all") lines.push(...(await interrupt()))
if (which === "guard" || which === "all") lines.push(...(await guard()))
for (const line of lines) console.log(line)
