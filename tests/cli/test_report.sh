#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# auxcap report end to end on real captures of examples/auxcap-example-loop, each checked by
# check_report.py against figures computed from outside the report (the decode stream
# aggregated in Python, nm/objdump, the program's known structure, auxcap info):
#   - a capture synthesized under the live tracer with cpu-clock-like samples (whole trace);
#   - auxcap record --emulate with the kernel's cpu-clock beside it (whole trace);
#   - auxcap record --emulate with an 8 KiB AUX buffer: TRUNCATED records and decode gaps;
#   - auxcap record --emulate --snapshot=e: the snapshot table;
#   - Intel BTS (no time, no instruction counts) and Arm SPE (samples in the trace);
# then bad input (one line, status 1), -o, and the progress bar on a pseudo-terminal.
# Usage: test_report.sh AUXCAP SYNTH EXAMPLE SCHEMA CHECK_PY PTY_PY
set -u
AUXCAP=$1 SYNTH=$2 EXAMPLE=$3 SCHEMA=$4 CHECK=$5 PTY=$6
TMP=$(mktemp -d)
. "$(dirname "$0")/keep_failed.sh"
trap 'keep_failed "$TMP"; rm -rf "$TMP"' EXIT
fails=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }

if ! "$SYNTH" "$TMP/s.data" --sample-every 300 -- "$EXAMPLE" 3000 >"$TMP/synth.out" \
	2>"$TMP/synth.err"; then
	if grep -q "Operation not permitted" "$TMP/synth.err"; then
		echo "SKIP: ptrace is not permitted here: $(cat "$TMP/synth.err")"
		exit 77
	fi
	echo "FAIL synthesizing the capture: $(cat "$TMP/synth.err")"
	exit 1
fi
echo "# synthesized: $(cat "$TMP/synth.out")"
python3 "$CHECK" "$AUXCAP" "$TMP/s.data" "$EXAMPLE" "$SCHEMA" --iterations 3000 \
	--expect-samples --expect-no-loss || fails=$((fails + 1))

record() { # NAME ITERATIONS ARGS... : auxcap record --emulate ARGS -o NAME.data -- EXAMPLE N
	name=$1 n=$2
	shift 2
	if ! "$AUXCAP" record --emulate "$@" -o "$TMP/$name.data" -- "$EXAMPLE" "$n" >/dev/null \
		2>"$TMP/$name.err"; then
		bad "auxcap record --emulate $*: $(cat "$TMP/$name.err")"
		return 1
	fi
	echo "# recorded $name: $(grep -o 'wrote .*' "$TMP/$name.err")"
}
if record clock 3000 -e intel_pt//u -e cpu-clock; then
	python3 "$CHECK" "$AUXCAP" "$TMP/clock.data" "$EXAMPLE" "$SCHEMA" --iterations 3000 \
		--expect-samples --expect-no-loss || fails=$((fails + 1))
fi
if record trunc 3000 -m 16,2; then
	python3 "$CHECK" "$AUXCAP" "$TMP/trunc.data" "$EXAMPLE" "$SCHEMA" --expect-loss ||
		fails=$((fails + 1))
fi
if record snap 3000 --snapshot=e -m ,4; then
	python3 "$CHECK" "$AUXCAP" "$TMP/snap.data" "$EXAMPLE" "$SCHEMA" --expect-snapshots ||
		fails=$((fails + 1))
fi
# Intel BTS (branches, no time, no instruction counts) and Arm SPE (the trace's own samples).
if record bts 300 -e intel_bts//u; then
	python3 "$CHECK" "$AUXCAP" "$TMP/bts.data" "$EXAMPLE" "$SCHEMA" --iterations 300 \
		--untimed --expect-no-loss || fails=$((fails + 1))
fi
if record spe 300 -e arm_spe_0/period=64/; then
	python3 "$CHECK" "$AUXCAP" "$TMP/spe.data" "$EXAMPLE" "$SCHEMA" --expect-no-loss ||
		fails=$((fails + 1))
fi

