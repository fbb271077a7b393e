#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Check `auxcap annotate` on a capture against figures computed outside it.

    check_annotate.py AUXCAP CAPTURE SCHEMA [--iterations N] [--no-insns] [--lossy]

- the JSON of every function (--top 0) validates against docs/annotate-json.schema.json;
  the summary adds up (instructions placed + without symbol + not placed) and its total is
  the report's;
- every instruction's samples are the samples decode gives at its place (function and offset:
  the same code of another process or image runs at other addresses), counter samples by
  the IP decode looks up, Arm SPE records by theirs;
- with per-instruction decode (Intel PT; not --no-insns): every instruction's runs are the
  INSN events `auxcap decode --itrace=i` gives there (libipt's instruction flow, not the
  stretches annotate walks), its taken count the BRANCH events from it; what decode ran
  beyond annotate's counts is what annotate counts without a symbol or not placed; with
  --lossy (a capture with gaps) an instruction's runs are at most decode's;
- a taken count only on a branch, unconditional branches always taken;
- the example's `work` runs N times: its first instruction and its return N times;
- the text of `annotate CAPTURE work` shows each source line with its text;
- --lines: every source line's runs and samples are the sums of its instructions'.
"""
import collections
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_decode import Schema  # noqa: E402

fails = 0


def check(cond, what):
    global fails
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        fails += 1


def run(*args):
    p = subprocess.run(list(args), capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("FAIL %s: status %d: %s" % (" ".join(args), p.returncode, p.stderr.strip()))
    return p.stdout


def main():
    args = sys.argv[1:]
    iterations = None
    insns = True
    lossy = "--lossy" in args
    if lossy:
        args.remove("--lossy")
    if "--iterations" in args:
        i = args.index("--iterations")
        iterations = int(args[i + 1])
        del args[i:i + 2]
    if "--no-insns" in args:
        args.remove("--no-insns")
        insns = False
    auxcap, capture, schema_path = args
    name = os.path.basename(capture)
    schema = Schema(json.load(open(schema_path)))
    an = json.loads(run(auxcap, "annotate", capture, "--top", "0", "--format", "json"))
    err = schema.errors(an, schema.root)
    check(err is None, "%s: the JSON validates against the schema%s" % (name, ": " + str(err) if err else ""))
    check(an["insns"] == an["insns_placed"] + an["insns_nosym"] + an["insns_unplaced"],
          "%s: %d instructions = %d placed + %d without symbol + %d not placed" %
          (name, an["insns"], an["insns_placed"], an["insns_nosym"], an["insns_unplaced"]))
    funcs = an["functions"]
    check(len(funcs) == an["functions_total"] and funcs, "%s: %d functions" % (name, len(funcs)))
    check(sum(f["insns"] for f in funcs) == an["insns_placed"] and
          all(f["insns"] == sum(x["execs"] for x in f["instructions"]) for f in funcs),
          "%s: each function's instructions are its instructions' runs, and add up" % name)
    keys = [(-f["insns"], -sum(f["samples"].values())) for f in funcs]
    check(keys == sorted(keys), "%s: functions by instructions run, then samples" % name)
    rep = json.loads(run(auxcap, "report", capture, "--format", "json", "--no-progress"))
    if insns:
        check(an["insns"] == rep["trace"]["instructions"],
              "%s: the total is the report's (%d)" % (name, rep["trace"]["instructions"]))

    # Instructions by (function, offset): the key that holds across processes and execs,
    # where the same code runs at other addresses (decode names them "function+0xOFF").
    insns_all = [(f["name"], x) for f in funcs for x in f["instructions"]]
    at = collections.defaultdict(lambda: [0, 0, 0])  # execs, taken, samples
    for fname, x in insns_all:
        v = at[(fname, x["offset"])]
        v[0] += x["execs"]
        v[1] += x["taken"]
        v[2] += sum(x["samples"].values())
    bad_taken = [x for _, x in insns_all if x["taken"] and not x["branch"]]
    check(not bad_taken, "%s: taken counts only on branches%s" % (name, bad_taken[:1]))
    always = [x for _, x in insns_all if x["branch"] and
              x["text"].split()[0] in ("call", "ret", "jmp") and x["taken"] != x["execs"]]
    check(not always, "%s: calls, returns and jumps taken every time they ran%s" % (name, always[:1]))

    def key(sym):
        fn, plus, off = (sym or "").rpartition("+0x")
        return (fn, int(off, 16)) if plus and fn and not fn.startswith("[") else None

    # decode's stream, by the same keys
    ex, tk, sm = collections.Counter(), collections.Counter(), collections.Counter()
    total = 0
    out = run(auxcap, "decode", capture, "--itrace=ib" if insns else "--itrace=b",
              "--format", "json")
    for line in out.splitlines():
        e = json.loads(line)
        if e["type"] == "insn":
            ex[key(e.get("ip_sym"))] += 1
            total += 1
        elif e["type"] == "branch":
            tk[key(e.get("from_sym"))] += 1
        elif e["type"] == "sample":
            c = e["context"] if e.get("context") else e
            sm[key(c.get("ip_sym"))] += 1
        elif e["type"] == "trace_sample":  # Arm SPE's records
            sm[key(e.get("ip_sym"))] += 1
    diff = [(k, v[2], sm[k]) for k, v in at.items() if v[2] != sm[k]]
    check(not diff, "%s: every instruction's samples are decode's samples there%s" %
          (name, diff[:3]))
    if insns:
        diff = [(k, v[0], ex[k]) for k, v in at.items()
                if v[0] > ex[k] or (v[0] != ex[k] and not lossy)]
        check(not diff, "%s: every instruction's runs are %s decode's INSN events there (%d "
              "instructions)%s" % (name, "at most" if lossy else "", len(at), diff[:3]))
        # (instructions run just before a gap are in no event's count: decode's INSN events
        # have them, the total of annotate and report does not)
        beyond = total - sum(v[0] for v in at.values())
        before_gaps = total - an["insns"]
        check(beyond == an["insns_nosym"] + an["insns_unplaced"] + before_gaps and
              (lossy or not before_gaps) and before_gaps >= 0,
              "%s: decode ran %d instructions beyond annotate's counts: those without symbol "
              "and not placed (%d before gaps)" % (name, beyond, before_gaps))
        diff = [(k, v[1], tk[k]) for k, v in at.items() if v[1] != tk[k]]
        check(not diff, "%s: every taken count is decode's branches from there%s" % (name, diff[:3]))
        check(lossy or an["stretches_bad"] == 0,
              "%s: no stretch of code disagrees with the trace" % name)

    # --lines: each source line's runs and samples are those of its instructions
    li = json.loads(run(auxcap, "annotate", capture, "--lines", "--top", "0", "--format", "json"))
    err = schema.errors(li, schema.root)
    want = collections.defaultdict(lambda: [0, 0])
    for f in funcs:
        for x in f["instructions"]:
            s = x["srcline"]
            if s and (x["execs"] or x["samples"]):
                w = want[(s["file"], s["dir"], s["line"])]
                w[0] += x["execs"]
                w[1] += sum(x["samples"].values())
    got = {(x["file"], x["dir"], x["line"]): [x["insns"], sum(x["samples"].values())]
           for x in li["lines"]}
    keys = [(-x["insns"], -sum(x["samples"].values())) for x in li["lines"]]
    check(err is None and got == dict(want) and li["lines_total"] == len(got) and
          keys == sorted(keys),
          "%s: --lines: %d source lines, each with its instructions' runs and samples, "
          "hottest first%s" % (name, len(got), ": " + str(err) if err else ""))

    work = [f for f in funcs if f["name"] == "work"]
    check(len(work) == 1 or not iterations, "%s: one function work" % name)
    if work and iterations:
        ins = work[0]["instructions"]
        rets = [x for x in ins if x["text"] == "ret"]
        check(ins[0]["execs"] == iterations and rets and
              sum(x["execs"] for x in rets) == iterations and
              sum(x["taken"] for x in rets) == iterations,
              "%s: work's first instruction and its return ran %d times" % (name, iterations))
    if work:
        text = run(auxcap, "annotate", capture, "work")
        lines = set()
        for x in work[0]["instructions"]:
            s = x["srcline"]
            if not s:
                continue
            path = s["file"] if s["file"].startswith("/") or not s["dir"] else \
                os.path.join(s["dir"], s["file"])
            src = open(path).read().split("\n")[s["line"] - 1].strip()
            lines.add("%s:%d  %s" % (os.path.basename(s["file"]), s["line"], src))
        missing = [s for s in lines if s not in text]
        if not lines:  # (a build without -g: no line table)
            print("skip %s: the example has no source lines (built without -g)" % name)
        check(not missing and "## work" in text,
              "%s: the text shows work's %d source lines with their text%s" %
              (name, len(lines), missing[:1]))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
