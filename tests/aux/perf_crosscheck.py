#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Cross-check the SPE and BTS decoders against perf 6.1 (perf report -D and perf script).

Random valid SPE streams (every packet class, short and extended headers, every payload size,
padding runs, records ending with END or TIMESTAMP) and BTS record arrays are wrapped in a
minimal pipe-mode perf.data (HEADER_ATTR, AUXTRACE_INFO, AUXTRACE) and fed to
`perf report -D -i -` through a pipe.  Every packet line must agree with auxcap-rawdump on the
offset and the raw bytes (the packet boundaries); the descriptions must agree up to the
differences listed in normalise_spe() (perf prints 64-bit values signed, knows fewer op-type and
event bits, names two events differently, keeps the VA tag in the address).  BTS lines must be
identical.  Random plausible SPE records are also run through perf script: for each event
perf synthesises (l1d-miss, tlb-access, branch-miss, ...) the (ip, addr) sequence must equal
that of auxcap's samples carrying the same event bit.

usage: perf_crosscheck.py RAWDUMP [SEEDS]; exits 77 (skip) without perf.
"""
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile

LINE = re.compile(r'^\.  ([0-9a-f]{8}): ((?: [0-9a-f]{2})+)\s+(.*)$')


def record(rtype, payload):
    return struct.pack('<IHH', rtype, 0, 8 + len(payload)) + payload


def pipe_perf_data(auxtype, priv, data):
    attr = bytearray(136)
    struct.pack_into('<IIQQQ', attr, 0, 100, 136, 0, 1, 0)
    out = b'PERFILE2' + struct.pack('<Q', 16)
    out += record(64, bytes(attr) + struct.pack('<Q', 1))
    out += record(70, struct.pack('<II', auxtype, 0) + b''.join(struct.pack('<Q', p) for p in priv))
    pad = (-len(data)) % 8
    out += record(71, struct.pack('<QQQIIII', len(data) + pad, 0, 0, 0, 0xffffffff, 0, 0))
    return out + data + bytes(pad)


def perf_dump(data, header):
    """perf report -D of @data; the lines after the "... <header> data" line."""
    res = subprocess.run(['perf', 'report', '-D', '-i', '-'], input=data, capture_output=True,
                         check=False)
    text = res.stdout.decode(errors='replace').splitlines()
    start = next(i for i, l in enumerate(text) if header in l)
    return text[start + 1:]


def our_dump(rawdump, kind, data, mode):
    with tempfile.NamedTemporaryFile() as f:
        f.write(data)
        f.flush()
        res = subprocess.run([rawdump, kind, f.name, mode], capture_output=True, check=True)
    return res.stdout.decode().splitlines()


def parse(lines):
    out = []
    for line in lines:
        m = LINE.match(line)
        if m:
            out.append((int(m[1], 16), m[2].split(), m[3].strip()))
    return out


def gen_spe(rnd, nrec):
    def pkt(h, v, n):
        return bytes([h]) + v.to_bytes(n, 'little')

    out = bytearray()
    for _ in range(nrec):
        for _ in range(rnd.randint(1, 12)):
            k = rnd.randrange(9)
            if k == 0:
                out += pkt(0xb0 | rnd.randrange(5), rnd.getrandbits(64), 8)
            elif k == 1:
                idx = rnd.randrange(32)
                out += bytes([0x20 | (idx >> 3), 0xb0 | (idx & 7)])
                out += rnd.getrandbits(64).to_bytes(8, 'little')
            elif k == 2:
                out += pkt(0x98 | rnd.randrange(8), rnd.getrandbits(16), 2)
            elif k == 3:
                idx = rnd.randrange(32)
                out += bytes([0x20 | (idx >> 3), 0x98 | (idx & 7)])
                out += rnd.getrandbits(16).to_bytes(2, 'little')
            elif k == 4:
                sz = rnd.randrange(4)
                out += pkt(0x42 | (sz << 4), rnd.getrandbits(8 << sz), 1 << sz)
            elif k == 5:
                sz = rnd.randrange(4)
                out += pkt(0x43 | (sz << 4), rnd.getrandbits(8 << sz), 1 << sz)
            elif k == 6:
                out += pkt(0x48 | rnd.randrange(3), rnd.getrandbits(8), 1)
            elif k == 7:
                out += pkt(0x64 | rnd.randrange(2), rnd.getrandbits(32), 4)
            else:
                out += bytes(rnd.randint(1, 40))
        out += pkt(0x71, rnd.getrandbits(64), 8) if rnd.randrange(2) else b'\x01'
    return bytes(out)


def u64(text):
    return int(text, 0) & ((1 << 64) - 1)


def spe_desc_agrees(perf, ours, raw):
    """True if perf's description of a packet is compatible with ours."""
    if perf == ours:
        return True
    p, o = perf.split(), ours.split()
    if p[0] in ('TS', 'DATA-SOURCE') and o[0] == p[0]:
        return u64(p[1]) == u64(o[1])  # perf prints these signed
    if p[0] == 'VA' and o[0] == 'VA':  # we split the tag off the address
        tag = int(o[2].split('=')[1], 16) if len(o) > 2 else 0
        return u64(p[1]) == (int(o[1], 16) | tag << 56)
    if p[0] == 'ADDR':  # an index perf does not know: "ADDR 0x<payload> (<idx>)"
        payload = int.from_bytes(bytes(int(b, 16) for b in raw[-8:]), 'little')
        return u64(p[1]) == payload
    if p[0] == 'LAT' and o[0] == 'LAT':  # a counter index perf does not know
        return p[1] == o[1]
    # Events and operation types: perf's words are a subset of ours (perf knows fewer bits);
    # two events have other names in perf.
    rename = {'TLB-WALK': 'TLB-REFILL', 'LLC-MISS': 'LLC-REFILL'}
    words = {rename.get(w, w) for w in o}
    return p[0] == o[0] and set(p) <= words


