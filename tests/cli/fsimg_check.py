#!/usr/bin/env python3
"""Judge a restored filesystem block by block against its source.

usage: fsimg_check.py fat|ext4 SOURCE TARGET OLD|- zero|keep [DUMPE2FS_OUTPUT]

The free space comes from the peers, not from fsio: for ext4 the "Free
blocks:" lists of dumpe2fs; for FAT the FAT itself, decoded here from the
Microsoft FAT specification (fatgen103: BPB offsets, the cluster count that
decides FAT12/16/32, 12-bit entry packing). Every block the filesystem uses
must equal the source's; every free block must read as zeros (zero), or
still hold the target's old bytes from OLD (keep). Prints the counts.
"""
import sys

kind, src_path, tgt_path, old_path, mode = sys.argv[1:6]
src = open(src_path, 'rb').read()
tgt = open(tgt_path, 'rb').read()
old = open(old_path, 'rb').read() if old_path != '-' else None


def fat_free():
    b = src
    le = lambda off, n: int.from_bytes(b[off:off + n], 'little')
    bps, spc, reserved, nfats, root_ents = le(11, 2), b[13], le(14, 2), b[16], le(17, 2)
    tot = le(19, 2) or le(32, 4)
    fatsz = le(22, 2) or le(36, 4)
    root_secs = (root_ents * 32 + bps - 1) // bps
    data_sec = reserved + nfats * fatsz + root_secs
    clusters = (tot - data_sec) // spc
    fat = b[reserved * bps:(reserved + fatsz) * bps]
    unit = bps * spc
    free = []
    for n in range(2, clusters + 2):
        if clusters < 4085:
            v = le_fat12(fat, n)
        elif clusters < 65525:
            v = int.from_bytes(fat[2 * n:2 * n + 2], 'little')
        else:
            v = int.from_bytes(fat[4 * n:4 * n + 4], 'little') & 0x0FFFFFFF
        if v == 0:
            free.append((data_sec * bps + (n - 2) * unit, unit))
    tail = data_sec * bps + clusters * unit
    if tail < tot * bps:
        free.append((tail, tot * bps - tail))
    return free, tot * bps


def le_fat12(fat, n):
    v = int.from_bytes(fat[n + n // 2:n + n // 2 + 2], 'little')
    return v >> 4 if n & 1 else v & 0xFFF


def ext_free():
    text = open(sys.argv[6]).read().splitlines()
    bs = int(next(l for l in text if l.startswith('Block size:')).split()[-1])
    count = int(next(l for l in text if l.startswith('Block count:')).split()[-1])
    free = []
    for l in text:
        # The groups' lists are indented; the superblock's "Free blocks:" count is not.
        if not l.startswith('  Free blocks: '):
            continue
        for part in l.strip()[len('Free blocks: '):].split(','):
            part = part.strip()
            if not part:
                continue
            a, _, z = part.partition('-')
            a, z = int(a), int(z or a)
            free.append((a * bs, (z - a + 1) * bs))
    return free, count * bs


free, size = fat_free() if kind == 'fat' else ext_free()
bad = []
free_bytes = 0
pos = 0
zero = bytes(1 << 20)
for off, length in sorted(free) + [(size, 0)]:
    if tgt[pos:off] != src[pos:off]:
        first = next(i for i in range(pos, off) if tgt[i] != src[i])
        bad.append(f'used byte {first} differs from the source')
    want = old[off:off + length] if mode == 'keep' else bytes(length)
    if tgt[off:off + length] != want:
        bad.append(f'free range at byte {off} ({length} bytes) is not {"the old data" if mode == "keep" else "zeros"}')
    free_bytes += length
    pos = off + length
print(f'{kind}: {size} bytes, {free_bytes} free ({mode}), {len(bad)} problems')
for line in bad[:5]:
    print('  ' + line)
sys.exit(1 if bad else 0)