# auxcap annotate (perf annotate): every instruction's runs, taken branches and samples on
# the same captures, checked by check_annotate.py against decode's per-instruction stream.
ANSCHEMA=$(dirname "$SCHEMA")/annotate-json.schema.json
annotate_check() { # NAME ARGS...
	name=$1
	shift
	[ -f "$TMP/$name.data" ] || return 0
	python3 "$(dirname "$CHECK")/check_annotate.py" "$AUXCAP" "$TMP/$name.data" "$ANSCHEMA" \
		"$@" || fails=$((fails + 1))
}
annotate_check s --iterations 3000
annotate_check clock --iterations 3000
annotate_check trunc --lossy
annotate_check bts --iterations 300 --no-insns
annotate_check spe --no-insns
# The example exec'ing itself once: the same code at another address after the exec (PIE),
# one function counted from both images.
if "$AUXCAP" record --emulate -e intel_pt//u -e cpu-clock -o "$TMP/exec.data" -- "$EXAMPLE" 300 0 1 \
	>/dev/null 2>"$TMP/exec.err"; then
	annotate_check exec --iterations 600
else
	bad "auxcap record --emulate of an exec'ing example: $(cat "$TMP/exec.err")"
fi
# --dso and --tid pick functions and threads; SYMBOL every function of that name.
if "$AUXCAP" annotate "$TMP/clock.data" --dso libc.so.6 --top 3 --format json >"$TMP/an.json" &&
	python3 -c 'import json, os, sys
a = json.load(open(sys.argv[1]))
assert len(a["functions"]) == 3, a["functions_total"]
assert all(os.path.basename(f["dso"]) == "libc.so.6" for f in a["functions"])' "$TMP/an.json"; then
	ok "annotate --dso libc.so.6 --top 3: three functions of libc"
else
	bad "annotate --dso libc.so.6 --top 3"
fi
if "$AUXCAP" annotate "$TMP/clock.data" run leaf_add --format json >"$TMP/an.json" &&
	"$AUXCAP" annotate "$TMP/clock.data" --tid 1 --format json >"$TMP/an1.json" &&
	python3 -c 'import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert sorted(f["name"] for f in a["functions"]) == ["leaf_add", "run"], a["functions"]
assert b["insns"] == 0 and b["functions"] == [], b' "$TMP/an.json" "$TMP/an1.json"; then
	ok "annotate run leaf_add: those two; --tid 1 (no such thread): nothing counted"
else
	bad "annotate SYMBOL..., --tid"
fi

# Bad input: one line on standard error, status 1, nothing on standard output.
CMD=report
one_line() { # WHAT PATTERN ARGS...: auxcap $CMD ARGS fails with one line matching PATTERN
	what=$1 pat=$2
	shift 2
	"$AUXCAP" "$CMD" "$@" >"$TMP/o" 2>"$TMP/e"
	st=$?
	if [ $st -eq 1 ] && [ "$(wc -l <"$TMP/e")" -eq 1 ] && grep -q -e "$pat" "$TMP/e" &&
		[ ! -s "$TMP/o" ]; then
		ok "$what: $(cat "$TMP/e")"
	else
		bad "$what: status $st, stderr: $(cat "$TMP/e")"
	fi
}
one_line "no file" "no file given"
one_line "missing file" "nosuch.data" "$TMP/nosuch.data"
one_line "bad --format" "bad --format" "$TMP/s.data" --format xml
one_line "bad --sort" "bad --sort" "$TMP/s.data" --sort fastest
one_line "bad --top" "bad --top" "$TMP/s.data" --top -1
one_line "unknown option" "unknown option" "$TMP/s.data" --frobnicate
one_line "--latency of a function never called" "no call into" "$TMP/s.data" --latency nosuch
one_line "--latency without names" "--latency needs a value" "$TMP/s.data" --latency ""
one_line "--slowest without --latency" "give --latency" "$TMP/s.data" --slowest 3
one_line "bad --slowest" "bad --slowest" "$TMP/s.data" --latency work --slowest 0
one_line "two files" "one capture at a time" "$TMP/s.data" "$TMP/s.data"
one_line "unwritable -o" "cannot" "$TMP/s.data" -o "$TMP/nodir/r.txt"
printf 'not a capture\n' >"$TMP/junk.data"
one_line "not a perf.data file" "junk.data" "$TMP/junk.data"
if "$AUXCAP" record -e dummy -o "$TMP/noaux.data" -- true >/dev/null 2>&1; then
	one_line "a capture without AUX trace or samples" "no AUX trace" "$TMP/noaux.data"
