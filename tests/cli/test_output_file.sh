#!/bin/bash
# 'auxcap record -o FILE' (and 'decode -o') creates its output safely (core/file.c): 0600,
# never through a symlink (with or without -f), an existing file kept as FILE.old or, with -f
# (decode: always), replaced without touching its other hard links, and as root never in a
# directory another user owns.  Each refusal is one line naming the path and exits 1 with
# nothing written.  Records 'true' with cpu-clock on the real kernel (suite kernel); exits 77
# when perf events are not permitted.
set -u
A=${AUXCAP:?}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
fails=0
ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; fails=$((fails + 1)); }
check() { if eval "$1"; then ok "$2"; else bad "$2 ($1)"; fi; }
rec() { "$A" record -e cpu-clock "$@" -- true >/dev/null 2>err; }

if ! rec -o probe.data; then
	if grep -qi 'permission\|paranoid' err; then
		echo "SKIP: perf_event_open not permitted: $(cat err)"
		exit 77
	fi
	echo "probe record failed: $(cat err)"
	exit 1
fi

# New file: 0600 even under umask 000.
(umask 000; rec -o new.data); st=$?
check '[ $st -eq 0 ] && [ "$(stat -c %a new.data)" = 600 ]' "new output is created 0600 (umask 000)"
check '"$A" info new.data >/dev/null 2>&1' "and reads back"

# Existing file: kept as .old, the new one 0600.
echo previous >keep.data
chmod 644 keep.data
rec -o keep.data; st=$?
check '[ $st -eq 0 ] && [ "$(cat keep.data.old)" = previous ]' "existing output kept as FILE.old"
check '[ "$(stat -c %a keep.data)" = 600 ]' "the new output is 0600, not the old file's 644"

# -f replaces the entry: a hard link to a precious file is not truncated.
echo precious >precious
ln precious linked.data
rec -f -o linked.data; st=$?
check '[ $st -eq 0 ] && [ "$(cat precious)" = precious ]' "-f does not write through a hard link"
check '[ "$(stat -c %h precious)" = 1 ] && [ "$(stat -c %a linked.data)" = 600 ]' "-f made a new 0600 file"

# A symlink at the output path: refused with and without -f; the target is untouched.
echo target >target
ln -s target link.data
for f in "" "-f"; do
	rec $f -o link.data; st=$?
	check '[ $st -eq 1 ] && [ "$(cat target)" = target ] && [ -L link.data ]' \
		"symlinked output refused ${f:-without -f}; target untouched"
	check 'grep -q "link.data.*symbolic link" err && [ "$(wc -l <err)" = 1 ]' \
		"one-line error naming the link ${f:-without -f}"
done
check '[ ! -e link.data.old ] && [ ! -e target.old ]' "nothing moved aside for a symlink"
ln -s "$T/nowhere" dangling.data
rec -f -o dangling.data; st=$?
check '[ $st -eq 1 ] && [ ! -e nowhere ]' "dangling symlink not followed to create its target"

# A directory as output.
mkdir adir
rec -o adir; st=$?
check '[ $st -eq 1 ] && grep -q "adir.*directory" err' "a directory as output is refused"

# Root and a directory owned by someone else.
if [ "$(id -u)" -eq 0 ]; then
	mkdir userdir
	chown 4321:4321 userdir
	rec -o userdir/x.data; st=$?
	check '[ $st -eq 1 ] && [ ! -e userdir/x.data ]' "root refuses a directory owned by uid 4321"
	check 'grep -q "userdir" err && grep -q "uid 4321" err && grep -q "directory root owns" err' \
		"the error names the directory, its owner and the fix"
	chown 0:0 userdir
	rec -o userdir/x.data; st=$?
	check '[ $st -eq 0 ]' "the same directory owned by root is fine"
else
	echo "ok - # not root: the foreign-directory rule applies to root only"
fi

# decode -o follows the same rules: 0600, an existing entry replaced, never a symlink.
printf '\000\020\100\000\000\000\000\000\000\021\100\000\000\000\000\000\020\000\000\000\000\000\000\000' >bts.bin
echo old >dec.txt
chmod 644 dec.txt
ln dec.txt dec-link.txt
"$A" decode --raw intel_bts bts.bin -o dec.txt >/dev/null 2>err; st=$?
check '[ $st -eq 0 ] && grep -q "branch .*0x0000000000401000 -> 0x0000000000401100" dec.txt' \
	"decode -o writes the decoded branches"
check '[ "$(stat -c %a dec.txt)" = 600 ] && [ "$(cat dec-link.txt)" = old ]' \
	"decode -o output is 0600, a hard link to the old file untouched"
"$A" decode --raw intel_bts bts.bin -o link.data >/dev/null 2>err; st=$?
check '[ $st -eq 1 ] && grep -q "symbolic link" err && [ "$(cat target)" = target ]' \
	"decode -o refuses a symlink"

[ $fails -eq 0 ] || { echo "$fails failed"; exit 1; }
exit 0
