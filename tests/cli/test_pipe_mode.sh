#!/bin/bash
# Pipe mode end to end: 'auxcap record -o -' streams a perf.data pipe while the traced command
# prints to its own standard output (which must not land in the stream: it goes to stderr, as
# with perf), and decode, report and info read the stream from standard input ('-') or saved
# to a file.  perf 6.1 reads the same stream.  Uses --emulate's live tracer (ptrace).
set -u
A=${AUXCAP:?}
E=${AUXCAP_EXAMPLE_LOOP:?}
T=$(mktemp -d)
. "$(dirname "$0")/keep_failed.sh"
trap 'keep_failed "$T"; rm -rf "$T"' EXIT
cd "$T" || exit 1
fails=0
ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; fails=$((fails + 1)); }
check() { if eval "$1"; then ok "$2"; else bad "$2 ($1)"; fi; }

if ! $A record --emulate -e intel_pt//u -o - -- "$E" 40 >p.data 2>rec.err; then
	if grep -qi 'ptrace\|not permitted' rec.err; then
		echo "SKIP: the live tracer cannot trace a child here: $(cat rec.err)"
		exit 77
	fi
	cat rec.err
	echo "not ok - record -o - failed"
	exit 1
fi
# The example prints "sum=..." lines: on stderr, not in the stream.
check 'grep -aq "^sum [0-9]" rec.err && ! grep -aq "sum [0-9]" p.data' "the command's output (sum N) went to stderr, not into the stream"
$A info p.data >info.txt 2>info.err
check '[ ! -s info.err ] && grep -q "^mode: pipe" info.txt' "info reads the saved stream whole, no recovery warning"
check '! grep -q "type >= 128" info.txt' "no foreign bytes in the stream"

$A decode --itrace=c p.data >file.txt 2>file.err
n=$(grep -c 'call   leaf_add' file.txt)
check '[ "$n" -eq 20 ]' "decode of the saved stream: leaf_add called 20 times (40 iterations, every other one): $n"
cat p.data | $A decode --itrace=c - >pipe.txt 2>pipe.err
check 'cmp -s file.txt pipe.txt' "decode - from a pipe gives the same output"
$A decode --itrace=c - <p.data >redir.txt 2>/dev/null
check 'cmp -s file.txt redir.txt' "decode - from a redirected file gives the same output"
cat p.data | $A report --format json --top 0 - >rep.json 2>rep.err
check 'python3 -c "import json,sys; r=json.load(open(\"rep.json\")); sys.exit(0 if any(f[\"name\"]==\"leaf_add\" and f[\"calls\"]==20 for f in r[\"functions\"]) else 1)"' \
	"report - from a pipe: leaf_add with 20 calls"
# A counter's samples in a stream: the report names the event (its name, renamed when the
# stream's event description is read again while decoding, was read after being freed).
$A record -e cpu-clock -o - -- "$E" 30000000 >pc.data 2>/dev/null
n_pc=$($A info pc.data | awk '$1=="SAMPLE"{print $2}')
$A report pc.data >pc.rep 2>&1
$A report --format json pc.data >pc.json 2>&1
check 'grep -q "^# samples:   cpu-clock: $n_pc\$" pc.rep && python3 -c "import json,sys; r=json.load(open(\"pc.json\")); sys.exit(0 if [e[\"name\"] for e in r[\"events\"]] == [\"cpu-clock\"] and [t[\"event\"] for t in r[\"samples\"]] == [\"cpu-clock\"] else 1)"' "report of a counter stream names its event: $(grep '^# samples' pc.rep)"
cat p.data | $A info - >info2.txt 2>&1
check 'grep -q "^mode: pipe" info2.txt' "info - reads the stream"

# perf reads the stream from a pipe, with the branches auxcap decodes.
if command -v perf >/dev/null 2>&1; then
	cat p.data | perf script -i - --itrace=b -F ip,addr >perf.txt 2>perf.err; st=$?
	awk '{print $1, $3}' perf.txt >pf.txt
	$A decode p.data 2>/dev/null |
		grep -E '^[^#].* (call|return|jmp|jcc|syscall|sysret|tr strt|tr end|far-jmp|interrupt) ' |
		sed -E 's/.*: (call|return|jmp|jcc|syscall|sysret|tr strt|tr end|far-jmp|interrupt) +//' |
		awk '{ f = $1; for (i = 2; i <= NF; i++) if ($i == "=>") t = $(i + 1);
		       sub(/^0+/, "", f); sub(/^0+/, "", t); print (f == "" ? "0" : f), (t == "" ? "0" : t) }' >ax.txt
	np=$(wc -l <pf.txt)
	nb=$(wc -l <ax.txt)
	check '[ $st -eq 0 ] && ! grep -q "failed to process" perf.err' "perf script reads the stream from a pipe"
	check '[ "$np" -gt 1000 ] && cmp -s ax.txt pf.txt' \
		"perf's $np branches are auxcap's $nb, same from and to addresses, in order"
	# Given the saved stream as a file (-i p.data), perf 6.1 fails on some streams with
	# "failed to process type" (3 of 10 runs here; it reads the same bytes whole from a
	# pipe): it reads the record after the AUXTRACE data 16 bytes early, the size of the
	# pipe header, and otherwise drops the last few branches.  Shown, not checked.
	perf script -i p.data --itrace=b -F ip,addr >perf-file.txt 2>perf-file.err
	echo "# perf script -i p.data (not checked): exit $?, $(wc -l <perf-file.txt) of $nb branches$(grep -m1 -o 'failed to process.*' perf-file.err | sed 's/^/, /')"
fi

# Bad input: one line, exit 1.
$A decode - </dev/null 2>empty.err; st=$?
check '[ $st -eq 1 ] && [ $(wc -l <empty.err) -eq 1 ]' "empty standard input: $(cat empty.err)"
printf 'not a capture at all' | $A report - 2>junk.err; st=$?
check '[ $st -eq 1 ] && [ $(wc -l <junk.err) -eq 1 ]' "junk on standard input: $(cat junk.err)"

[ $fails -eq 0 ] || { echo "$fails failed"; exit 1; }
echo "all passed"