def check_spe(rawdump, seeds):
    lines = 0
    for seed in seeds:
        rnd = random.Random(seed)
        data = gen_spe(rnd, 150)
        data += bytes(-len(data) % 8)  # what perf would see after the AUXTRACE padding
        perf = parse(perf_dump(pipe_perf_data(4, [100, 0], data), 'ARM SPE data'))
        ours = parse(our_dump(rawdump, 'arm_spe', data, 'packets'))
        if len(perf) != len(ours):
            sys.exit(f'seed {seed}: perf printed {len(perf)} packet lines, auxcap {len(ours)}')
        for a, b in zip(perf, ours):
            if a[0] != b[0] or a[1] != b[1]:
                sys.exit(f'seed {seed}: packet boundary differs:\n  perf  {a}\n  auxcap {b}')
            if 'Bad packet' in a[2]:
                sys.exit(f'seed {seed}: perf found a bad packet in a valid stream: {a}')
            if not spe_desc_agrees(a[2], b[2], a[1]):
                sys.exit(f'seed {seed}: description differs:\n  perf  {a}\n  auxcap {b}')
        lines += len(perf)
    print(f'arm_spe: {lines} packet lines agree with perf over seeds {seeds[0]}..{seeds[-1]}')


def check_bts(rawdump, seeds):
    lines = 0
    for seed in seeds:
        rnd = random.Random(seed)
        recs = bytearray()
        for _ in range(200):
            k = rnd.randrange(6)
            frm = 0 if k == 0 else rnd.getrandbits(48)
            to = 0 if k == 1 else rnd.getrandbits(48)
            if k == 2:
                frm = to = 0
            recs += struct.pack('<QQQ', frm, to, rnd.choice([0, 0x10, rnd.getrandbits(64)]))
        # A partial record at the end, of a length perf's 8-byte AUXTRACE padding keeps.
        data = bytes(recs) + bytes(rnd.getrandbits(8) for _ in range(rnd.choice([0, 8, 16])))
        perf = perf_dump(pipe_perf_data(2, [100, 0, 0, 0, 0, 0], data), 'Intel BTS data')
        ours = our_dump(rawdump, 'intel_bts', data, 'raw')[1:]
        perf = [l.rstrip() for l in perf if l.startswith('.  ')]
        ours = [l.rstrip() for l in ours if l.startswith('.  ')]
        if perf != ours:
            for a, b in zip(perf + ['(none)'] * len(ours), ours + ['(none)'] * len(perf)):
                if a != b:
                    sys.exit(f'seed {seed}: BTS line differs:\n  perf   {a}\n  auxcap {b}')
        lines += len(ours)
    print(f'intel_bts: {lines} record lines agree with perf over seeds {seeds[0]}..{seeds[-1]}')


