#!/usr/bin/env python3
"""sparse_cmp.py A B [BLOCK_SIZE]: compare two files byte for byte, reading
only what either holds: every data region of either file (SEEK_DATA /
SEEK_HOLE) is read from both, and a hole must read as zeros in the other.
Sizes must match too. Prints the first differences with their block
number and offset in the block; exit 1 when the files differ."""
import os
import sys


def regions(fd, size):
    out, off = [], 0
    while off < size:
        try:
            data = os.lseek(fd, off, os.SEEK_DATA)
        except OSError:  # ENXIO: no data after off
            break
        hole = os.lseek(fd, data, os.SEEK_HOLE)
        out.append((data, hole))
        off = hole
    return out


def merged(a, b):
    out = []
    for start, end in sorted(a + b):
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return out


def main():
    path_a, path_b = sys.argv[1], sys.argv[2]
    bs = int(sys.argv[3]) if len(sys.argv) > 3 else 4096
    fa, fb = os.open(path_a, os.O_RDONLY), os.open(path_b, os.O_RDONLY)
    size_a, size_b = os.fstat(fa).st_size, os.fstat(fb).st_size
    bad = 0
    if size_a != size_b:
        print(f"sizes differ: {size_a} != {size_b}")
        bad += 1
    compared = 0
    for start, end in merged(regions(fa, size_a), regions(fb, size_b)):
        off = start
        while off < end:
            n = min(end - off, 1 << 20)
            x, y = os.pread(fa, n, off), os.pread(fb, n, off)
            x += b"\0" * (n - len(x))
            y += b"\0" * (n - len(y))
            compared += n
            if x != y:
                for i in range(0, n, 16):
                    if x[i:i + 16] != y[i:i + 16]:
                        if bad < 20:
                            o = off + i
                            print(f"block {o // bs} +{o % bs:#05x}: {x[i:i + 16].hex()} != {y[i:i + 16].hex()}")
                        bad += 1
            off += n
    if bad:
        print(f"{path_a} and {path_b} differ ({bad} 16-byte pieces; {compared} bytes of data compared)")
    sys.exit(1 if bad else 0)


main()
