#!/bin/bash
# End-to-end tests of 'auxcap record --trigger-on', of captures attached with -p/-t, of the
# snapshot table in the file, and of the hotkey on a pseudo-terminal; on the real kernel,
# checked with 'auxcap info', perf 6.1 ('perf script', 'perf report -D', 'perf probe', nm).
# Needs root (uprobes, breakpoints, tracefs); exits 77 with the reason otherwise.
set -u
A=${AUXCAP:?}
P=${AUXCAP_TRIGGER_PROG:?}
PN=${AUXCAP_TRIGGER_PROG_NOPIE:?}
E=${AUXCAP_EXAMPLE_LOOP:?}
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d)
bg=()
cleanup() {
	for p in "${bg[@]}"; do kill -9 "$p" 2>/dev/null; done
	keep_failed "$T"
	rm -rf "$T"
}
. "$HERE/keep_failed.sh"
trap cleanup EXIT
cd "$T" || exit 1
fails=0
ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; fails=$((fails + 1)); }
check() { if eval "$1"; then ok "$2"; else bad "$2 ($1)"; return 1; fi; }
# A refusal: exit status 1 and one line on standard error.
one_line() { [ "$1" -eq 1 ] && [ "$(wc -l <"$2")" -eq 1 ]; }

[ "$(id -u)" -eq 0 ] || { echo "SKIP: uprobes, breakpoints and tracefs need root here"; exit 77; }
command -v perf >/dev/null || { echo "SKIP: perf is not installed (apt-get install linux-perf)"; exit 77; }
[ -e /sys/bus/event_source/devices/uprobe/type ] || { echo "SKIP: no uprobe PMU (CONFIG_UPROBE_EVENTS)"; exit 77; }
TR=/sys/kernel/tracing
[ -e $TR/uprobe_events ] || mount -t tracefs nodev $TR 2>/dev/null
[ -e $TR/uprobe_events ] || { echo "SKIP: tracefs cannot be mounted at $TR"; exit 77; }

# Figures from the summary: "... N snapshots, ...", "coalesced: N", "trigger ...: N hits".
snaps() { sed -n 's/.* \([0-9][0-9]*\) snapshots, [0-9]* wakeups$/\1/p' "$1"; }
coal() { sed -n 's/.*coalesced: \([0-9][0-9]*\);.*/\1/p' "$1"; }
hits() { sed -n 's/^auxcap: trigger .*: \([0-9][0-9]*\) hits, .*/\1/p' "$1"; }
# Wait until a background "auxcap record -v" has its events enabled (it says so on stderr).
wait_recording() { for _ in $(seq 300); do grep -q "^auxcap: recording" "$1" && return 0; sleep 0.1; done; return 1; }
# perf must read the file without complaint (its kallsyms warning aside).
perf_ok() {
	perf script -i "$1" >/dev/null 2>"$1.ps" && perf report -D -i "$1" >/dev/null 2>"$1.rd" &&
		! grep -qi "error\|failed\|unknown\|invalid" "$1.ps" "$1.rd"
}
# Only the probes this script makes (auxcap names them FUNCTION_PID): core/trigger_kernel,
# run beside it, makes and removes uprobes of its own in the same "auxcap" group.
probes_before=$(grep -c "auxcap/trigger_point_" $TR/uprobe_events)

# 1. A uprobe on the traced command: every hit a snapshot, hits = snapshots + coalesced.
$A record -S -e raw_syscalls:sys_enter -m 4 --trigger-on trigger_point -o u.data -- "$P" 10 30000 >/dev/null 2>u.err; st=$?
h=$(hits u.err); s=$(snaps u.err); c=$(coal u.err)
check '[ $st -eq 0 ] && [ "$h" = 10 ]' "uprobe on trigger_point: 10 calls, $h hits"
check '[ -n "$s" ] && [ $((s + c)) -eq "$h" ] && [ "$s" -ge 5 ]' "snapshots $s + coalesced $c = hits $h"
want=$(perf probe -x "$P" -n -v -a trigger_point 2>&1 | sed -n 's/^Writing event: .*:\(0x[0-9a-f]*\)$/\1/p')
check 'grep -q "at file offset $want)" u.err' "the probe's file offset is perf probe's ($want)"
check '$A info u.data | grep -q "auxcap_snapshots $s: $s function; trigger to frozen: min"' "auxcap info reads the $s snapshots back, source function: $($A info u.data | grep 'auxcap_snapshots [0-9]')"
check '[ "$($A info u.data | grep -c "^    #[0-9]* function tid [0-9]* cpu [0-9]*: at [0-9.]* s, frozen after [0-9.]* us")" -eq "$s" ]' "one line per snapshot with the hit's thread, cpu, time and latency"
check 'perf_ok u.data' "perf script and perf report -D read the file without errors"
check '[ "$(perf script -i u.data 2>/dev/null | grep -c sys_enter)" -gt 10 ]' "perf script shows the snapshots' records"
check '[ "$(grep -c "auxcap/trigger_point_" $TR/uprobe_events)" -eq "$probes_before" ]' "the tracefs uprobe is removed at the end"

