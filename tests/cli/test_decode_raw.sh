#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# End to end: `auxcap decode --raw intel_pt` on libipt test vectors, compared with the
# vectors' expected ptdump/ptxed outputs, plus the CLI's error handling.
# Usage: test_decode_raw.sh AUXCAP_BINARY HAVE_LIBELF(0|1)   (env AUXCAP_SHARED_FIXTURES)
set -u
AUXCAP=$1
HAVE_LIBELF=${2:-1}
SRC=${AUXCAP_SHARED_FIXTURES:-}/libipt-ptt/generated-by-pttc/test/src
if [ ! -d "$SRC" ]; then
	echo "SKIP: libipt test vectors not found (AUXCAP_SHARED_FIXTURES)"
	exit 77
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0
pass=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fails=$((fails + 1)); echo "FAIL $1"; }

org() { sed -n 's/^[ \t]*org[ \t]*\([0-9a-fx]*\).*/\1/p' "$SRC/../../../ptt-src/test/src/$1.ptt"; }

# 1. --dump prints what ptdump prints (white space amount ignored, as libipt's harness).
for t in loop-tnt ptdump-bad_opc-resync tnt-tip_pgd_noip-sysret mwait-pwre-exstop_ip-pwrx \
	 ptet-int-iret; do
	exp=$SRC/$t/$t-ptdump.exp
	"$AUXCAP" decode --raw intel_pt "$SRC/$t/$t.pt" --dump >"$TMP/out" 2>"$TMP/err"
	if diff -b "$exp" "$TMP/out" >/dev/null; then ok "dump $t"; else bad "dump $t"; fi
done

