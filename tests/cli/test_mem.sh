#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# auxcap report --mem end to end: the bundled example-mem (a walk through a large array, sums
# over a small one, a store to a counter) recorded with Arm SPE on the emulated PMU, whose unit
# models an L1, an L2, a last-level cache and a TLB; the report must say where its loads were served
# function by function and line by line, and agree with perf 6.1's reading of the same file
# (its l1d-miss, llc-miss, tlb-miss and memory samples, per symbol).
# usage: test_mem.sh   (AUXCAP, AUXCAP_EXAMPLE_MEM, AUXCAP_EXAMPLE_LOOP in the environment)
set -u
A=${AUXCAP:?}
M=${AUXCAP_EXAMPLE_MEM:?}
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

if ! $A record --emulate --max-insns 10 -o probe.data -- "$E" 1 >/dev/null 2>probe.err; then
	if grep -q "needs the live tracer" probe.err; then
		echo "SKIP: this build has no live tracer: $(cat probe.err)"
		exit 77
	fi
fi

# --- the capture -----------------------------------------------------------------------------
# record --mem: SPE's loads and stores (under --emulate every one of them: with a fixed
# period, a loop whose length shares a factor with it would show the same few of its
# instructions, as on hardware without jitter=1)
$A record --emulate --mem --max-insns 300000 -o m.data -- "$M" >m.out 2>m.err
st=$?
check '[ $st -eq 0 ]' "record --emulate --mem of example-mem exits 0 ($(tail -1 m.err))"
check 'grep -q "^# captured:  arm_spe_0/load_filter=1,store_filter=1,period=1/ (AUX trace, arm_spe)" <($A report m.data)' \
	"--mem records arm_spe_0 with the load and store filters"
if ! ls /sys/bus/event_source/devices 2>/dev/null | grep -q '^arm_spe'; then
	$A record --mem -o nospe.data -- true >/dev/null 2>nospe.err
	st=$?
	check '[ $st -eq 1 ] && [ "$(wc -l <nospe.err)" -eq 1 ] && grep -q "no arm_spe PMU" nospe.err && [ ! -e nospe.data ]' \
		"record --mem without an SPE unit: one line, exit 1, no file ($(cat nospe.err))"
fi
$A report m.data >plain.txt 2>plain.err
check 'grep -q "^# memory: .* sampled data accesses (.* loads, .* stores): --mem shows" plain.txt' \
	"the plain report names the data accesses and points at --mem ($(grep '^# memory' plain.txt))"

# --- text ------------------------------------------------------------------------------------
$A report m.data --mem --top 5 >mem.txt 2>mem.err
st=$?
check '[ $st -eq 0 ] && [ ! -s mem.err ]' "report --mem exits 0, nothing on stderr ($(head -2 mem.err))"
check 'grep -q "^Data accesses sampled: " mem.txt && grep -q "^  memory (LLC miss) " mem.txt' "the levels table"
first=$(awk '/^Functions by data access latency/ { getline; getline; print $NF == "[auxcap-example-mem]" ? $(NF-1) : $NF; exit }' mem.txt)
check '[ "$first" = walk_large ]' "the walk through the large array takes the most latency ($first)"
check 'grep -q "^Cache lines by L1 misses" mem.txt && ! grep -q "^Functions by self trace time" mem.txt' "line table, no trace tables"
obj1=$(awk '/^Data objects by access latency/ { getline; getline; print; exit }' mem.txt)
check 'echo "$obj1" | grep -Eq " //anon at 0x[0-9a-f]+ +walk_large \([0-9]+\)$"' "the first data object: the large array, walk_large's ($obj1)"

# --- JSON: the figures add up, and the program's known behaviour -----------------------------
$A report m.data --mem --top 0 --format json >mem.json 2>mem.jerr
check '[ $? -eq 0 ]' "report --mem --format json exits 0"
cnt=$(nm "$M" | awk '$3 == "counters" { print $1 }')
python3 - mem.json "${cnt:-0}" >py.out 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
m = d['mem']
L = ('l1', 'l2', 'llc', 'memory', 'na')
def lv(x, k): return x['levels'][k]['accesses']
bad = []
def want(c, what):
    print(('ok' if c else 'BAD') + ': ' + what)
    if not c: bad.append(what)
