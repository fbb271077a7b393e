#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# `auxcap list --sysfs fixtures/sysfs`: every fixture PMU is listed with its type and the
# backend that serves it, intel_pt with its caps and format terms; bad options fail with one
# line on stderr and exit status 1.
# usage: test_list.sh PATH/TO/auxcap   (AUXCAP_FIXTURES must point at fixtures/)
set -u
auxcap=$1
sysfs=${AUXCAP_FIXTURES:?AUXCAP_FIXTURES is not set; run through meson test}/sysfs
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
fails=0

fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

# the indented lines under PMU $1's header line
block() {
	awk -v pmu="$1" '$1 == pmu && /type/ { on = 1; next } /^[^ ]/ { on = 0 } on' "$out"
}

"$auxcap" list --sysfs "$sysfs" >"$out" 2>"$err"
rc=$?
[ "$rc" -eq 0 ] || fail "list --sysfs exited $rc: $(cat "$err")"
[ -s "$err" ] && fail "list --sysfs wrote to stderr: $(cat "$err")"

backend() {
	case $1 in
	intel_pt) echo intel_pt ;;
	intel_bts) echo intel_bts ;;
	arm_spe_*) echo arm_spe ;;
	cs_etm) echo "cs_etm (not yet)" ;;
	*) echo - ;;
	esac
}

for dir in "$sysfs"/*/; do
	pmu=$(basename "$dir")
	type=$(cat "$dir/type")
	be=$(backend "$pmu" | sed 's/[()]/\\&/g')
	want="^$pmu +type $type +backend $be +addr_filters"
	grep -Eq "$want" "$out" || fail "no line matching '$want'"
done

terms=$(block intel_pt | grep '^ *terms:')
for f in "$sysfs"/intel_pt/format/*; do
	t="$(basename "$f")=$(cat "$f")"
	case " $terms " in
	*" $t "*) ;;
	*) fail "intel_pt terms lack '$t': $terms" ;;
	esac
done
block intel_pt | grep -q ' mtc_periods=249' || fail "intel_pt caps lack mtc_periods=249"
block intel_pt | grep -q ' cyc=config:1 ' || fail "intel_pt: cyc is not config:1"
block arm_spe_0 | grep -q 'cpus: *0-3' || fail "arm_spe_0 cpus are not 0-3"
block arm_spe_0 | grep -q 'inv_event_filter=config3:0-63' || fail "arm_spe_0 lacks its config3 term"
grep -q 'cpu-clock' "$out" || fail "software events are not listed"
grep -q 'raw_syscalls:sys_enter' "$out" || fail "no tracepoint hint"
grep -q -- '--emulate' "$out" && fail "emulate hint shown although intel_pt is present"

# bad input: exit 1, one line on stderr naming the problem, nothing on stdout
check_bad() {
	what=$1
	shift
	"$auxcap" list "$@" >"$out" 2>"$err"
	rc=$?
	[ "$rc" -eq 1 ] || fail "$what: exit status $rc, want 1"
	[ "$(wc -l <"$err")" -eq 1 ] || fail "$what: stderr is not one line: $(cat "$err")"
	[ -s "$out" ] && fail "$what: wrote to stdout"
}
check_bad "missing dir" --sysfs /nonexistent/auxcap
grep -q -- '--sysfs' "$err" || fail "missing dir: message does not mention --sysfs: $(cat "$err")"
check_bad "unknown option" --bogus
grep -q -- "--bogus" "$err" || fail "unknown option not named: $(cat "$err")"
check_bad "missing value" --sysfs
check_bad "extra argument" extra

"$auxcap" list --help >"$out" 2>"$err" || fail "list --help failed"
grep -q -- '--sysfs' "$out" || fail "--help does not describe --sysfs"

[ "$fails" -eq 0 ] || exit 1
echo "ok: auxcap list"
