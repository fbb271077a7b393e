#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""decode --inline and annotate on a capture of tests/decode/inline_prog.c, checked from
outside:
  - JSON: each inline chain (of a sample, a stack frame, an instruction) in the program is what
    binutils' addr2line -i -f gives for that address (names and lines; null where addr2line
    gives the function alone), with chains of depth 3 (inner in middle in outer) and 2 (inner in
    twice) among them; without --inline there is no "inline" member;
  - text: each sample's stack line names the JSON's inlined frames, "(inlined)", before the
    frame's function;
  - perfetto: each sample's stack arg names the JSON's inlined frames the same way;
  - folded: the stacks with inlined frames are the JSON's samples folded by hand, and the
    total weight is that of folded without --inline;
  - annotate: each instruction's inline chain (JSON) likewise, the source lines named by the
    function inlined there (--lines; the program's text says which function a line is in), and
    in the listing;
  - the program's C++ and Rust names demangled as c++filt reads them, raw with --no-demangle;
  - the JSON valid against docs/decode-json.schema.json and docs/annotate-json.schema.json
    (check_decode.py's checker).
Usage: check_inline.py AUXCAP CAPTURE PROG SCHEMA"""
import collections
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_decode import Schema  # noqa: E402


def run(*args):
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def loads(prog):
    """(vaddr, offset, filesz) of the PT_LOAD segments of @prog (readelf)."""
    segs = []
    for line in run("readelf", "-lW", prog).splitlines():
        f = line.split()
        if f and f[0] == "LOAD":
            segs.append((int(f[2], 16), int(f[1], 16), int(f[4], 16)))
    return segs


def main():
    auxcap, capture, prog, schema_path = sys.argv[1:5]
    segs = loads(prog)
    with open(schema_path) as f:
        schema = Schema(json.load(f))
    # (samples from the default, branch, decode: the text, folded and Perfetto runs below are
    # of that; instructions from --itrace=i)
    events = [json.loads(l) for l in run(auxcap, "decode", capture, "--inline", "--format",
                                          "json").splitlines()]
    ievents = [json.loads(l) for l in run(auxcap, "decode", capture, "--inline", "--itrace=i",
                                           "--format", "json").splitlines()]
    for k, e in enumerate(events + ievents):
        if e["type"] == "insn" and k % 16:
            continue  # (all of one shape: one in 16 is checked, for time)
        err = schema.errors(e, schema.root)
        if err:
            sys.exit("FAIL decode --inline --format json: schema: " + err)
    plain = run(auxcap, "decode", capture, "--format", "json")
    if '"inline"' in plain:
        sys.exit("FAIL decode --format json without --inline has \"inline\" members")
    maps = [(int(e["addr"], 16), e["len"], e["pgoff"]) for e in events
            if e["type"] == "mmap" and e.get("filename") == prog]
    if not maps:
        sys.exit("FAIL no mapping of %s in the capture" % prog)

    def vaddr(a):
        for start, length, pgoff in maps:
            if start <= a < start + length:
                off = a - start + pgoff
                for va, fo, sz in segs:
                    if fo <= off < fo + sz:
                        return va + off - fo
        return None

    # every (address, chain) the JSON gives for code of the program
    todo = []
    samples = [e for e in events if e["type"] == "sample" and e["context"]]
    for e in samples:
        stack = e["context"]["stack"]
        if stack and "inline" not in e:
            sys.exit("FAIL a sample without its \"inline\" member")
        for i, fr in enumerate(stack):
            va = vaddr(int(fr["at"], 16))
            if fr["at"] == fr["func"] and i:
                continue  # (the call's place is not known: no chain)
            if va is not None:
                todo.append((va, fr["inline"]))
        if stack and stack[0]["inline"] != e["inline"]:
            sys.exit("FAIL a sample's inline chain is not its first frame's")
    if not todo:
        sys.exit("FAIL no sample's stack is in the program")
    insns = 0
    for e in ievents:
        if e["type"] == "insn":
            va = vaddr(int(e["ip"], 16))
            if va is not None:
                todo.append((va, e["inline"]))
                insns += 1
    if not insns:
        sys.exit("FAIL no instruction of the program in decode --itrace=i")
    # annotate: every instruction of outer() and twice(), and the source lines' functions
    an_schema = os.path.join(os.path.dirname(schema_path), "annotate-json.schema.json")
    with open(an_schema) as f:
        an_schema = Schema(json.load(f))
    an = json.loads(run(auxcap, "annotate", capture, "outer", "twice", "--format", "json"))
    err = an_schema.errors(an, an_schema.root)
    if err:
        sys.exit("FAIL annotate --format json: schema: " + err)
    an_insns = 0
    for fn in an["functions"]:
        for x in fn["instructions"]:
            todo.append((vaddr(int(x["addr"], 16)), x["inline"]))
            an_insns += 1
    if an_insns < 10:
        sys.exit("FAIL annotate outer twice: %d instructions" % an_insns)
    addrs = sorted({va for va, _ in todo})
    out = run("addr2line", "-a", "-i", "-f", "-e", prog, *["0x%x" % a for a in addrs])
    ref, cur = {}, None
    lines = out.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("0x"):
            cur = int(lines[i], 16)
            ref[cur] = []
            i += 1
            continue
        name, place = lines[i], lines[i + 1].split(" (discriminator")[0]
        ref[cur].append((name, int(place.rsplit(":", 1)[1]) if place[-1].isdigit() else 0))
        i += 2
    depths = collections.Counter()
    for va, chain in todo:
        want = ref[va]
        got = [(f["func"], f["line"] or 0) for f in chain] if chain else None
        if len(want) == 1:
            if got is not None:
                sys.exit("FAIL 0x%x: addr2line has no inlining, decode %s" % (va, got))
        elif got != want:
            sys.exit("FAIL 0x%x: decode %s, addr2line %s" % (va, got, want))
        depths[len(want)] += 1
    print("# %d frames of samples, %d instructions (decode) and %d (annotate) compared with "
          "addr2line -i: by depth %s" % (len(todo) - insns - an_insns, insns, an_insns,
                                         dict(sorted(depths.items()))))
    if not depths[3] or not depths[2]:
        sys.exit("FAIL no sample in inner-in-middle-in-outer or inner-in-twice")

    # annotate --lines: a line's function is the one inlined there (DWARF), if any
    lines = json.loads(run(auxcap, "annotate", capture, "outer", "twice", "--lines",
                           "--format", "json"))
    err = an_schema.errors(lines, an_schema.root)
    if err:
        sys.exit("FAIL annotate --lines --format json: schema: " + err)
    src = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "inline_prog.c")).read()
    body = {}  # line -> the function whose body it is in
    cur = None
    for n, text in enumerate(src.splitlines(), 1):
        if text.startswith(("static inline", "__attribute__", "int main")):  # a definition
            cur = None
            for name in ("inner", "middle", "outer", "twice"):
                if " " + name + "(" in text:
                    cur = name
        body[n] = cur
    for l in lines["lines"]:
        want = body.get(l["line"])
        if l["file"].endswith("inline_prog.c") and want:
            if l["function"] != want or l["inlined"] != (want in ("inner", "middle")):
                sys.exit("FAIL annotate --lines: line %d is in %s, annotate %s (inlined %s)" %
                         (l["line"], want, l["function"], l["inlined"]))
    text = run(auxcap, "annotate", capture, "outer")
    if "[inlined: inner <- middle]" not in text or "[inlined: middle]" not in text:
        sys.exit("FAIL annotate outer: its source lines do not name inner and middle inlined")
    print("# annotate --lines: %s" % ", ".join("%d %s%s" % (l["line"], l["function"],
          " (inlined)" if l["inlined"] else "") for l in lines["lines"]))

    # text: the stack line names the inlined frames before each frame's function
    text = [l for l in run(auxcap, "decode", capture, "--inline").splitlines()
            if l.startswith("\tstack")]  # ("stack (ip not found in the trace near it):" too)
    want = [sum(len(f["inline"]) - 1 for f in e["context"]["stack"] if f["inline"])
            for e in samples]
    got = [l.count(" (inlined)") for l in text]
    if got != want:
        sys.exit("FAIL text stack lines: %d inlined frames, JSON %d" % (sum(got), sum(want)))
    if not any(" <- ".join(["inner (inlined)", "middle (inlined)", "outer+"]) in l
               for l in text):
        sys.exit("FAIL no text stack line with inner and middle inlined in outer")

    # perfetto: a sample's stack arg names the inlined frames before each frame's function
    pf = json.loads(run(auxcap, "decode", capture, "--inline", "--format", "perfetto"))
    got = collections.Counter(tuple(e["args"]["stack"]) for e in pf["traceEvents"]
                              if e.get("cat") == "sample" and "stack" in e.get("args", {}))
    want = collections.Counter()
    for e in samples:
        names = []
        for f in e["context"]["stack"]:
            if f["inline"]:
                names += [g["func"] + " (inlined)" for g in f["inline"][:-1]]
            names.append(f["func_sym"])
        want[tuple(names)] += 1
    if got != want:
        sys.exit("FAIL perfetto --inline: sample stacks differ from the JSON's")
    if not any("inner (inlined)" in k for k in got):
        sys.exit("FAIL perfetto --inline: no sample stack names inner inlined")

    # names: the program's C++ and Rust functions demangled as c++filt reads them (less a Rust
    # name's hash and crate disambiguator), the raw names with --no-demangle
    raw = ["_ZN6auxcap4demo5scaleEm", "_ZNK6auxcap3BoxIiE3getEv",
           "_ZN6auxcap5shift17h0123456789abcdefE", "_RNvCs1234_6auxcap5shift"]
    shown = [re.sub(r"::h[0-9a-f]{16}$", "", re.sub(r"\[[0-9a-f]+\]", "", n))
             for n in run("c++filt", *raw).splitlines()]
    called = lambda evs: {e["to_sym"].rsplit("+0x", 1)[0] for e in evs
                          if e["type"] == "branch" and e["kind"] == "call" and e["to_sym"]}
    raw_events = [json.loads(l) for l in run(auxcap, "decode", capture, "--no-demangle",
                                             "--format", "json").splitlines()]
    if not set(shown) <= called(events) or set(raw) & called(events):
        sys.exit("FAIL decode: calls of %s, want %s" % (sorted(called(events)), shown))
    if not set(raw) <= called(raw_events):
        sys.exit("FAIL decode --no-demangle: calls of %s, want %s" %
                 (sorted(called(raw_events)), raw))
    # named by users without the parameters: annotate SYMBOL and decode --symbols
    an = json.loads(run(auxcap, "annotate", capture, "auxcap::demo::scale", "--format", "json"))
    if [f["name"] for f in an["functions"]] != [shown[0]]:
        sys.exit("FAIL annotate auxcap::demo::scale: %s" % [f["name"] for f in an["functions"]])
    picked = [json.loads(l) for l in run(auxcap, "decode", capture, "--symbols",
                                         "auxcap::demo::scale", "--format", "json").splitlines()]
    br = [e for e in picked if e["type"] == "branch"]
    if not br or not all(shown[0] in (e["from_sym"] or "") + (e["to_sym"] or "") for e in br):
        sys.exit("FAIL decode --symbols auxcap::demo::scale: %d branches, not all its" % len(br))
    print("# names demangled as c++filt: %s; annotate and --symbols take %s" %
          (", ".join(sorted(set(shown))), "auxcap::demo::scale"))

    # folded: the program's stacks are the JSON's samples folded by hand
    def weights(args):
        w = collections.Counter()
        for l in run(auxcap, "decode", capture, "--format", "folded", *args).splitlines():
            stack, n = l.rsplit(" ", 1)
            w[stack] += int(n)
        return w
    fold, fold_plain = weights(["--inline"]), weights([])
    if sum(fold.values()) != sum(fold_plain.values()):
        sys.exit("FAIL folded --inline weighs %d, without %d" %
                 (sum(fold.values()), sum(fold_plain.values())))
    mine = collections.Counter()
    for e in samples:
        names = []
        for f in reversed(e["context"]["stack"]):
            names.append(f["func_sym"])
            if f["inline"]:
                names += [g["func"] for g in reversed(f["inline"][:-1])]
        mine[";".join(names)] += 1
    keep = lambda w: {k: v for k, v in w.items() if ";outer" in k or ";twice" in k}
    if keep(fold) != keep(mine):
        sys.exit("FAIL folded --inline: %s, JSON folded by hand %s" % (keep(fold), keep(mine)))
    print("# folded --inline: %d samples in outer and twice, as the JSON's, %s" %
          (sum(keep(fold).values()), sorted(keep(fold).items(), key=lambda kv: -kv[1])[:3]))


if __name__ == "__main__":
    main()