want(m['accesses'] == sum(lv(m, k) for k in L), f"levels add up to the {m['accesses']} accesses")
want(m['accesses'] == sum(f['accesses'] for f in m['functions']), "functions add up to the accesses")
want(m['lat_sum'] == sum(m['levels'][k]['lat_sum'] for k in L), "latency by level adds up")
want(m['lat_sum'] == sum(f['lat_sum'] for f in m['functions']), "latency by function adds up")
want(m['lines_total'] == len(m['lines']) and m['lines_untracked_accesses'] == 0 and
     sum(l['accesses'] for l in m['lines']) == m['accesses'], f"{m['lines_total']} lines hold every access")
fn = {f['name']: f for f in m['functions']}
wl, ss, bp = fn.get('walk_large'), fn.get('sum_small'), fn.get('bump')
want(wl and wl['accesses'] > 1000 and lv(wl, 'memory') >= 0.99 * wl['loads'],
     "walk_large: its loads miss the last-level cache (%s of %s)" % (wl and lv(wl, 'memory'), wl and wl['accesses']))
wlines = [l for l in m['lines'] if l['funcs'] and l['funcs'][0]['name'] == 'walk_large']
pages = len({int(l['addr'], 16) >> 12 for l in wlines})
want(wl and wl['tlb_walks'] == pages,
     f"walk_large: a TLB walk for each of the {pages} pages it read ({wl and wl['tlb_walks']})")
want(ss and ss['accesses'] > 1000 and lv(ss, 'memory') == 0 and ss['tlb_walks'] == 0,
     "sum_small: no load of the 16 KiB array goes to memory (%s)" % (ss and lv(ss, 'memory')))
want(ss and lv(ss, 'l1') > 0.5 * ss['accesses'], "sum_small: most of its loads hit the L1")
want(ss and lv(ss, 'l2') > 0 and lv(ss, 'llc') == 0,
     f"sum_small: the L2 serves every load walk_large pushed out of the L1 ({ss and lv(ss, 'l2')})")
want(bp and bp['loads'] > 0 and abs(bp['loads'] - bp['stores']) <= 1 and
     bp['loads'] + bp['stores'] == bp['accesses'],
     f"bump: a load and a store of the counter per call ({bp and bp['loads']} and {bp and bp['stores']})")
want(m['functions'][0]['name'] == 'walk_large', "functions by latency: walk_large first")
# lines: walk_large reads each line once; the counter's line is bump's alone
want(len(wlines) > 1000 and all(l['accesses'] == 1 and l['funcs'][0]['accesses'] == 1 for l in wlines),
     f"walk_large's {len(wlines)} lines of the large array are each read once")
want(all(int(l['addr'], 16) % 64 == 0 for l in m['lines']), "line addresses are 64-byte aligned")
blines = [l for l in m['lines'] if any(f['name'] == 'bump' for f in l['funcs'])]
want(len(blines) == 1 and blines[0]['accesses'] == bp['accesses'] and
     blines[0]['store_threads'] == 1 and blines[0]['threads'] == 1,
     "the counter bump stores to is one line of its own, one thread stores to it")
# the counter's variable: counters[8] of the program's .bss, its offset as nm places it
cnt = int(sys.argv[2], 16)
want(blines and blines[0]['object'] and blines[0]['object']['name'] == 'counters' and
     blines[0]['object']['off'] == ((cnt + 64) & ~63) - cnt and
     blines[0]['object']['dso'].endswith('auxcap-example-mem'),
     f"the counter's line is in the variable counters ({blines and blines[0]['object']})")
want(all(l['object'] is None for l in wlines), "the large array (anonymous memory) is no variable")
# ... but the mapping it is in names it: one anonymous mapping (record --mem asks for the
# mappings of data), the lines at their offsets in it; the small array is on the heap
bases = {int(l['addr'], 16) - l['map']['off'] for l in wlines if l['map'] and l['map']['name'] == '//anon'}
want(len(bases) == 1 and min(bases) % 4096 == 0 and
     all(l['map'] and l['map']['name'] == '//anon' and l['map']['off'] < 64 << 20 for l in wlines),
     f"the large array's lines are in one //anon mapping at their offsets ({[hex(b) for b in bases]})")
