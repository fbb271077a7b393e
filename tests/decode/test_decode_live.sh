#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The decode stage end to end on a real program: examples/auxcap-example-loop runs under the
# live tracer (ptrace single-step, Intel PT made with libipt's encoder), with cpu-clock-like
# samples taken at executed instructions; `auxcap decode` must line every sample up with the
# trace, give it the program's call structure, and write JSON, Perfetto, folded and text
# output that check_decode.py validates (schema, Trace Event Format, objdump/nm facts).  The
# same trace cut into 7 AUXTRACE buffers must decode the same.  Without TIME_CONV the trace is
# placed by record times and decode says so once.  A record that samples the traced command
# with the kernel's cpu-clock beside --emulate gets the same checks, and its samples' IPs are
# compared with perf script's reading of them.  An Arm SPE capture whose small AUX buffer
# truncates keeps every sample at its timestamp's time.  A program that execs itself is decoded
# image by image.
# Two programs at the same addresses, one exec'ing the other, are told apart in folded stacks.
# decode --inline on a program with functions inlined into each other agrees with addr2line -i
# (check_inline.py; the program is $AUXCAP_INLINE_PROG).
# Usage: test_decode_live.sh AUXCAP SYNTH EXAMPLE SCHEMA CHECK_PY TWIN_A TWIN_B
set -u
AUXCAP=$1 SYNTH=$2 EXAMPLE=$3 SCHEMA=$4 CHECK=$5 TWIN_A=$6 TWIN_B=$7
TMP=$(mktemp -d)
. "$(dirname "$0")/../cli/keep_failed.sh"
trap 'keep_failed "$TMP"; rm -rf "$TMP"' EXIT
fails=0

if ! "$SYNTH" "$TMP/one.data" --split "$TMP/seven.data:7" --sample-every 300 -- "$EXAMPLE" 3000 \
	>"$TMP/synth.out" 2>"$TMP/synth.err"; then
	if grep -q "Operation not permitted" "$TMP/synth.err"; then
		echo "SKIP: ptrace is not permitted here: $(cat "$TMP/synth.err")"
		exit 77
	fi
	echo "FAIL synthesizing the capture: $(cat "$TMP/synth.err")"
	exit 1
fi
echo "# $(cat "$TMP/synth.out")"
python3 "$CHECK" "$AUXCAP" "$TMP/one.data" "$EXAMPLE" "$SCHEMA" --split "$TMP/seven.data" \
	--min-samples 300 --min-known 100 --all-aligned || fails=$((fails + 1))

# The real thing: auxcap record on the emulated PMU with the kernel's cpu-clock sampling the
# traced command on the same clock (CLOCK_MONOTONIC_RAW; REGS_USER gives the user IP of
# samples taken during the tracer's stops).  Every sample must be found in the trace inside
# its window, by the IP perf itself reads from the sample (--perf-uregs), with the program's
# call chain in its stack.
"$AUXCAP" record --emulate -e intel_pt//u -e cpu-clock -o "$TMP/rec.data" -- "$EXAMPLE" 3000 \
	>/dev/null 2>"$TMP/rec.err"; st=$?
if [ $st -ne 0 ]; then
	echo "FAIL record --emulate -e intel_pt//u -e cpu-clock: $(cat "$TMP/rec.err")"
	fails=$((fails + 1))
else
	python3 "$CHECK" "$AUXCAP" "$TMP/rec.data" "$EXAMPLE" "$SCHEMA" --min-samples 500 \
		--min-known 100 --all-aligned --perf-uregs || fails=$((fails + 1))
fi

# Arm SPE on the emulated PMU with a 2-page AUX buffer: the driver truncates (the buffer fills
# before the capture drains it) and a record is cut at each truncation.  Every sample must be
# at its own timestamp's time (TIME_CONV applied by check_trace_times.py), at most one gap per
# truncation.
"$AUXCAP" record --emulate -e arm_spe_0/period=64/ -m ,2 -o "$TMP/spe.data" -- "$EXAMPLE" 3000 \
	>/dev/null 2>"$TMP/spe.err"; st=$?
if [ $st -ne 0 ]; then
	echo "FAIL record --emulate -e arm_spe_0/period=64/ -m ,2: $(cat "$TMP/spe.err")"
	fails=$((fails + 1))
else
	python3 "$(dirname "$CHECK")/check_trace_times.py" "$AUXCAP" "$TMP/spe.data" \
		--min-truncated 1 || fails=$((fails + 1))
