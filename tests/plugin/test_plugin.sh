#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The plug-in API end to end: auxcap's headers are installed (meson install into a temporary
# DESTDIR), each compiles on its own, the example backend tests/plugin/toy_backend.c is built
# like an external project against them (cc -shared -fPIC, linked with nothing of auxcap) and
# loaded with --plugin and from $AUXCAP_PLUGIN_DIR: `auxcap list` shows it serving intel_bts;
# bad plug-ins (no entry point, another ABI, a name already taken, not a shared object) fail
# with one line naming the cause.  With "e2e" (suite kernel: it runs a traced program), the
# plug-in also records the emulated intel_bts PMU (its recording_options and AUXTRACE_INFO)
# and decodes the file with its decoder.
# usage: test_plugin.sh AUXCAP BUILD_ROOT TOY_SOURCE CC [e2e AUX_EVENTS PROGRAM]
set -u
auxcap=$1 build=$2 toy_src=$3 cc=$4 mode=${5:-} aux_events=${6:-} prog=${7:-}
sysfs=${AUXCAP_FIXTURES:?AUXCAP_FIXTURES is not set; run through meson test}/sysfs
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
export AUXCAP_PLUGIN_DIR= # no plug-ins but ours

fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

# --- install the headers and build the plug-in against them ---------------------------------
if ! DESTDIR="$tmp/inst" meson install -C "$build" --no-rebuild --quiet >"$tmp/install.log" 2>&1; then
	cat "$tmp/install.log"
	echo "FAIL: meson install into a DESTDIR"
	exit 1
fi
hdr=$(find "$tmp/inst" -path '*/include/auxcap/backend.h' | head -1)
[ -n "$hdr" ] || { echo "FAIL: auxcap/backend.h was not installed"; exit 1; }
inc=$(dirname "$(dirname "$hdr")")
echo "installed headers: $(cd "$inc/auxcap" && echo *.h)"