# data objects: every access in one (untracked ones counted); the array, the heap, the counter
objs = m['objects']
want(m['objects_total'] == len(objs) and
     sum(o['accesses'] for o in objs) + m['objects_untracked_accesses'] == m['accesses'],
     f"the {len(objs)} data objects add up to the accesses")
want([o['lat_sum'] for o in objs] == sorted([o['lat_sum'] for o in objs], reverse=True),
     "objects by latency, most first")
arr = [o for o in objs if o['kind'] == 'mapping' and o['name'] == '//anon' and
       o['addr'] is not None and int(o['addr'], 16) in bases]
want(len(arr) == 1 and arr[0]['funcs'][0]['name'] == 'walk_large' and arr[0]['other_funcs'] == 0 and
     arr[0]['accesses'] == sum(l['accesses'] for l in wlines) and objs[0] is arr[0],
     f"the large array is one object, walk_large's alone, with the most latency ({arr and arr[0]['accesses']})")
heap = [o for o in objs if o['kind'] == 'mapping' and o['name'] == '[heap]']
want(len(heap) == 1 and heap[0]['addr'] is None and heap[0]['funcs'][0]['name'] == 'sum_small' and
     heap[0]['funcs'][0]['accesses'] == ss['accesses'],
     f"the [heap] is one object, sum_small its most accessing function with all its accesses ({heap and heap[0]['funcs'][0]})")
cv = [o for o in objs if o['kind'] == 'variable' and o['name'] == 'counters']
want(len(cv) == 1 and cv[0]['dso'].endswith('auxcap-example-mem') and blines and
     int(cv[0]['addr'], 16) == int(blines[0]['addr'], 16) - blines[0]['object']['off'] and
     cv[0]['funcs'][0]['name'] == 'bump' and cv[0]['funcs'][0]['accesses'] == bp['accesses'],
     f"the variable counters is an object at its address, bump's ({cv and cv[0]['addr']})")
slines = [l for l in m['lines'] if any(f['name'] == 'sum_small' for f in l['funcs'])]
want(len(slines) >= 16384 // 64 and all(l['map'] and l['map']['name'] == '[heap]' for l in slines),
     f"the small array's {len(slines)} lines are on the [heap]")
ms = [l for l in m['lines'] if lv(l, 'l1') < l['accesses']]
want([ (lv(l, 'l2') + lv(l, 'llc') + lv(l, 'memory')) for l in ms] ==
     sorted([(lv(l, 'l2') + lv(l, 'llc') + lv(l, 'memory')) for l in ms], reverse=True),
     "lines by L1 misses, most first")
sys.exit(1 if bad else 0)
PY
st=$?
sed 's/^/  /' py.out
check '[ $st -eq 0 ]' "the memory figures hold together and match the program"
if command -v jsonschema >/dev/null 2>&1 || python3 -c 'import jsonschema' 2>/dev/null; then
	python3 -c 'import json, sys, jsonschema; jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))' \
		mem.json "$(dirname "$0")/../../docs/report-json.schema.json" 2>schema.err
	check '[ $? -eq 0 ]' "the JSON validates against docs/report-json.schema.json ($(tail -1 schema.err))"
fi

# --- decode: each sample's level and variable, as the report counts them ---------------------
$A decode m.data --format json >dec.jsonl 2>dec.err
python3 - dec.jsonl mem.json >dec.out 2>&1 <<'PY'
import json, sys
lv = {}
bump = set()
maps = {}
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e['type'] != 'trace_sample' or 'mem' not in e:
        continue
    lv[e['mem']['level']] = lv.get(e['mem']['level'], 0) + 1
    if (e['ip_sym'] or '').startswith('bump+'):
        bump.add(e['addr_sym'])
    f = (e['ip_sym'] or '').split('+')[0]
    if f in ('walk_large', 'sum_small'):
        k = (f, e['addr_map'] and e['addr_map']['name'], 'store' if e['mem']['store'] else 'load')
        maps[k] = maps.get(k, 0) + 1