fi

# A process that execs: the example runs its loop, then execs itself and runs it again (one
# process, two images of the program, at other addresses: ASLR).  Each image's trace must be
# decoded with that image's code and named with its symbols: no gap, every sample found in
# the trace, the program's call chain in every stack (an exec ends the old image's frames),
# and auxcap report's figures as check_report.py computes them from the stream (work called
# 2 x 3000 times, run twice).
"$AUXCAP" record --emulate -e intel_pt//u -e cpu-clock -o "$TMP/exec.data" -- "$EXAMPLE" 3000 0 1 \
	>/dev/null 2>"$TMP/exec.err"; st=$?
if [ $st -ne 0 ]; then
	echo "FAIL record --emulate of a program that execs: $(cat "$TMP/exec.err")"
	fails=$((fails + 1))
else
	"$AUXCAP" decode --format json "$TMP/exec.data" >"$TMP/exec.json" 2>/dev/null
	gaps=$(grep -c '"type":"gap"' "$TMP/exec.json")
	images=$(grep '"type":"mmap"' "$TMP/exec.json" | grep -c "$(basename "$EXAMPLE")\"")
	if [ "$gaps" -eq 0 ] && [ "$images" -ge 2 ]; then
		echo "ok   a program that exec'd: $images mappings of it, no decode gap"
	else
		echo "FAIL a program that exec'd: $gaps decode gaps, $images mappings of it"
		fails=$((fails + 1))
	fi
	# folded names each frame with the image it ran in: as many samples under run;work as
	# the JSON stacks hold, in both images
	"$AUXCAP" decode --format folded "$TMP/exec.data" >"$TMP/exec.folded" 2>/dev/null
	if python3 - "$TMP/exec.json" "$TMP/exec.folded" <<'PY'
import json, sys
js = 0
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e["type"] == "sample" and e["context"]:
        names = [f["func_sym"] for f in e["context"]["stack"]]
        js += "work" in names and "run" in names
fo = sum(int(l.rsplit(" ", 1)[1]) for l in open(sys.argv[2]) if ";run;work" in l)
print("# samples under run and work: JSON %d, folded %d" % (js, fo))
sys.exit(0 if js == fo and js > 0 else 1)
PY
	then
		echo "ok   a program that exec'd: folded names both images' frames as JSON does"
	else
		echo "FAIL a program that exec'd: folded and JSON disagree on run;work"
		fails=$((fails + 1))
	fi
	python3 "$CHECK" "$AUXCAP" "$TMP/exec.data" "$EXAMPLE" "$SCHEMA" --min-samples 500 \
		--min-known 100 --all-aligned || fails=$((fails + 1))
	python3 "$(dirname "$CHECK")/check_report.py" "$AUXCAP" "$TMP/exec.data" "$EXAMPLE" \
		"$(dirname "$SCHEMA")/report-json.schema.json" --iterations 3000 --images 2 \
		--expect-samples || fails=$((fails + 1))
fi

# Two programs with the same code at the same addresses and other names (non-PIE twins),
# one exec'ing the other, with ASLR off (setarch -R: their libc and loader at the same
# addresses too): folded names each one's frames with its own symbols, as JSON does, and
# counts each one's samples apart.
ta=$(nm "$TWIN_A" | awk '$3 == "run_a" || $3 == "work_a" { print $1 }' | sort | tr '\n' ' ')
tb=$(nm "$TWIN_B" | awk '$3 == "run_b" || $3 == "work_b" { print $1 }' | sort | tr '\n' ' ')
if [ -z "$ta" ] || [ "$ta" != "$tb" ]; then
	echo "FAIL the twin programs are not at the same addresses: a: $ta b: $tb"
	fails=$((fails + 1))
elif ! setarch -R true 2>/dev/null; then
	echo "# setarch -R is not permitted here: the twins' check is left out"
elif ! "$AUXCAP" record --emulate -e intel_pt//u -e cpu-clock -o "$TMP/twin.data" -- \
	setarch -R "$TWIN_A" 2000 "$TWIN_B" >/dev/null 2>"$TMP/twin.err"; then
	echo "FAIL record --emulate of the twins: $(cat "$TMP/twin.err")"
	fails=$((fails + 1))
else
	"$AUXCAP" decode --format json "$TMP/twin.data" >"$TMP/twin.json" 2>/dev/null
	"$AUXCAP" decode --format folded "$TMP/twin.data" >"$TMP/twin.folded" 2>/dev/null
	if python3 - "$TMP/twin.json" "$TMP/twin.folded" <<'PY'