# 2. Inherited: the children of a shell hit it too (3 + 4 calls).
$A record -S -e raw_syscalls:sys_enter -m 4 --trigger-on "trigger_point@$P" -o c.data -- sh -c "$P 3 20000; $P 4 20000" >/dev/null 2>c.err; st=$?
h=$(hits c.err); s=$(snaps c.err); c=$(coal c.err)
check '[ $st -eq 0 ] && [ "$h" = 7 ] && [ $((s + c)) -eq 7 ]' "children of the command trigger too: $h hits, $s snapshots, $c coalesced"

# 3. A burst: 200 calls back to back; what is not taken is counted as coalesced.  (Whether
# any is coalesced depends on the scheduler: a loop that keeps up takes all 200, which is not
# a failure; the accounting must hold either way.)
$A record -S -e raw_syscalls:sys_enter -m 4 --trigger-on trigger_point -o b.data -- "$P" 200 0 >/dev/null 2>b.err; st=$?
h=$(hits b.err); s=$(snaps b.err); c=$(coal b.err)
check '[ $st -eq 0 ] && [ "$h" = 200 ] && [ -n "$s" ] && [ "$s" -ge 1 ] && [ $((s + c)) -eq 200 ]' "burst of 200: $s snapshots + $c coalesced = $h hits"
sum=$($A info b.data | sed -n 's/.*frozen after [0-9.]* us, \([0-9]*\) coalesced.*/\1/p' | awk '{t+=$1} END {print t+0}')
n=$($A info b.data | sed -n 's/^  auxcap_snapshots \([0-9]*\):.*/\1/p')
check '[ "$n" = "$s" ] && { [ "$s" -gt 64 ] || [ "$sum" -eq "$c" ]; }' "the file's table has the $n snapshots and their coalesced counts ($sum)"

# 4. Execute breakpoints: PIE (address from the stopped child's maps) and non-PIE (nm's).
#    On a machine where they open but never fire (a VM without debug registers: auxcap list
#    says so), the record must refuse them instead of waiting for hits that never come.
bp_fire=yes
$A list | grep -q "breakpoints: .*do not fire on this machine" && bp_fire=no
if [ $bp_fire = no ]; then
	$A record -S -e raw_syscalls:sys_enter -m 4 --trigger-via breakpoint --trigger-on trigger_point -o bp.data -- "$P" 6 30000 >bp.out 2>bp.err; st=$?
	check 'one_line $st bp.err && grep -q "do not fire on this machine" bp.err && [ ! -s bp.out ]' "breakpoints do not fire here, refused: $(cat bp.err)"
	echo "# execute breakpoints do not fire on this machine: their hit counts (parts 4 and 11) not run"
else
$A record -S -e raw_syscalls:sys_enter -m 4 --trigger-via breakpoint --trigger-on trigger_point -o bp.data -- "$P" 6 30000 >/dev/null 2>bp.err; st=$?
h=$(hits bp.err); s=$(snaps bp.err); c=$(coal bp.err)
check '[ $st -eq 0 ] && [ "$h" = 6 ] && [ $((s + c)) -eq 6 ] && grep -q "(breakpoint at 0x5[0-9a-f]*)" bp.err' "breakpoint in a PIE: $h hits, $s snapshots: $(grep -o 'breakpoint at 0x[0-9a-f]*' bp.err)"
check '[ "$($A info bp.data | awk "\$1==\"COMM\"{print \$2}")" -ge 1 ] && perf script -i bp.data --show-mmap-events 2>/dev/null | grep -q "MMAP2 .*r-xp $P$"' "side-band of the stopped child written (COMM, MMAP2 of the program)"
check 'perf_ok bp.data' "perf reads the breakpoint capture"
addr=$(nm "$PN" | awk '$3=="trigger_point"{print $1}' | sed 's/^0*//')
$A record -S -e raw_syscalls:sys_enter -m 4 --trigger-via breakpoint --trigger-on trigger_point -o bn.data -- "$PN" 5 30000 >/dev/null 2>bn.err; st=$?
h=$(hits bn.err)
check '[ $st -eq 0 ] && [ "$h" = 5 ] && grep -q "(breakpoint at 0x$addr)" bn.err' "breakpoint in a non-PIE at nm's address 0x$addr: $h hits"
fi

