import { spawnSync } from "node:child_process"

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
