#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Check the times `auxcap decode` gives a capture's trace events against their own hardware
timestamps, converted here with the capture's TIME_CONV (perf's formula, written from the
perf_event_mmap_page documentation, not auxcap's code).

usage: check_trace_times.py AUXCAP CAPTURE [--min-truncated N]

  - every trace event with a timestamp is at time_zero + tsc * time_mult >> time_shift;
  - the merged stream is in time order;
  - decode gaps: at most one per AUX record flagged TRUNCATED (the record cut there);
  - --min-truncated: the capture has at least N TRUNCATED AUX records (else the case the
    check is for did not happen).
"""
import json
import re
import subprocess
import sys


def main(argv):
    args = argv[1:]
    min_trunc = 0
    if "--min-truncated" in args:
        i = args.index("--min-truncated")
        min_trunc = int(args[i + 1])
        del args[i:i + 2]
    auxcap, capture = args
    info = subprocess.run([auxcap, "info", capture], capture_output=True, text=True,
                          check=True).stdout
    m = re.search(r"TIME_CONV: shift (\d+) mult (\d+) zero (\d+)", info)
    if not m:
        print("FAIL no TIME_CONV in the capture")
        return 1
    shift, mult, zero = int(m.group(1)), int(m.group(2)), int(m.group(3))

    def conv(tsc):
        quot, rem = tsc >> shift, tsc & ((1 << shift) - 1)
        return (zero + quot * mult + ((rem * mult) >> shift)) % (1 << 64)

    r = subprocess.run([auxcap, "decode", capture, "--format", "json"], capture_output=True,
                       text=True)
    if r.returncode != 0:
        print("FAIL auxcap decode: status %d: %s" % (r.returncode, r.stderr.strip()))
        return 1
    events = [json.loads(line) for line in r.stdout.splitlines()]
    fails = 0
    timed = [e for e in events if e.get("tsc") is not None]
    bad = [e for e in timed if e["time"] != conv(e["tsc"])]
    if bad:
        fails += 1
        print("FAIL %d of %d trace events not at their timestamp's time, e.g. offset %d: tsc "
              "%d, time %d, expected %d" % (len(bad), len(timed), bad[0]["offset"],
                                            bad[0]["tsc"], bad[0]["time"], conv(bad[0]["tsc"])))
    else:
        print("ok   %d trace events, each at its timestamp's time" % len(timed))
    times = [e["time"] for e in events]
    if any(a > b for a, b in zip(times, times[1:])):
        fails += 1
        print("FAIL time goes back in the merged stream")
    trunc = len([e for e in events if e["type"] == "loss" and e["what"] == "AUX TRUNCATED"])
    gaps = len([e for e in events if e["type"] == "gap"])
    if trunc < min_trunc:
        fails += 1
        print("FAIL %d TRUNCATED AUX records, expected at least %d" % (trunc, min_trunc))
    if gaps > trunc:
        fails += 1
        print("FAIL %d decode gaps for %d TRUNCATED AUX records" % (gaps, trunc))
    else:
        print("ok   %d decode gaps for %d TRUNCATED AUX records" % (gaps, trunc))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
