#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Intel BTS and Arm SPE end to end: a real program recorded on the emulated PMUs' live tracer
# (record --emulate), decoded by the backends' decode ops (auxcap-aux-events) and by perf 6.1,
# which must accept auxcap's files and find the same branches and samples; the recording
# options reach the "hardware"; bad options fail with one line.
# usage: test_bts_spe.sh   (AUXCAP, AUXCAP_AUX_EVENTS, AUXCAP_EXAMPLE_LOOP in the environment)
set -u
A=${AUXCAP:?}
AE=${AUXCAP_AUX_EVENTS:?}
E=${AUXCAP_EXAMPLE_LOOP:?}
T=$(mktemp -d)
. "$(dirname "$0")/keep_failed.sh"
trap 'keep_failed "$T"; rm -rf "$T"' EXIT
cd "$T" || exit 1
fails=0
ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; fails=$((fails + 1)); }
check() { if eval "$1"; then ok "$2"; else bad "$2 ($1)"; fi; }
export AUXCAP_PLUGIN_DIR=

command -v perf >/dev/null || { echo "SKIP: perf is not installed (apt-get install linux-perf)"; exit 77; }
if ! $A record --emulate --max-insns 10 -o probe.data -- "$E" 1 >/dev/null 2>probe.err; then
	if grep -q "needs the live tracer" probe.err; then
		echo "SKIP: this build has no live tracer: $(cat probe.err)"
		exit 77
	fi
fi

# Our events as "from to" / "ip tid" lines, one file per stream, and perf's.
ours_branches() { # FILE -> per stream: branch lines "ip to"
	"$AE" "$1" | awk '/^stream/ { n++ } /^branch/ { sub("ip=0x", "", $3); sub("to=0x", "", $4); print n, $3, $4 }'
}

# --- Intel BTS, full trace --------------------------------------------------------------------
$A record --emulate -e intel_bts//u --max-insns 40000 -o bts.data -- "$E" 1000 >bts.out 2>bts.err
st=$?
check '[ $st -eq 0 ]' "BTS record exits 0 ($(tail -1 bts.err))"
$A info bts.data >bts.info 2>&1
check 'grep -q "AUXTRACE_INFO: type 2 (intel_bts), 6 u64" bts.info' "AUXTRACE_INFO in perf's intel_bts layout"
check 'grep -q "^TIME_CONV" bts.info' "TIME_CONV written"
check '[ "$(awk "/^  idx/ { print \$5 }" bts.info)" != "-1" ]' "the AUX queue names the traced command's thread"
"$AE" bts.data >bts.ev 2>bts.ev.err
check '[ $? -eq 0 ] && ! grep -q "^gap" bts.ev' "our decode: no errors"
ours_branches bts.data >bts.ours
nb=$(wc -l <bts.ours)
check '[ "$nb" -gt 1000 ]' "our decode: $nb branches"
perf script -i bts.data --itrace=b -F ip,addr >bts.perf 2>bts.perf.err
st=$?
check '[ $st -eq 0 ] && [ ! -s bts.perf.err ]' "perf script --itrace=b runs without errors ($(head -c 200 bts.perf.err))"
# perf 6.1 stops one record short of every AUXTRACE buffer (intel_bts_process_buffer loops
# while more than one record is left): compare all but the last branch of each buffer.
awk '{ if (prev != "" && $1 == pn) print pl; pn = $1; pl = $2 " " $3; prev = 1 }' bts.ours >bts.ours.cut
awk '{ print $1, $3 }' bts.perf >bts.perf.cut
check 'cmp -s bts.ours.cut bts.perf.cut' "perf finds the same $(wc -l <bts.perf.cut) branches, in order ($(diff bts.ours.cut bts.perf.cut | head -3 | tr '\n' ' '))"
check 'perf script -i bts.data --itrace=b -F ip,sym 2>/dev/null | grep -q " _dl_start"' "perf resolves symbols through the queue's thread"

# --- Intel BTS, flight recorder: the whole (wrapped) buffer at exit --------------------------
$A record --emulate -e intel_bts//u -m ,8 --snapshot=e --max-insns 40000 -o btss.data -- "$E" 1000 >/dev/null 2>btss.err
st=$?
check '[ $st -eq 0 ]' "BTS snapshot record exits 0 ($(tail -1 btss.err))"
ours_branches btss.data >btss.ours
# 32 KiB buffer: 1365 whole records (the last 8 bytes never hold one).
check '[ "$(wc -l <btss.ours)" -eq 1365 ]' "the snapshot holds the buffer's 1365 records ($(wc -l <btss.ours))"
perf script -i btss.data --itrace=b -F ip,addr >btss.perf 2>btss.perf.err
awk '{ print $1, $3 }' btss.perf >btss.perf.cut
head -n 1364 btss.ours | awk '{ print $2, $3 }' >btss.ours.cut
check '[ ! -s btss.perf.err ] && cmp -s btss.ours.cut btss.perf.cut' "perf reads the snapshot to the same branches"

