/**
 * The key reader's second descriptor on its terminal, found by device number in /dev as
 * ttyname(3) does, with no /proc: with the system injected, macOS's and Linux's device names;
 * for real, the name python's os.ttyname gives for a fresh pseudo-terminal.
 */
import { spawnSync } from "node:child_process"
import { describe, expect, it } from "@effect/vitest"
import * as Terminal from "../../src/platform/Terminal.js"
import { PYTHON } from "../support/Flock.js"

/** A /dev of `devices` (path to device number), an input on device `input`, and what was opened. */
const fake = (devices: Readonly<Record<string, number>>, input: number | undefined, opens: ReadonlyArray<string> = Object.keys(devices)) => {
  const opened: Array<string> = []
  const os: Terminal.System = {
    list: (directory) => {
      const prefix = `${directory}/`
      return Object.keys(devices).filter((path) => path.startsWith(prefix) && !path.slice(prefix.length).includes("/")).map((path) => path.slice(prefix.length))
    },
    charDevice: (path) => devices[path],
    deviceOf: () => input,
    open: (path) => {
      opened.push(path)
      return opens.includes(path) || path === "/dev/tty" ? 40 + opened.length : undefined
    }
  }
  return { os, opened }
}

describe("Terminal.openAgain with the system injected", () => {
  const MACOS = { "/dev/tty": 0x2000000, "/dev/ttyp0": 0x4000000, "/dev/ttyp1": 0x4000001, "/dev/ttys000": 0x10000000, "/dev/ttys001": 0x10000001, "/dev/ttys002": 0x10000002, "/dev/console": 0x0, "/dev/null": 0x3000002 }
  const LINUX = { "/dev/tty": 0x500, "/dev/pts/0": 0x8800, "/dev/pts/3": 0x8803, "/dev/pts/ptmx": 0x502, "/dev/tty1": 0x401, "/dev/ttyS0": 0x440, "/dev/null": 0x103 }

  it("macOS: /dev/ttysNNN with the input's device number, looked at before the legacy names", () => {
    const { os, opened } = fake(MACOS, 0x10000002)
    expect(Terminal.deviceFile(0, os)).toBe("/dev/ttys002")
    const looked: Array<string> = []
    Terminal.deviceFile(0, { ...os, charDevice: (path) => (looked.push(path), os.charDevice(path)) })
    expect(looked).toEqual(["/dev/ttys000", "/dev/ttys001", "/dev/ttys002"])
    expect(Terminal.openAgain(0, os)).toBeDefined()
    expect(opened).toEqual(["/dev/ttys002"])
  })

  it("Linux: /dev/pts/N first, then the consoles and serial lines in /dev", () => {
    expect(Terminal.deviceFile(0, fake(LINUX, 0x8803).os)).toBe("/dev/pts/3")
    expect(Terminal.deviceFile(0, fake(LINUX, 0x440).os)).toBe("/dev/ttyS0")
    expect(Terminal.deviceFile(0, fake(LINUX, 0x401).os)).toBe("/dev/tty1")
  })

  it("no match, or the match cannot be opened: /dev/tty, the controlling terminal, as the last resort", () => {
    for (const [devices, input, opens] of [[LINUX, 0x8899, undefined], [MACOS, 0x10000009, undefined], [LINUX, 0x8803, []], [{}, 0x8803, undefined]] as const) {
      const { os, opened } = fake(devices, input, opens)
      expect(Terminal.openAgain(0, os)).toBeDefined()
      expect(opened.at(-1)).toBe("/dev/tty")
    }
    // Never /dev/tty's own node, /dev/pts/ptmx, or a device other than the input's.
    const { os, opened } = fake(LINUX, 0x502)
    expect(Terminal.deviceFile(0, os)).toBeUndefined()
    Terminal.openAgain(0, os)
    expect(opened).toEqual(["/dev/tty"])
  })
})

describe("Terminal.openAgain for real (the built library)", () => {
  it("a pseudo-terminal that is not the controlling one: found by name as os.ttyname names it, and its input read through the new descriptor", () => {
    // python opens a pseudo-terminal, types a line into it, and starts node with it as standard input
    // (not as its controlling terminal: /dev/tty would name another, or none).
    const script = [
      "import os, pty, subprocess, sys",
      "master, slave = pty.openpty()",
      "print(os.ttyname(slave), flush=True)",
      "os.write(master, b'typed ahead\\n')",
      "subprocess.run(sys.argv[1:], stdin=slave, check=True, start_new_session=True)"
    ].join("\n")
    const probe = [
      `const Terminal = await import(${JSON.stringify(new URL("../../dist/lib/platform/Terminal.js", import.meta.url).pathname)})`,
      "const Fs = await import('node:fs')",
      "console.log(Terminal.deviceFile(0))",
      "const fd = Terminal.openAgain(0)",
      "const buffer = Buffer.alloc(100)",
      "console.log(JSON.stringify(buffer.toString('utf8', 0, Fs.readSync(fd, buffer, 0, 100, null))))",
      "try { Fs.readSync(fd, buffer, 0, 100, null); console.log('blocking?') } catch (error) { console.log(error.code) }"
    ].join("\n")
    const result = spawnSync(PYTHON, ["-c", script, process.execPath, "--input-type=module", "-e", probe], { encoding: "utf8" })
    const [named, found, read, after] = result.stdout.trim().split("\n")
    expect(result.stderr).toBe("")
    expect(named).toMatch(/^\/dev\//)
    expect(found).toBe(named)
    expect(read).toBe(JSON.stringify("typed ahead\n"))
    // Non-blocking: an empty queue answers at once.
    expect(after).toBe("EAGAIN")
  })
})
