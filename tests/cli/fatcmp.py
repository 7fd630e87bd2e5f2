#!/usr/bin/env python3
"""Compare two FAT images byte for byte, outside the boot code.

Usage: fatcmp.py A B [OFFSET_BYTES]

The boot code region of the boot sector and of the FAT32 backup boot sector
(fat/FORMAT.md, "Boot code"): from 0x3E (FAT12/16) or 0x5A (FAT32) to byte
510, or to byte 440 when A carries an MBR partition table (bytes 446-509 not
all zero), is masked in both; every other byte of the two files must be
equal, and the files must have the same size. The Atari variant has no boot
code and is compared whole. Reads only the data extents of either file
(SEEK_DATA), so sparse multi-GiB images compare in a moment. Exit 0 when
equal, 1 with the first differing offset, 2 on a usage error.
"""
import os
import struct
import sys


def extents(fd, size):
    out, pos = [], 0
    while pos < size:
        try:
            start = os.lseek(fd, pos, os.SEEK_DATA)
        except OSError:
            break
        end = os.lseek(fd, start, os.SEEK_HOLE)
        out.append((start, end))
        pos = end
    return out


def masks(path, base):
    with open(path, 'rb') as f:
        f.seek(base)
        bs = f.read(512)
    if len(bs) < 512:
        return []
    ss = struct.unpack_from('<H', bs, 11)[0] or 512
    if bs[0] == 0x60:  # Atari: no boot code
        return []
    fat32 = struct.unpack_from('<H', bs, 0x16)[0] == 0
    begin = 0x5A if fat32 else 0x3E
    end = 440 if any(bs[446:510]) else 510
    regions = [(base + begin, base + end)]
    if fat32:
        backup = struct.unpack_from('<H', bs, 0x32)[0]
        if backup:
            regions.append((base + backup * ss + begin, base + backup * ss + end))
    return regions


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    a, b = sys.argv[1], sys.argv[2]
    base = int(sys.argv[3]) if len(sys.argv) == 4 else 0
    sa, sb = os.path.getsize(a), os.path.getsize(b)
    if sa != sb:
        print(f'{a}: {sa} bytes, {b}: {sb} bytes')
        return 1
    regions = masks(a, base)
    fa, fb = os.open(a, os.O_RDONLY), os.open(b, os.O_RDONLY)
    spans = sorted(extents(fa, sa) + extents(fb, sb))
    for start, end in spans:
        pos = start
        while pos < end:
            n = min(end - pos, 1 << 20)
            da, db = bytearray(os.pread(fa, n, pos)), bytearray(os.pread(fb, n, pos))
            for r0, r1 in regions:
                lo, hi = max(r0, pos), min(r1, pos + n)
                if lo < hi:
                    da[lo - pos:hi - pos] = bytes(hi - lo)
                    db[lo - pos:hi - pos] = bytes(hi - lo)
            if da != db:
                i = next(i for i in range(n) if da[i] != db[i])
                print(f'differ at byte {pos + i} (0x{pos + i:x}): {da[i]:#04x} vs {db[i]:#04x}')
                return 1
            pos += n
    return 0


if __name__ == '__main__':
    sys.exit(main())