m = json.load(open(sys.argv[2]))['mem']
want = {k: v['accesses'] for k, v in m['levels'].items() if v['accesses']}
print('decode', lv, 'report', want, 'bump', bump)
print('mappings', maps)
# walk_large reads and writes *pos (main's stack) once a call, and reads the array; sum_small
# reads the heap only
calls = maps.get(('walk_large', '[stack]', 'load'), 0)
mapped = (calls > 0 and maps.get(('walk_large', '[stack]', 'store'), 0) == calls and
          maps.get(('walk_large', '//anon', 'load'), 0) > 0 and
          maps.get(('sum_small', '[heap]', 'load'), 0) > 0 and
          set(maps) <= {('walk_large', '[stack]', 'load'), ('walk_large', '[stack]', 'store'),
                        ('walk_large', '//anon', 'load'), ('sum_small', '[heap]', 'load')})
sys.exit(0 if lv == want and bump == {'counters+0x40'} and mapped else 1)
PY
check '[ $? -eq 0 ]' "decode --format json: samples by level as the report counts them, bump's at counters+0x40, walk_large's in [stack] and //anon, sum_small's on the [heap] ($(tail -1 dec.out))"

# --- data sources: the emulated unit is a Neoverse N1's, whose loads say where they were served
$A info m.data >info.txt 2>&1
check 'grep -q "0x00000000410fd0c0" info.txt' "the capture's CPUID is the emulated unit's CPU, a Neoverse N1 ($(grep "^  cpuid" info.txt))"
python3 - dec.jsonl mem.json >src.out 2>&1 <<'PY'
import collections, json, sys
# the emulated unit's sources are its memory model's levels (Arm's common encoding)
level_of = {'l1': 'l1', 'l2': 'l2', 'sys_cache': 'llc', 'dram': 'memory'}
got, bad = collections.Counter(), []
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e['type'] != 'trace_sample' or 'mem' not in e:
        continue
    m = e['mem']
    src = m.get('source')
    if m['load'] and not m['store']:
        if src not in level_of or level_of[src] != m['level']:
            bad.append((e['ip_sym'], m))
        got[src] += 1
    elif src is not None:  # a store carries none
        bad.append((e['ip_sym'], m))
    elif m['load']:
        got['none'] += 1
rep = json.load(open(sys.argv[2]))['mem']['sources']
want = {k: v['accesses'] for k, v in rep.items() if v['accesses']}
print('decode', dict(got), 'report', want, 'bad', bad[:3])
sys.exit(0 if not bad and dict(got) == want and want.get('dram') and want.get('l2') else 1)
PY
check '[ $? -eq 0 ]' "every load names its data source, agreeing with its level; stores none; report --mem's sources add up to decode's ($(tail -1 src.out))"
check 'grep -q "^Where the data came from" mem.txt && grep -Eq "^  DRAM +[0-9]+ " mem.txt && grep -Eq "^  L2 +[0-9]+ " mem.txt' \
	"report --mem: the data-source table ($(grep -A5 "^Where the data" mem.txt | tr -s ' ' | tr '\n' ';'))"

$A decode m.data --format perfetto -o m.pf.json 2>pf.err
python3 - m.pf.json dec.jsonl >pf.out 2>&1 <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))['traceEvents']
dec = [json.loads(l) for l in open(sys.argv[2])]
ts = [e for e in dec if e['type'] == 'trace_sample']
inst = [e for e in ev if e['ph'] == 'i' and e.get('cat') == 'trace_sample']
cnt = [e['args']['latency'] for e in ev if e['ph'] == 'C']
base = min(e['time'] for e in dec if e['time'])  # the first event with a time
print(len(inst), len(ts), len(cnt), inst[0]['ts'], (ts[0]['time'] - base) / 1000)
ok = (len(inst) == len(ts) and cnt == [e['latency'] for e in ts if 'mem' in e] and
      [i['args'].get('level') for i in inst] == [e.get('mem', {}).get('level') for e in ts] and
      [i['args'].get('source') for i in inst] == [e.get('mem', {}).get('source') for e in ts] and
      any(i['args'].get('source') for i in inst) and
      abs(inst[0]['ts'] - (ts[0]['time'] - base) / 1000) < 0.002)