# perf's synthesized SPE events and the event bit each is made from (perf 6.1 arm-spe.c).
PERF_SPE_EVENTS = {'l1d-miss': 3, 'l1d-access': 2, 'llc-miss': 9, 'llc-access': 8,
                   'tlb-miss': 5, 'tlb-access': 4, 'branch-miss': 7, 'remote-access': 10}
OUR_EVENT_NAMES = {'L1D-REFILL': 3, 'L1D-ACCESS': 2, 'LLC-MISS': 9, 'LLC-ACCESS': 8,
                   'TLB-WALK': 5, 'TLB-ACCESS': 4, 'MISPRED': 7, 'REMOTE-ACCESS': 10}


def gen_records(rnd, nrec):
    """Plausible records: PCs and VAs whose top byte perf and auxcap both rebuild the same."""
    def pkt(h, v, n):
        return bytes([h]) + v.to_bytes(n, 'little')

    out = bytearray()
    for _ in range(nrec):
        kernel = rnd.randrange(4) == 0
        pc = (0xff8000000000 | rnd.getrandbits(40)) << 8 if kernel else rnd.getrandbits(47) & ~3
        pc &= (1 << 56) - 1
        el = rnd.choice([1, 2]) if kernel else 0
        out += pkt(0xb0, 1 << 63 | el << 61 | pc, 8)
        if rnd.randrange(3):
            out += pkt(0x64, rnd.getrandbits(32), 4)
        branch = rnd.randrange(3) == 0
        out += pkt(0x4a if branch else 0x49, rnd.getrandbits(2) if branch else rnd.randrange(2), 1)
        out += pkt(0x52, rnd.getrandbits(11), 2)
        if branch:
            out += bytes([0x20, 0xb1]) + (1 << 63 | (rnd.getrandbits(47) & ~3)).to_bytes(8, 'little')
        else:
            va = rnd.getrandbits(47) if rnd.randrange(2) else 0xffff000000000000 | rnd.getrandbits(44)
            out += pkt(0xb2, va & ((1 << 56) - 1) | rnd.getrandbits(8) << 56, 8)
            out += pkt(0x9a, rnd.getrandbits(16), 2)
        out += pkt(0x98, rnd.getrandbits(16), 2)
        out += bytes(rnd.randrange(3))
        out += pkt(0x71, rnd.getrandbits(40), 8) if rnd.randrange(2) else b'\x01'
    return bytes(out)


def perf_spe_events(data, field):
    res = subprocess.run(['perf', 'script', '-i', '-', '-F', 'event,' + field],
                         input=pipe_perf_data(4, [100, 0], data), capture_output=True,
                         check=False)
    out = {}
    for line in res.stdout.decode(errors='replace').splitlines():
        m = re.match(r'^\s*([a-z0-9-]+):\s+([0-9a-f]+)\s*$', line)
        if m:
            out.setdefault(m[1], []).append(int(m[2], 16))
    return out


