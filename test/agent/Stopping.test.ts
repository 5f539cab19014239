/**
 * Stopping a turn (`TurnOptions.cancel`: Ctrl+C, a signal, closed output), at the
 * Agent: whatever the turn is doing, it ends `cancelled` with the cause, a
 * running command's output is kept, a save in progress lands whole, nothing is
 * sent or started after the stop, and no fiber is started per step to wait for
 * it (one watcher per turn).
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import type * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import * as Supervisor from "effect/Supervisor"
import { Agent, CANCEL_GRACE_MS, type TurnOptions } from "../../src/agent/Agent.js"
import type { AgentEvent } from "../../src/agent/AgentEvent.js"
import { Approver } from "../../src/approval/Approver.js"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import { SessionDisk } from "../../src/session/conversation/SessionDisk.js"
import { erase, type Tool } from "../../src/tools/Tool.js"
import * as ToolResult from "../../src/tools/ToolResult.js"
import * as EchoTool from "../support/EchoTool.js"
import { scriptedModel, sessionLines, tempDir, types, withAgent } from "../support/Harness.js"
import { groupMembers } from "../support/MinoProcess.js"

const CAUSE = "Cancelled by SIGTERM"
const bash = (id: string, command: string) => ({ call_id: id, name: "bash", arguments: JSON.stringify({ command }) })
const echo = (id: string) => ({ call_id: id, name: "echo", arguments: JSON.stringify({ text: id }) })

/** Runs one turn with a cancel that completes with CAUSE when `stop` is completed. */
const turnUntil = (stop: Deferred.Deferred<void>, input = "go") =>
  Effect.gen(function*() {
    const agent = yield* Agent
    const events: Array<AgentEvent> = []
    const options: TurnOptions = { cancel: Effect.as(Deferred.await(stop), CAUSE) }
    const outcome = yield* agent.turn(input, (event) => Effect.sync(() => void events.push(event)), options)
    return { outcome, events }
  })

const results = (home: string): Array<Record<string, unknown>> =>
  sessionLines(home).filter((line) => line["type"] === "tool_result").map((line) => ({
    call: line["call_id"],
    ...(line["result"] as Record<string, unknown>)
  }))

/** A tool whose execution waits on `release`; `respects` decides whether it registers a way to stop. */
const waiting = (name: string, respects: boolean, started: Deferred.Deferred<void>) =>
  erase<string>({
    definition: { type: "function", name, description: "waits", parameters: { type: "object" }, strict: false },
    prepare: () => Effect.succeed({ display: { tool: name, fields: [] }, operation: name }),
    execute: (_operation, cancel) =>
      Effect.gen(function*() {
        const told = yield* Deferred.make<string>()
        if (respects) cancel?.onCancel((cause) => Deferred.unsafeDone(told, Effect.succeed(cause)))
        yield* Deferred.succeed(started, undefined)
        // A tool that respects the stop ends with its own result; one that does not waits for ever.
        const cause = yield* Deferred.await(told)
        return ToolResult.make("unknown", `stopped by the tool itself: ${cause}`)
      })
  } satisfies Tool<string>)

/** The real disk, with the fsync of the `nth` session record (1-based) held until `release`, after `syncing` is completed. */
const slowSync = (nth: number, syncing: Deferred.Deferred<void>, release: Deferred.Deferred<void>) =>
  Layer.effect(
    SessionDisk,
    Effect.map(SessionDisk, (disk) => {
      let syncs = 0
      return SessionDisk.of({
        write: disk.write,
        sync: (file) =>
          file.path.endsWith(".jsonl") && ++syncs === nth
            ? Effect.zipRight(Effect.zipRight(Deferred.succeed(syncing, undefined), Deferred.await(release)), disk.sync(file))
            : disk.sync(file)
      })
    })
  ).pipe(Layer.provide(SessionDisk.layer))

