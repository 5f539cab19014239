// Preloaded into vitest's workers under MINO_TEST_MAC_LACKS=1 (vitest.config.ts), never into Mino.
// tinypool's worker reports `process.memoryUsage().heapUsed` after every test file; on Linux that call
// also reads the resident set size from /proc and throws without it (on macOS it does not), and the
// worker then never answers. The heap figures come from V8 itself; only the resident size is unknown.
import process from "node:process"
import * as V8 from "node:v8"

const measured = process.memoryUsage.bind(process)
const fromV8 = () => {
  const heap = V8.getHeapStatistics()
  return { rss: 0, heapTotal: heap.total_heap_size, heapUsed: heap.used_heap_size, external: heap.external_memory, arrayBuffers: 0 }
}
process.memoryUsage = Object.assign(() => {
  try {
    return measured()
  } catch {
    return fromV8()
  }
}, { rss: () => 0 })