sys.exit(0 if ok else 1)
PY
check '[ $? -eq 0 ]' "perfetto: an instant per SPE record with its level and data source, the latency counter track, times from the capture's start ($(tail -1 pf.out))"
$A decode m.data 2>/dev/null | grep "trace-sample .* bump+" >dec.txt
check '[ -s dec.txt ] && [ "$(grep -vc " data=counters+0x40$" dec.txt)" -eq 0 ]' "decode text: bump's samples end in data=counters+0x40 ($(head -1 dec.txt | cut -c60-))"
$A decode m.data 2>/dev/null | grep "trace-sample .* sum_small+" >dsum.txt
check '[ -s dsum.txt ] && [ "$(grep -Evc " data=\[heap\]\+0x[0-9a-f]+$" dsum.txt)" -eq 0 ]' "decode text: sum_small's samples end in data=[heap]+0xOFF ($(head -1 dsum.txt | sed 's/.* data=/data=/'))"

# --- a stack that grows (no system call): its mapping follows -------------------------------
S=${AUXCAP_STACK_PROG:?}
$A record --emulate --mem -o st.data -- "$S" 200 >st.out 2>st.err
st=$?
nstack=$($A decode st.data --show-sideband 2>/dev/null | grep -c " MMAP2 .* \[stack\]$")
$A decode st.data --format json 2>/dev/null >st.jsonl
python3 - st.jsonl >st.py 2>&1 <<'PY'
import collections, json, sys
c = collections.Counter()
low = None
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e['type'] == 'trace_sample' and 'addr' in e and (e['ip_sym'] or '').startswith('descend+'):
        c[e['addr_map'] and e['addr_map']['name']] += 1
        a = int(e['addr'], 16)
        low = a if low is None else min(low, a)
print(dict(c), hex(low or 0))
sys.exit(0 if c and set(c) == {'[stack]'} and c['[stack]'] > 200 * 64 else 1)
PY
py=$?
check '[ $st -eq 0 ] && [ $py -eq 0 ] && [ "$nstack" -ge 2 ]' "a stack grown 800 KiB by recursion: every access of descend in the [stack], $nstack [stack] MMAP2 records as it grew ($(tail -1 st.py))"

# --- annotate: which instruction waited, adding up to the report's figures --------------------
$A annotate m.data walk_large bump sum_small --format json >ann.json 2>ann.err
python3 - ann.json mem.json >ann.out 2>&1 <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
m = json.load(open(sys.argv[2]))['mem']
rep = {f['name']: f for f in m['functions']}
bad = 0
K = ('accesses', 'l1_misses', 'llc_misses', 'tlb_walks', 'lat_sum', 'peer')
def lv(x, k): return x['levels'][k]['accesses']
for fn in a['functions']:
    r = rep[fn['name']]
    want = {'accesses': r['accesses'], 'l1_misses': lv(r, 'l2') + lv(r, 'llc') + lv(r, 'memory'),
            'llc_misses': lv(r, 'memory'), 'tlb_walks': r['tlb_walks'], 'lat_sum': r['lat_sum'],
            'peer': r['peer']}
    got = {k: sum(i['mem'][k] for i in fn['instructions'] if i['mem']) for k in K}
    ok = got == want and {k: fn['mem'][k] for k in K} == want
    print(fn['name'], 'ok' if ok else 'BAD', got, want)
    bad += not ok
wl = [f for f in a['functions'] if f['name'] == 'walk_large'][0]
hot = max((i for i in wl['instructions'] if i['mem']), key=lambda i: i['mem']['l1_misses'])
print('hot', hot['text'], hot['mem'])
bad += not (hot['text'].startswith('movzx') and '[' in hot['text'] and
            hot['mem']['l1_misses'] == hot['mem']['accesses'])
