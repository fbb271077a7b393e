#!/bin/bash
# Build-ids at record time and 'auxcap archive': a capture whose binary is moved away decodes
# the same as before once archived.  Uses the emulated PMU's live tracer (ptrace), so it needs
# a kernel that lets us trace our own child (we run as root in CI).
set -u
A=${AUXCAP:?}
E=${AUXCAP_EXAMPLE_LOOP:?}
T=$(mktemp -d)
. "$(dirname "$0")/keep_failed.sh"
trap 'keep_failed "$T"; rm -rf "$T"' EXIT
cd "$T" || exit 1
# A home of its own: a build-id cache under the user's ~/.debug (perf record fills it) would
# find the binary this test moves away.
mkdir -p "$T/home" && export HOME="$T/home"
fails=0
ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; fails=$((fails + 1)); }
check() { if eval "$1"; then ok "$2"; else bad "$2 ($1)"; fi; }

cp "$E" prog
chmod 0700 prog # a binary only its owner may read stays so in the archive
if ! $A record --emulate -e intel_pt//u -o c.data -- ./prog 40 >/dev/null 2>rec.err; then
	if grep -qi 'ptrace\|not permitted' rec.err; then
		echo "SKIP: the live tracer cannot trace a child here: $(cat rec.err)"
		exit 77
	fi
	cat rec.err
	echo "not ok - record --emulate failed"
	exit 1
fi
# The build-id auxcap wrote is the one readelf reads from the binary, and perf agrees.
want=$(readelf -n prog | awk '/Build ID/{print $3}')
check '[ -n "$want" ]' "the example has a build-id ($want)"
check '$A info c.data | grep -q "$want $T/prog"' "auxcap info lists prog's build-id"
check 'perf buildid-list -i c.data 2>/dev/null | grep -q "^$want $T/prog"' "perf buildid-list reads it"

$A decode --itrace=c c.data >full.txt 2>/dev/null
n_full=$(grep -c ' call ' full.txt)
check '[ "$n_full" -gt 100 ]' "decode with the binary in place: $n_full calls"

# Without the binary, decode says which one is missing and decodes less.
mv prog prog.away
$A decode --itrace=c c.data >miss.txt 2>miss.err
check 'grep -q "prog.*missing or was rebuilt.*auxcap archive" miss.err' "a missing binary is named, with the fix"
check '! cmp -s full.txt miss.txt' "without it the decode differs"

# A rebuilt binary (other build-id) at the same path is not used.
cp /bin/true prog
$A decode --itrace=c c.data >rebuilt.txt 2>rebuilt.err
check 'grep -q "prog.*missing or was rebuilt" rebuilt.err' "a binary with another build-id is refused"
rm prog

# Archive (with the binary back), move it away again: same decode as at the start.
mv prog.away prog
$A archive c.data >arch.out 2>arch.err; st=$?
check '[ $st -eq 0 ]' "archive exits 0"
copy="c.data.archive/.build-id/${want:0:2}/${want:2}"
check '[ -f "$copy" ] && cmp -s "$copy" prog' "the archive holds prog under its build-id"
check '[ "$(stat -c %a "$copy")" = 700 ]' "the copy keeps the binary's mode 0700 (got $(stat -c %a "$copy"))"
check 'grep -q "archived [0-9]* binaries" arch.out' "archive reports what it copied: $(cat arch.out)"
mv prog prog.away
$A decode --itrace=c c.data >arch.txt 2>arch-dec.err
check 'cmp -s full.txt arch.txt' "decode from the archive equals the original decode"
check '! grep -q "missing" arch-dec.err' "no missing-binary warning with the archive"
$A archive c.data >again.out 2>&1
check 'grep -q "archived 0 binaries.*already there" again.out' "archiving twice copies nothing"

# A pipe-mode capture (record -o -) carries its build-ids as HEADER_BUILD_ID records at the end
# of the stream: archive reads through it and copies the same binaries.
mv prog.away prog
$A record --emulate -e intel_pt//u -o - -- ./prog 40 >p.data 2>/dev/null
$A decode --itrace=c p.data >pfull.txt 2>/dev/null
$A archive p.data >parch.out 2>parch.err; st=$?
pcopy="p.data.archive/.build-id/${want:0:2}/${want:2}"
check '[ $st -eq 0 ] && [ -f "$pcopy" ] && cmp -s "$pcopy" prog' "pipe mode: the archive holds prog under its build-id: $(cat parch.out parch.err)"
mv prog prog.away
$A decode --itrace=c p.data >parch.txt 2>/dev/null
check '[ "$(grep -c " call " pfull.txt)" -gt 100 ] && cmp -s pfull.txt parch.txt' "pipe mode: decode from the archive equals the decode with the binary in place"

# As root, a directory that belongs to another user is refused (its owner could swap entries).
if [ "$(id -u)" -eq 0 ]; then
	mkdir other && cp c.data other/ && chown nobody other
	$A archive other/c.data >other.out 2>other.err; st=$?
	check '[ $st -eq 1 ] && grep -q "another user" other.err && [ ! -e other/c.data.archive ]' \
		"root: a directory of another user is refused: $(cat other.err)"
	mkdir -p mine/c.data.archive && cp c.data mine/ && chown nobody mine/c.data.archive
	$A archive mine/c.data >mine.out 2>mine.err; st=$?
	check '[ $st -eq 1 ] && grep -q "another user" mine.err && [ -z "$(ls mine/c.data.archive)" ]' "root: an archive directory of another user is refused: $(grep error mine.err)"
fi

