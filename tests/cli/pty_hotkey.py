#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Drive `auxcap record -S` on a pseudo-terminal: wait for its status line, press 's', see
the status line count the snapshot, press 'q', and check it stops cleanly with its summary.

usage: pty_hotkey.py AUXCAP OUTPUT -- COMMAND...
Prints one 'ok - ...' or 'not ok - ...' line per check; exits 1 if any failed.
"""
import os
import pty
import re
import select
import sys
import time


def main():
    auxcap, out = sys.argv[1], sys.argv[2]
    cmd = sys.argv[sys.argv.index('--') + 1:]
    argv = [auxcap, 'record', '-S', '-e', 'raw_syscalls:sys_enter', '-m', '4', '-o', out,
            '--'] + cmd
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(auxcap, argv)
    buf = b''
    fails = 0

    def check(cond, what):
        nonlocal fails
        print(('ok - ' if cond else 'not ok - ') + what)
        fails += not cond

    def read_until(pattern, timeout):
        nonlocal buf
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            m = re.search(pattern, buf)
            if m:
                return m
            r, _, _ = select.select([fd], [], [], 0.1)
            if r:
                try:
                    data = os.read(fd, 4096)
                except OSError:  # the other side closed: auxcap exited
                    return re.search(pattern, buf)
                if not data:
                    return re.search(pattern, buf)
                buf += data
        return re.search(pattern, buf)

    status = rb"\[auxcap\] [0-9.]+ MB written, (\d+) snapshots, lost: \d+ records, \d+ AUX " \
             rb"truncations  \('s' snapshot, 'q' stop\)"
    m = read_until(status, 10)
    check(m is not None and m.group(1) == b'0', "status line shown on the terminal, 0 snapshots")
    os.write(fd, b's')
    m = read_until(status.replace(rb"(\d+)", rb"(1)"), 10)
    check(m is not None, "'s' took a snapshot: the status line says 1 snapshots")
    os.write(fd, b'q')
    m = read_until(rb"auxcap: wrote [0-9.]+ MB to .*: \d+ records, .* (\d+) snapshots", 30)
    check(m is not None and m.group(1) == b'1', "'q' stopped the capture with its summary "
          "(1 snapshot)")
    _, st = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(st)
    check(code == 0, "exit status 0 (%d)" % code)
    if fails:
        sys.stdout.write('# terminal output:\n# ' +
                         buf.decode(errors='replace').replace('\n', '\n# ') + '\n')
    return 1 if fails else 0


if __name__ == '__main__':
    sys.exit(main())