# 5. -p: a process that runs already, attached with a uprobe; side-band from /proc.
"$P" 8 30000 wait >w.out &
bg+=($!); wpid=$!
for i in $(seq 50); do grep -q ready w.out && break; sleep 0.1; done
$A record -v -S -e raw_syscalls:sys_enter -m 4 -p $wpid --trigger-on trigger_point -o p.data >/dev/null 2>p.err &
rec=$!
wait_recording p.err
kill -USR1 $wpid
wait $rec; st=$?
h=$(hits p.err); s=$(snaps p.err); c=$(coal p.err)
check '[ $st -eq 0 ] && [ "$h" = 8 ] && [ $((s + c)) -eq 8 ] && grep -q "^hits 8" w.out' "-p PID with a uprobe: $h hits, $s snapshots, $c coalesced"
check 'perf script -i p.data --show-mmap-events 2>/dev/null | grep -q "0.000000: PERF_RECORD_MMAP2 $wpid/$wpid: .*r-xp $P$"' "-p: MMAP2 of the running program synthesized before the capture"
check 'perf script -i p.data --show-mmap-events 2>/dev/null | grep -q "PERF_RECORD_MMAP2 $wpid/$wpid: .*libc.so"' "-p: its libraries too"
check 'perf script -i p.data --show-task-events 2>/dev/null | grep -q "PERF_RECORD_COMM: auxcap-trigger-:$wpid/$wpid"' "-p: its COMM"
check 'perf_ok p.data' "perf reads the -p capture"

# 5b. -p follows the tasks its process starts (as perf record -p): a shell attached to before
# it forks the program twice; both hit the trigger, and the forks work (the uprobe PMU's event
# cannot be inherited, the kernel fails the fork with EFAULT: -p takes the tracefs probe).
mkfifo go5
sh -c "read l <go5; \"$P\" 3 20000; \"$P\" 4 20000" >w5.out 2>w5.err &
bg+=($!); spid=$!
$A record -v -S -e raw_syscalls:sys_enter -m 4 -p $spid --trigger-on "trigger_point@$P" -o p5.data >/dev/null 2>p5.err &
rec=$!
wait_recording p5.err
echo go >go5
wait $spid; sst=$?
wait $rec; st=$?
h=$(hits p5.err); s=$(snaps p5.err); c=$(coal p5.err)
check '[ $st -eq 0 ] && [ $sst -eq 0 ] && [ "$h" = 7 ] && [ $((s + c)) -eq 7 ] && [ "$(grep -c "^hits" w5.out)" -eq 2 ]' "-p of a shell that forks the program twice after the attach: $h hits, $s snapshots, $c coalesced; shell status $sst $(head -c 200 w5.err)"

# 6. -t TID with a uprobe in a library (libc's getppid, 8 calls per trigger_point call).
LIBC=$(ldd "$P" | awk '/libc.so/{print $3}')
"$P" 3 30000 wait >w2.out &
bg+=($!); wpid=$!
for i in $(seq 50); do grep -q ready w2.out && break; sleep 0.1; done
$A record -v -S -e raw_syscalls:sys_enter -m 4 -t $wpid --trigger-on "getppid@$LIBC" -o t.data >/dev/null 2>t.err &
rec=$!
wait_recording t.err
kill -USR1 $wpid
wait $rec; st=$?
h=$(hits t.err); s=$(snaps t.err); c=$(coal t.err)
check '[ $st -eq 0 ] && [ "$h" = 24 ] && [ $((s + c)) -eq 24 ]' "-t TID, uprobe on getppid in $LIBC: $h hits (3 x 8 calls), $s snapshots"

# 7. -p without a trigger: samples of a CPU-bound process resolve to its functions.
"$E" 4000000000 >/dev/null &
bg+=($!); epid=$!
sleep 0.3
$A record -e cpu-clock -p $epid -o e.data >/dev/null 2>e.err &
rec=$!
sleep 1
kill -INT $rec
wait $rec; st=$?
kill $epid
# (User-space samples: on a loaded machine a tenth or more can be in the kernel, interrupts
# and scheduling, which perf does not name without kallsyms.)
perf script -i e.data -F ip,sym 2>/dev/null | grep -v '^ *ffff' >e.user
nsym=$(grep -c "work\|leaf_add\|leaf_mul\|run" e.user)
nall=$(wc -l <e.user)
check '[ $st -eq 0 ] && [ "$nall" -gt 100 ] && [ $((nsym * 10)) -gt $((nall * 9)) ]' "-p: perf names $nsym of the $nall user-space samples of the running example (work, leaf_*, run)"

