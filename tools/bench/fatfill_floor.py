#!/usr/bin/env python3
"""The floor for fatfill --sync: the same FAT bytes, directory and FSInfo
sectors, written straight to the device and nothing else.

usage: fatfill_floor.py check  DEV META REPORT
       fatfill_floor.py replay DEV META REPORT dsync|flush

DEV is the device fatfill wrote (a loop device with direct I/O), META the
device's first bytes before the run (boot area, FATs and the root cluster),
REPORT fatfill's --json. The byte ranges are worked out here from the BPB
(Microsoft's offsets) and the report's extents, independently of fsio's
code; `check` proves they are complete: every sector the run changed in
META's range lies inside them. `replay` restores META, then for each file
in order writes its FAT sectors in every copy, its directory sector and the
FSInfo sector from what the run left on DEV, either each write with O_DSYNC
(the issue's floor) or with a fdatasync after the FAT and after the entry
(the order --sync needs, with no more flushes), and prints the seconds the
writes took.
"""
import json
import mmap
import os
import sys
import time


def geometry(meta):
    le = lambda o, n: int.from_bytes(meta[o:o + n], 'little')
    g = {'ss': le(11, 2), 'spc': meta[13], 'res': le(14, 2), 'nfats': meta[16], 'fatsz': le(36, 4),
         'root': le(44, 4), 'fsinfo': le(48, 2)}
    assert le(22, 2) == 0, "FAT32 only"
    g['data'] = (g['res'] + g['nfats'] * g['fatsz']) * g['ss']
    g['cb'] = g['ss'] * g['spc']
    return g


def ranges(g, report, dev_bytes):
    """Per file: (offset, length) ranges in write order."""
    ss = g['ss']
    fat = lambda copy: (g['res'] + copy * g['fatsz']) * ss
    # The root directory: the 8.3 names of its entries -> their sector.
    slot_sector = {}
    c = g['root']
    seen = 0
    while 2 <= c < 0x0FFFFFF8 and seen < 1 << 16:
        base = g['data'] + (c - 2) * g['cb']
        for s in range(0, g['cb'], 32):
            name = dev_bytes[base + s:base + s + 11]
            if name[0] not in (0, 0xE5):
                slot_sector[name.decode('latin-1')] = (base + s) // ss * ss
        c = int.from_bytes(dev_bytes[fat(0) + 4 * c:fat(0) + 4 * c + 4], 'little') & 0x0FFFFFFF
        seen += 1
    out = []
    for f in report['files']:
        name = f['path'].rsplit('/', 1)[1]
        base, _, ext = name.partition('.')
        short = base.ljust(8) + ext.ljust(3)
        sectors = set()
        for first, count in f['extents']:
            sectors.update(range(4 * first // ss, (4 * (first + count) + ss - 1) // ss))
        runs = []
        for s in sorted(sectors):
            if runs and runs[-1][1] == s:
                runs[-1][1] = s + 1
            else:
                runs.append([s, s + 1])
        rs = [(fat(copy) + a * ss, (b - a) * ss) for copy in range(g['nfats']) for a, b in runs]
        rs.append((slot_sector[short], ss))
        rs.append((g['fsinfo'] * ss, ss))
        out.append(rs)
    return out


def main():
    cmd, dev, meta_path, report_path = sys.argv[1:5]
    meta = open(meta_path, 'rb').read()
    report = json.load(open(report_path))
    g = geometry(meta)
    fd = os.open(dev, os.O_RDONLY | os.O_DIRECT)
    buf = mmap.mmap(-1, len(meta))
    os.preadv(fd, [buf], 0)
    os.close(fd)
    per_file = ranges(g, report, buf)
    if cmd == 'check':
        ss = g['ss']
        covered = set()
        for rs in per_file:
            for off, n in rs:
                covered.update(range(off // ss, (off + n) // ss))
        changed = [s for s in range(len(meta) // ss) if buf[s * ss:(s + 1) * ss] != meta[s * ss:(s + 1) * ss]]
        missing = [s for s in changed if s not in covered]
        if missing:
            sys.exit(f"the run changed {len(missing)} sectors the floor does not write, the first {missing[0]}")
        print(f"{len(changed)} sectors changed, all inside the floor's {sum(len(r) for r in per_file)} writes "
              f"({len(covered)} sectors)")
        return
    mode = sys.argv[5]
    out = os.open(dev, os.O_WRONLY | os.O_DIRECT)
    pristine = mmap.mmap(-1, len(meta))
    pristine.write(meta)
    os.pwritev(out, [pristine], 0)
    os.fsync(out)
    if mode == 'dsync':
        os.close(out)
        out = os.open(dev, os.O_WRONLY | os.O_DIRECT | os.O_DSYNC)
    view = memoryview(buf)
    t0 = time.perf_counter()
    for rs in per_file:
        fat, entry = rs[:-2], rs[-2:]
        for off, n in fat:
            os.pwrite(out, view[off:off + n], off)
        if mode == 'flush':
            os.fdatasync(out)
        for off, n in entry:
            os.pwrite(out, view[off:off + n], off)
        if mode == 'flush':
            os.fdatasync(out)
    print(f"{time.perf_counter() - t0:.6f}")
    os.close(out)


main()
