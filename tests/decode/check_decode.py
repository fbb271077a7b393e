#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Check `auxcap decode` on a capture of examples/auxcap-example-loop against facts from
outside auxcap: the program's code (objdump -d), its symbols (nm -S), its known call
structure (main -> run -> work -> leaf_add/leaf_mul), the JSON schema of docs/, and the Trace
Event Format's rules.

usage: check_decode.py AUXCAP CAPTURE PROGRAM SCHEMA [--split CAPTURE2] [--min-samples N]
                       [--min-known N] [--all-aligned] [--perf-uregs]

  - JSON lines: every line validates against SCHEMA; times never go back;
  - every sample has trace context; with --all-aligned its IP was found in the trace; an
    aligned sample's IP is reached from its window's start (the last branch's target) by
    straight-line code: objdump shows no jmp/call/ret between them;
  - an aligned sample's IP is in the trace inside its window: the decoded stream holds, on
    its thread, the event that ends the straight-line run holding the IP (at the sample's
    time + delta_ns) and the event that starts it (the branch to seq_from, or the restart
    there), and that run overlaps the window;
  - a sample in main, run, work, leaf_add or leaf_mul has the stack the program's structure
    gives (frames named with nm, not with auxcap's symbols); in every sample's stack, the
    frames of those functions are that chain (leaf_* <- work <- run <- main);
  - --perf-uregs: each sample's IP, and the IP its context looked up (the user-mode IP of
    REGS_USER when the sample hit the kernel), are those `perf script -F uregs` prints;
  - Perfetto: a Trace Event Format object, slices nested per thread, call slices named for
    the program's functions;
  - folded: "frames count" lines, the samples add up, main;run;work;leaf_* is there;
  - text: one sample line per sample, each with its stack line;
  - --split: the same trace cut into buffers decodes to the same branches and sample stacks.
"""
import bisect
import json
import os
import re
import subprocess
import sys

FAILS = []


def fail(msg):
    FAILS.append(msg)
    print("FAIL " + msg)


def ok(msg):
    print("ok   " + msg)


# ---- a JSON Schema subset (what docs/decode-json.schema.json uses) ------------------------

class Schema:
    def __init__(self, root):
        self.root = root

    def resolve(self, ref):
        assert ref.startswith("#/")
        node = self.root
        for part in ref[2:].split("/"):
            node = node[part]
        return node

    def type_ok(self, v, t):
        if t == "null":
            return v is None
        if t == "boolean":
            return isinstance(v, bool)
        if t == "integer":
            return isinstance(v, int) and not isinstance(v, bool)
        if t == "number":
            return isinstance(v, (int, float)) and not isinstance(v, bool)
        if t == "string":
            return isinstance(v, str)
        if t == "array":
            return isinstance(v, list)
        if t == "object":
            return isinstance(v, dict)
        raise ValueError("schema type " + t)

    def errors(self, v, s, path="$"):
        """The first error of @v against schema @s, or None."""
        if "$ref" in s:
            return self.errors(v, self.resolve(s["$ref"]), path)
        if "oneOf" in s:
            good = [sub for sub in s["oneOf"] if self.errors(v, sub, path) is None]
            if len(good) != 1:
                # name the closest alternative for objects with a "type" discriminator
                if isinstance(v, dict) and "type" in v:
                    for sub in s["oneOf"]:
                        d = self.resolve(sub["$ref"]) if "$ref" in sub else sub
                        t = d.get("properties", {}).get("type", {})
                        if t.get("const") == v["type"] or v["type"] in t.get("enum", []):
                            e = self.errors(v, d, path)
                            if e:
                                return e
                return "%s: matches %d of oneOf" % (path, len(good))
        if "type" in s:
            ts = s["type"] if isinstance(s["type"], list) else [s["type"]]
            if not any(self.type_ok(v, t) for t in ts):
                return "%s: %r is not %s" % (path, v, s["type"])
        if "const" in s and v != s["const"]:
            return "%s: %r is not %r" % (path, v, s["const"])
        if "enum" in s and v not in s["enum"]:
            return "%s: %r not in %r" % (path, v, s["enum"])
        if isinstance(v, str) and "pattern" in s and not re.search(s["pattern"], v):
            return "%s: %r does not match %s" % (path, v, s["pattern"])
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            if "minimum" in s and v < s["minimum"]:
                return "%s: %r < %r" % (path, v, s["minimum"])
            if "maximum" in s and v > s["maximum"]:
                return "%s: %r > %r" % (path, v, s["maximum"])
        if isinstance(v, dict):
            for k in s.get("required", []):
                if k not in v:
                    return "%s: missing %s" % (path, k)
            props = s.get("properties", {})
            for k, sub in v.items():
                if k in props:
                    e = self.errors(sub, props[k], path + "." + k)
                    if e:
                        return e
                elif s.get("additionalProperties") is False:
                    return "%s: unexpected %s" % (path, k)
                elif isinstance(s.get("additionalProperties"), dict):
                    e = self.errors(sub, s["additionalProperties"], path + "." + k)
                    if e:
                        return e
        if isinstance(v, list):
            if "minItems" in s and len(v) < s["minItems"]:
                return "%s: fewer than %d items" % (path, s["minItems"])
            if "maxItems" in s and len(v) > s["maxItems"]:
                return "%s: more than %d items" % (path, s["maxItems"])
            if "items" in s:
                for i, item in enumerate(v):
                    e = self.errors(item, s["items"], "%s[%d]" % (path, i))
                    if e:
                        return e
        return None


# ---- the program, from binutils ------------------------------------------------------------

def validated_lines(schema_path, path):
    """The objects of the JSON-lines file @path, each checked against the schema at
    @schema_path first (exits with the first error)."""
    with open(schema_path) as f:
        schema = Schema(json.load(f))
    with open(path) as f:
        for line in f:
            ev = json.loads(line)
            err = schema.errors(ev, schema.root)
            if err:
                sys.exit("schema: " + err)
            yield ev


class Program:
    def __init__(self, path):
        self.path = path
        self.real = os.path.realpath(path)
        self.syms = []  # (start, end, name), link addresses
        for line in subprocess.run(["nm", "-S", "--defined-only", path], capture_output=True,
                                   text=True, check=True).stdout.splitlines():
            f = line.split()
            if len(f) == 4 and f[2] in "tTwW":
                start, size = int(f[0], 16), int(f[1], 16)
                self.syms.append((start, start + size, f[3]))
        self.insns = {}  # link address -> mnemonic
        for line in subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-M", "intel", path],
                                   capture_output=True, text=True, check=True).stdout.splitlines():
            m = re.match(r"^\s+([0-9a-f]+):\s+(\S+)", line)
            if m:
                self.insns[int(m.group(1), 16)] = m.group(2)
        self.addrs = sorted(self.insns)
        self.segs = []  # (offset, vaddr, filesz)
        for line in subprocess.run(["readelf", "-lW", path], capture_output=True, text=True,
                                   check=True).stdout.splitlines():
            f = line.split()
            if f and f[0] == "LOAD":
                self.segs.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))
        self.maps = []  # (start, end, pgoff) of its executable mappings in the capture

    def link(self, addr):
        """The link-time address of run-time @addr, or None if not in the program."""
        for start, end, pgoff in self.maps:
            if start <= addr < end:
                fo = addr - start + pgoff
                for off, vaddr, size in self.segs:
                    if off <= fo < off + size:
                        return vaddr + fo - off
        return None

    def func(self, addr):
        a = self.link(addr)
        if a is None:
            return None
        for start, end, name in self.syms:
            if start <= a < end:
                return name
        return None

    def straight(self, lo, hi):
        """True if run-time [lo, hi] holds instruction starts only joined by straight-line code
        (no jmp, call or ret from lo up to hi; conditional jumps may be not taken)."""
        a, b = self.link(lo), self.link(hi)
        if a is None or b is None or a > b or a not in self.insns or b not in self.insns:
            return False
        for x in self.addrs:
            if a <= x < b and re.match(r"^(jmp|call|ret|bnd|notrack)", self.insns[x]):
                return False
        return True


KNOWN = {
    "leaf_add": ["leaf_add", "work", "run", "main"],
    "leaf_mul": ["leaf_mul", "work", "run", "main"],
    "work": ["work", "run", "main"],
    "run": ["run", "main"],
    "main": ["main"],
}


def decode(auxcap, capture, *args):
    r = subprocess.run([auxcap, "decode", capture] + list(args), capture_output=True, text=True)
    if r.returncode != 0:
        fail("auxcap decode %s %s: status %d: %s" % (capture, " ".join(args), r.returncode,
                                                     r.stderr.strip()))
    return r.stdout


def check_json(auxcap, capture, prog, schema, min_samples, all_aligned, min_known):
    text = decode(auxcap, capture, "--format", "json", "--last-branches", "16")
    events = []
    bad = 0
    for n, line in enumerate(text.splitlines()):
        try:
            ev = json.loads(line)
        except ValueError as e:
            fail("json line %d does not parse: %s" % (n + 1, e))
            return []
        err = schema.errors(ev, schema.root)
        if err:
            bad += 1
            if bad <= 3:
                fail("json line %d: %s" % (n + 1, err))
        events.append(ev)
    if not bad:
        ok("%d JSON lines validate against the schema" % len(events))
    times = [e["time"] for e in events]
    if all(a <= b for a, b in zip(times, times[1:])):
        ok("merged stream in time order")
    else:
        fail("time goes back in the merged stream")
    for e in events:
        if e["type"] == "mmap" and os.path.realpath(e["filename"]) == prog.real:
            prog.maps.append((int(e["addr"], 16), int(e["addr"], 16) + e["len"], e["pgoff"]))
    if not prog.maps:
        fail("no MMAP2 of %s in the capture" % prog.path)

    samples = [e for e in events if e["type"] == "sample"]
    if len(samples) < min_samples:
        fail("%d samples, expected at least %d" % (len(samples), min_samples))
    no_ctx = [s for s in samples if s["context"] is None]
    unaligned = [s for s in samples if s["context"] and not s["context"]["aligned"]]
    # A sample of a thread taken before its trace began (in the kernel during the exec, before
    # the first traced user instruction) has no context: nothing of it is traced yet.
    first_trace = {}
    for e in events:
        if e["type"] in ("branch", "trace_start", "instruction", "call", "return"):
            first_trace.setdefault(e["tid"], e["time"])
    before = [s for s in no_ctx if s["tid"] in first_trace and
              s["time"] < first_trace[s["tid"]]]
    if before:
        if len(before) * 100 > len(samples):
            fail("%d of %d samples before their thread's trace began" %
                 (len(before), len(samples)))
        else:
            ok("%d samples before their thread's trace began (ip %s): no context" %
               (len(before), before[0]["ip"]))
        no_ctx = [s for s in no_ctx if s not in before]
    if no_ctx:
        fail("%d samples without trace context, e.g. ip %s at %d" %
             (len(no_ctx), no_ctx[0]["ip"], no_ctx[0]["time"]))
    # A sample taken after its thread's trace ended for good (tr end at its last system call,
    # exit_group, which never returns) has for user IP the instruction after that call: it
    # never ran, so no trace holds it.
    final_end = {}
    for e in events:
        if e["type"] in ("branch", "trace_start", "trace_end", "instruction", "call", "return"):
            final_end[e["tid"]] = e["time"] if e["type"] == "trace_end" else None
    after_end = [s for s in unaligned
                 if final_end.get(s["tid"]) is not None and s["time"] > final_end[s["tid"]]]
    if after_end:
        ok("%d samples after their thread's trace ended (its final system call): not in it" %
           len(after_end))
        unaligned = [s for s in unaligned if s not in after_end]
    # A sample taken in the kernel without user registers (REGS_USER's ABI NONE: the task had
    # left user space for good, e.g. in exit_group after its memory was torn down) keeps its
    # kernel IP, which a user-space trace cannot hold.  Only a handful may be so.
    no_user = [s for s in unaligned if int(s["ip"], 16) >= 0xffff800000000000]
    if no_user:
        if len(no_user) * 1000 > len(samples):
            fail("%d of %d samples have a kernel IP and no user IP" % (len(no_user), len(samples)))
        else:
            ok("%d samples without user registers (kernel IP %s): not in a user-space trace" %
               (len(no_user), no_user[0]["ip"]))
        unaligned = [s for s in unaligned if s not in no_user]
    if all_aligned and unaligned:
        fail("%d of %d samples not found in the trace, e.g. ip %s at %d" %
             (len(unaligned), len(samples), unaligned[0]["ip"], unaligned[0]["time"]))
    elif not unaligned:
        ok("all %d %ssamples found in the trace near their time" %
           (len(samples) - len(after_end), "other " if after_end else ""))

    window_bad = stack_bad = known = 0
    for s in samples:
        c = s["context"]
        if not c or not c["aligned"]:
            continue
        ip, seq = int(c["ip"], 16), int(c["seq_from"], 16)
        if c["branches"] and not c["seq_from_start"] and int(c["branches"][0]["to"], 16) != seq:
            window_bad += 1
            print("  sample at %d: last branch %s -> %s, run from %s" %
                  (s["time"], c["branches"][0]["from"], c["branches"][0]["to"], c["seq_from"]))
        elif not (seq <= ip < seq + 65536):
            window_bad += 1
            print("  sample at %d: ip %s not after its run's start %s" %
                  (s["time"], s["ip"], c["seq_from"]))
        elif prog.link(ip) is not None and not prog.straight(seq, ip):
            window_bad += 1
            if window_bad <= 3:
                print("  window %s..%s of sample at %d is not straight-line code" %
                      (c["seq_from"], s["ip"], s["time"]))
        f = prog.func(ip)
        if f in KNOWN:
            known += 1
            want = KNOWN[f]
            got = [prog.func(int(fr["func"], 16)) for fr in c["stack"][:len(want)]]
            if got != want:
                stack_bad += 1
                if stack_bad <= 3:
                    print("  sample in %s at %d: stack %s, expected %s" % (f, s["time"], got, want))
    check_in_window(events, samples)
    chain_bad = chained = 0
    for s in samples:
        c = s["context"]
        if not c:
            continue
        names = [prog.func(int(fr["func"], 16)) for fr in c["stack"]]
        known_frames = [n for n in names if n in KNOWN]
        if not known_frames:
            continue
        chained += 1
        if known_frames != KNOWN[known_frames[0]]:
            chain_bad += 1
            if chain_bad <= 3:
                print("  sample at %d (ip %s): program frames %s, expected %s" %
                      (s["time"], c["ip"], known_frames, KNOWN[known_frames[0]]))
    if chain_bad:
        fail("%d of %d samples with program frames in their stack do not have the program's "
             "call chain" % (chain_bad, chained))
    else:
        ok("%d samples with program frames in their stack (%d without): each the program's "
           "call chain" % (chained, len(samples) - chained))
    if window_bad:
        fail("%d samples whose IP is not reached from their window's start by straight-line "
             "code" % window_bad)
    else:
        ok("every aligned sample's IP follows its last branch's target by straight-line code")
    if known < min_known:
        fail("only %d samples in main/run/work/leaf_*, expected at least %d" % (known, min_known))
    if stack_bad:
        fail("%d of %d samples in the program's functions have a wrong stack" % (stack_bad, known))
    else:
        ok("%d samples in main/run/work/leaf_* have the program's call structure" % known)
    return events


def check_in_window(events, samples):
    """Every aligned sample's IP lies in a run of the decoded trace that overlaps its window."""
    runs = {}  # tid -> [(time, kind, start_ip or None, end_ip or None)] in stream order
    for e in events:
        if e["type"] == "branch":
            runs.setdefault(e["tid"], []).append((e["time"], "branch", int(e["to"], 16),
                                                  int(e["from"], 16)))
        elif e["type"] == "trace_start":
            runs.setdefault(e["tid"], []).append((e["time"], "start", int(e["ip"], 16), None))
        elif e["type"] == "trace_end":
            runs.setdefault(e["tid"], []).append((e["time"], "end", None, int(e["ip"], 16)))
        elif e["type"] == "gap":
            runs.setdefault(e["tid"], []).append((e["time"], "gap", None, None))
    times = {tid: [r[0] for r in rs] for tid, rs in runs.items()}
    bad = checked = 0
    for s in samples:
        c = s["context"]
        if not c or not c["aligned"]:
            continue
        checked += 1
        ip, seq = int(c["ip"], 16), int(c["seq_from"], 16)
        lo, hi = c["window"]
        at = s["time"] + c["delta_ns"]
        rs, ts = runs.get(s["tid"], []), times.get(s["tid"], [])
        i = bisect.bisect_left(ts, at)
        found = False
        while i < len(rs) and rs[i][0] == at and not found:
            end = rs[i][3]
            # the event before it on the thread starts the run (a branch's target or a restart)
            if end is not None and seq <= ip <= end and i > 0 and rs[i - 1][2] == seq and \
               rs[i - 1][0] <= hi and at >= lo:
                found = True
            i += 1
        if not found:
            bad += 1
            if bad <= 3:
                print("  sample at %d: no run %s..(ip %s) ending at %d and overlapping its "
                      "window [%d, %d] in the trace" % (s["time"], c["seq_from"], c["ip"], at,
                                                        lo, hi))
    if bad:
        fail("%d of %d aligned samples: their IP's run is not in the trace inside the window" %
             (bad, checked))
    else:
        ok("%d aligned samples: each IP's run is in the decoded trace and overlaps the window" %
           checked)


def check_perf_uregs(capture, samples):
    """Sample IPs and looked-up IPs against perf's own reading of the samples (uregs)."""
    r = subprocess.run(["perf", "script", "-i", capture, "--no-itrace", "--ns", "-F",
                        "sw:tid,time,ip,uregs"], capture_output=True, text=True)
    if r.returncode != 0:
        fail("perf script -F uregs: status %d: %s" % (r.returncode, r.stderr.strip()[:200]))
        return
    perf = {}
    for line in r.stdout.splitlines():
        m = re.match(r"^\s*(\d+)\s+(\d+)\.(\d{9}):\s+([0-9a-f]+)\s+ABI:(\d)(?:\s+IP:0x([0-9a-f]+))?",
                     line)
        if m:
            t = int(m.group(2)) * 1000000000 + int(m.group(3))
            uip = int(m.group(6), 16) if m.group(6) and m.group(5) != "0" else None
            perf[(int(m.group(1)), t)] = (int(m.group(4), 16), uip)
    bad = kernel = 0
    for s in samples:
        p = perf.get((s["tid"], s["time"]))
        if p is None:
            bad += 1
            if bad <= 3:
                print("  sample at %d (tid %d): perf script has no such sample" %
                      (s["time"], s["tid"]))
            continue
        ip, uip = p
        want = uip if ip >> 63 and uip is not None else ip
        kernel += ip >> 63 and uip is not None
        got = int(s["context"]["ip"], 16) if s["context"] else want
        if int(s["ip"], 16) != ip or got != want:
            bad += 1
            if bad <= 3:
                print("  sample at %d: ip %s, looked up %#x; perf: ip %#x, user IP %s" %
                      (s["time"], s["ip"], got, ip, hex(uip) if uip is not None else "-"))
    if len(perf) != len(samples):
        fail("perf script shows %d samples, auxcap %d" % (len(perf), len(samples)))
    if bad:
        fail("%d of %d samples: IP or looked-up IP differs from perf's uregs" %
             (bad, len(samples)))
    else:
        ok("%d samples: IPs as perf reads them; %d taken in the kernel were looked up by the "
           "user-mode IP of REGS_USER" % (len(samples), kernel))


def check_perfetto(auxcap, capture):
    text = decode(auxcap, capture, "--format", "perfetto")
    try:
        doc = json.loads(text)
    except ValueError as e:
        fail("perfetto output does not parse: %s" % e)
        return
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        fail("perfetto output is not an object with a traceEvents array")
        return
    if doc.get("displayTimeUnit") not in (None, "ms", "ns"):
        fail("bad displayTimeUnit %r" % doc.get("displayTimeUnit"))
    open_ = {}
    last = {}
    names = set()
    errors = 0
    for i, e in enumerate(doc["traceEvents"]):
        def bad(msg):
            nonlocal errors
            errors += 1
            if errors <= 5:
                fail("traceEvents[%d] %s: %s" % (i, json.dumps(e)[:120], msg))
        if not isinstance(e, dict) or not isinstance(e.get("ph"), str):
            bad("no ph")
            continue
        ph = e["ph"]
        for k in ("pid", "tid"):
            if not isinstance(e.get(k), int) or isinstance(e.get(k), bool):
                bad("%s is not an integer" % k)
        if ph == "M":
            if e.get("name") not in ("process_name", "thread_name", "process_sort_index",
                                     "thread_sort_index") or \
               not isinstance(e.get("args", {}).get("name"), str):
                bad("bad metadata event")
            continue
        ts = e.get("ts")
        if not isinstance(ts, (int, float)) or isinstance(ts, bool) or ts < 0:
            bad("ts is not a non-negative number")
            continue
        key = (e.get("pid"), e.get("tid"))
        if ph in ("B", "E", "X"):
            if ts < last.get(key, 0):
                bad("ts goes back on its thread")
            last[key] = ts
        if ph == "B":
            if not isinstance(e.get("name"), str):
                bad("B without a name")
            open_.setdefault(key, []).append(e.get("name"))
            names.add(e.get("name"))
        elif ph == "E":
            if not open_.get(key):
                bad("E without an open B on its thread")
            else:
                open_[key].pop()
        elif ph == "X":
            if not isinstance(e.get("dur"), (int, float)) or e["dur"] < 0:
                bad("X without a non-negative dur")
        elif ph == "i" or ph == "I":
            if e.get("s", "t") not in ("g", "p", "t"):
                bad("instant event with scope %r" % e.get("s"))
        else:
            bad("unexpected phase %r" % ph)
        if "args" in e and not isinstance(e["args"], dict):
            bad("args is not an object")
    left = sum(len(v) for v in open_.values())
    if left:
        fail("%d slices never closed" % left)
    if not errors and not left:
        ok("perfetto: %d trace events, slices nested on every thread" % len(doc["traceEvents"]))
    for f in ("main", "run", "work", "leaf_add", "leaf_mul"):
        if f not in names:
            fail("perfetto: no call slice named %s" % f)


def check_folded(auxcap, capture, nsamples):
    text = decode(auxcap, capture, "--format", "folded")
    total = 0
    chain = False
    for line in text.splitlines():
        m = re.match(r"^(.+) (\d+)$", line)
        if not m or " " in m.group(1).replace("[no trace]", "").replace("[lost samples]", ""):
            fail("folded line %r is not 'a;b;c N'" % line)
            return
        total += int(m.group(2))
        chain |= bool(re.search(r"(^|;)main;run;work;leaf_(add|mul)$", m.group(1)))
    if total != nsamples:
        fail("folded counts %d samples, the capture has %d" % (total, nsamples))
    elif not chain:
        fail("folded has no main;run;work;leaf_* stack")
    else:
        ok("folded: %d samples, main;run;work;leaf_* among the stacks" % total)


def check_text(auxcap, capture, nsamples, no_ctx_times):
    lines = decode(auxcap, capture, "--last-branches", "4").splitlines()
    n = skipped = 0
    for i, line in enumerate(lines):
        m = re.search(r"\] (\d+\.\d{9}): sample   cpu-clock [0-9a-f]{16} ", line)
        if m:
            n += 1
            if m.group(1) in no_ctx_times:
                skipped += 1
                continue  # no trace context (JSON checked why)
            if i + 1 >= len(lines) or not lines[i + 1].startswith("\tstack"):
                fail("text: sample line without its stack: %r" % line)
                return
    if n != nsamples:
        fail("text shows %d samples, JSON %d" % (n, nsamples))
    else:
        ok("text: %d sample lines, each with its stack%s" %
           (n, " (but %d without trace context)" % skipped if skipped else ""))


def summary(events):
    br = [(e["kind"], e["from"], e["to"]) for e in events if e["type"] == "branch"]
    st = [tuple(f["func"] for f in e["context"]["stack"]) for e in events
          if e["type"] == "sample" and e["context"]]
    gaps = [e for e in events if e["type"] == "gap"]
    return br, st, gaps


def main(argv):
    args = argv[1:]
    split = None
    min_samples = 1
    all_aligned = False
    min_known = 1
    if "--min-known" in args:
        i = args.index("--min-known")
        min_known = int(args[i + 1])
        del args[i:i + 2]
    if "--split" in args:
        i = args.index("--split")
        split = args[i + 1]
        del args[i:i + 2]
    if "--min-samples" in args:
        i = args.index("--min-samples")
        min_samples = int(args[i + 1])
        del args[i:i + 2]
    if "--all-aligned" in args:
        args.remove("--all-aligned")
        all_aligned = True
    perf_uregs = "--perf-uregs" in args
    if perf_uregs:
        args.remove("--perf-uregs")
    auxcap, capture, program, schema_path = args
    with open(schema_path) as f:
        schema = Schema(json.load(f))
    prog = Program(program)

    events = check_json(auxcap, capture, prog, schema, min_samples, all_aligned, min_known)
    nsamples = len([e for e in events if e["type"] == "sample"])
    if perf_uregs:
        check_perf_uregs(capture, [e for e in events if e["type"] == "sample"])
    lost = sum(e["lost"] for e in events if e["type"] == "loss" and e["what"] in
               ("LOST", "LOST_SAMPLES"))
    check_perfetto(auxcap, capture)
    check_folded(auxcap, capture, nsamples + lost)
    check_text(auxcap, capture, nsamples,
               {"%d.%09d" % divmod(e["time"], 10**9) for e in events
                if e["type"] == "sample" and e["context"] is None})
    if split:
        other = [json.loads(l) for l in
                 decode(auxcap, split, "--format", "json", "--last-branches", "16").splitlines()]
        a, b = summary(events), summary(other)
        pieces = len([e for e in other if e["type"] == "aux"])
        if a[0] != b[0]:
            k = next((i for i, (x, y) in enumerate(zip(a[0], b[0])) if x != y),
                     min(len(a[0]), len(b[0])))
            fail("the trace cut into %d buffers decodes to other branches (%d vs %d, first "
                 "difference at %d: %s vs %s)" % (pieces, len(a[0]), len(b[0]), k,
                                                   a[0][k:k + 1], b[0][k:k + 1]))
        elif a[1] != b[1]:
            fail("the trace cut into %d buffers gives other sample stacks" % pieces)
        elif a[2] or b[2]:
            fail("gaps: %d in one buffer, %d in %d buffers" % (len(a[2]), len(b[2]), pieces))
        else:
            ok("the trace cut into %d buffers decodes to the same %d branches and %d sample "
               "stacks, without gaps" % (pieces, len(a[0]), len(a[1])))
    print("%d failed" % len(FAILS))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