# 8. Other trigger sources are stored too: SIGUSR2, the FIFO, the exit.
mkfifo ctl ack
$A record --snapshot=e -e raw_syscalls:sys_enter -m 4 --control fifo:ctl,ack -o s.data -- "$P" 40 25000 >/dev/null 2>s.err &
rec=$!
sleep 0.4
echo snapshot >ctl
a1=$(timeout 10 head -1 ack)
kill -USR2 $rec
wait $rec; st=$?
check '[ $st -eq 0 ] && [ "$a1" = ack ] && $A info s.data | grep -q "auxcap_snapshots 3: 1 signal, 1 fifo, 1 exit"' "sources stored: $($A info s.data | grep 'auxcap_snapshots [0-9]')"

# 9. The hotkey on a pseudo-terminal: 's' snapshots, 'q' stops, the status line counts.
python3 "$HERE/pty_hotkey.py" "$A" hk.data -- "$P" 40 50000 >hk.out 2>&1; st=$?
sed 's/^/  /' hk.out
check '[ $st -eq 0 ]' "hotkeys on a terminal"
check '$A info hk.data | grep -q "auxcap_snapshots 1: 1 hotkey"' "the hotkey snapshot is in the file"

# 10. Bad input: one line naming what, where and the fix; status 1; nothing started.
$A record -S -o x.data --trigger-on nosuchfn -- "$P" 1 0 >x1.out 2>x1.err; st=$?
check 'one_line $st x1.err && grep -q "symbol .nosuchfn. not found in $P (nm -D $P lists" x1.err && [ ! -s x1.out ]' "unknown symbol: $(cat x1.err)"
$A record -S -o x.data --trigger-on trigger_point@/nonexistent/prog -- "$P" 1 0 2>x2.err; st=$?
check 'one_line $st x2.err && grep -q "/nonexistent/prog" x2.err' "unknown binary: $(cat x2.err)"
$A record -S -o x.data --trigger-on trigger_point@/etc/passwd -- "$P" 1 0 2>x3.err; st=$?
check 'one_line $st x3.err && grep -q "not an ELF file" x3.err' "not a binary: $(cat x3.err)"
$A record -o x.data --trigger-on trigger_point -- "$P" 1 0 2>x4.err; st=$?
check 'one_line $st x4.err && grep -q "add -S" x4.err' "full-trace mode: $(cat x4.err)"
$A record -S -a -o x.data --trigger-on trigger_point 2>x5.err; st=$?
check 'one_line $st x5.err && grep -q "SYMBOL@BINARY" x5.err' "system-wide without a binary: $(cat x5.err)"
$A record -S -o x.data --trigger-via kprobe --trigger-on trigger_point -- "$P" 1 0 2>x6.err; st=$?
check 'one_line $st x6.err && grep -q "uprobe, breakpoint or auto" x6.err' "bad --trigger-via: $(cat x6.err)"
$A record -S -a -o x.data --trigger-via breakpoint --trigger-on "trigger_point@$P" 2>x7.err; st=$?
check 'one_line $st x7.err && grep -q "position-independent" x7.err' "PIE breakpoint without a process: $(cat x7.err)"