sys.exit(1 if bad else 0)
PY
check '[ $? -eq 0 ]' "annotate: data accesses per instruction add up to report --mem's per function; walk_large's byte load misses every time ($(tail -1 ann.out))"

# --- perf 6.1 reads the same records: its per-symbol memory samples are ours ------------------
if command -v perf >/dev/null; then
	# (a record the emulated unit cut between two AUX buffers, which hardware does not do,
	# perf 6.1 decodes each buffer apart: it makes of the cut record a sample with no data
	# address, or at PC 0, or at a time below zero (printed as 18446744073.x s), and may give
	# its events to the record after it.  So perf's samples without an address or PC, or with
	# such a time, are not counted, and the cut record and the one after it, by their times,
	# on neither side: cut.times, and ours.sym from decode's records without them.)
	python3 - dec.jsonl >cut.times <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
ends, at = [], 0
for e in ev:
    if e['type'] == 'aux' and e['aux_size']:
        at += e['aux_size']
        ends.append(at)
ts = [e for e in ev if e['type'] == 'trace_sample']
us = lambda t: '%d.%06d' % (t // 10**9, t % 10**9 // 1000)  # perf script's time
cut = set()
for b in ends[:-1]:
    before = [e for e in ts if e['offset'] < b]
    after = [e for e in ts if e['offset'] >= b]
    cut.update(us(e['time']) for e in before[-1:] + after[:1])
lv = lambda e: e['mem']['level']
rows = {}  # all, and the program's own functions (libc's and ld.so's have aliases, which
           # perf and auxcap name apart)
for e in ts:
    if 'mem' not in e or us(e['time']) in cut:
        continue
    f = (e['ip_sym'] or '').split('+')[0]
    for k in ('ALL', f) if f in ('main', 'sum_small', 'walk_large', 'bump') else ('ALL',):
        r = rows.setdefault(k, [0, 0, 0, 0])
        r[0] += 1
        r[1] += lv(e) in ('l2', 'llc', 'memory')
        r[2] += lv(e) == 'memory'
        r[3] += e['mem']['tlb_walk']
with open('ours.sym', 'w') as o:
    for k, r in rows.items():
        o.write('%s %d %d %d %d\n' % (k, *r))
print('\n'.join(sorted(cut)))
PY
	# (perf prints time, event, addr, ip, sym)
	perf script -i m.data -F time,event,ip,sym,addr 2>/dev/null | sed 's/: / /' |
		awk 'NR == FNR { cut[$1] = 1; next }
		     $3 ~ /^0+$/ || $4 ~ /^0+$/ || $1 + 0 > 1e10 || ($1 in cut) { next }
		     { e = $2; sub(":", "", e); s = $5; n[s] += 0
		       if (e == "memory") a[s]++; else if (e == "l1d-miss") l1[s]++
		       else if (e == "llc-miss") llc[s]++; else if (e == "tlb-miss") t[s]++
		       A += (e == "memory"); L1 += (e == "l1d-miss"); LLC += (e == "llc-miss"); TT += (e == "tlb-miss") }
		     END { printf "ALL %d %d %d %d\n", A, L1, LLC, TT
			   for (s in n) if (s ~ /^(main|sum_small|walk_large|bump)$/)
				printf "%s %d %d %d %d\n", s, a[s], l1[s], llc[s], t[s] }' cut.times - |
		sort >perf.sym
	sort ours.sym >ours.sorted
	check '[ -s perf.sym ] && cmp -s ours.sorted perf.sym' \
		"perf's memory, l1d-miss, llc-miss and tlb-miss samples are ours, in all and in the program's functions ($(tr '\n' ' ' <perf.sym); $(diff ours.sorted perf.sym | head -4 | tr '\n' ' '))"
	# the mapping of each data address (perf mem's dso_daddr, from the MMAP2 records of data
	# record --mem asks for): perf's counts per mapping are decode's addr_map's, both without
	# the records the emulated unit cut (above): perf report sorts by time too, to the
	# microsecond, and its rows at a time of cut.times, below zero or [unknown] do not count
	perf report -i m.data --itrace=i1i --mem-mode --sort=time,dso_daddr --time-quantum 1us \
		-n --stdio 2>/dev/null |
		awk 'NR == FNR { cut[$1] = 1; next }
		     /^ *[0-9.]+%/ && !($3 in cut) && $3 + 0 < 1e10 && $4 != "[unknown]" { n[$4] += $2 }
		     END { for (d in n) print d, n[d] }' cut.times - | sort >perf.dso
	python3 - dec.jsonl cut.times <<'PY' | sort >ours.dso
import collections, json, os, sys
cut = set(open(sys.argv[2]).read().split())
us = lambda t: '%d.%06d' % (t // 10**9, t % 10**9 // 1000)
c = collections.Counter()
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e['type'] == 'trace_sample' and 'mem' in e and us(e['time']) not in cut:
        am = e.get('addr_map')
        c['[unknown]' if not am else 'anon' if am['name'] == '//anon' else os.path.basename(am['name'])] += 1
for k, v in c.items():
    print(k, v)
PY
	check '[ -s perf.dso ] && cmp -s ours.dso perf.dso' \
		"perf's samples per data mapping (dso_daddr) are ours ($(tr '\n' ' ' <perf.dso); $(diff ours.dso perf.dso | head -4 | tr '\n' ' '))"
	# perf 6.1 reads the data sources by the CPUID's MIDR (Neoverse: arm_spe's common
	# encoding) into perf mem's levels: its loads per level are ours (stores: N/A)
	perf report -i m.data --itrace=i1i --mem-mode --sort=time,mem --time-quantum 1us -n \
		--stdio 2>/dev/null |
		awk 'NR == FNR { cut[$1] = 1; next }
		     /^ *[0-9.]+%/ && !($3 in cut) && $3 + 0 < 1e10 {
			l = $0; sub(/^ *[0-9.]+% +[0-9]+ +[0-9.]+ +/, "", l); sub(/ +$/, "", l)
			n[l] += $2 }
		     END { for (l in n) if (l !~ /N\/A/) print l ":" n[l] }' cut.times - |
		sort >perf.src
	python3 - dec.jsonl cut.times <<'PY' | sort >ours.src
import collections, json, sys
cut = set(open(sys.argv[2]).read().split())
us = lambda t: '%d.%06d' % (t // 10**9, t % 10**9 // 1000)
name = {'l1': 'L1 or L1 hit', 'l2': 'L2 or L2 hit', 'sys_cache': 'L3 or L3 hit',
        'dram': 'Local RAM or RAM hit'}
c = collections.Counter()
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e['type'] == 'trace_sample' and 'mem' in e and us(e['time']) not in cut and \
       e['mem'].get('source'):
        c[name[e['mem']['source']]] += 1
for k, v in c.items():
    print('%s:%d' % (k, v))
PY
	check '[ -s perf.src ] && cmp -s ours.src perf.src' \
		"perf's memory levels from the data sources (perf mem's mem sort) are ours ($(tr '\n' ' ' <perf.src); $(diff ours.src perf.src | head -4 | tr '\n' ' '))"
else
	echo "# perf is not installed: no comparison with perf script"
fi

# --- what --mem refuses ------------------------------------------------------------------------
$A record --emulate -e intel_pt//u --max-insns 2000 -o pt.data -- "$E" 10 >/dev/null 2>&1
$A report pt.data --mem >/dev/null 2>pt.err
st=$?
check '[ $st -eq 1 ] && [ "$(wc -l <pt.err)" -eq 1 ] && grep -q "no sampled data accesses" pt.err' \
	"--mem on an Intel PT capture: one line, exit 1 ($(cat pt.err))"
$A report m.data --mem --latency walk_large >/dev/null 2>both.err
st=$?
check '[ $st -eq 1 ] && [ "$(wc -l <both.err)" -eq 1 ] && grep -q "view of its own" both.err' \
	"--mem with --latency: one line, exit 1 ($(cat both.err))"

[ "$fails" -eq 0 ] && echo "report --mem: all checks passed"
exit $((fails > 0))
