"""Runs one program in a fresh pseudo-terminal and relays its bytes (test helper).

Usage: python3 pty_driver.py '<json spec>'   spec = {"argv": [...], "env": {...}, "cwd": "..."}
  optional: "columns" and "rows", the terminal's size (default 200 x 50);
  "stamps": true, a control line `relayed <n> <ms>` after each read of output:
  `n` bytes relayed in all, at wall-clock time `ms` (milliseconds since the epoch);
  "rate": bytes per second, a slow display (an SSH link): the program's output is
  read from the terminal as fast as it comes, and delivered (relayed) at that rate;
  "answers": false, a terminal that never answers a cursor position request.

- Like a terminal, the driver answers a cursor position request (`ESC [ 6 n`)
  when it delivers it, with where the cursor is then (`ESC [ row ; column R`,
  typed into the program's input): the column follows printed characters,
  `\r`, `\b` and `ESC [ n G`; the row follows newlines, up to the last.

- The program's terminal output (stdout and stderr share the pty) comes out on
  this process's stdout, byte for byte; bytes read on stdin go to the terminal as
  if typed, so "\\x03" is Ctrl+C and "\\x04" at an empty line is Ctrl+D. Typed
  bytes are buffered and written as the terminal takes them, so a megabyte paste
  never blocks the relay of the program's output (which would deadlock both).
- Control lines go to stderr: `pid <n>` once the program is started, then
  `exit <code> <signal>` when it has ended (`-` for the one that does not apply).
- SIGUSR1 asks for the terminal's modes: `termios <echo> <icanon> <isig>` (each
  0 or 1), read from the pty at that moment.
- Commands, one JSON object a line, on fd 3 (when the caller passed a pipe or
  socket there), each answered by
  `ack <id>` on stderr once done:
  `{"id": n, "type": "<base64>"}` types those bytes; the ack says they are in the
  terminal's input queue (the write returned).
  `{"id": n, "flush": true}` relays everything the program has written so far
  (the terminal's output read until it is empty) before the ack.
  An ack is `ack <id> <n> <ms>`: `n` bytes of output had been relayed by then,
  and `ms` is the wall-clock time of the ack (milliseconds since the epoch).
  The program's pid is its own: it is exec'd directly, so it can be signalled.
"""
import base64
import errno
import fcntl
import json
import os
import pty
import select
import signal
import stat
import struct
import sys
import termios
import time


def command_channel():
    """fd 3 when the caller passed a pipe or socket there, else None."""
    try:
        mode = os.fstat(3).st_mode
    except OSError:
        return None
    return 3 if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) else None


class Cursor:
    """Where a terminal's cursor is, from the bytes it draws (just enough to answer `ESC [ 6 n`)."""

    def __init__(self, rows: int, columns: int) -> None:
        self.rows, self.columns = rows, columns
        self.row, self.column = 1, 1
        self.state = "text"
        self.params = b""

    def draw(self, data: bytes) -> bytes:
        """Follows `data`; returns the answers to the requests in it."""
        answers = b""
        for byte in data:
            if self.state == "escape":
                self.state = "csi" if byte == 0x5B else "text"
                self.params = b""
            elif self.state == "csi":
                if 0x30 <= byte <= 0x3F or 0x20 <= byte <= 0x2F:
                    self.params += bytes([byte])
                    continue
                self.state = "text"
                if byte == ord("n") and self.params == b"6":
                    answers += b"\x1b[%d;%dR" % (self.row, self.column)
                elif byte == ord("G"):
                    self.column = max(1, min(self.columns, int(self.params or b"1")))
            elif byte == 0x1B:
                self.state = "escape"
            elif byte == 0x0D:
                self.column = 1
            elif byte == 0x0A:
                self.row = min(self.rows, self.row + 1)
            elif byte == 0x08:
                self.column = max(1, self.column - 1)
            elif byte >= 0x20 and (byte < 0x80 or byte >= 0xC0):
                self.column = min(self.columns, self.column + 1)
        return answers


