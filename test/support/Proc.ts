import { spawnSync } from "node:child_process"
import * as fs from "node:fs"

/**
 * Where tests observe processes: `/proc`, or under MINO_TEST_MAC_LACKS=1 (where Mino's /proc is
 * empty, as on a Mac) the real one mounted aside by `mac-lacks.sh`. Only tests read it; `src` never
 * names either (test/platform/Portable.test.ts).
 */
export const PROC = process.env["MINO_TEST_PROC"] ?? "/proc"

/** Whether the suite runs with what a Mac lacks taken away. */
export const MAC_LACKS = process.env["MINO_TEST_PROC"] !== undefined

/**
 * Unmounts `path`. Under MINO_TEST_MAC_LACKS=1 util-linux `umount` cannot (it reads
 * /proc/self/mountinfo); the mount then lasts until the mode's namespace ends with the run.
 */
export const unmount = (path: string): void => {
  if (spawnSync("umount", [path], { stdio: "ignore" }).status !== 0 && !MAC_LACKS) throw new Error(`cannot unmount ${path}`)
}

/** The pid of the child of `parent` whose command line mentions `needle`, else 0. */
export const childRunning = (parent: number, needle: string): number => {
  for (const name of fs.readdirSync(PROC).filter((entry) => /^\d+$/.test(entry))) {
    try {
      const status = fs.readFileSync(`${PROC}/${name}/status`, "utf8")
      if (status.includes(`\nPPid:\t${parent}\n`) && fs.readFileSync(`${PROC}/${name}/cmdline`, "utf8").includes(needle)) return Number(name)
    } catch {
      // It exited while we looked.
    }
  }
  return 0
}