# --- Intel BTS, several snapshots: consecutive ones overlap, decoders trim the repeat ----------
mkfifo ctl
$A record --emulate -e intel_bts//u -m ,8 --snapshot=e --control fifo:ctl --max-insns 150000 \
	-o btsm.data -- "$E" 100000 >/dev/null 2>btsm.err &
rec=$!
# (A capture already over has no reader on the FIFO: give up writing after a while.)
sleep 1
timeout 10 sh -c 'echo snapshot >ctl'
sleep 1
timeout 10 sh -c 'echo snapshot >ctl'
wait $rec
st=$?
"$AE" btsm.data >btsm.ev
nsnap=$(grep -c "^stream" btsm.ev)
check '[ $st -eq 0 ] && [ "$nsnap" -ge 2 ]' "BTS with snapshots on request and at exit: $nsnap snapshots"
awk '/^stream/ { n++ } /^branch/ { sub("ip=0x", "", $3); sub("to=0x", "", $4); print n, $3, $4 }' btsm.ev |
	awk '{ if (NR > 1 && $1 == pn) print pl; pn = $1; pl = $2 " " $3 }' >btsm.ours.cut
perf script -i btsm.data --itrace=b -F ip,addr 2>btsm.perf.err | awk '{ print $1, $3 }' >btsm.perf.cut
check '[ ! -s btsm.perf.err ] && [ -s btsm.perf.cut ] && cmp -s btsm.ours.cut btsm.perf.cut' "perf reads the snapshots to the same $(wc -l <btsm.perf.cut) branches"
# The session wrote each snapshot's new records only: no decoder drops any as a repeat.
awk '/^stream/ { if (n) print b / 24 == c; sub("bytes ", ""); b = $NF; c = 0; n++ } /^branch/ { c++ } END { print b / 24 == c }' btsm.ev | sort -u >btsm.whole
check '[ "$(cat btsm.whole)" = 1 ]' "every snapshot decodes to all its records (none trimmed again)"

# --- Arm SPE ------------------------------------------------------------------------------------
$A record --emulate -e arm_spe_0/period=32/ --max-insns 40000 -o spe.data -- "$E" 1000 >/dev/null 2>spe.err
st=$?
check '[ $st -eq 0 ]' "SPE record exits 0 ($(tail -1 spe.err))"
$A info spe.data >spe.info 2>&1
check 'grep -q "AUXTRACE_INFO: type 4 (arm_spe), 2 u64" spe.info' "AUXTRACE_INFO in perf 6.1's arm_spe layout"
perf report -D -i spe.data 2>/dev/null | grep -oE "PERF_RECORD_(TIME_CONV|AUXTRACE_INFO)" | head -2 | tr '\n' ' ' >spe.order
check '[ "$(cat spe.order)" = "PERF_RECORD_TIME_CONV PERF_RECORD_AUXTRACE_INFO " ]' "TIME_CONV comes before AUXTRACE_INFO, as perf's SPE decoder needs ($(cat spe.order))"
"$AE" spe.data >spe.ev 2>spe.ev.err
ns=$(grep -c "^sample" spe.ev)
check '[ "$ns" -eq $((40000 / 32)) ]' "one sample every 32 instructions: $ns"
check '! grep -q "^gap" spe.ev' "our decode: no errors"
check '[ "$(grep "^sample" spe.ev | grep -vc " tsc=.* time=")" -eq 0 ]' "every sample has a timestamp and a perf time"
perf script -i spe.data --itrace=i1i -F tid,time,ip >spe.perf 2>spe.perf.err
st=$?
check '[ $st -eq 0 ] && [ ! -s spe.perf.err ]' "perf script --itrace=i1i runs without errors ($(head -c 200 spe.perf.err))"
# perf: "TID TIME: IP"; ours: ip, tid, time in ns -> "TID S.US IP" as perf prints them.
awk '{ sub(":", "", $2); print $1, $2, $3 }' spe.perf >spe.perf.cut
grep "^sample" spe.ev | awk '{
	for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
	sub("0x", "", f["ip"]);
	printf "%d %d.%06d %s\n", f["tid"], f["time"] / 1000000000, (f["time"] % 1000000000) / 1000, f["ip"] }' >spe.ours.cut
check 'cmp -s spe.ours.cut spe.perf.cut' "perf finds the same $(wc -l <spe.perf.cut) samples: thread, time and PC ($(diff spe.ours.cut spe.perf.cut | head -3 | tr '\n' ' '))"
perf report -D -i spe.data 2>/dev/null | grep -c "^\.  .*TS [0-9]" >spe.dump.n
check '[ "$(cat spe.dump.n)" -eq "$ns" ]' "perf report -D lists $ns timestamp packets"