else
	bad "auxcap record -e dummy -- true failed"
fi

# -o writes what standard output gets.
"$AUXCAP" report "$TMP/s.data" >"$TMP/stdout.txt" 2>/dev/null
"$AUXCAP" report "$TMP/s.data" -o "$TMP/out.txt" >"$TMP/o" 2>"$TMP/e"; st=$?
if [ $st -eq 0 ] && [ ! -s "$TMP/o" ] && [ ! -s "$TMP/e" ] && cmp -s "$TMP/stdout.txt" "$TMP/out.txt"
then
	ok "-o FILE holds the report, standard output and error stay empty"
else
	bad "-o FILE (status $st)"
fi

# JSON stays valid UTF-8 with a file name that is not (a Latin-1 byte).
cp "$TMP/s.data" "$TMP/caf$(printf '\351').data"
"$AUXCAP" report "$TMP/caf$(printf '\351').data" --format json >"$TMP/l1.json" 2>"$TMP/e"; st=$?
if [ $st -eq 0 ] && python3 -c 'import json, sys
r = json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))
assert r["file"].endswith("caf\u00e9.data"), r["file"]' "$TMP/l1.json"; then
	ok "JSON with a non-UTF-8 file name: valid UTF-8, the byte escaped"
else
	bad "JSON with a non-UTF-8 file name (status $st)"
fi

# A capture of counter samples without an AUX event (auxcap record's default, cpu-clock):
# report and decode read it as perf report does, where they said "holds no AUX trace".
if "$AUXCAP" record -o "$TMP/so.data" -- "$EXAMPLE" 100000000 >/dev/null 2>"$TMP/so.err"; then
	python3 "$CHECK" "$AUXCAP" "$TMP/so.data" "$EXAMPLE" "$SCHEMA" --expect-samples --untimed \
		>"$TMP/so.check" 2>&1 || { cat "$TMP/so.check"; fails=$((fails + 1)); }
	one_line "--latency of a capture without trace" "no AUX trace" "$TMP/so.data" --latency work
	"$AUXCAP" report "$TMP/so.data" >"$TMP/so.rep" 2>&1; st=$?
	n=$("$AUXCAP" info "$TMP/so.data" | awk '$1=="SAMPLE"{print $2}')
	if [ $st -eq 0 ] && grep -q '^# trace: *none (no AUX event' "$TMP/so.rep" &&
		grep -Eq "^# samples: +cpu-clock: $n\$" "$TMP/so.rep" &&
		grep -Eq ' work +\[auxcap-example-loop\]' "$TMP/so.rep"; then
		ok "report of a samples-only capture: $n samples, no trace, the loop's functions"
	else
		bad "report of a samples-only capture (status $st): $(head -3 "$TMP/so.rep")"
	fi
	"$AUXCAP" decode "$TMP/so.data" >"$TMP/so.txt" 2>&1; st=$?
	ns=$(grep -c ' sample   cpu-clock ' "$TMP/so.txt")
	if [ $st -eq 0 ] && [ "$ns" = "$n" ] && ! grep -q 'no trace of this thread' "$TMP/so.txt"; then
		ok "decode of it: the $ns samples, no empty context lines"
	else
		bad "decode of a samples-only capture (status $st, $ns samples of $n)"
	fi
	"$AUXCAP" decode --format folded "$TMP/so.data" >"$TMP/so.folded" 2>&1; st=$?
	sum=$(awk '{s += $NF} END {print s}' "$TMP/so.folded")
	work=$(awk '$1=="work"{print $2}' "$TMP/so.folded")
	rwork=$(awk '$NF=="[auxcap-example-loop]" && $(NF-1)=="work"{print $2}' "$TMP/so.rep" | head -1)
	if [ $st -eq 0 ] && [ "$sum" = "$n" ] && [ -n "$work" ] && [ "$work" = "$rwork" ]; then
		ok "folded: $sum samples by function, work $work as in the report"
	else
		bad "folded of a samples-only capture (status $st, sum $sum of $n, work $work vs $rwork)"
	fi