# Each installed header is self-contained C11.
for h in "$inc"/auxcap/*.h; do
	printf '#include <auxcap/%s>\nint auxcap_header_test;\n' "$(basename "$h")" >"$tmp/h.c"
	"$cc" -std=c11 -Wall -Wextra -Wpedantic -Werror -I"$inc" -c "$tmp/h.c" -o "$tmp/h.o" \
		>"$tmp/cc.log" 2>&1 || fail "$(basename "$h") does not compile alone: $(cat "$tmp/cc.log")"
done

# The plug-in sees only the installed tree (no -I into the source).
build_toy() { # OUT [CFLAGS...]
	local out=$1
	shift
	"$cc" -std=c11 -Wall -Wextra -Werror -fPIC -shared -I"$inc" "$@" "$toy_src" -o "$out" \
		>"$tmp/cc.log" 2>&1 || { cat "$tmp/cc.log"; return 1; }
}
build_toy "$tmp/libtoy.so" || { echo "FAIL: the toy plug-in does not build against the installed headers"; exit 1; }
# It needs nothing from auxcap at link time: its auxcap_* references are undefined symbols
# that the auxcap executable provides at load time.
undef=$(nm -D --undefined-only "$tmp/libtoy.so" | awk '$2 ~ /^auxcap_/ { print $2 }' | sort | tr '\n' ' ')
[ "$undef" = "auxcap_attr_word_get auxcap_find_snapshot_zero_tail auxcap_log " ] ||
	fail "toy's auxcap references: '$undef'"
for s in $undef; do
	nm -D --defined-only "$auxcap" | awk '{ print $3 }' | grep -qx "$s" ||
		fail "auxcap does not export $s"
done

if [ "$mode" = e2e ]; then
	# --- record and decode with the plug-in ---------------------------------------------
	"$auxcap" --plugin "$tmp/libtoy.so" record -v --emulate -e intel_bts//u --max-insns 20000 \
		-o "$tmp/toy.data" -- "$prog" 100 >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" -eq 0 ] || fail "record with the plug-in exited $rc: $(cat "$tmp/err")"
	grep -q "toy: recording" "$tmp/err" || fail "toy's recording_options did not run (its log line is missing)"
	"$auxcap" info "$tmp/toy.data" >"$tmp/info" 2>&1
	grep -q "AUXTRACE_INFO: type 65543 .*4 u64" "$tmp/info" || fail "toy's AUXTRACE_INFO is not in the file: $(grep AUXTRACE_INFO "$tmp/info")"
	# toy's decoder through the registry (found by the AUXTRACE_INFO type).
	"$aux_events" --plugin "$tmp/libtoy.so" "$tmp/toy.data" >"$tmp/ev" 2>"$tmp/err"
	rc=$?
	[ "$rc" -eq 0 ] || fail "decoding with toy exited $rc: $(cat "$tmp/err")"
	nb=$(grep -c "^branch" "$tmp/ev")
	summary=$(awk '/what=toy-summary/ { for (i = 1; i <= NF; i++) if ($i ~ /^payload=/) { sub("payload=", "", $i); print $i } }' "$tmp/ev")
	[ "$nb" -gt 100 ] && [ "$summary" = "$nb" ] ||
		fail "toy decoded $nb branches, its summary says '$summary'"
	# The bytes are intel_bts records: the built-in decoder finds the same branches in them.
	grep "^branch" "$tmp/ev" | awk '{ print $3, $4 }' >"$tmp/toy.br"
	"$aux_events" --backend intel_bts "$tmp/toy.data" | grep "^branch" | awk '{ print $3, $4 }' >"$tmp/bts.br"
	cmp -s "$tmp/toy.br" "$tmp/bts.br" ||
		fail "toy and intel_bts decode the file differently: $(diff "$tmp/toy.br" "$tmp/bts.br" | head -3)"
	# auxcap decode: the decode stage runs toy's decoder (found by the AUXTRACE_INFO type).
	"$auxcap" --plugin "$tmp/libtoy.so" decode "$tmp/toy.data" >"$tmp/dec" 2>"$tmp/err"
	rc=$?
	[ "$rc" -eq 0 ] || fail "auxcap decode with toy exited $rc: $(cat "$tmp/err")"
	grep -q "toy-summary" "$tmp/dec" || fail "auxcap decode does not show toy's summary event"
	ndec=$("$auxcap" --plugin "$tmp/libtoy.so" decode "$tmp/toy.data" --format json 2>/dev/null |
		grep -c '"type":"branch"')
	[ "$ndec" = "$nb" ] || fail "auxcap decode --format json: $ndec branches, toy's decoder $nb"
	"$auxcap" decode "$tmp/toy.data" >/dev/null 2>"$tmp/err" && fail "auxcap decoded a toy file without toy"
	[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "decode without the plug-in: not one line: $(cat "$tmp/err")"
	# Without the plug-in nobody reads the file.
	"$aux_events" "$tmp/toy.data" >/dev/null 2>"$tmp/err" && fail "a toy file decoded without toy"
	grep -q "no backend decodes AUXTRACE type 65543" "$tmp/err" || fail "$(cat "$tmp/err")"
	[ "$fails" -eq 0 ] && echo "plug-in end to end: all checks passed"
	exit $((fails > 0))
fi

# --- list ------------------------------------------------------------------------------------
"$auxcap" --plugin "$tmp/libtoy.so" list --sysfs "$sysfs" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 0 ] || fail "list with the plug-in exited $rc: $(cat "$tmp/err")"
[ -s "$tmp/err" ] && fail "list with the plug-in wrote to stderr: $(cat "$tmp/err")"
grep -Eq '^intel_bts +type 7 +backend toy ' "$tmp/out" || fail "intel_bts is not served by toy: $(grep intel_bts "$tmp/out")"
grep -Eq '^arm_spe_0 .* backend arm_spe ' "$tmp/out" || fail "arm_spe_0 lost its built-in backend"
grep -Eq '^  toy +record decode type 65543 ' "$tmp/out" || fail "toy is not in the backends list"
grep -Fq "plug-in $tmp/libtoy.so" "$tmp/out" || fail "the list does not say where toy came from"
# The same option after the command name.
"$auxcap" list --plugin="$tmp/libtoy.so" --sysfs "$sysfs" 2>&1 | grep -Eq '^intel_bts .* backend toy ' ||
	fail "--plugin= after the command is not honoured"
# Without it the built-in serves intel_bts again.
"$auxcap" list --sysfs "$sysfs" | grep -Eq '^intel_bts .* backend intel_bts ' ||
	fail "intel_bts without the plug-in"

# From the plug-in directory; a bad neighbour is skipped with a warning.
mkdir "$tmp/dir"
cp "$tmp/libtoy.so" "$tmp/dir/"
printf 'int not_a_plugin(void) { return 1; }\n' >"$tmp/np.c"
"$cc" -shared -fPIC "$tmp/np.c" -o "$tmp/dir/libnp.so" || fail "building a non-plug-in"
AUXCAP_PLUGIN_DIR="$tmp/dir" "$auxcap" list --sysfs "$sysfs" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 0 ] || fail "a bad plug-in in the directory made list fail ($rc)"
grep -Eq '^intel_bts .* backend toy ' "$tmp/out" || fail "the plug-in directory was not loaded"
grep -q "warning: plug-in directory: '$tmp/dir/libnp.so' is not an auxcap plug-in" "$tmp/err" ||
	fail "no warning for the bad plug-in: $(cat "$tmp/err")"

# --- bad plug-ins: one line, exit 1 ----------------------------------------------------------
expect_error() { # WHAT PATTERN ARGS...
	local what=$1 pat=$2
	shift 2
	"$auxcap" "$@" list --sysfs "$sysfs" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" -eq 1 ] || fail "$what: exit status $rc, not 1"
	[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "$what: not one line: $(cat "$tmp/err")"
	grep -q -e "$pat" "$tmp/err" || fail "$what: '$(cat "$tmp/err")' does not say '$pat'"
	[ -s "$tmp/out" ] && fail "$what: list ran anyway"
}
expect_error "no entry point" "is not an auxcap plug-in: it exports no auxcap_backend_plugin()" \
	--plugin "$tmp/dir/libnp.so"
build_toy "$tmp/libtoy999.so" -DTOY_ABI=999 || fail "building the toy with ABI 999"
abi=$(sed -n 's/^#define AUXCAP_BACKEND_ABI \([0-9]*\).*/\1/p' "$inc/auxcap/backend.h")
expect_error "ABI mismatch" "was built for backend ABI 999, this auxcap has ABI $abi: rebuild it" \
	--plugin "$tmp/libtoy999.so"
expect_error "duplicate name" "a backend named 'toy' is already loaded" \
	--plugin "$tmp/libtoy.so" --plugin "$tmp/dir/libtoy.so"
expect_error "not a shared object" "cannot load plug-in '$tmp/np.c'" --plugin "$tmp/np.c"
expect_error "missing file" "cannot load plug-in '$tmp/nope.so'" --plugin "$tmp/nope.so"
"$auxcap" list --plugin >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 1 ] && grep -q -e "--plugin needs the path" "$tmp/err" ||
	fail "--plugin without a path: $rc, $(cat "$tmp/err")"

[ "$fails" -eq 0 ] && echo "plug-in API: all checks passed"
exit $((fails > 0))
