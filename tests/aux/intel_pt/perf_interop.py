#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""
perf interop of Intel PT captures written by auxcap.

`auxcap record --emulate` traces the example program (a real process under the live tracer,
which encodes what it executed as Intel PT); Debian's perf 6.1 decodes the file with
`perf script --itrace=b` and auxcap with `auxcap decode --itrace=b`.  Both must give the same
branches, line by line, after normalising the formats to (kind, from, to, time):

  - perf must accept the file (AUXTRACE_INFO, TIME_CONV, attrs, build-ids) and report no
    instruction trace error (--itrace=be), with the traced command's name and thread;
  - kinds (call, return, jmp, jcc, tr strt, tr end, ...) and addresses must be equal;
  - times: perf stamps a branch with the last timing packet before it; libipt dates it at
    most with the next one (it reads a timing packet that follows a TNT packet before it
    hands out the branches of that TNT), and auxcap's decode stage spreads the events dated
    by one timing packet up to the following one by instruction count: auxcap's time of
    branch i lies in [perf's time of branch i, the second timing after it], in ns (perf time
    printed by auxcap decode).

Cases: full trace; snapshot at exit of a buffer the trace does not fill; snapshot at exit of a
buffer it wrapped.

Usage: perf_interop.py AUXCAP EXAMPLE_PROG
Exits 77 (skip) when perf is not installed.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(args, **kw):
    r = subprocess.run(args, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        fail("%s exited %d: %s" % (" ".join(args), r.returncode, r.stderr.strip()[-2000:]))
    return r.stdout


def kind_of(words):
    """Normalised kind: 'tr strt', 'tr end', or the first word."""
    if len(words) >= 2 and words[0] == "tr":
        return "tr " + words[1]
    return words[0] if words else "?"


HEX = re.compile(r"^(0x)?[0-9a-f]+$")


def parse_perf(text):
    """perf script -F time,flags,ip,addr --ns: '  123.456789012:   call   7f.. =>  7f..'"""
    out = []
    for line in text.splitlines():
        if "=>" not in line:
            continue
        left, right = line.split("=>", 1)
        t, _, rest = left.partition(":")
        words = rest.split()
        frm = int(words[-1], 16)
        to = int(right.split()[0], 16)
        sec, ns = t.strip().split(".")
        out.append((kind_of(words[:-1]), frm, to, int(sec) * 10**9 + int(ns)))
    return out


PREFIX = re.compile(r"^.{16} +-?\d+ \[(?:\d+|---)\] (\d+\.\d{9}): ")


def parse_auxcap(text, tconv):
    """auxcap decode --itrace=b: 'TIME KIND... FROM [sym] => TO [sym]'; TIME is the TSC (an
    integer, converted here) or perf time in seconds (with a dot).  Lines of a capture start
    with 'COMM TID [CPU] SEC.NSEC: ' (README "Decode"): TIME is then that perf time."""
    out = []
    for line in text.splitlines():
        if line.startswith("#") or "=>" not in line:
            continue
        m = PREFIX.match(line)
        if m:
            line = m.group(1) + " " + line[m.end():]
        left, right = line.split("=>", 1)
        words = left.split()
        t = words[0]
        i = 1
        while i < len(words) and not HEX.match(words[i]):
            i += 1
        if i == len(words):
            fail("cannot find the source address in auxcap's line: " + line)
        kind = kind_of(words[1:i])
        frm = int(words[i], 16)
        to = int(right.split()[0], 16)
        if "." in t:
            sec, ns = t.split(".")
            tns = int(sec) * 10**9 + int(ns.ljust(9, "0")[:9])
        else:
            tns = tconv(int(t))
        out.append((kind, frm, to, tns))
    return out


def time_conv(auxcap, path):
    info = run([auxcap, "info", path])
    m = re.search(r"TIME_CONV: shift (\d+) mult (\d+) zero (\d+) cap_user_time_zero (\d)", info)
    if not m:
        fail("no TIME_CONV in %s:\n%s" % (path, info))
    shift, mult, zero, cap = map(int, m.groups())
    if not cap:
        fail("TIME_CONV without cap_user_time_zero")

    def conv(cyc):
        q, r = cyc >> shift, cyc & ((1 << shift) - 1)
        return (zero + q * mult + ((r * mult) >> shift)) % (1 << 64)

    return conv


def check(auxcap, prog, tmp, name, record_opts):
    path = os.path.join(tmp, name + ".data")
    run([auxcap, "record", "--emulate", "-f", "-o", path] + record_opts + ["--", prog, "300"])

    perf_out = run(["perf", "script", "-f", "-i", path, "--itrace=b", "-F",
                    "time,flags,ip,addr", "--ns"])
    errors = run(["perf", "script", "-f", "-i", path, "--itrace=be", "-F",
                  "time,flags,ip,addr"])
    nerr = sum(1 for l in errors.splitlines() if "instruction trace error" in l)
    if nerr:
        fail("%s: perf reports %d instruction trace errors:\n%s" %
             (name, nerr, "\n".join(l for l in errors.splitlines()
                                     if "instruction trace error" in l)[:2000]))
    comm = run(["perf", "script", "-f", "-i", path, "--itrace=b", "-F", "comm,tid"])
    comms = {l.split()[0] for l in comm.splitlines() if l.strip()}
    if comms != {"auxcap-example-"}:
        fail("%s: perf attributes the branches to %s, not to the traced command" %
             (name, sorted(comms)))

    ours_out = run([auxcap, "decode", path, "--itrace=b"])
    perf = parse_perf(perf_out)
    ours = parse_auxcap(ours_out, time_conv(auxcap, path))
    if len(perf) < 1000:
        fail("%s: perf decoded only %d branches" % (name, len(perf)))
    times = sorted({p[3] for p in perf})
    nxt = {}
    for a, b, c in zip(times, times[1:] + times[-1:], times[2:] + times[-1:] * 2):
        nxt[a] = c
    for i, (p, o) in enumerate(zip(perf, ours)):
        if p[:3] != o[:3]:
            fail("%s: branch %d differs: perf %s %x => %x, auxcap %s %x => %x" %
                 ((name, i) + p[:3] + o[:3]))
        hi = nxt.get(p[3], p[3])
        if not p[3] <= o[3] <= hi:
            fail("%s: branch %d (%s %x => %x) at %d ns in auxcap, perf puts it at %d ns "
                 "(the second timing after it at %d ns)" % ((name, i) + o[:3] + (o[3], p[3], hi)))
    if len(perf) != len(ours):
        fail("%s: perf gives %d branches, auxcap %d" % (name, len(perf), len(ours)))
    exact = sum(1 for p, o in zip(perf, ours) if p[3] == o[3])
    print("%s: %d branches identical in kind, source and target; %d with the same time, "
          "the rest before the second timing packet after perf's" % (name, len(perf), exact))


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    auxcap, prog = sys.argv[1], sys.argv[2]
    if not shutil.which("perf"):
        print("perf is not installed (Debian: apt-get install linux-perf)")
        return SKIP
    with tempfile.TemporaryDirectory() as tmp:
        check(auxcap, prog, tmp, "full-trace", [])
        check(auxcap, prog, tmp, "snapshot", ["--snapshot=e", "-m", ",16"])
        check(auxcap, prog, tmp, "snapshot-wrapped", ["--snapshot=e", "-m", ",2"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