# The format terms reach the sampling unit.
$A record --emulate -e arm_spe_0/period=4,load_filter=1/ --max-insns 20000 -o spel.data -- "$E" 1000 >/dev/null 2>spel.err
"$AE" spel.data >spel.ev
nl=$(grep -c "^sample" spel.ev)
check '[ "$nl" -gt 10 ] && [ "$(grep "^sample" spel.ev | grep -vc " op=0x100 ")" -eq 0 ]' "load_filter=1: $nl samples, all loads"
check '[ "$(perf script -i spel.data --itrace=i1i 2>/dev/null | wc -l)" -eq "$nl" ]' "perf counts the same loads"
$A record --emulate -e arm_spe_0/period=16,ts_enable=0/ --max-insns 20000 -o spet.data -- "$E" 1000 >/dev/null 2>spet.err
"$AE" spet.data >spet.ev
check '[ "$(grep -c "^sample" spet.ev)" -eq $((20000 / 16)) ] && ! grep -q " tsc=" spet.ev' "ts_enable=0: records without timestamps"
perf script -i spet.data --itrace=i1i >/dev/null 2>spet.perf.err
check '[ $? -eq 0 ]' "perf reads records without timestamps"

# --- auxcap decode: the decode stage over many AUX buffers --------------------------------------
# Small AUX buffers: the trace comes in several AUXTRACE buffers, which the decode stage hands
# to the backends one by one (the emulated SPE unit, unlike hardware, may cut a record
# between two): every record comes out once, as from the whole stream.
json_ips() { # FILE TYPE FIELD -> the FIELD (hex, no 0x) of every TYPE event of auxcap decode
	$A decode "$1" --format json 2>/dev/null | python3 -c '
import json, sys
t, f = sys.argv[1], sys.argv[2]
for line in sys.stdin:
    e = json.loads(line)
    if e.get("type") == t:
        print(e[f][2:])' "$2" "$3"
}
# The small buffer may fill before it is drained when the machine is busy (the record says
# "AUX data lost" and the trace has a gap there, as it should): such a capture is made again,
# up to 4 times, since what is checked here is the seams, not a lossless drain.
record_whole() { # NAME RECORD-ARGS...: $A record ... -o NAME.data, 2> NAME.err, again on loss
	local name=$1 try
	shift
	for try in 1 2 3 4; do
		$A record --emulate "$@" -o "$name.data" -- "$E" 1000 >/dev/null 2>"$name.err"
		grep -q "AUX data lost" "$name.err" || return 0
		echo "# $name: AUX data lost (try $try): $(grep "AUX data lost" "$name.err")"
	done
}
record_whole spem -e arm_spe_0/period=32/ -m ,4 --max-insns 40000
nch=$($A info spem.data | awk '/^  AUXTRACE / { print $2 }')
json_ips spem.data trace_sample ip >spem.dec
"$AE" spem.data | grep "^sample" | awk '{ sub("ip=0x", "", $3); print $3 }' >spem.ae
if ! grep -q "AUX data lost" spem.err; then
	check '[ "${nch:-0}" -gt 2 ] && [ "$(wc -l <spem.dec)" -eq $((40000 / 32)) ] && cmp -s spem.dec spem.ae' "SPE in $nch buffers: auxcap decode gives the $(wc -l <spem.dec) samples of the whole stream"
	check '! $A decode spem.data --format json 2>/dev/null | grep -q "\"gap\""' "no gap at the seams"
else
	# lost every time (a very busy machine): the samples kept, as the reference reads them
	check '[ "${nch:-0}" -gt 2 ] && [ -s spem.dec ] && cmp -s spem.dec spem.ae' "SPE in $nch buffers, data lost: auxcap decode gives the $(wc -l <spem.dec) samples the reference reads"
fi
record_whole btsc -e intel_bts//u -m ,4 --max-insns 40000
nch=$($A info btsc.data | awk '/^  AUXTRACE / { print $2 }')
json_ips btsc.data branch from >btsc.dec
"$AE" btsc.data | grep "^branch" | awk '{ sub("ip=0x", "", $3); print $3 }' >btsc.ae
check '[ "${nch:-0}" -gt 2 ] && [ -s btsc.dec ] && cmp -s btsc.dec btsc.ae' "BTS in $nch buffers: auxcap decode gives the $(wc -l <btsc.dec) branches of the whole stream"

# --- bad options: one line, exit 1 -------------------------------------------------------------
expect_err() { # WHAT PATTERN ARGS...
	local what=$1 pat=$2
	shift 2
	$A record --emulate "$@" -o bad.data -- "$E" 10 >/dev/null 2>bad.err
	st=$?
	check '[ $st -eq 1 ] && [ "$(wc -l <bad.err)" -eq 1 ] && grep -q -e "$pat" bad.err' "$what ($(cat bad.err))"
}
expect_err "BTS with a period" "every branch: drop freq=/period=" -e intel_bts/period=100/u
expect_err "SPE in frequency mode" "use period=N instead of freq=" -e arm_spe_0/freq=100/
expect_err "SPE snapshot in one page" "at least 8 KiB" -e arm_spe_0// -S -m ,1
expect_err "config3 on a 6.1 kernel" "older than the attribute layout" -e arm_spe_0/config3=1/

[ "$fails" -eq 0 ] && echo "BTS and SPE end to end: all checks passed"
exit $((fails > 0))