# The ptdump options of the vectors that use them.
for spec in "ptdump-no-offset:--no-offset" "ptdump-no-offset-raw:--no-offset --raw-bytes" \
	    "ptdump-last-ip:--lastip" "ptdump-exec-mode:--exec-mode" "dump-all-packets:--no-sync"; do
	t=${spec%%:*}
	# shellcheck disable=SC2086
	"$AUXCAP" decode --raw intel_pt "$SRC/$t/$t.pt" --dump ${spec#*:} >"$TMP/out" 2>"$TMP/err"
	if diff -b "$SRC/$t/$t-ptdump.exp" "$TMP/out" >/dev/null; then ok "dump $t"; else
		bad "dump $t"; fi
done

# 2. --itrace=i visits exactly the instruction addresses ptxed expects.
for t in loop-tnt call_direct-ret_compressed call_indirect-ret_uncompressed tip-eos \
	 fup-tip_pgd-tip_pge psb-tnt-psb; do
	a=$(org "$t")
	grep -E '^(\? )?[0-9a-f]{16}$' "$SRC/$t/$t-ptxed.exp" | sed 's/^? //' >"$TMP/exp"
	"$AUXCAP" decode --raw intel_pt "$SRC/$t/$t.pt" --raw-bin "$SRC/$t/$t.bin:$a" \
		--itrace=i >"$TMP/out" 2>"$TMP/err"
	awk '{ print $2 }' "$TMP/out" | grep -E '^[0-9a-f]{16}$' >"$TMP/got"
	if [ -s "$TMP/exp" ] && cmp -s "$TMP/exp" "$TMP/got"; then ok "insns $t"; else bad "insns $t"; fi
	# 3. The block decoder finds the same branches as the instruction decoder.
	"$AUXCAP" decode --raw intel_pt "$SRC/$t/$t.pt" --raw-bin "$SRC/$t/$t.bin:$a" \
		--itrace=bc >"$TMP/blk" 2>/dev/null
	"$AUXCAP" decode --raw intel_pt "$SRC/$t/$t.pt" --raw-bin "$SRC/$t/$t.bin:$a" \
		--itrace=bc --insn-decoder >"$TMP/ins" 2>/dev/null
	if cmp -s "$TMP/blk" "$TMP/ins"; then ok "blk=insn $t"; else bad "blk=insn $t"; fi
done

# 4. A gap: code missing from the image is reported with its trace offset.
t=pip-pip_mov_cr3-fail
"$AUXCAP" decode --raw intel_pt "$SRC/$t/$t.pt" --raw-bin "$SRC/$t/$t.bin:$(org $t)" \
	--itrace=i >"$TMP/out" 2>"$TMP/err"
if [ $? -eq 0 ] && grep -q '^.*!! gap at trace offset 0x2b: .*no memory mapped' "$TMP/out" &&
   grep -q 'decode gap' "$TMP/err"; then ok "gap reported"; else bad "gap reported"; fi

# 4b. Time: instructions after a TSC packet carry its value (0xa00 = 2560).
t=ovf-timing-fup
"$AUXCAP" decode --raw intel_pt "$SRC/$t/$t.pt" --raw-bin "$SRC/$t/$t.bin:$(org $t)" \
	--itrace=ib >"$TMP/out" 2>"$TMP/err"
if grep -Eq '^ +2560 0000000000001001 ' "$TMP/out" && grep -q 'overflow' "$TMP/out"; then
	ok "tsc"; else bad "tsc"; cat "$TMP/out"; fi

# 5. Symbols from an ELF: wrap a vector's code into an ELF function at its org address.
if [ "$HAVE_LIBELF" = 1 ] && command -v cc >/dev/null && command -v ld >/dev/null; then
	t=call_direct-ret_compressed
	cp "$SRC/$t/$t.bin" "$TMP/code.bin"
	printf '\t.text\n\t.globl f\n\t.type f,@function\nf:\n\t.incbin "%s"\n\t.size f, .-f\n' \
		"$TMP/code.bin" >"$TMP/f.s"
	if cc -c -o "$TMP/f.o" "$TMP/f.s" 2>/dev/null &&
	   ld -o "$TMP/f.elf" -e f -Ttext="$(org $t)" "$TMP/f.o" 2>/dev/null; then
		"$AUXCAP" decode --raw intel_pt "$SRC/$t/$t.pt" --elf "$TMP/f.elf" --itrace=b \
			>"$TMP/out" 2>"$TMP/err"
		if grep -Eq '^ +- call +[0-9a-f]{16} f\+0x[0-9a-f]+ => [0-9a-f]{16} f\+0x[0-9a-f]+$' \
			"$TMP/out" &&
		   grep -Eq ' return +[0-9a-f]{16} f\+0x' "$TMP/out"; then
			ok "elf symbols"
		else
			bad "elf symbols"; cat "$TMP/out" "$TMP/err"
		fi
		# Instructions with symbol and disassembly; calls and returns paired by depth.
		"$AUXCAP" decode --raw intel_pt "$SRC/$t/$t.pt" --elf "$TMP/f.elf" --itrace=ic \
			>"$TMP/outi" 2>"$TMP/err"
		if grep -Eq ' 0000000000100000 f\+0x0 +call 0x100008$' "$TMP/outi" &&
		   grep -Eq ' 0000000000100008 f\+0x8 +ret$' "$TMP/outi" &&
		   grep -Eq '^ +- +0 call +f\+0x8 \(from f\+0x0\)$' "$TMP/outi" &&
		   grep -Eq '^ +- +0 return f\+0x5 \(from f\+0x8\)$' "$TMP/outi"; then
			ok "insns+calls"
		else
			bad "insns+calls"; cat "$TMP/outi"
		fi
		# The same ELF given with its load address (that of its first PT_LOAD) decodes
		# the same; shifted by 0x1000 it decodes nothing of the trace.
		base=$(readelf -lW "$TMP/f.elf" | awk '$1 == "LOAD" { print $3; exit }')
		"$AUXCAP" decode --raw intel_pt "$SRC/$t/$t.pt" --elf "$TMP/f.elf:$base" \
			--itrace=b >"$TMP/out2" 2>/dev/null
		if cmp -s "$TMP/out" "$TMP/out2"; then ok "elf load addr"; else bad "elf load addr"; fi
		"$AUXCAP" decode --raw intel_pt "$SRC/$t/$t.pt" --elf "$TMP/f.elf:$((base + 4096))" \
			--itrace=b >"$TMP/out3" 2>/dev/null
		if grep -q '!! gap.*no memory mapped' "$TMP/out3"; then ok "elf shifted"; else
			bad "elf shifted"; fi
	fi
fi

# 6. Errors: one line, naming the problem, exit status 1.
t=loop-tnt
expect_err() { # name, pattern, args...
	name=$1; pat=$2; shift 2
	"$AUXCAP" decode "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ $rc -eq 1 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -q "$pat" "$TMP/err"; then
		ok "error: $name"
	else
		bad "error: $name (rc=$rc)"; cat "$TMP/err"
	fi
}
echo "not an elf" >"$TMP/text"
expect_err "missing trace" "cannot read trace file.*No such file" --raw intel_pt "$TMP/nope.pt"
if [ "$HAVE_LIBELF" = 1 ]; then
	expect_err "unreadable elf" "cannot read ELF.*not an ELF" --raw intel_pt "$SRC/$t/$t.pt" \
		--elf "$TMP/text"
	expect_err "missing elf" "cannot read ELF.*No such file" --raw intel_pt "$SRC/$t/$t.pt" \
		--elf "$TMP/nope"
else
	expect_err "elf without libelf" "no libelf" --raw intel_pt "$SRC/$t/$t.pt" --elf "$TMP/text"
fi
expect_err "bad --elf" "bad --elf" --raw intel_pt "$SRC/$t/$t.pt" --elf "$TMP/text:zz"
expect_err "bad --cpu" "bad --cpu" --raw intel_pt "$SRC/$t/$t.pt" --cpu 6
expect_err "bad --raw-bin" "bad --raw-bin" --raw intel_pt "$SRC/$t/$t.pt" --raw-bin x.bin
expect_err "other pmu" "supported: intel_pt, intel_bts, arm_spe" --raw cs_etm "$SRC/$t/$t.pt"
expect_err "bad itrace" "bad --itrace" --raw intel_pt "$SRC/$t/$t.pt" --itrace=z
expect_err "dump option alone" "only apply to --dump" --raw intel_pt "$SRC/$t/$t.pt" --lastip
expect_err "no file" "no trace file" --raw intel_pt
expect_err "raw trace without --raw" "not a perf.data file" "$SRC/$t/$t.pt"
expect_err "unknown option" "unknown option" --raw intel_pt "$SRC/$t/$t.pt" --frobnicate

echo "$pass passed, $fails failed"
[ $fails -eq 0 ]