/** Counts the fibers started under it. */
class Forks extends Supervisor.AbstractSupervisor<number> {
  count = 0
  get value() {
    return Effect.sync(() => this.count)
  }
  override onStart<A, E, R>(_c: Context.Context<R>, _e: Effect.Effect<A, E, R>, _p: Option.Option<Fiber.RuntimeFiber<unknown, unknown>>, _f: Fiber.RuntimeFiber<A, E>) {
    this.count += 1
  }
}

describe("stopping a turn", () => {
  it.scopedLive("at the approval prompt: the decision is abandoned, the calls are not executed, the turn ends cancelled with the cause", () =>
    Effect.gen(function*() {
      const home = tempDir("stop")
      const asking = yield* Deferred.make<void>()
      const stop = yield* Deferred.make<void>()
      const server = yield* scriptedModel([ResponsesServer.toolCallResponse([echo("c1"), echo("c2")]), ResponsesServer.textResponse("never")])
      const approver = Layer.succeed(Approver, Approver.of({ decide: () => Effect.zipRight(Deferred.succeed(asking, undefined), Effect.never) }))
      const ran: Array<string> = []
      const { outcome } = yield* withAgent(
        { home, url: server.url, tools: [EchoTool.make((text) => void ran.push(text))], approver },
        Effect.gen(function*() {
          yield* Effect.fork(Effect.zipRight(Deferred.await(asking), Deferred.succeed(stop, undefined)))
          return yield* turnUntil(stop)
        })
      )
      expect(outcome).toMatchObject({ status: "cancelled", reason: CAUSE })
      expect(ran).toEqual([])
      expect(types(sessionLines(home))).toEqual(["user_input", "model_response", "tool_result", "tool_result", "turn_end"])
      expect(results(home).map((r) => r["status"])).toEqual(["not_executed", "not_executed"])
      expect(sessionLines(home).at(-1)).toMatchObject({ status: "cancelled", reason: CAUSE })
      expect((yield* server.requests).length).toBe(1)
    }))

  it.scopedLive("while the model streams: the request is abandoned and nothing of it is saved", () =>
    Effect.gen(function*() {
      const home = tempDir("stop")
      const requested = yield* Deferred.make<void>()
      const stop = yield* Deferred.make<void>()
      const server = yield* scriptedModel([() => Effect.zipRight(Deferred.succeed(requested, undefined), Effect.never)])
      const { outcome } = yield* withAgent(
        { home, url: server.url, tools: [] },
        Effect.gen(function*() {
          yield* Effect.fork(Effect.zipRight(Deferred.await(requested), Deferred.succeed(stop, undefined)))
          return yield* turnUntil(stop)
        })
      )
      expect(outcome).toMatchObject({ status: "cancelled", reason: CAUSE })
      expect(types(sessionLines(home))).toEqual(["user_input", "turn_end"])
    }))

  it.scopedLive("while bash runs: the group is killed, its output so far is the call's result, the rest of the batch is not executed", () =>
    Effect.gen(function*() {
      const home = tempDir("stop")
      const cwd = tempDir("stop-work")
      const stop = yield* Deferred.make<void>()
      const server = yield* scriptedModel([
        ResponsesServer.toolCallResponse([bash("b1", "echo partial; echo $$ > group; sleep 30"), bash("b2", "echo never > ran")]),
        ResponsesServer.textResponse("never")
      ])
      const { outcome } = yield* withAgent(
        { home, url: server.url, tools: [], bash: { cwd, parentEnv: process.env } },
        Effect.gen(function*() {
          yield* Effect.fork(Effect.gen(function*() {
            while (!Fs.existsSync(Path.join(cwd, "group")) || Fs.readFileSync(Path.join(cwd, "group"), "utf8") === "") yield* Effect.sleep("10 millis")
            yield* Deferred.succeed(stop, undefined)
          }))
          return yield* turnUntil(stop)
        })
      )
      expect(outcome).toMatchObject({ status: "cancelled", reason: CAUSE })
      expect(results(home)).toEqual([
        {
          call: "b1",
          status: "unknown",
          output: `partial\n[${CAUSE} while it ran; process group killed. It may have had effects.]`,
          cancelled: true,
          signal: "SIGKILL"
        },
        { call: "b2", status: "not_executed", output: "The turn stopped before this call was executed." }
      ])
      expect(Fs.existsSync(Path.join(cwd, "ran"))).toBe(false)
      expect((yield* server.requests).length).toBe(1)
      const group = Number(Fs.readFileSync(Path.join(cwd, "group"), "utf8"))
      expect(() => process.kill(-group, 0)).toThrow()
    }), 30_000)

  it.scopedLive("a tool told to stop ends the call with its own result; one that registered nothing is interrupted at once", () =>
    Effect.gen(function*() {
      for (const respects of [true, false]) {
        const home = tempDir("stop")
        const started = yield* Deferred.make<void>()
        const stop = yield* Deferred.make<void>()
        const server = yield* scriptedModel([ResponsesServer.toolCallResponse([{ call_id: "w1", name: "wait", arguments: "{}" }])])
        const startedAt = Date.now()
        const { outcome } = yield* withAgent(
          { home, url: server.url, tools: [waiting("wait", respects, started)] },
          Effect.gen(function*() {
            yield* Effect.fork(Effect.zipRight(Deferred.await(started), Deferred.succeed(stop, undefined)))
            return yield* turnUntil(stop)
          })
        )
        expect(outcome).toMatchObject({ status: "cancelled", reason: CAUSE })
        expect(results(home)).toEqual([
          respects
            ? { call: "w1", status: "unknown", output: `stopped by the tool itself: ${CAUSE}` }
            : { call: "w1", status: "unknown", output: `${CAUSE} while it ran; the tool was stopped. It may have had effects.`, cancelled: true }
        ])
        // Neither waits for the grace period.
        expect(Date.now() - startedAt).toBeLessThan(CANCEL_GRACE_MS)
      }
    }), 30_000)

  it.scopedLive("a tool that registered but does not end is cut off after the grace period", () =>
    Effect.gen(function*() {
      const home = tempDir("stop")
      const started = yield* Deferred.make<void>()
      const stop = yield* Deferred.make<void>()
      // Registers, but never looks at what it is told.
      const deaf = erase<string>({
        definition: { type: "function", name: "deaf", description: "never stops", parameters: { type: "object" }, strict: false },
        prepare: () => Effect.succeed({ display: { tool: "deaf", fields: [] }, operation: "" }),
        execute: (_operation, cancel) =>
          Effect.gen(function*() {
            cancel?.onCancel(() => {})
            yield* Deferred.succeed(started, undefined)
            return yield* Effect.never
          })
      } satisfies Tool<string>)
      const server = yield* scriptedModel([ResponsesServer.toolCallResponse([{ call_id: "d1", name: "deaf", arguments: "{}" }])])
      const { outcome } = yield* withAgent(
        { home, url: server.url, tools: [deaf] },
        Effect.gen(function*() {
          yield* Effect.fork(Effect.zipRight(Deferred.await(started), Deferred.succeed(stop, undefined)))
          const begun = Date.now()
          const turn = yield* turnUntil(stop)
          return { ...turn, waited: Date.now() - begun }
        })
      )
      expect(outcome).toMatchObject({ status: "cancelled", reason: CAUSE })
      expect(results(home)).toEqual([
        { call: "d1", status: "unknown", output: `${CAUSE} while it ran; the tool was stopped. It may have had effects.`, cancelled: true }
      ])
    }), 30_000)

  it.scopedLive("a save in progress lands whole: a stop during the fsync of the response or of a call's start takes effect after it", () =>
    Effect.gen(function*() {
      // Records: 1 user_input, 2 model_response, 3 tool_start.
      for (const nth of [2, 3]) {
        const home = tempDir("stop")
        const syncing = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const stop = yield* Deferred.make<void>()
        const ran: Array<string> = []
        const server = yield* scriptedModel([ResponsesServer.toolCallResponse([echo("c1")]), ResponsesServer.textResponse("never")])
        const { outcome } = yield* withAgent(
          { home, url: server.url, tools: [EchoTool.make((text) => void ran.push(text))], disk: slowSync(nth, syncing, release) },
          Effect.gen(function*() {
            yield* Effect.fork(Effect.gen(function*() {
              yield* Deferred.await(syncing)
              yield* Deferred.succeed(stop, undefined)
              // Long enough for the stop to reach the turn while the fsync is held.
              yield* Effect.sleep("50 millis")
              yield* Deferred.succeed(release, undefined)
            }))
            return yield* turnUntil(stop)
          })
        )
        expect(outcome).toMatchObject({ status: "cancelled", reason: CAUSE })
        expect(ran).toEqual([])
        expect(types(sessionLines(home))).toEqual(
          nth === 2
            ? ["user_input", "model_response", "tool_result", "turn_end"]
            : ["user_input", "model_response", "tool_start", "tool_result", "turn_end"]
        )
        expect(results(home)[0]?.["status"]).toBe(nth === 2 ? "not_executed" : "unknown")
        expect((yield* server.requests).length).toBe(1)
      }
    }))

  it.scopedLive("a stop at any moment of a tool turn (sweep): the turn closes whole, and nothing is requested or started after it", () =>
    Effect.gen(function*() {
      const cwd = tempDir("stop-sweep")
      const script = [
        ResponsesServer.toolCallResponse([bash("s1", "echo $$ >> groups; echo one; sleep 0.03; echo two"), bash("s2", "echo $$ >> groups; echo three")]),
        ResponsesServer.toolCallResponse([bash("s3", "echo $$ >> groups; sleep 0.02; echo four")]),
        ResponsesServer.textResponse("done")
      ]
      /** One turn stopped `offsetMs` after it begins (never, when undefined). */
      const attempt = (offsetMs: number | undefined) =>
        Effect.gen(function*() {
          const home = tempDir("stop-sweep")
          const stop = yield* Deferred.make<void>()
          const server = yield* scriptedModel(script)
          let stoppedAt = Number.POSITIVE_INFINITY
          const begun = Date.now()
          const { outcome } = yield* withAgent(
            { home, url: server.url, tools: [], bash: { cwd, parentEnv: process.env } },
            Effect.gen(function*() {
              if (offsetMs !== undefined) {
                yield* Effect.fork(Effect.delay(Effect.suspend(() => {
                  stoppedAt = Date.now()
                  return Deferred.succeed(stop, undefined)
                }), offsetMs))
              }
              return yield* turnUntil(stop)
            })
          )
          return { home, outcome, stoppedAt, ms: Date.now() - begun, requests: (yield* server.requests).length }
        })

      // A turn's length, measured warm: the first one in a process also loads the SDK, and would
      // spread the offsets past the end of the turns that follow.
      expect((yield* attempt(undefined)).outcome.status).toBe("completed")
      const whole = yield* attempt(undefined)
      expect(whole.outcome.status).toBe("completed")
      const offsets = Array.from({ length: 40 }, (_, i) => Math.round((i * whole.ms * 1.2) / 40))
      const seen = { cancelled: 0, completed: 0 }
      // The shortest turn a stop did not reach: how long a turn takes now (load changes it).
      let shortest = whole.ms
      const check = (offset: number) => Effect.gen(function*() {
        const run = yield* attempt(offset)
        if (run.outcome.status === "completed") shortest = Math.min(shortest, run.ms)
        const lines = sessionLines(run.home)
        const status = run.outcome.status
        expect(["cancelled", "completed"]).toContain(status)
        if (status === "cancelled" || status === "completed") seen[status] += 1
        if (status === "cancelled") expect(run.outcome.reason).toBe(CAUSE)
        // The turn is closed whole: input first, turn_end last with the outcome, one result per call asked for.
        expect(lines[0]?.["type"]).toBe("user_input")
        expect(lines.at(-1)).toMatchObject({ type: "turn_end", status })
        const asked = lines.filter((l) => l["type"] === "model_response").flatMap((l) =>
          (l["output"] as Array<Record<string, unknown>>).filter((item) => item["type"] === "function_call").map((item) => item["call_id"]))
        expect(lines.filter((l) => l["type"] === "tool_result").map((l) => l["call_id"])).toEqual(asked)
        // After the stop, no response is saved and no call started; nothing is requested beyond what was saved, but one in flight.
        const after = lines.filter((l) => Date.parse(String(l["time"])) > run.stoppedAt + 1)
        expect({ offset, late: after.filter((l) => l["type"] === "model_response" || l["type"] === "tool_start").map((l) => l["type"]) })
          .toEqual({ offset, late: [] })
        expect(run.requests).toBeLessThanOrEqual(asked.length === 0 ? 1 : lines.filter((l) => l["type"] === "model_response").length + 1)
      })
      for (const offset of offsets) yield* check(offset)
      // Enough stops must land inside a turn, whatever the load did to the turns' length: more
      // runs, at offsets within the shortest turn seen, until half of all runs were cancelled.
      let extra = 0
      while (seen.cancelled <= (offsets.length + extra) / 2 && extra < 80) {
        extra += 1
        yield* check(Math.round((extra * 7919) % Math.max(1, Math.round(shortest * 0.8))))
      }
      // Every command's group is gone: none outlives its turn.
      const groups = Fs.readFileSync(Path.join(cwd, "groups"), "utf8").trim().split("\n").map(Number)
      yield* Effect.sleep("200 millis")
      // Live members only: a killed command's own children are reparented to init, which may be slow to reap them.
      const alive = groups.filter((group) => groupMembers(group).length > 0)
      console.log(
        `stop sweep: ${offsets.length} offsets over ${Math.round(whole.ms * 1.2)} ms and ${extra} more within the shortest turn (${shortest} ms); ` +
          `${seen.cancelled} cancelled, ${seen.completed} completed; ${groups.length} commands started`
      )
      expect(alive).toEqual([])
      expect(seen.cancelled).toBeGreaterThan((offsets.length + extra) / 2)
    }), 240_000)

  it.scopedLive("no fiber is started per step to wait for a stop: a cancel adds one watcher per turn, whatever the number of steps", () =>
    Effect.gen(function*() {
      const forks = (steps: number, withCancel: boolean) =>
        Effect.gen(function*() {
          const home = tempDir("stop-forks")
          const server = yield* scriptedModel([
            ResponsesServer.toolCallResponse(Array.from({ length: steps }, (_, i) => echo(`c${i}`))),
            ResponsesServer.textResponse("done")
          ])
          return yield* withAgent({ home, url: server.url, tools: [EchoTool.make()] }, Effect.gen(function*() {
            const agent = yield* Agent
            const never = yield* Deferred.make<string>()
            const counter = new Forks()
            const options: TurnOptions = withCancel ? { cancel: Deferred.await(never) } : {}
            const outcome = yield* agent.turn("go", () => Effect.void, options).pipe(Effect.supervised(counter))
            expect(outcome.status).toBe("completed")
            return counter.count
          }))
        })
      const counts = { one: yield* forks(1, false), oneCancel: yield* forks(1, true), many: yield* forks(8, false), manyCancel: yield* forks(8, true) }
      console.log(`fibers started per turn: 1 call ${counts.one} (with a cancel ${counts.oneCancel}), 8 calls ${counts.many} (with a cancel ${counts.manyCancel})`)
      expect(counts.oneCancel - counts.one).toBe(1)
      expect(counts.manyCancel - counts.many).toBe(1)
    }))
})
