#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Check `auxcap report` on a capture of examples/auxcap-example-loop against figures computed
here from other sources: the merged stream as `auxcap decode --format json` prints it
(aggregated by this script without the call stacks auxcap reconstructs), the program's
symbols and code (nm, objdump), its known call structure, and `auxcap info`.

usage: check_report.py AUXCAP CAPTURE PROGRAM SCHEMA [--iterations N [--images K]]
                       [--expect-loss] [--expect-no-loss] [--expect-samples]
                       [--expect-snapshots] [--untimed]

  - the JSON report validates against SCHEMA; the text report says the same things;
  - time span, CPUs, threads (trace time, instructions, branches, events, gaps, gap time,
    samples) equal the decode stream's;
  - the functions' self time, instructions, branches add up to the trace's;
  - with --iterations N (a whole trace), for main, run, work, leaf_add and leaf_mul (nm's
    ranges): self time is the time while the thread's location (the last branch's target)
    was in the function; total time, instructions and branches are those between the call
    into it and the return out of it; self instructions and branches those of the branch
    events leaving from it; calls the call events to its first byte; work called N times,
    leaf_add and leaf_mul N/2, each leaf's instructions per call its body's (objdump);
    with --images K the program exec'd itself K - 1 times (EXECS), each image running the
    loop N times: an exec ends every activation of the thread;
  - samples per function and event: self by the sample's IP (nm), total by its stack;
  - losses: LOST, LOST_SAMPLES, AUX flags, AUXTRACE_ERROR and gaps counted from the stream's
    loss and gap events, TRUNCATED as `auxcap info` counts it; the first gaps in detail;
  - the snapshot table as `auxcap info` prints it;
  - --top, --sort, --per-thread;
  - with --iterations, --call-graph: the edges between the program's functions (main -> run,
    run -> work, work -> leaf_add and leaf_mul) have their calls and the callee's total time
    and instructions, as the stream gives them; the program's functions' callers' calls add
    up to their calls (no function's exceed them);
  - with --iterations, --latency work,leaf_add,leaf_mul: each call of them from the call event
    into its first byte to the return out of it, timed and counted here (time, instructions,
    callees' too), equals the report's per-call figures (count, min, max, sum, histograms,
    the slowest calls); each leaf's instructions per call its body's (objdump).
"""
import collections
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_decode import Program, Schema  # noqa: E402

FAILS = []
FUNCS = ["main", "run", "work", "leaf_add", "leaf_mul"]
TRACE = {"branch", "insn", "trace_start", "trace_end", "gap", "trace_sample", "trace_event"}


def fail(msg):
    FAILS.append(msg)
    print("FAIL " + msg)


def ok(msg):
    print("ok   " + msg)


def check(cond, msg):
    (ok if cond else fail)(msg)
    return cond


def run(*argv):
    r = subprocess.run(list(argv), capture_output=True, text=True)
    if r.returncode != 0:
        fail("%s: status %d: %s" % (" ".join(argv[1:3]), r.returncode, r.stderr.strip()))
    return r.stdout


def report_json(auxcap, capture, *args):
    out = run(auxcap, "report", capture, "--format", "json", "--no-progress", *args)
    try:
        return json.loads(out)
    except ValueError as e:
        fail("report JSON does not parse: %s" % e)
        sys.exit(1)


class Stream:
    """The decode stream, aggregated here."""

    def __init__(self, events, prog, trace_slot):
        self.prog = prog
        self.trace_slot = trace_slot  # the table of the trace's own samples
        self.first = self.last = None
        self.cpus = set()
        self.threads = collections.defaultdict(lambda: collections.Counter())
        self.self_ns = collections.Counter()
        self.total_ns = collections.Counter()
        self.self_insns = collections.Counter()
        self.total_insns = collections.Counter()
        self.self_br = collections.Counter()
        self.total_br = collections.Counter()
        self.calls = collections.Counter()
        self.samples = collections.defaultdict(collections.Counter)  # event -> func -> n
        self.samples_total = collections.defaultdict(collections.Counter)
        self.slot = collections.Counter()  # event -> samples, traced, aligned
        self.losses = collections.Counter()
        self.gap_events = []
        self.call_list = collections.defaultdict(list)  # func -> [(ns or None, insns, start)]
        self.calls_not_counted = collections.Counter()  # (func, "across_gap"/"unfinished")
        self.trace_first = self.trace_last = None
        state = {}
        for e in events:
            if e["time_exact"] and e["time"]:
                self.first = e["time"] if self.first is None else min(self.first, e["time"])
                self.last = e["time"] if self.last is None else max(self.last, e["time"])
            if e["cpu"] is not None:
                self.cpus.add(e["cpu"])
            t = e["type"]
            if t in TRACE:
                key = e["tid"] if e["tid"] is not None else ("q", e["queue"])
                st = state.setdefault(key, {"last": None, "exact": False, "paused": False,
                                            "gap": False, "loc": None, "active": set(),
                                            "open": {}})
                self.trace(e, self.threads[key], st)
            elif t == "comm" and e["exec"] and e["tid"] in state:
                # the old image is gone, and every activation in it
                for f in state[e["tid"]]["active"]:
                    self.calls_not_counted[(f, "unfinished")] += 1
                state[e["tid"]]["open"].clear()
                state[e["tid"]]["active"].clear()
                state[e["tid"]]["loc"] = None
            elif t == "sample":
                self.sample(e)
            elif t == "loss":
                self.loss(e)
        for st in state.values():
            for f in st["active"]:
                self.calls_not_counted[(f, "unfinished")] += 1

    def func(self, addr):
        return self.prog.func(int(addr, 16)) if addr else None

    def trace(self, e, th, st):
        t = e["type"]
        if self.trace_first is None:
            self.trace_first = e["time"]
        self.trace_last = e["time"]
        th["trace_events"] += 1
        if st["last"] is not None and st["exact"] and e["time_exact"] and e["time"] > st["last"]:
            dt = e["time"] - st["last"]
            if not st["paused"]:
                th["trace_ns"] += dt
                f = self.func(st["loc"])
                if f:
                    self.self_ns[f] += dt
                for f in st["active"]:
                    self.total_ns[f] += dt
            elif st["gap"]:
                th["gap_ns"] += dt
        st["last"], st["exact"], st["paused"] = e["time"], e["time_exact"], False
        if t in ("branch", "trace_end"):
            n = e["insns"]
            th["insns"] += n
            f = self.func(e["from"] if t == "branch" else e["ip"])
            if f:
                self.self_insns[f] += n
            for f in st["active"]:
                self.total_insns[f] += n
        if t == "branch":
            th["branches"] += 1
            f = self.func(e["from"])
            if f:
                self.self_br[f] += 1
            for f in st["active"]:
                self.total_br[f] += 1
            # activations of the program's functions: from the call into the function to
            # the return out of it
            if e["kind"] == "call" and e["to"]:
                callee = self.func(e["to"])
                if callee in FUNCS and self.prog.link(int(e["to"], 16)) == self.start(callee):
                    self.calls[callee] += 1
                    st["active"].add(callee)
                    st["open"][callee] = (e["time"], e["time_exact"], th["insns"], th["gaps"])
            elif e["kind"] == "return":
                f = self.func(e["from"])
                if f in st["active"] and self.func(e["to"]) != f:
                    st["active"].discard(f)
                    t0, exact, insns, gaps = st["open"].pop(f)
                    if gaps != th["gaps"]:
                        self.calls_not_counted[(f, "across_gap")] += 1
                    else:
                        timed = exact and e["time_exact"] and e["time"] >= t0
                        self.call_list[f].append((e["time"] - t0 if timed else None,
                                                  th["insns"] - insns, t0))
            st["loc"] = e["to"]
        elif t == "trace_start":
            st["loc"] = e["ip"]
        elif t == "trace_sample":
            f = self.func(e["ip"])
            self.slot[(self.trace_slot, "samples")] += 1
            if f:
                self.samples[self.trace_slot][f] += 1
                self.samples_total[self.trace_slot][f] += 1
        elif t == "trace_end":
            st["paused"], st["gap"], st["loc"] = True, False, None
        elif t == "gap":
            th["gaps"] += 1
            st["paused"], st["gap"], st["loc"] = True, True, None
            self.gap_events.append(e)

    def start(self, name):
        return next(s for s, _, n in self.prog.syms if n == name)

    def sample(self, e):
        ev, x = e["event"], e["context"]
        self.slot[(ev, "samples")] += 1
        if e["tid"] is not None:
            self.threads[e["tid"]]["samples"] += 1
        ip = x["ip"] if x else e["ip"]
        f = self.func(ip)
        if f is None and x and x["aligned"] and x["stack"]:
            f = self.func(x["stack"][0]["func"])
        if x:
            self.slot[(ev, "traced")] += 1
            self.slot[(ev, "aligned")] += x["aligned"]
        if f:
            self.samples[ev][f] += 1
        on = {self.func(fr["func"]) for fr in (x["stack"] if x else [])} | {f}
        for g in on:
            if g:
                self.samples_total[ev][g] += 1

    def loss(self, e):
        w = e["what"]
        if w in ("LOST", "LOST_SAMPLES"):
            self.losses[w + " records"] += 1
            self.losses[w] += e["lost"]
        elif w.startswith("AUX "):
            for bit, name in ((1, "TRUNCATED"), (4, "PARTIAL"), (8, "COLLISION")):
                if e["flags"] & bit:
                    self.losses["AUX " + name] += 1
        elif w == "AUXTRACE_ERROR":
            self.losses["AUXTRACE_ERROR"] += 1


def by_name(rep, name, key="functions"):
    hits = [f for f in rep[key] if f["name"] == name]
    return hits[0] if hits else None


def objdump_body(prog, name):
    """Instructions of function @name up to its first ret, None if it branches before."""
    start, end = next((s, e) for s, e, n in prog.syms if n == name)
    n = 0
    for a in prog.addrs:
        if start <= a < end:
            n += 1
            m = prog.insns[a]
            if m.startswith("ret"):
                return n
            if re.match(r"^(j|call|loop)", m):
                return None
    return None


def main(argv):
    args = argv[1:]
    iterations = None
    expect_loss = "--expect-loss" in args
    expect_no_loss = "--expect-no-loss" in args
    untimed = "--untimed" in args
    args = [a for a in args if a != "--untimed"]
    expect_samples = "--expect-samples" in args
    expect_snapshots = "--expect-snapshots" in args
    args = [a for a in args if not a.startswith("--expect-")]
    if "--iterations" in args:
        i = args.index("--iterations")
        iterations = int(args[i + 1])
        del args[i:i + 2]
    images = 1
    if "--images" in args:
        i = args.index("--images")
        images = int(args[i + 1])
        del args[i:i + 2]
    auxcap, capture, program, schema_path = args
    with open(schema_path) as f:
        schema = Schema(json.load(f))
    prog = Program(program)

    rep = report_json(auxcap, capture, "--top", "0")
    err = schema.errors(rep, schema.root)
    check(err is None, "the JSON report validates against the schema%s" %
          ("" if err is None else ": " + err))
    events = [json.loads(l) for l in run(auxcap, "decode", capture, "--format", "json",
                                           "--no-progress").splitlines()]
    for e in events:
        if e["type"] == "mmap" and os.path.realpath(e["filename"]) == prog.real:
            prog.maps.append((int(e["addr"], 16), int(e["addr"], 16) + e["len"], e["pgoff"]))
    s = Stream(events, prog, (rep["backend"] or "no") + " trace")

    # ---- the capture as a whole
    check(rep["time"] and rep["time"]["first"] == s.first and rep["time"]["last"] == s.last and
          rep["time"]["duration_ns"] == s.last - s.first,
          "time span %s equals the stream's (%s .. %s)" % (rep["time"], s.first, s.last))
    check(rep["trace"]["first"] == s.trace_first and rep["trace"]["last"] == s.trace_last,
          "trace span equals the stream's")
    check(rep["cpus"] == sorted(s.cpus), "CPUs %s equal the stream's %s" % (rep["cpus"],
                                                                          sorted(s.cpus)))
    queues = [int(m.group(1)) for m in re.finditer(r"^# (?:AUX stream|snapshot) \d+: .*, (\d+) bytes$",
                                                   run(auxcap, "decode", capture, "--no-progress",
                                                       "--itrace=c"), re.M)]
    check(rep["trace"]["queues"] == len(queues) and rep["trace"]["bytes"] == sum(queues),
          "AUX: %d queues, %d bytes, as decode lists them" % (len(queues), sum(queues)))
    check(rep["trace"]["events"] == sum(1 for e in events if e["type"] in TRACE),
          "%d trace events, as in the stream" % rep["trace"]["events"])
    check(rep["trace"]["timed"] != untimed,
          "the trace has time" if not untimed else "the trace has no time")

    # ---- threads
    bad = []
    for t in rep["threads"]:
        key = t["tid"] if t["tid"] is not None else ("q", t["queue"])
        want = s.threads.get(key, collections.Counter())
        for f in ("trace_ns", "insns", "branches", "trace_events", "gaps", "gap_ns", "samples"):
            got = t["instructions" if f == "insns" else f]
            if got != want[f]:
                bad.append("thread %s %s: report %d, stream %d" % (key, f, got, want[f]))
    check(len(rep["threads"]) == len(s.threads) and not bad,
          "%d threads: trace time, instructions, branches, events, gaps, samples as in the "
          "stream%s" % (len(s.threads), "" if not bad else ": " + "; ".join(bad[:3])))
    check(rep["trace"]["ns"] == sum(t["trace_ns"] for t in s.threads.values()) and
          rep["trace"]["instructions"] == sum(t["insns"] for t in s.threads.values()),
          "trace time %d ns and %d instructions in all" % (rep["trace"]["ns"],
                                                            rep["trace"]["instructions"]))

    # ---- functions: what the stream holds is shared out, nothing lost or counted twice
    fs = rep["functions"]
    # (a trace of samples only, Arm SPE, has time but no frame to give it to)
    check(sum(f["self_ns"] for f in fs) == (rep["trace"]["ns"] if rep["trace"]["branches"]
                                            else 0) and
          sum(f["self_insns"] for f in fs) == rep["trace"]["instructions"] and
          sum(f["self_branches"] for f in fs) == rep["trace"]["branches"] and
          sum(f["calls"] for f in fs) == sum(1 for e in events if e["type"] == "branch" and
                                             e["pushed"]),
          "self time, instructions, branches of all %d functions add up to the trace's; calls "
          "to the stream's pushed frames" % len(fs))
    check(all(f["total_ns"] >= f["self_ns"] and f["total_insns"] >= f["self_insns"] and
              f["total_ns"] <= rep["trace"]["ns"] for f in fs),
          "every function's total is at least its self and at most the trace's")

    # ---- objects: the functions' self counts grouped by file, nothing lost or counted twice
    want = {}
    for f in fs:
        key = (f["dso"], f["dso"] is None and f["kernel"])
        w = want.setdefault(key, collections.Counter())
        for field in ("self_ns", "self_insns", "self_branches"):
            w[field] += f[field]
        w["functions"] += 1
        for ev, n in f["samples"].items():
            w["samples " + ev] += n["self"]
    bad = []
    for o in rep["objects"]:
        w = want.pop((o["dso"], o["kernel"]), None)
        got = collections.Counter({k: o[k] for k in ("self_ns", "self_insns", "self_branches",
                                                     "functions")})
        got.update({"samples " + ev: n for ev, n in o["samples"].items()})
        if w is None or +got != +w:
            bad.append("%s: report %s, functions %s" % (o["dso"], dict(got), dict(w or {})))
    keys = [(o["self_ns"], o["self_insns"], o["self_branches"], sum(o["samples"].values()))
            for o in rep["objects"]]
    check(rep["objects_total"] == len(rep["objects"]) and not bad and not want and
          keys == sorted(keys, reverse=True),
          "%d objects: each one's self time, instructions, branches, functions and samples are "
          "the sums of its functions', by self time first%s" %
          (len(rep["objects"]), "" if not bad and not want else
           ": " + "; ".join(bad[:3] + [str(k) for k in list(want)[:3]])))
    if iterations:
        progobj = [o for o in rep["objects"] if o["dso"] and
                   os.path.realpath(o["dso"]) == prog.real]
        check(len(progobj) == 1 and progobj[0]["self_insns"] >=
              sum(s.self_insns[n] for n in FUNCS),
              "the program is one object, with at least its functions' instructions")

    # ---- the program's functions, on a whole trace (a trace cut by a gap or a snapshot
    # starts without the calls that entered its functions: stacks differ from activations)
    bad = []
    for name in (FUNCS if iterations else []):
        f = by_name(rep, name)
        if not f:
            bad.append("%s missing" % name)
            continue
        for field, want in (("self_ns", s.self_ns), ("total_ns", s.total_ns),
                            ("self_insns", s.self_insns), ("total_insns", s.total_insns),
                            ("self_branches", s.self_br), ("total_branches", s.total_br),
                            ("calls", s.calls)):
            if f[field] != want[name]:
                bad.append("%s %s: report %d, stream %d" % (name, field, f[field], want[name]))
    if iterations:
        check(not bad, "main, run, work, leaf_add, leaf_mul: self/total time, instructions, "
              "branches and calls as computed from the stream and nm%s" %
              ("" if not bad else ": " + "; ".join(bad[:4])))
    ours = [f for f in rep["functions"] if f["name"] in FUNCS]
    top = max(FUNCS, key=lambda n: s.self_ns[n])
    if iterations and not untimed:
        check(ours and ours[0]["name"] == top,
              "top of the program's functions by self time: %s (%d ns)" % (top, s.self_ns[top]))
    check(all(a["self_ns"] >= b["self_ns"] for a, b in zip(rep["functions"], rep["functions"][1:])),
          "functions ordered by self time (%s first)" % rep["functions"][0]["name"])
    if iterations:
        work, la, lm = by_name(rep, "work"), by_name(rep, "leaf_add"), by_name(rep, "leaf_mul")
        n = iterations * images
        check(work["calls"] == n and la["calls"] == n // 2 and lm["calls"] == n // 2 and
              by_name(rep, "run")["calls"] == images,
              "calls: work %d, leaf_add %d, leaf_mul %d, run %d (the program: %d iterations "
              "in %d image%s)" % (work["calls"], la["calls"], lm["calls"],
                                  by_name(rep, "run")["calls"], iterations, images,
                                  "s" if images > 1 else ""))
        for f in (la, lm) if rep["trace"]["instructions"] else ():
            body = objdump_body(prog, f["name"])
            check(body and f["self_insns"] == body * f["calls"] and
                  f["total_insns"] == f["self_insns"],
                  "%s: %d instructions = %d calls x %s (objdump: its body up to ret)" %
                  (f["name"], f["self_insns"], f["calls"], body))

    # ---- the call graph, on a whole trace
    if iterations:
        cg = report_json(auxcap, capture, "--call-graph", "--top", "0")
        err = schema.errors(cg, schema.root)
        check(err is None, "the JSON report with --call-graph validates against the schema%s" %
              ("" if err is None else ": " + err))
        edges = {(e["caller"]["name"], e["callee"]["name"]): e for e in cg.get("call_graph", [])}
        bad = []
        n = iterations * images
        for caller, callee, calls in (("main", "run", images), ("run", "work", n),
                                      ("work", "leaf_add", n // 2), ("work", "leaf_mul", n // 2)):
            e = edges.get((caller, callee))
            if not e:
                bad.append("no edge %s -> %s" % (caller, callee))
                continue
            want = (calls, s.total_ns[callee], s.total_insns[callee])
            if (e["calls"], e["ns"], e["insns"]) != want:
                bad.append("%s -> %s: calls, ns, insns %s, stream %s" % (
                    caller, callee, (e["calls"], e["ns"], e["insns"]), want))
        into = collections.Counter()
        for e in cg.get("call_graph", []):
            into[(e["callee"]["name"], e["callee"]["addr"])] += e["calls"]
        # (a call made with no frame under it, the first of a trace, has no caller)
        for f in cg["functions"]:
            got = into[(f["name"], f["addr"])]
            if got > f["calls"] or (f["name"] in FUNCS and got != f["calls"]):
                bad.append("%s: %d calls, its callers' %d" % (f["name"], f["calls"], got))
        check(not bad, "--call-graph: main -> run -> work -> leaf_add, leaf_mul with the calls, "
              "time and instructions of the stream; the calls of each function of the program "
              "are its callers', no function has more from callers than calls%s"
              % ("" if not bad else ": " + "; ".join(bad[:4])))
        text = run(auxcap, "report", capture, "--no-progress", "--call-graph")
        check(re.search(r"^## work .*\n#  total .*, %d calls\n .*caller\n +%d .* run " % (n, n),
                        text, re.M),
              "the text call graph: work's block, called %d times by run" % n)

    # ---- per-call figures (--latency) of the program's functions that return, on a whole trace
    if iterations:
        lat = report_json(auxcap, capture, "--latency", "work,leaf_add,leaf_mul,run",
                          "--slowest", "3")
        err = schema.errors(lat, schema.root)
        check(err is None, "the JSON report with --latency validates against the schema%s" %
              ("" if err is None else ": " + err))
        bad = []
        got = {c["name"]: c for c in lat.get("latency", [])}
        for name in ("work", "leaf_add", "leaf_mul"):
            c, calls = got.get(name), s.call_list[name]
            if not c:
                bad.append("%s: no entry" % name)
                continue
            ns = [x[0] for x in calls if x[0] is not None]
            ins = [x[1] for x in calls]
            hist_ns = collections.Counter(x.bit_length() for x in ns)
            hist_in = collections.Counter(x.bit_length() for x in ins)
            slow = sorted(((x[0] or 0, x[1]) for x in calls), reverse=True)[:3]
            want = {"calls": len(calls), "timed": len(ns),
                    "across_gap": s.calls_not_counted[(name, "across_gap")],
                    "unfinished": s.calls_not_counted[(name, "unfinished")],
                    "min_ns": min(ns) if ns else None, "max_ns": max(ns) if ns else None,
                    "sum_ns": sum(ns) if ns else None,
                    "min_insns": min(ins) if ins else 0, "max_insns": max(ins) if ins else 0,
                    "sum_insns": sum(ins)}
            for k, v in want.items():
                if c[k] != v:
                    bad.append("%s %s: report %s, stream %s" % (name, k, c[k], v))
            if {h["lo"].bit_length() if h["lo"] else 0: h["count"] for h in c["hist_ns"]} != \
                    dict(hist_ns) or \
                    {h["lo"].bit_length() if h["lo"] else 0: h["count"] for h in c["hist_insns"]} != \
                    dict(hist_in):
                bad.append("%s: histograms differ" % name)
            if [(x["ns"] or 0, x["insns"]) for x in c["slowest"]] != slow:
                bad.append("%s: slowest %s, stream %s" % (
                    name, [(x["ns"], x["insns"]) for x in c["slowest"]], slow))
            if any(x["caller"] is None or x["caller"]["name"] !=
                   ("run" if name == "work" else "work") for x in c["slowest"]):
                bad.append("%s: callers %s" % (name, [x["caller"] for x in c["slowest"]]))
            body = objdump_body(prog, name) if name != "work" else None
            if body and rep["trace"]["instructions"] and \
                    (c["min_insns"], c["max_insns"]) != (body, body):
                bad.append("%s: %s..%s instructions per call, objdump's body %d" % (
                    name, c["min_insns"], c["max_insns"], body))
        n = iterations * images
        # where run()'s time went (one call per image): its trace time is its total, and
        # work's calls and time are among its callees, as the stream gives them
        r0 = (got.get("run") or {}).get("slowest") or [{}]
        cal = {x["name"]: x for x in r0[0].get("callees", [])}
        if images == 1 and rep["trace"]["timed"] and (
                r0[0].get("trace_ns") != s.total_ns["run"] or "work" not in cal or
                (cal["work"]["calls"], cal["work"]["ns"]) != (n, s.total_ns["work"]) or
                r0[0].get("callees_ns", 0) > r0[0].get("trace_ns", 0)):
            bad.append("run's call: trace_ns %s (stream %d), callees %s (work: %d calls, %d ns)"
                       % (r0[0].get("trace_ns"), s.total_ns["run"], cal, n, s.total_ns["work"]))
        check(not bad and got.get("work", {}).get("calls") == n,
              "--latency: work's %d calls, leaf_add's and leaf_mul's, each from its call to its "
              "return as computed from the stream (time, instructions, histograms, slowest, "
              "callers; run's trace time and its callee work)%s" %
              (n, "" if not bad else ": " + "; ".join(bad[:4])))
        text = run(auxcap, "report", capture, "--no-progress", "--latency", "work")
        check(re.search(r"^## work .*\n#  calls: +%d returned" % n, text, re.M) and
              "Objects by self trace time" not in text,
              "the text report with --latency: work's section, %d calls, no function tables" % n)

    # ---- samples
    tables = {t["event"]: t for t in rep["samples"]}
    if expect_samples:
        check(s.samples, "the capture has counter samples")
    bad = []
    for ev in set(list(s.samples) + [k[0] for k in s.slot]):
        t = tables.get(ev)
        if not t:
            bad.append("no table for %s" % ev)
            continue
        for f in ("samples", "traced", "aligned"):
            if t[f] != s.slot[(ev, f)]:
                bad.append("%s %s: %d vs %d" % (ev, f, t[f], s.slot[(ev, f)]))
        rows = {f["name"]: f for f in t["functions"] if f["name"]}
        for name in FUNCS:
            row = rows.get(name, {"self": 0, "total": 0})
            fn = by_name(rep, name) or {"samples": {}}
            tot = fn["samples"].get(ev, {"total": 0})["total"]
            if row["self"] != s.samples[ev][name] or tot != s.samples_total[ev][name]:
                bad.append("%s %s: self %d total %d, stream %d %d" % (
                    ev, name, row["self"], tot, s.samples[ev][name], s.samples_total[ev][name]))
        if sum(f["self"] for f in t["functions"]) != t["samples"]:
            bad.append("%s: the table's samples do not add up" % ev)
    check(not bad, "samples per event and per function (self by IP, total by stack) as in the "
          "stream%s" % ("" if not bad else ": " + "; ".join(bad[:4])))

    # ---- losses
    L = rep["losses"]
    got = {"LOST records": L["lost"]["records"], "LOST": L["lost"]["events"],
           "LOST_SAMPLES records": L["lost_samples"]["records"],
           "LOST_SAMPLES": L["lost_samples"]["samples"], "AUX TRUNCATED": L["aux_truncated"],
           "AUX PARTIAL": L["aux_partial"], "AUX COLLISION": L["aux_collision"],
           "AUXTRACE_ERROR": L["auxtrace_errors"]["count"]}
    check(all(got[k] == s.losses[k] for k in got),
          "losses as in the stream: %s" % ", ".join("%s %d" % kv for kv in got.items() if kv[1]))
    m = re.search(r"TRUNCATED (\d+)", run(auxcap, "info", capture))
    check(m and int(m.group(1)) == L["aux_truncated"],
          "AUX TRUNCATED %d, as auxcap info counts it" % L["aux_truncated"])
    check(L["gaps"]["count"] == len(s.gap_events) and
          L["gaps"]["lost_ns"] == sum(t["gap_ns"] for t in s.threads.values()),
          "%d decode gaps, %d ns lost in them" % (L["gaps"]["count"], L["gaps"]["lost_ns"]))
    first = [(g["time"], g["offset"], g["reason"]) for g in L["gaps"]["first"]]
    want = [(g["time"], g["offset"], g["reason"]) for g in s.gap_events[:5]]
    check(first == want, "the first %d gaps in detail" % len(first))
    check(L["no_loss"] == (not any(got.values()) and not s.gap_events and not L["aux_holes"]),
          "no_loss is %s" % L["no_loss"])
    if expect_loss:
        check(not L["no_loss"] and L["aux_truncated"] > 0, "the capture lost AUX data")
    if expect_no_loss:
        check(L["no_loss"], "nothing lost")

    # ---- snapshots
    info = run(auxcap, "info", capture)
    m = re.search(r"auxcap_snapshots (\d+):.*min ([\d.]+) us, median ([\d.]+) us, "
                  r"max ([\d.]+) us", info)
    if expect_snapshots or m:
        sn = rep["snapshots"]
        check(m and sn and sn["count"] == int(m.group(1)) and
              ["%.1f" % (sn["latency_ns"][k] / 1e3) for k in ("min", "median", "max")] ==
              [m.group(2), m.group(3), m.group(4)] and
              sn["slow_calls"] == len(re.findall(r", after a call of ", info)),
              "snapshot table as auxcap info prints it: %s" % (sn,))
    else:
        check(rep["snapshots"] is None, "no snapshot table")

    # ---- text, options
    text = run(auxcap, "report", capture, "--no-progress")
    rows = re.findall(r"^ +[\d.]+% +(?:[\d.]+ \w+ +)?[\d.]+% +(?:[\d.]+ \w+ +)?"
                      r"\d+ +\d+ +\d+ +\d+  (.*)$", text.split("\nFunctions by")[1], re.M)
    traced = [f for f in rep["functions"] if f["self_ns"] or f["total_ns"] or f["total_insns"]
              or f["total_branches"] or f["calls"]]
    if traced:
        name0 = traced[0]["name"] or "[unknown] %s" % traced[0]["addr"]
        check(len(rows) == min(20, len(traced)) and rows[0].startswith(name0),
              "text: %d rows in the trace table (default --top), %s first" % (len(rows), name0))
    else:
        # (no trace at all, a capture without an AUX event: no table)
        check(not rows and ("Functions by trace: none" in text) == (rep["trace"]["events"] > 0),
              "text: the trace table says there is nothing to attribute")
    check(("no data lost" in text) == L["no_loss"] and
          (L["aux_truncated"] == 0 or "AUX TRUNCATED:   %d records" % L["aux_truncated"] in text),
          "text: the losses section says what the JSON does")
    for name, t in tables.items():
        if not t["trace_samples"]:
            check("# samples:   %s: %d%s" % (name, t["samples"], " (" if rep["backend"] else "\n")
                  in text,
                  "text: %d %s samples in the header" % (t["samples"], name))
    three = report_json(auxcap, capture, "--top", "3", "--sort", "total")
    check(len(three["functions"]) == 3 and three["sort"] == "total" and
          three["functions"][0]["total_ns"] == max(f["total_ns"] for f in rep["functions"]) and
          all(a["total_ns"] >= b["total_ns"] for a, b in zip(three["functions"],
                                                            three["functions"][1:])),
          "--top 3 --sort total: 3 functions by total time (%s first)" %
          three["functions"][0]["name"])
    pt = report_json(auxcap, capture, "--per-thread", "--top", "0")
    err = schema.errors(pt, schema.root)
    sums = collections.Counter()
    key = lambda f: (f["name"], f["dso"], f["addr"], f["kernel"])  # noqa: E731
    for f in pt["functions"]:
        sums[key(f)] += f["self_ns"]
    check(err is None and all("tid" in f for f in pt["functions"]) and
          all(sums[key(f)] == f["self_ns"] for f in rep["functions"]),
          "--per-thread: functions keyed by thread, their self time adds up to the merged "
          "report's%s" % ("" if err is None else ": " + err))
    print("%d failed" % len(FAILS))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