import json, sys
js = {"a": 0, "b": 0}
fo = dict(js)
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e["type"] == "sample" and e["context"]:
        names = [f["func_sym"] for f in e["context"]["stack"]]
        for t in js:
            js[t] += "run_" + t in names
for l in open(sys.argv[2]):
    stack, n = l.rsplit(" ", 1)
    for t in fo:
        fo[t] += int(n) * (";run_" + t in stack)
print("# samples in run_a, run_b: JSON %d, %d; folded %d, %d" % (js["a"], js["b"], fo["a"], fo["b"]))
sys.exit(0 if js == fo and js["a"] > 0 and js["b"] > 0 else 1)
PY
	then
		echo "ok   twins at the same addresses, one exec'ing the other: folded names each's frames"
	else
		echo "FAIL twins at the same addresses: folded and JSON disagree on whose frames they are"
		fails=$((fails + 1))
	fi
fi

# --inline: functions inlined into each other, against binutils' addr2line -i.
if [ -n "${AUXCAP_INLINE_PROG:-}" ]; then
	if "$AUXCAP" record --emulate -e intel_pt//u -e cpu-clock -o "$TMP/inl.data" -- \
		"$AUXCAP_INLINE_PROG" 1000 >/dev/null 2>"$TMP/inl.err" &&
		python3 "$(dirname "$0")/check_inline.py" "$AUXCAP" "$TMP/inl.data" \
			"$AUXCAP_INLINE_PROG" "$SCHEMA"; then
		echo "ok   --inline: inline chains as addr2line -i gives them, in JSON, text and folded"
	else
		echo "FAIL --inline: $(cat "$TMP/inl.err")"
		fails=$((fails + 1))
	fi
fi

# No TIME_CONV: one warning, trace at its buffer's time, still decoded.
"$SYNTH" "$TMP/nt.data" --no-time-conv --sample-every 5000 -- "$EXAMPLE" 50 >/dev/null 2>&1
"$AUXCAP" decode "$TMP/nt.data" >"$TMP/nt.txt" 2>"$TMP/nt.err"; st=$?
n=$(grep -c "no time conversion" "$TMP/nt.err")
if [ $st -eq 0 ] && [ "$n" -eq 1 ] && grep -q "=> [0-9a-f]* work+0x0$" "$TMP/nt.txt"; then
	echo "ok   without TIME_CONV: decoded, said so once"
else
	echo "FAIL without TIME_CONV: status $st, $n warnings"; cat "$TMP/nt.err"
	fails=$((fails + 1))
fi

# Errors: one line, status 1.
"$AUXCAP" decode "$TMP/one.data" --format xml >/dev/null 2>"$TMP/e1"; st=$?
if [ $st -eq 1 ] && [ "$(wc -l <"$TMP/e1")" -eq 1 ] && grep -q "bad --format" "$TMP/e1"; then
	echo "ok   bad --format: $(cat "$TMP/e1")"
else
	echo "FAIL bad --format (status $st)"; fails=$((fails + 1))
fi
"$AUXCAP" decode "$TMP/one.data" --last-branches 5000 >/dev/null 2>"$TMP/e2"; st=$?
if [ $st -eq 1 ] && grep -q "bad --last-branches" "$TMP/e2"; then
	echo "ok   bad --last-branches: $(cat "$TMP/e2")"
else
	echo "FAIL bad --last-branches (status $st)"; fails=$((fails + 1))
fi
"$AUXCAP" decode "$TMP/one.data" -o "$TMP/nodir/x.json" >/dev/null 2>"$TMP/e3"; st=$?
if [ $st -eq 1 ] && [ "$(wc -l <"$TMP/e3")" -eq 1 ] && grep -q "cannot write\|cannot open directory" "$TMP/e3"; then
	echo "ok   unwritable -o: $(cat "$TMP/e3")"
else
	echo "FAIL unwritable -o (status $st)"; fails=$((fails + 1))
fi
"$AUXCAP" decode "$TMP/one.data" --format perfetto -o "$TMP/p.json" >/dev/null 2>&1; st=$?
if [ $st -eq 0 ] && python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$TMP/p.json"; then
	echo "ok   -o writes the output to a file"
else
	echo "FAIL -o (status $st)"; fails=$((fails + 1))
fi

echo "# $fails failed"
[ $fails -eq 0 ]
