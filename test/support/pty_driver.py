"""Runs one program in a fresh pseudo-terminal and relays its bytes (test helper).

Usage: python3 pty_driver.py '<json spec>'   spec = {"argv": [...], "env": {...}, "cwd": "..."}
  optional: "columns" and "rows", the terminal's size (default 200 x 50)

- The program's terminal output (stdout and stderr share the pty) comes out on
  this process's stdout, byte for byte; bytes read on stdin go to the terminal as
  if typed, so "\\x03" is Ctrl+C and "\\x04" at an empty line is Ctrl+D.
- Control lines go to stderr: `pid <n>` once the program is started, then
  `exit <code> <signal>` when it has ended (`-` for the one that does not apply).
- SIGUSR1 asks for the terminal's modes: `termios <echo> <icanon> <isig>` (each
  0 or 1), read from the pty at that moment.
  The program's pid is its own: it is exec'd directly, so it can be signalled.
"""
import errno
import fcntl
import json
import os
import pty
import select
import signal
import struct
import sys
import termios


def main() -> None:
    spec = json.loads(sys.argv[1])
    # By default a wide screen, so nothing the program sizes to the terminal wraps.
    size = struct.pack("HHHH", spec.get("rows", 50), spec.get("columns", 200), 0, 0)
    pid, master = pty.fork()
    if pid == 0:
        try:
            # Set in the child before exec, so the program's first look at its size sees it.
            fcntl.ioctl(0, termios.TIOCSWINSZ, size)
            os.chdir(spec["cwd"])
            os.execve(spec["argv"][0], spec["argv"], spec["env"])
        except BaseException as error:  # noqa: BLE001 - report anything, then die
            os.write(2, f"pty_driver: cannot start {spec['argv'][0]}: {error}\n".encode())
        os._exit(127)

    sys.stderr.write(f"pid {pid}\n")
    sys.stderr.flush()

    def report_termios(_signum, _frame) -> None:
        lflag = termios.tcgetattr(master)[3]
        flags = [int(bool(lflag & bit)) for bit in (termios.ECHO, termios.ICANON, termios.ISIG)]
        sys.stderr.write("termios " + " ".join(map(str, flags)) + "\n")
        sys.stderr.flush()

    signal.signal(signal.SIGUSR1, report_termios)

    stdin = sys.stdin.fileno()
    stdout = sys.stdout.fileno()
    inputs = [master, stdin]
    status = None
    while True:
        try:
            readable, _, _ = select.select(inputs, [], [], 0.05)
        except InterruptedError:
            continue
        if master in readable:
            try:
                data = os.read(master, 65536)
            except OSError as error:
                if error.errno != errno.EIO:
                    raise
                data = b""
            if data:
                os.write(stdout, data)
            else:
                # EIO: every holder of the terminal's other side has closed it.
                inputs.remove(master)
        if stdin in readable:
            data = os.read(stdin, 65536)
            if data:
                os.write(master, data)
            else:
                inputs.remove(stdin)
                # With "hangup": end of our input closes the terminal itself, as closing a
                # terminal window does (the kernel then sends SIGHUP to the program).
                if spec.get("hangup") and master in inputs:
                    inputs.remove(master)
                    os.close(master)
        if status is None:
            done, raw = os.waitpid(pid, os.WNOHANG)
            if done == pid:
                status = raw
        # Finished once the program is reaped and its output drained (or nobody else holds the pty).
        if status is not None and master not in inputs:
            break
        if status is not None and not readable:
            break

    code = str(os.waitstatus_to_exitcode(status)) if os.WIFEXITED(status) else "-"
    sig = signal.Signals(os.WTERMSIG(status)).name if os.WIFSIGNALED(status) else "-"
    sys.stderr.write(f"exit {code} {sig}\n")
    sys.stderr.flush()


if __name__ == "__main__":
    main()