# The vdso has no file: record saves the kernel's image by build-id into perf's build-id cache
# under $HOME (as perf does), decode reads the calls into it from there, and archive copies
# it.  date(1) reads the clock through the vdso's clock_gettime.
mkdir -p home empty
if HOME=$T/home $A record --emulate -e intel_pt//u -o v.data -- date >/dev/null 2>v.err; then
	vid=$($A info v.data | awk '$2 == "[vdso]" {print $1}')
	check '[ -n "$vid" ] && [ -s "home/.debug/.build-id/${vid:0:2}/${vid:2}/elf" ]' \
		"record saved the vdso ($vid) in \$HOME/.debug/.build-id and listed its build-id"
	vf="home/.debug/.build-id/${vid:0:2}/${vid:2}/elf"
	before=$(stat -c '%i %Y' "$vf" 2>/dev/null)
	sleep 1.1
	HOME=$T/home $A record --emulate -e intel_pt//u -o v2.data -- date >/dev/null 2>&1
	check '[ -n "$before" ] && [ "$(stat -c "%i %Y" "$vf")" = "$before" ] && $A info v2.data | grep -q "$vid \[vdso\]"' \
		"a second record finds the saved vdso by its build-id: not written again, listed"
	HOME=$T/home $A decode --itrace=bc v.data >v.txt 2>v.derr
	check '! grep -q "!! gap" v.txt && grep -q "call .*=> *[0-9a-f]* .*clock_gettime+0x0" v.txt && ! grep -q vdso v.derr' \
		"decode: the calls into the vdso's clock_gettime decoded, no gap"
	HOME=$T/empty $A decode --itrace=bc v.data >v0.txt 2>v0.err
	check 'grep -q "!! gap" v0.txt && grep -q "\[vdso\].*not decoded" v0.err' \
		"without the saved image: a gap, and a warning naming [vdso]: $(grep vdso v0.err)"
	HOME=$T/home $A archive v.data >/dev/null 2>&1
	HOME=$T/empty $A decode --itrace=bc v.data >v1.txt 2>/dev/null
	check 'cmp -s v.txt v1.txt' "archived: decoded the same with an empty \$HOME"
else
	bad "record --emulate -- date: $(cat v.err)"
fi
# -N (--no-buildid-cache): nothing written under $HOME, the other build-ids still listed;
# -B (--no-buildid): none listed, decode finds the binaries by path.
mkdir -p homeN homeB
if HOME=$T/homeN $A record --emulate -N -e intel_pt//u -o vn.data -- date >/dev/null 2>vn.err &&
	HOME=$T/homeB $A record --emulate -B -e intel_pt//u -o vb.data -- date >/dev/null 2>vb.err; then
	$A info vn.data >vn.info
	check '[ -z "$(ls -A homeN)" ] && grep -q " /usr/bin/date$" vn.info && ! grep -q "\[vdso\]" vn.info' \
		"-N: nothing under \$HOME, build-ids listed but the vdso's"
	$A info vb.data >vb.info
	HOME=$T/homeB $A decode --itrace=bc vb.data >vb.txt 2>/dev/null
	check '[ -z "$(ls -A homeB)" ] && ! grep -q "build_id" vb.info && grep -q "call .*=> .*__libc_start_call_main+0x0" vb.txt' \
		"-B: no build-id listed, the code decoded by path (libc calls date's main)"
else
	bad "record -N / -B: $(cat vn.err vb.err)"
fi

# The kernel's symbols: kept in the archive when the capture is this kernel's, and used first
# by decode (elsewhere they name its kernel addresses; here a stand-in shows they are read).
if [ "$(awk '$3=="_text"{print $1; exit}' /proc/kallsyms)" != 0000000000000000 ]; then
	$A record -o kk.data -- dd if=/dev/zero of=/dev/null bs=64k count=50000 2>/dev/null
	$A archive kk.data >kk.out 2>kk.err; st=$?
	check '[ $st -eq 0 ] && grep -q "and the kernel.s symbols" kk.out && cat /proc/kallsyms | cmp -s kk.data.archive/kallsyms -' "archive keeps this kernel's kallsyms: $(cat kk.out)"
	# the kernel's build-id is listed as perf lists it (decode finds a vmlinux by it), and
	# archive does not count the kernel as a missing binary
	kid=$(perf buildid-list -k 2>/dev/null)
	if [ -n "$kid" ]; then
		check 'perf buildid-list -i kk.data 2>/dev/null | grep -qx "$kid \[kernel.kallsyms\]" && ! grep -q missing kk.out && ! grep -q kernel.kallsyms kk.err' "the capture lists the kernel's build-id $kid, as perf buildid-list -k reads it"
	else
		echo "skip kernel build-id: perf buildid-list -k reads none here"
	fi
	chmod u+w kk.data.archive/kallsyms
	awk '$3=="_text"{print $1, "T", "archived_text"} $3=="_etext"{print $1, "T", "archived_etext"}' /proc/kallsyms >kk.data.archive/kallsyms
	$A report kk.data >kk.rep 2>&1
	check 'grep -q " archived_text  \[kernel.kallsyms\]" kk.rep' "decode names kernel addresses by the archive's kallsyms"
else
	echo "skip kallsyms: kernel addresses are hidden here (kptr_restrict)"
fi

# Bad input: clear one-line error, exit 1.
echo junk >junk.data
$A archive junk.data 2>junk.err; st=$?
check '[ $st -eq 1 ] && [ $(wc -l <junk.err) -eq 1 ] && grep -q "junk.data" junk.err' "not a perf.data file: one-line error, exit 1"
$A archive nothere.data 2>no.err; st=$?
check '[ $st -eq 1 ] && grep -q "no such file" no.err' "missing file: exit 1"

[ $fails -eq 0 ] || { echo "$fails failed"; exit 1; }
echo "all passed"