# 12. --trigger-min-duration: a uprobe and a return probe time each call; a snapshot only for
#     a call that took that long, taken at its return.  The example's run() is one long call
#     (getppid at its iterations 0, 2^20, 2^21: the first right after its entry); work() is
#     called once per iteration and is short.
tcalls() { sed -n 's/^auxcap: trigger .*: \([0-9][0-9]*\) calls returned .*/\1/p' "$1"; }
tslow() { sed -n 's/^auxcap: trigger .* calls returned (the longest [^)]*), \([0-9][0-9]*\) of them took .*/\1/p' "$1"; }
$A record -S -e raw_syscalls:sys_enter --trigger-on run --trigger-min-duration 1ms -o d1.data -- "$E" 3000000 >/dev/null 2>d1.err; st=$?
check '[ $st -eq 0 ] && [ "$(tcalls d1.err)" = 1 ] && [ "$(tslow d1.err)" = 1 ] && [ "$(snaps d1.err)" = 1 ]' "run() timed by a uprobe and a return probe: $(tail -1 d1.err)"
at=$($A info d1.data | sed -n 's/^    #0 function tid [0-9]* cpu [0-9]*: at \([0-9.]*\) s.*/\1/p')
perf script -i d1.data -F time,trace 2>/dev/null | sed -n 's/^ *\([0-9.]*\): NR 110 .*/\1/p' >d1.getppid
longest=$(sed -n 's/.* calls returned (the longest \([^)]*\)).*/\1/p' d1.err)
check '[ -n "$longest" ] && $A info d1.data | grep -q "^    #0 function .*, after a call of $longest\$"' "the snapshot table keeps the call's duration ($longest): $($A info d1.data | grep '^    #0')"
check '[ -n "$at" ] && [ "$(wc -l <d1.getppid)" = 3 ] && awk -v at="$at" "NR == 1 { first = \$1 } END { exit !(at > \$1 && at - first >= 0.001) }" d1.getppid' "the snapshot is taken at run()'s return ($at s), after its last getppid and 1 ms or more after its first: $(tr '\n' ' ' <d1.getppid)"
# (Two uprobe hits per call, back to back: on a loaded machine the loop may fall behind and
# the kernel drop samples, which the summary counts; each lost sample costs at most the call
# it belongs to and the one open then.)
$A record -S -e raw_syscalls:sys_enter --trigger-on work --trigger-min-duration 1s -o d2.data -- "$E" 50000 >/dev/null 2>d2.err; st=$?
dn=$(tcalls d2.err); lost=$(sed -n 's/^auxcap: warning: \([0-9]*\) trigger samples lost.*/\1/p' d2.err)
check '[ $st -eq 0 ] && [ -n "$dn" ] && [ "$dn" -le 50000 ] && [ $((50000 - dn)) -le $((2 * ${lost:-0})) ] && [ "$(tslow d2.err)" = 0 ] && [ "$(snaps d2.err)" = 0 ]' "work()'s 50000 calls timed (${lost:-0} samples lost), none of 1 s: no snapshot: $(grep 'calls returned' d2.err)"
check '! grep -q "auxcap/\(run\|work\)_[0-9]*" $TR/uprobe_events' "the probes are removed"
$A record -S -o x.data --trigger-on run --trigger-min-duration 5 -- "$E" 1 2>x8.err; st=$?
check 'one_line $st x8.err && grep -q "bad --trigger-min-duration .5.: give a time with its unit" x8.err' "a duration without unit: $(cat x8.err)"
$A record -S -o x.data --trigger-min-duration 5ms -- "$E" 1 2>x9.err; st=$?
check 'one_line $st x9.err && grep -q "give --trigger-on" x9.err' "--trigger-min-duration alone: $(cat x9.err)"
$A record -S -o x.data --trigger-via breakpoint --trigger-on run --trigger-min-duration 5ms -- "$E" 1 >x10.out 2>x10.err; st=$?
check 'one_line $st x10.err && grep -q "fires at the entry only" x10.err && [ ! -s x10.out ]' "a breakpoint cannot time calls: $(cat x10.err)"

# 11. --emulate: the emulator's tracer watches the function itself (for a PIE, at the address
#     its mappings give); an execute breakpoint also fires on the single-stepped command (not
#     PIE: its address must be known before the exec); a uprobe would patch an int3 into the
#     code the tracer reads: refused.
$A record --emulate -o e0.data -- true >/dev/null 2>e0.err
if grep -q "needs the live tracer" e0.err; then
	echo "# --emulate: this build has no live tracer: part 11 not run"