def check_spe_samples(rawdump, seeds):
    total = 0
    for seed in seeds:
        data = gen_records(random.Random(seed), 300)
        ips, addrs = perf_spe_events(data, 'ip'), perf_spe_events(data, 'addr')
        ours = {name: ([], []) for name in PERF_SPE_EVENTS}
        for line in our_dump(rawdump, 'arm_spe', data, 'samples'):
            if not line.startswith('sample '):
                continue
            f = dict(w.split('=', 1) for w in line.split() if '=' in w)
            bits = {OUR_EVENT_NAMES[e] for e in f.get('ev', '').split(',') if e in OUR_EVENT_NAMES}
            for name, bit in PERF_SPE_EVENTS.items():
                if bit in bits:
                    addr = f.get('tgt', '0') if name == 'branch-miss' else f.get('va', '0')
                    ours[name][0].append(int(f['pc'], 16))
                    ours[name][1].append(int(addr, 16))
        for name in PERF_SPE_EVENTS:
            if ips.get(name, []) != ours[name][0] or addrs.get(name, []) != ours[name][1]:
                sys.exit(f'seed {seed}: perf script "{name}" samples differ from auxcap\'s '
                         f'({len(ips.get(name, []))} vs {len(ours[name][0])})')
            total += len(ours[name][0])
    print(f'arm_spe: {total} perf script samples (ip, addr) agree with auxcap samples')


def check_bts_samples(rawdump, seeds):
    """perf script --itrace=b branches against auxcap's decoded records.

    perf 6.1 walks a buffer with `while (size > 24)`, so when the buffer is an exact number of
    records its last record is never turned into a sample; auxcap decodes it.  That one record
    is the only difference allowed.
    """
    total = 0
    dropped = 0
    for seed in seeds:
        rnd = random.Random(seed)
        recs = bytearray()
        for _ in range(rnd.randint(1, 300)):
            k = rnd.randrange(8)
            frm = 0 if k == 0 else rnd.getrandbits(47) | 1
            to = 0 if k == 1 else rnd.getrandbits(47) | 1
            if k == 2:
                frm = to = 0
            recs += struct.pack('<QQQ', frm, to, rnd.choice([0, 0x10]))
        data = bytes(recs) + bytes(rnd.getrandbits(8) for _ in range(rnd.choice([0, 8, 16])))
        res = subprocess.run(['perf', 'script', '-i', '-', '--itrace=b', '-F', 'ip,addr'],
                             input=pipe_perf_data(2, [100, 0, 0, 0, 0, 0], data),
                             capture_output=True, check=False)
        perf = [tuple(int(x, 16) for x in m.groups()) for m in
                (re.match(r'^\s*([0-9a-f]+) =>\s+([0-9a-f]+)\s*$', l)
                 for l in res.stdout.decode().splitlines()) if m]
        ours = [(int(m[1], 16), int(m[2], 16)) for m in
                (re.match(r'^\.  [0-9a-f]{8}: \S+\s+0x([0-9a-f]+) -> 0x([0-9a-f]+)', l)
                 for l in our_dump(rawdump, 'intel_bts', data, 'decoded')) if m]
        last_is_record = len(data) % 24 == 0 and data[-24:-8] != bytes(16)
        if last_is_record:
            dropped += 1
            ours = ours[:-1]
        if perf != ours:
            sys.exit(f'seed {seed}: perf script BTS branches differ ({len(perf)} vs {len(ours)})')
        total += len(ours)
    print(f'intel_bts: {total} perf script branches agree with auxcap '
          f'(perf skipped the last record of {dropped} buffers)')


def main():
    if not shutil.which('perf'):
        print('perf not found: cannot cross-check against perf report -D')
        return 77
    probe = subprocess.run(['perf', 'report', '-D', '-i', '-'], input=pipe_perf_data(
        4, [100, 0], b'\x01'), capture_output=True, check=False)
    if b'ARM SPE data' not in probe.stdout:
        print('this perf does not dump Arm SPE data from a pipe: skipping')
        return 77
    rawdump = sys.argv[1]
    first = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    seeds = list(range(first, first + 20))
    check_spe(rawdump, seeds)
    check_spe_samples(rawdump, seeds[:5])
    check_bts(rawdump, seeds)
    check_bts_samples(rawdump, seeds)
    return 0


if __name__ == '__main__':
    sys.exit(main())
