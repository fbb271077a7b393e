#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The progress bar of `auxcap report` and `auxcap decode`: drawn on standard error when it
is a terminal (a pseudo-terminal here), redrawn at most 10 times a second, erased at the end;
never on a pipe unless --progress; never with --no-progress; not by decode when its output
goes to the same terminal.

usage: pty_progress.py AUXCAP CAPTURE TMPDIR
Prints one 'ok - ...' or 'not ok - ...' line per check; exits 1 if any failed.
"""
import os
import pty
import re
import subprocess
import sys
import time

BAR = re.compile(rb"\rauxcap: (reading|decoding) +\[[#.]+\] +\d+%")
ERASE = b"\r\x1b[K"


def on_pty(argv):
    """Run @argv with stdin, stdout and stderr on a new pseudo-terminal: (output, status,
    seconds)."""
    t0 = time.monotonic()
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(argv[0], argv)
    out = b""
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:  # the other side closed: it exited
            break
        if not data:
            break
        out += data
    _, st = os.waitpid(pid, 0)
    os.close(fd)
    return out, os.waitstatus_to_exitcode(st), time.monotonic() - t0


def main():
    auxcap, capture, tmp = sys.argv[1:4]
    fails = 0

    def check(cond, what, detail=b""):
        nonlocal fails
        print(("ok - " if cond else "not ok - ") + what)
        if not cond and detail:
            sys.stdout.write("# " + detail[-600:].decode(errors="replace")
                             .replace("\n", "\n# ") + "\n")
        fails += not cond

    ref = subprocess.run([auxcap, "report", capture], capture_output=True)
    out_path = os.path.join(tmp, "pty_report.txt")

    # 1. A terminal: the bar, then erased; the report itself unchanged.
    out, st, secs = on_pty([auxcap, "report", capture, "-o", out_path])
    bars = BAR.findall(out)
    check(st == 0 and b"reading" in bars and b"decoding" in bars,
          "report on a terminal draws the bar (%d draws: %s)" %
          (len(bars), b",".join(sorted(set(bars))).decode()), out)
    check(out.endswith(ERASE) and not BAR.search(out[out.rfind(ERASE):]),
          "the bar is erased at the end (the terminal is left clean)", out)
    # The first draw, a draw for the second phase, then at most one every 100 ms.
    check(len(bars) <= 2 + 10 * secs + 1,
          "redrawn at most 10 times a second (%d draws in %.2f s)" % (len(bars), secs))
    with open(out_path, "rb") as f:
        check(f.read() == ref.stdout, "the report written with the bar shown is the same")

    # 2. Standard error a pipe: no bar, nothing on it.
    r = subprocess.run([auxcap, "report", capture], capture_output=True)
    check(r.returncode == 0 and r.stderr == b"", "no bar when standard error is a pipe")
    r = subprocess.run([auxcap, "report", capture, "--progress", "-o", out_path],
                       capture_output=True)
    check(r.returncode == 0 and BAR.search(r.stderr) and r.stderr.endswith(ERASE),
          "--progress draws it on a pipe too")

    # 3. --no-progress on a terminal: nothing but the report.
    out, st, _ = on_pty([auxcap, "report", capture, "--no-progress", "-o", out_path])
    check(st == 0 and not BAR.search(out) and ERASE not in out,
          "--no-progress: no bar on a terminal", out)

    # 4. decode: the bar when its output goes elsewhere, not over its own output.
    out, st, _ = on_pty([auxcap, "decode", capture, "-o", os.path.join(tmp, "pty_dec.txt")])
    check(st == 0 and BAR.search(out) and out.endswith(ERASE),
          "decode -o on a terminal draws the bar and erases it", out)
    out, st, _ = on_pty([auxcap, "decode", capture, "--itrace=c"])
    check(st == 0 and not BAR.search(out) and b" call " in out,
          "decode printing to the terminal: no bar over its output", out[:300])
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
