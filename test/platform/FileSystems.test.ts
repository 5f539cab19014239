/**
 * AGENTS.md's file-system check with and without /proc. With the system injected: where
 * /proc/self/fd/N answers, its type decides; where it does not (macOS), the name's type decides
 * only when the name still reaches the open file. For real: a file on tmpfs is real; a /proc file
 * is pseudo by either route.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as FileSystems from "../../src/platform/FileSystems.js"
import { tempDir } from "../support/Harness.js"
import { MAC_LACKS, PROC } from "../support/Proc.js"

const PROC_MAGIC = 0x9fa0
const EXT4 = 0xef53
const APFS_INDEX = 0x1a

const fake = (types: Readonly<Record<string, number>>, identities: Readonly<Record<string, { dev: number; ino: number }>>): FileSystems.System => ({
  fileSystemType: (path) => types[path],
  identity: (target) => identities[String(target)]
})

describe("FileSystems.check with the system injected", () => {
  const same = { dev: 1, ino: 2 }

  it("with /proc: the open file's own file system, whatever its name now reaches", () => {
    expect(FileSystems.check(5, "/p/AGENTS.md", fake({ "/proc/self/fd/5": PROC_MAGIC, "/p/AGENTS.md": EXT4 }, {}))).toEqual({ _tag: "Pseudo", name: "proc" })
    expect(FileSystems.check(5, "/p/AGENTS.md", fake({ "/proc/self/fd/5": EXT4 }, {}))).toEqual({ _tag: "Real" })
  })

  it("without /proc (macOS): the name's file system, when the name still reaches the open file", () => {
    const identities = { "5": same, "/p/AGENTS.md": same }
    expect(FileSystems.check(5, "/p/AGENTS.md", fake({ "/p/AGENTS.md": PROC_MAGIC }, identities))).toEqual({ _tag: "Pseudo", name: "proc" })
    expect(FileSystems.check(5, "/p/AGENTS.md", fake({ "/p/AGENTS.md": EXT4 }, identities))).toEqual({ _tag: "Real" })
    // macOS's statfs types are small indices: none is taken for a Linux pseudo file system.
    for (let index = 0; index < 64; index++) {
      expect(FileSystems.check(5, "/p/AGENTS.md", fake({ "/p/AGENTS.md": index }, identities))).toEqual({ _tag: "Real" })
    }
    expect(FileSystems.check(5, "/p/AGENTS.md", fake({ "/p/AGENTS.md": APFS_INDEX }, identities))).toEqual({ _tag: "Real" })
  })

  it("without /proc: a name that reaches another file now, or nothing, is not judged by it", () => {
    for (const named of [{ dev: 1, ino: 3 }, { dev: 9, ino: 2 }, undefined]) {
      const identities = named === undefined ? { "5": same } : { "5": same, "/p/AGENTS.md": named }
      expect(FileSystems.check(5, "/p/AGENTS.md", fake({ "/p/AGENTS.md": EXT4 }, identities))).toEqual({ _tag: "Moved" })
    }
    expect(FileSystems.check(5, "/p/AGENTS.md", fake({}, { "5": same, "/p/AGENTS.md": same }))).toEqual({ _tag: "Moved" })
  })
})

describe("FileSystems.check for real", () => {
  it(`a file in a temporary directory is on a real file system; a process's stat under /proc is not${MAC_LACKS ? " (Mino's /proc empty: by name)" : ""}`, () => {
    const path = Path.join(tempDir("fs"), "AGENTS.md")
    Fs.writeFileSync(path, "text\n")
    const file = Fs.openSync(path, Fs.constants.O_RDONLY | Fs.constants.O_NOFOLLOW)
    const stat = `${PROC}/${process.pid}/stat`
    const proc = Fs.openSync(stat, Fs.constants.O_RDONLY | Fs.constants.O_NOFOLLOW)
    try {
      expect(FileSystems.check(file, path)).toEqual({ _tag: "Real" })
      expect(FileSystems.check(proc, stat)).toEqual({ _tag: "Pseudo", name: "proc" })
    } finally {
      Fs.closeSync(file)
      Fs.closeSync(proc)
    }
  })
})