def main() -> None:
    spec = json.loads(sys.argv[1])
    # By default a wide screen, so nothing the program sizes to the terminal wraps.
    size = struct.pack("HHHH", spec.get("rows", 50), spec.get("columns", 200), 0, 0)
    # Looked for before the fork: after it, with no fd 3 inherited, the terminal's
    # own descriptor may be the lowest free one, 3, and would be taken for the channel.
    commands = command_channel()
    pid, master = pty.fork()
    if pid == 0:
        try:
            # Set in the child before exec, so the program's first look at its size sees it.
            fcntl.ioctl(0, termios.TIOCSWINSZ, size)
            # The command channel is the driver's, not the program's.
            if commands is not None:
                os.close(commands)
            os.chdir(spec["cwd"])
            os.execve(spec["argv"][0], spec["argv"], spec["env"])
        except BaseException as error:  # noqa: BLE001 - report anything, then die
            os.write(2, f"pty_driver: cannot start {spec['argv'][0]}: {error}\n".encode())
        os._exit(127)

    os.set_blocking(master, False)
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
    inputs = [master, stdin] + ([commands] if commands is not None else [])
    master_open = True
    # Bytes typed and not yet taken by the terminal, with the acks due once they are.
    typed = bytearray()
    acks = []  # (offset in the stream of typed bytes, id)
    typed_total = 0
    written_total = 0
    command_buffer = b""
    status = None

    relayed = 0
    cursor = Cursor(spec.get("rows", 50), spec.get("columns", 200))
    answers = spec.get("answers", True)
    rate = spec.get("rate")
    # Read from the terminal, not yet delivered to the display (with "rate").
    undelivered = bytearray()
    budget = 0.0
    last_delivery = time.monotonic()

    def deliver(data) -> None:
        """Puts bytes on the display (this process's stdout), answering the requests among them."""
        nonlocal relayed, typed_total
        view = memoryview(data)
        while view:
            view = view[os.write(stdout, view):]
        relayed += len(data)
        if spec.get("stamps"):
            sys.stderr.write(f"relayed {relayed} {time.time() * 1000:.3f}\n")
            sys.stderr.flush()
        reply = cursor.draw(bytes(data))
        if reply and answers and master_open:
            typed.extend(reply)
            typed_total += len(reply)
            write_typed()

    def deliver_due(everything=False) -> None:
        """With "rate": delivers what the rate allows by now (or everything)."""
        nonlocal budget, last_delivery
        now = time.monotonic()
        budget = min(budget + (now - last_delivery) * rate, float(max(rate, 1)))
        last_delivery = now
        count = len(undelivered) if everything else min(len(undelivered), int(budget))
        if count > 0:
            budget -= count
            chunk = bytes(undelivered[:count])
            del undelivered[:count]
            deliver(chunk)

    def ack(command_id) -> None:
        sys.stderr.write(f"ack {command_id} {relayed} {time.time() * 1000:.3f}\n")
        sys.stderr.flush()

    def relay_output() -> bool:
        """Reads what the program wrote until the terminal has no more; False once it is closed."""
        while True:
            try:
                data = os.read(master, 65536)
            except BlockingIOError:
                return True
            except OSError as error:
                if error.errno != errno.EIO:
                    raise
                return False
            if not data:
                return False
            if rate is None:
                deliver(data)
            else:
                undelivered.extend(data)

    def write_typed() -> None:
        nonlocal written_total
        while typed:
            try:
                count = os.write(master, typed[:4096])
            except BlockingIOError:
                break
            except OSError as error:
                if error.errno != errno.EIO:
                    raise
                typed.clear()
                break
            del typed[:count]
            written_total += count
        while acks and acks[0][0] <= written_total:
            ack(acks.pop(0)[1])

    while True:
        try:
            readable, writable, _ = select.select(inputs, [master] if typed and master_open else [], [], 0.005 if undelivered else 0.05)
        except InterruptedError:
            continue
        if undelivered:
            deliver_due()
        if master in writable:
            write_typed()
        if master in readable:
            if not relay_output():
                # EIO: every holder of the terminal's other side has closed it.
                inputs.remove(master)
                master_open = False
                typed.clear()
                while acks:
                    ack(acks.pop(0)[1])
        if stdin in readable:
            data = os.read(stdin, 65536)
            if data:
                typed.extend(data)
                typed_total += len(data)
                write_typed()
            else:
                inputs.remove(stdin)
                # With "hangup": end of our input closes the terminal itself, as closing a
                # terminal window does (the kernel then sends SIGHUP to the program).
                if spec.get("hangup") and master in inputs:
                    inputs.remove(master)
                    master_open = False
                    os.close(master)
        if commands is not None and commands in readable:
            data = os.read(commands, 65536)
            if not data:
                inputs.remove(commands)
                commands = None
            command_buffer += data
            while b"\n" in command_buffer:
                line, command_buffer = command_buffer.split(b"\n", 1)
                command = json.loads(line)
                if "type" in command:
                    decoded = base64.b64decode(command["type"])
                    typed.extend(decoded)
                    typed_total += len(decoded)
                    acks.append((typed_total, command["id"]))
                    write_typed()
                elif command.get("flush"):
                    if master_open and not relay_output():
                        inputs.remove(master)
                        master_open = False
                    ack(command["id"])
        if status is None:
            done, raw = os.waitpid(pid, os.WNOHANG)
            if done == pid:
                status = raw
        # Finished once the program is reaped and its output drained (or nobody else holds the pty).
        if status is not None and master not in inputs and not undelivered:
            break
        if status is not None and not readable and not undelivered:
            break

    # The program may have written its last bytes and exited between a select that found nothing
    # and the waitpid that reaped it: relay what the terminal still holds before reporting the exit.
    if master_open:
        relay_output()
    if undelivered:
        deliver_due(everything=True)
    code = str(os.waitstatus_to_exitcode(status)) if os.WIFEXITED(status) else "-"
    sig = signal.Signals(os.WTERMSIG(status)).name if os.WIFSIGNALED(status) else "-"
    sys.stderr.write(f"exit {code} {sig}\n")
    sys.stderr.flush()


if __name__ == "__main__":
    main()