else
	$A record --emulate -S -e intel_pt//u --trigger-on trigger_point -o e1.data -- "$P" 5 2000 >/dev/null 2>e1.err; st=$?
	h=$(hits e1.err); s=$(snaps e1.err); c=$(coal e1.err)
	check '[ $st -eq 0 ] && [ "$h" = 5 ] && [ -n "$s" ] && [ $((s + c)) -eq 5 ]' "--emulate, the tracer watches trigger_point (PIE): 5 calls, $h hits = $s snapshots + $c coalesced"
	check 'grep -q "seen by the emulator.s tracer at file offset $want)" e1.err' "at the file offset perf probe gives ($want)"
	check '$A info e1.data | grep -q "auxcap_snapshots $s: $s function; trigger to frozen"' "the snapshots are stored as function triggers: $($A info e1.data | grep 'auxcap_snapshots [0-9]')"
	if ! check '$A decode e1.data 2>/dev/null | grep -q "call .* => [0-9a-f]* trigger_point+0x0$"' "the first snapshot's trace holds the call of trigger_point"; then
		# what to look at when it does not (the work directory is kept too)
		sed 's/^/#   record: /' e1.err
		$A decode e1.data 2>&1 | grep -E "^# snapshot|trigger_point|error|gap" | head -20 | sed 's/^/#   decode: /'
	fi
	if [ $bp_fire = yes ]; then
		$A record --emulate -S -e intel_pt//u --trigger-via breakpoint --trigger-on trigger_point -o e2.data -- "$PN" 4 2000 >/dev/null 2>e2.err; st=$?
		h=$(hits e2.err); s=$(snaps e2.err); c=$(coal e2.err)
		check '[ $st -eq 0 ] && [ "$h" = 4 ] && [ -n "$s" ] && [ $((s + c)) -eq 4 ]' "--emulate, an execute breakpoint (not PIE): 4 calls, $h hits = $s snapshots + $c coalesced"
	fi
	$A record --emulate -S -e intel_pt//u --trigger-via uprobe --trigger-on trigger_point -o e3.data -- "$P" 1 0 >e3.out 2>e3.err; st=$?
	check 'one_line $st e3.err && grep -q "int3" e3.err && [ ! -s e3.out ]' "--emulate with a uprobe: $(cat e3.err)"
	$A record --emulate -S -e intel_pt//u --trigger-via breakpoint --trigger-on trigger_point -o e4.data -- "$P" 1 0 >e4.out 2>e4.err; st=$?
	check 'one_line $st e4.err && grep -q "position-independent" e4.err && [ ! -s e4.out ]' "--emulate with a breakpoint in a PIE: $(cat e4.err)"
	# The tracer times the calls itself, from the call instruction to the return back.
	$A record --emulate -S -e intel_pt//u --trigger-on run --trigger-min-duration 1ms -o e5.data -- "$E" 300 >/dev/null 2>e5.err; st=$?
	check '[ $st -eq 0 ] && [ "$(tcalls e5.err)" = 1 ] && [ "$(tslow e5.err)" = 1 ] && [ "$(snaps e5.err)" = 1 ]' "--emulate: run() timed by the tracer: $(tail -1 e5.err)"
	longest=$(sed -n 's/.* calls returned (the longest \([^)]*\)).*/\1/p' e5.err)
	check '[ -n "$longest" ] && $A info e5.data | grep -q "^    #0 function .*, after a call of $longest\$"' "--emulate: the table keeps the call's duration ($longest)"
	check '$A decode e5.data --itrace=c 2>/dev/null | grep -v "^#" | grep "return" | tail -1 | grep -q "return *main+0x[0-9a-f]* (from run+0x"' "the snapshot's trace ends with run()'s return to main: $($A decode e5.data --itrace=c 2>/dev/null | grep return | tail -1)"
	# A library function called through the PLT (and, first, the lazy binder): timed from
	# the return address the stack points at on entry.  getppid runs once in 300 iterations.
	LIBC=$(ldd "$E" | awk '/libc\.so/ { print $3 }')
	$A record --emulate -S -e intel_pt//u --trigger-on "getppid@$LIBC" --trigger-min-duration 1us -o e7.data -- "$E" 300 >/dev/null 2>e7.err; st=$?
	check '[ $st -eq 0 ] && [ "$(tcalls e7.err)" = 1 ] && [ "$(snaps e7.err)" = 1 ]' "--emulate: getppid in libc, through the PLT, timed: $(tail -1 e7.err)"
	check '$A decode e7.data --itrace=c 2>/dev/null | grep return | tail -1 | grep -q "return *run+0x[0-9a-f]* (from [_A-Za-z]*getppid+0x"' "its snapshot ends with getppid's return to run(): $($A decode e7.data --itrace=c 2>/dev/null | grep return | tail -1)"
	$A record --emulate -S -e intel_pt//u --trigger-on work --trigger-min-duration 100s -o e6.data -- "$E" 300 >/dev/null 2>e6.err; st=$?
	check '[ $st -eq 0 ] && [ "$(tcalls e6.err)" = 300 ] && [ "$(tslow e6.err)" = 0 ] && [ "$(snaps e6.err)" = 0 ]' "--emulate: work()'s 300 calls timed, none of 100 s: $(tail -1 e6.err)"
fi

echo "# $fails failed"
[ $fails -eq 0 ]