else
	echo "skip samples-only capture: $(cat "$TMP/so.err")"
fi

# perf's --itrace periods: i1000i writes every 1000th instruction of a thread, i1ms the first
# of each millisecond of perf time; c and r together (perf's cr) and e are accepted.
"$AUXCAP" decode "$TMP/s.data" --itrace=i --no-progress >"$TMP/i.all" 2>&1 &&
"$AUXCAP" decode "$TMP/s.data" --itrace=i1000i --no-progress >"$TMP/i.1000i" 2>&1 &&
"$AUXCAP" decode "$TMP/s.data" --itrace=i1ms --no-progress >"$TMP/i.1ms" 2>&1; st=$?
if [ $st -eq 0 ] && python3 - "$TMP" <<'PY'
import re, sys
d = sys.argv[1]
def insns(name):
    out = []
    for l in open(d + "/" + name):
        m = re.match(r"\S+\s+(\d+) \[...\] (\d+)\.(\d+): ([0-9a-f]{16}) ", l)
        if m:
            out.append((int(m.group(1)), int(m.group(2)) * 10**9 + int(m.group(3)), m.group(4)))
    return out
every = insns("i.all")
by_tid = {}
for e in every:
    by_tid.setdefault(e[0], []).append(e)
want = sorted(e for l in by_tid.values() for e in l[::1000])
got = sorted(insns("i.1000i"))
assert len(every) > 100000 and got == want, (len(every), len(got), len(want))
want, seen = [], {}
for e in every:
    if e[0] not in seen or e[1] >= seen[e[0]]:
        want.append(e)
        seen[e[0]] = (e[1] // 10**6 + 1) * 10**6
assert sorted(insns("i.1ms")) == sorted(want) and len(want) > 100, (len(want),)
print("# %d instructions, %d at i1000i, %d at i1ms" % (len(every), len(got), len(want)))
PY
then
	ok "--itrace=i1000i: every 1000th instruction of a thread; i1ms: the first of each ms"
else
	bad "--itrace periods (status $st)"
fi
"$AUXCAP" decode "$TMP/s.data" --itrace=c --no-progress >"$TMP/c.out" 2>&1
"$AUXCAP" decode "$TMP/s.data" --itrace=cre --no-progress >"$TMP/cre.out" 2>&1; st=$?
"$AUXCAP" decode "$TMP/s.data" --itrace=i1t >"$TMP/t.out" 2>&1; st2=$?
if [ $st -eq 0 ] && cmp -s "$TMP/c.out" "$TMP/cre.out" && [ $st2 -ne 0 ] &&
	[ "$(wc -l <"$TMP/t.out")" -eq 1 ] && grep -q "ticks) is not supported" "$TMP/t.out"; then
	ok "--itrace=cre as c; i1t: one line ($(cat "$TMP/t.out"))"
else
	bad "--itrace=cre (status $st), i1t (status $st2): $(cat "$TMP/t.out")"
fi

# --srcline: every instruction of the program's functions gets the line addr2line (binutils, an
# independent reader of the same DWARF) gives its link-time address, the file where addr2line
# finds it (the JSON's dir joined with its file); samples get their IP's.
if ! readelf -S "$EXAMPLE" 2>/dev/null | grep -q '\.debug_line'; then
	echo "# skipped the --srcline check: the example has no DWARF line table (built without -g)"
elif command -v addr2line >/dev/null && "$AUXCAP" decode "$TMP/s.data" --itrace=i --srcline \
	--format json --no-progress >"$TMP/src.json" 2>"$TMP/src.err" &&
	PYTHONPATH=$(dirname "$CHECK") python3 - "$TMP" "$EXAMPLE" \
		"$(dirname "$SCHEMA")/decode-json.schema.json" <<'PY'
import os, re, subprocess, sys
from check_decode import validated_lines
d, prog = sys.argv[1], sys.argv[2]
syms = {}
for l in subprocess.run(["nm", prog], capture_output=True, text=True).stdout.splitlines():
    p = l.split()
    if len(p) == 3 and p[1] in "Tt":
        syms[p[2]] = int(p[0], 16)
want, seen, samples = {}, 0, 0
for e in validated_lines(sys.argv[3], d + "/src.json"):
    if e["type"] not in ("insn", "sample") or not e.get("ip_sym"):
        continue
    m = re.match(r"(\w+)\+0x([0-9a-f]+)$", e["ip_sym"])
    if e["type"] == "insn" and m and m.group(1) in ("main", "run", "work", "leaf_add", "leaf_mul"):
        v = syms[m.group(1)] + int(m.group(2), 16)
        s = e["srcline"]
        want.setdefault(v, set()).add((os.path.normpath(os.path.join(s["dir"] or "", s["file"])), s["line"]) if s else None)
        seen += 1
    elif e["type"] == "sample":
        samples += "srcline" in e
out = subprocess.run(["addr2line", "-e", prog] + ["0x%x" % v for v in want],
                     capture_output=True, text=True).stdout.splitlines()
bad = []
for v, line in zip(want, out):
    f, _, n = re.sub(r" \(discriminator \d+\)", "", line).rpartition(":")
    ref = (os.path.normpath(f), int(n)) if n.isdigit() and int(n) else None
    if want[v] != {ref}:
        bad.append("0x%x: %s, addr2line %s" % (v, want[v], ref))
assert len(want) > 20 and not bad and samples > 0, (len(want), bad[:3], samples)
print("# %d instructions at %d addresses of the program: lines as addr2line's" % (seen, len(want)))
PY
then
	ok "--srcline: the program's instructions' file:line as addr2line gives them; the JSON validates"
elif ! command -v addr2line >/dev/null; then
	echo "# skipped --srcline check: addr2line (binutils) is not installed"
else
	bad "--srcline: $(cat "$TMP/src.err")"
fi

# annotate --format lcov against gcov: the example built with --coverage (gcc's own counters,
# written by the program) and traced in the same run; every line both call code has the same
# count, lines never run included.  gcc's line numbers of a function's entry differ (gcov: the
# line of its name; DWARF: its brace): those lines are in one set only.
EXAMPLE_SRC=$(dirname "$0")/../../examples/example_loop.c
case $AUXCAP in /*) AUXCAP_ABS=$AUXCAP ;; *) AUXCAP_ABS=$PWD/$AUXCAP ;; esac
if command -v cc >/dev/null && command -v gcov >/dev/null && [ -f "$EXAMPLE_SRC" ]; then
	if mkdir -p "$TMP/cov" && cp "$EXAMPLE_SRC" "$TMP/cov/" &&
	(cd "$TMP/cov" && cc -g -O0 --coverage -o loop example_loop.c &&
		"$AUXCAP_ABS" record --emulate -e intel_pt//u -o cov.data -- ./loop 300 \
			>/dev/null 2>cov.err &&
		gcov -j -o . loop-example_loop.gcda >/dev/null 2>&1 &&
		"$AUXCAP_ABS" annotate cov.data --format lcov --dso loop -o cov.info) &&
	python3 - "$TMP/cov" <<'PY'
import gzip, json, sys
d = sys.argv[1]
g = json.load(gzip.open(d + "/loop-example_loop.gcov.json.gz"))
gcov = {l["line_number"]: l["count"] for f in g["files"] if f["file"].endswith("example_loop.c")
        for l in f["lines"]}
ours, fnda, sf = {}, {}, []
for line in open(d + "/cov.info"):
    k, _, v = line.strip().partition(":")
    if k == "SF":
        sf.append(v)
    elif k == "DA" and sf[-1].endswith("/example_loop.c"):
        n, c = v.split(",")
        ours[int(n)] = int(c)
    elif k == "FNDA" and sf[-1].endswith("/example_loop.c"):
        c, name = v.split(",")
        fnda[name] = int(c)
common = sorted(set(gcov) & set(ours))
diff = [(n, gcov[n], ours[n]) for n in common if gcov[n] != ours[n]]
assert len(common) >= 0.8 * len(gcov) and not diff, (len(common), len(gcov), diff[:5])
assert any(gcov[n] == 0 for n in common) and fnda.get("work") == 300 and fnda.get("main") == 1
print("# lcov vs gcov: %d lines with the same counts (%d of them never run), %d functions" %
      (len(common), sum(1 for n in common if not gcov[n]), len(fnda)))
PY
	then
		ok "annotate --format lcov: every line's count is gcov's for the same run"
	else
		bad "annotate --format lcov against gcov: $(cat "$TMP/cov/cov.err" 2>/dev/null)"
	fi
	# lcov's own tools read the tracefile: its summary is ours, genhtml renders it.
	if command -v lcov >/dev/null && command -v genhtml >/dev/null && [ -f "$TMP/cov/cov.info" ]; then
		lf=$(awk -F: '/^LF:/ { n += $2 } END { print n + 0 }' "$TMP/cov/cov.info")
		lh=$(awk -F: '/^LH:/ { n += $2 } END { print n + 0 }' "$TMP/cov/cov.info")
		if lcov --summary "$TMP/cov/cov.info" 2>&1 | grep -q "lines\.*: .*($lh of $lf lines)" &&
			genhtml -q "$TMP/cov/cov.info" -o "$TMP/cov/html" >/dev/null 2>&1 &&
			[ -s "$TMP/cov/html/index.html" ]; then
			ok "lcov --summary reads the tracefile ($lh of $lf lines) and genhtml renders it"
		else
			bad "lcov or genhtml on the tracefile: $(lcov --summary "$TMP/cov/cov.info" 2>&1 | tail -3)"
		fi
	else
		echo "skip lcov and genhtml on the tracefile: not installed (apt-get install lcov)"
	fi
else
	echo "skip lcov against gcov: no cc or gcov here"
fi
CMD=annotate
one_line "annotate --format lcov of a capture without line tables" "no line tables" \
	"$TMP/s.data" --format lcov --dso libauxcap-nothing.so
one_line "annotate --format lcov with a symbol" "covers whole files" "$TMP/s.data" work \
	--format lcov
CMD=report

# decode --symbols, --dsos (perf script's): exactly the trace events and samples at those
# functions (by decode's own symbol names) or in those files (by the addresses of their
# mappings), counted again here in the whole stream.
codefilter() { # WHAT OPTION LIST
	"$AUXCAP" decode "$TMP/clock.data" --format json >"$TMP/cf-all.json" 2>/dev/null &&
	"$AUXCAP" decode "$TMP/clock.data" --format json "$2" "$3" >"$TMP/cf.json" 2>"$TMP/cf.err" &&
	python3 - "$TMP" "$1" "$3" <<'PY'
import json, os, sys
d, what, names = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
maps = []
def code_of(e, key):
    a = e.get(key)
    if a is None:
        return False
    if what == "sym":
        s = e.get(key + "_sym") or ""
        return s.rsplit("+", 1)[0] in names
    a = int(a, 16)
    return any(lo <= a < hi for lo, hi in maps)
def wanted(e):
    t = e["type"]
    if t == "mmap" and what == "dso" and os.path.basename(e["filename"]) in names:
        maps.append((int(e["addr"], 16), int(e["addr"], 16) + e["len"]))
    if t in ("gap", "loss", "lost", "aux_lost"):
        return True
    if t == "branch":
        return code_of(e, "from") or code_of(e, "to")
    if t == "sample":
        return code_of(e["context"] if e.get("context") else e, "ip")
    if t in ("trace_start", "trace_end", "insn"):
        return code_of(e, "ip")
    return False
want = [l for l in open(d + "/cf-all.json") if wanted(json.loads(l))]
got = open(d + "/cf.json").readlines()
kinds = sorted({json.loads(l)["type"] for l in got})
assert got == want and len(got) > 10, (len(got), len(want))
print("# %s %s: %d events (%s)" % (what, ",".join(names), len(got), " ".join(kinds)))
PY
}
if codefilter sym --symbols leaf_add,leaf_mul; then
	ok "decode --symbols leaf_add,leaf_mul: exactly the branches from or to them and the samples in them"
else
	bad "decode --symbols: $(cat "$TMP/cf.err")"
fi
if codefilter dso --dsos auxcap-example-loop; then
	ok "decode --dsos auxcap-example-loop: exactly the events at the program's own mappings"
else
	bad "decode --dsos: $(cat "$TMP/cf.err")"
fi

# auxcap diff (perf diff): each function's share in two captures, computed again here from the
# two JSON reports; a capture against itself changes nothing; no metric in common is an error.
diffcheck() { # BY BASE NEW
	by=$1 base=$2 new=$3
	"$AUXCAP" diff "$TMP/$base.data" "$TMP/$new.data" --by "$by" --top 0 --format json \
		>"$TMP/diff.json" 2>"$TMP/diff.err" &&
	"$AUXCAP" report "$TMP/$base.data" --top 0 --format json --no-progress >"$TMP/db.json" &&
	"$AUXCAP" report "$TMP/$new.data" --top 0 --format json --no-progress >"$TMP/dn.json" &&
	PYTHONPATH=$(dirname "$CHECK") python3 - "$TMP" "$by" "$(dirname "$SCHEMA")/diff-json.schema.json" <<'PY'
import json, os, sys
from check_decode import Schema
d, by = sys.argv[1], sys.argv[2]
diff = json.load(open(d + "/diff.json"))
schema = Schema(json.load(open(sys.argv[3])))
err = schema.errors(diff, schema.root)
assert err is None, "schema: " + err
ev = diff["event"]
def shares(rep):
    tot = {"time": rep["trace"]["ns"], "insns": rep["trace"]["instructions"],
           "samples": sum(t["samples"] for t in rep["samples"] if t["event"] == ev)}[by]
    out = {}
    for f in rep["functions"]:
        v = {"time": f["self_ns"], "insns": f["self_insns"],
             "samples": f["samples"].get(ev, {}).get("self", 0)}[by]
        if v:
            key = (f["name"] or ("[kernel]" if f["kernel"] else "[unknown]"),
                   os.path.basename(f["dso"]) if f["dso"] else None)
            out[key] = out.get(key, 0) + v
    return tot, out
(bt, b), (nt, n) = shares(json.load(open(d + "/db.json"))), shares(json.load(open(d + "/dn.json")))
got = {(f["name"], f["dso"]): (f["base"], f["new"]) for f in diff["functions"]}
want = {k: (b.get(k, 0), n.get(k, 0)) for k in set(b) | set(n)}
deltas = [abs(f["delta"]) for f in diff["functions"]]
assert diff["metric"] == by and (diff["base_total"], diff["new_total"]) == (bt, nt), diff
assert got == want, sorted(set(got.items()) ^ set(want.items()))[:4]
assert deltas == sorted(deltas, reverse=True)
for f in diff["functions"]:
    assert abs(f["base_share"] - 100.0 * f["base"] / bt) < 1e-4
    assert abs(f["delta"] - (f["new_share"] - f["base_share"])) < 1e-4
print("# diff --by %s: %d functions, largest change %+.2f%% (%s)" % (by, len(got),
      diff["functions"][0]["delta"], diff["functions"][0]["name"]))
PY
}
for by in time insns samples; do
	if diffcheck $by s clock; then
		ok "diff --by $by: every function's counts and shares as the two reports give them; the JSON validates"
	else
		bad "diff --by $by: $(cat "$TMP/diff.err")"
	fi
done
CMD=diff
one_line "diff of one capture" "needs two captures" "$TMP/s.data"
one_line "diff --event with --by time" "goes with --by samples" "$TMP/s.data" "$TMP/clock.data" \
	--by time --event cpu-clock
one_line "diff --event of no samples" "no samples of event 'page-faults'" "$TMP/s.data" \
	"$TMP/clock.data" --event page-faults
one_line "diff of a missing capture" "nosuch.data" "$TMP/s.data" "$TMP/nosuch.data"
CMD=decode
one_line "decode --symbols with Perfetto" "pick events of the text or JSON" "$TMP/s.data" \
	--symbols work --format perfetto
one_line "decode --dsos without a value" "needs a value: files of code" "$TMP/s.data" --dsos=
CMD=annotate
one_line "annotate without a file" "no capture given" --top 2
one_line "annotate of a missing capture" "nosuch.data" "$TMP/nosuch.data"
one_line "annotate --top -1" "bad --top" "$TMP/s.data" --top -1
one_line "annotate --format xml" "bad --format" "$TMP/s.data" --format xml
one_line "annotate --frobnicate" "unknown option" "$TMP/s.data" --frobnicate
one_line "annotate of a function that did not run" "no function named no_such_fn" \
	"$TMP/s.data" no_such_fn
one_line "annotate of a capture without AUX trace" "no AUX trace" "$TMP/noaux.data"
# A capture of counter samples only: annotate gives the samples per instruction (perf
# annotate's view), each function's sum its self samples in the report.
if [ -f "$TMP/so.data" ]; then
	if "$AUXCAP" annotate "$TMP/so.data" --top 0 --format json >"$TMP/so-an.json" \
		2>"$TMP/so-an.err" &&
		"$AUXCAP" report "$TMP/so.data" --top 0 --format json --no-progress >"$TMP/so-rep.json" &&
		python3 -c 'import json, sys
a, r = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
want = {}
for f in r["functions"]:
    n = f["samples"].get("cpu-clock", {}).get("self", 0)
    if f["name"] and n and f["dso"] != "[kernel.kallsyms]":
        want[(f["name"], f["dso"])] = want.get((f["name"], f["dso"]), 0) + n
got = {(f["name"], f["dso"]): f["samples"].get("cpu-clock", 0) for f in a["functions"]}
assert a["insns"] == 0 and got == want, sorted(set(got.items()) ^ set(want.items()))[:4]
assert all(f["samples"]["cpu-clock"] == sum(x["samples"].get("cpu-clock", 0)
           for x in f["instructions"]) for f in a["functions"])
print("# annotate of samples only: %d functions, %d samples" % (len(got), sum(got.values())))' \
		"$TMP/so-an.json" "$TMP/so-rep.json"; then
		ok "annotate of a samples-only capture: each function's samples are the report's"
	else
		bad "annotate of a samples-only capture: $(cat "$TMP/so-an.err")"
	fi
fi
CMD=report
"$AUXCAP" diff "$TMP/clock.data" "$TMP/clock.data" --top 0 >"$TMP/same.txt" 2>&1; st=$?
nz=$(awk '/^ +[0-9.]+% +[0-9.]+% +[-+][0-9.]+%/ && $3 != "+0.00%"' "$TMP/same.txt" | wc -l)
"$AUXCAP" diff "$TMP/clock.data" "$TMP/bts.data" --by time >"$TMP/nt.out" 2>"$TMP/nt.err"; st2=$?
if [ $st -eq 0 ] && [ "$nz" -eq 0 ] && grep -q "^# functions: [1-9]" "$TMP/same.txt" &&
	[ $st2 -eq 1 ] && [ ! -s "$TMP/nt.out" ] && [ "$(wc -l <"$TMP/nt.err")" -eq 1 ] &&
	grep -q "bts.data' has no trace time" "$TMP/nt.err"; then
	ok "diff of a capture with itself: no change; --by time with an untimed trace: $(cat "$TMP/nt.err")"
else
	bad "diff itself (status $st, $nz changed) or --by time of BTS (status $st2): $(cat "$TMP/nt.err")"
fi

# The progress bar on a terminal.
python3 "$PTY" "$AUXCAP" "$TMP/s.data" "$TMP" || fails=$((fails + 1))

echo "# $fails failed"
[ $fails -eq 0 ]
