#!/usr/bin/env python3
"""Damage a FAT image in one named way, for checker tests (fatck, fsck.fat).

usage: fatcorrupt.py IMAGE [--offset BYTES] DAMAGE [ARGS...]

Each damage is one inconsistency fsck.fat 4.2 reports; tests/cli/fat_corrupt.sh
checks every one against fsck.fat -n. The FAT is decoded here from the
Microsoft spec offsets, independently of fsio's C++ code, so a shared
misunderstanding cannot hide a mistake. Paths are absolute ("/DIR/FILE.TXT"),
matched case-insensitively against long and short names. Every FAT change
goes to every copy unless the damage is about the copies.

  copies-differ [COPY]        entry of a used cluster changed in copy COPY (1)
                              fsck.fat: "FATs differ"
  lost-clusters [N]           N (3) free clusters made a chain no entry owns
                              fsck.fat: "Reclaimed N unused clusters"
  wrong-free-count [DELTA]    FAT32 FSInfo free count off by DELTA (-10)
                              fsck.fat: "Free cluster summary wrong"
  chain-longer PATH           one free cluster appended to the file's chain
                              fsck.fat: "cluster chain length is > "
  chain-shorter PATH          the file's size grown by one cluster
                              fsck.fat: "File size is N bytes, cluster chain length is M bytes"
  free-in-chain PATH          the file's second cluster marked free (3+ clusters)
                              fsck.fat: "Contains a free cluster"
  cross-link PATH1 PATH2      PATH2's next-to-last cluster points to PATH1's last,
                              so both chains stay as long as their sizes (PATH2's
                              old last cluster is left lost)
                              fsck.fat: "share clusters"
  loop PATH                   the file's last cluster points back to its first
                              fsck.fat: "Circular cluster chain"
  out-of-range PATH           the file's last entry holds a cluster past the end
                              fsck.fat: "out of range"
  dirty                       FAT[1] clean-shutdown bit cleared (FAT16/32), or
                              the boot sector's dirty flag set (FAT12)
                              fsck.fat: "Dirty bit is set"
  bad-lfn PATH                the checksum of every LFN slot of the entry changed
                              fsck.fat: "Wrong checksum for long file name"
                              (reported, not fixed: fsck.fat -n exits 0)
  bad-name PATH               a '?' put into the entry's 8.3 name (use a file
                              without a long name)
                              fsck.fat: "Bad short file name"
  after-end PATH              the entry (no long name) moved to the slot after its
                              directory's end marker (the first 0x00 slot), with a
                              '?' in its 8.3 name; its old slot deleted
                              fsck.fat: "Bad short file name" (it reads past the
                              0x00 slot; Windows and mtools stop there)
  past-end PATH               as after-end, the name kept: a file Linux and fsck.fat
                              see (fsck.fat -n: clean) and Windows and mtools do not
  duplicate PATH1 PATH2       PATH2's 8.3 name made PATH1's (no long names)
                              fsck.fat: "Duplicate directory entry"
  dir-size PATH               a directory's size field set to one cluster
                              fsck.fat: "Directory has non-zero size"
  dotdot PATH                 the directory's ".." entry points at the directory itself
                              fsck.fat: "Invalid '..' entry in the second slot"
  size-zero PATH              the file's size set to 0, its chain kept
                              fsck.fat: "File size is 0 bytes, cluster chain length is > 0"
  bad-start PATH              the file's first cluster set to 1
                              fsck.fat: "Bad start cluster 1"
  lfn-orphan PATH             the entry's 8.3 slot deleted, its long-name slots kept
                              fsck.fat: "Orphaned long file name part" (and its
                              clusters reclaimed)
  label-differs               the boot sector's label changed to OTHER (needs a label)
                              fsck.fat: "Volume label ... and different"
  fsinfo-signature            FAT32 FSInfo lead signature zeroed
                              fsck.fat: "FSINFO sector has bad magic number(s)"
  next-free                   FAT32 FSInfo next-free hint set past the last cluster
                              (fsck.fat ignores the hint: exits 0)
  fat0                        FAT[0] of copy 0 zeroed (reserved bits lost)
                              fsck.fat: "FATs differ - using second FAT"
  forget PATH                 the file's 8.3 and long-name slots deleted, its chain
                              kept: a lost chain holding the file's bytes
                              fsck.fat: "Reclaimed N unused clusters"; with -a
                              (or -f) it becomes FSCK0000.REC in the root
  lost-loop [N]               N (3) free clusters made a loop no entry owns
                              fsck.fat -a: "Broke cycle at cluster N in free chain"
  dot-entries PATH            as dosfstools' check-dot_entries: the directory's
                              first two entries moved into slots 0 and 1, its
                              ".." and "." into slots 2 and 3
                              fsck.fat: "Expected a valid '.' entry in this slot"

Prints one line saying what it changed (clusters, offsets), for test logs.
"""
import struct
import sys


class Fat:
    def __init__(self, path, base):
        self.f = open(path, 'r+b')
        self.base = base
        bs = self.read(0, 512)
        le = lambda off, n: int.from_bytes(bs[off:off + n], 'little')
        self.ss = le(11, 2)
        self.spc = bs[13]
        self.reserved = le(14, 2)
        self.nfats = bs[16]
        self.root_entries = le(17, 2)
        total = le(19, 2) or le(32, 4)
        self.fatsz = le(22, 2) or le(36, 4)
        self.fat32 = le(22, 2) == 0
        root_secs = (self.root_entries * 32 + self.ss - 1) // self.ss
        self.data = self.reserved + self.nfats * self.fatsz + root_secs
        self.clusters = (total - self.data) // self.spc
        self.bits = 32 if self.fat32 else 12 if self.clusters < 4085 else 16
        self.root_cluster = le(44, 4) if self.fat32 else 0
        self.fsinfo = le(48, 2) if self.fat32 else 0
        self.cb = self.ss * self.spc
        self.eoc = {12: 0xFFF, 16: 0xFFFF, 32: 0x0FFFFFFF}[self.bits]
        self.fat = bytearray(self.read(self.reserved * self.ss, self.fatsz * self.ss))

    def read(self, off, n):
        self.f.seek(self.base + off)
        return self.f.read(n)

    def write(self, off, data):
        self.f.seek(self.base + off)
        self.f.write(data)

    # FAT entries (of the in-memory copy 0; flush() writes them back).
    def get(self, n):
        if self.bits == 12:
            w = self.fat[n + n // 2] | self.fat[n + n // 2 + 1] << 8
            return w >> 4 if n & 1 else w & 0xFFF
        if self.bits == 16:
            return struct.unpack_from('<H', self.fat, 2 * n)[0]
        return struct.unpack_from('<I', self.fat, 4 * n)[0] & 0x0FFFFFFF

    def set(self, n, v):
        if self.bits == 12:
            o = n + n // 2
            if n & 1:
                self.fat[o] = (self.fat[o] & 0x0F) | (v & 0x0F) << 4
                self.fat[o + 1] = (v >> 4) & 0xFF
            else:
                self.fat[o] = v & 0xFF
                self.fat[o + 1] = (self.fat[o + 1] & 0xF0) | (v >> 8) & 0x0F
        elif self.bits == 16:
            struct.pack_into('<H', self.fat, 2 * n, v)
        else:
            old = struct.unpack_from('<I', self.fat, 4 * n)[0]
            struct.pack_into('<I', self.fat, 4 * n, (old & 0xF0000000) | (v & 0x0FFFFFFF))

    def flush(self, copies=None):
        for c in copies if copies is not None else range(self.nfats):
            self.write((self.reserved + c * self.fatsz) * self.ss, bytes(self.fat))

    def chain(self, first):
        out = []
        c = first
        while 2 <= c < self.clusters + 2 and len(out) <= self.clusters:
            out.append(c)
            c = self.get(c)
        return out

    def free_clusters(self, n):
        out = [c for c in range(2, self.clusters + 2) if self.get(c) == 0][-n:]
        if len(out) < n:
            sys.exit('fatcorrupt: not enough free clusters')
        return out

    def cluster_off(self, c):
        return (self.data + (c - 2) * self.spc) * self.ss

    # Directories: (offset of each 32-byte slot, its bytes).
    def dir_slots(self, first):
        if first == 0 and not self.fat32:
            start = (self.reserved + self.nfats * self.fatsz) * self.ss
            return [(start + 32 * i, self.read(start + 32 * i, 32)) for i in range(self.root_entries)]
        out = []
        for c in self.chain(first or self.root_cluster):
            off = self.cluster_off(c)
            data = self.read(off, self.cb)
            out += [(off + i, data[i:i + 32]) for i in range(0, self.cb, 32)]
        return out

    def entries(self, first):
        """(long or short name, short name, slot offset, LFN slot offsets, raw entry) per live entry."""
        lfn, lfn_offs = {}, []
        for off, e in self.dir_slots(first):
            if e[0] == 0:
                break
            if e[0] == 0xE5:
                lfn, lfn_offs = {}, []
                continue
            if e[11] & 0x3F == 0x0F:
                chars = e[1:11] + e[14:26] + e[28:32]
                lfn[e[0] & 0x1F] = chars.decode('utf-16-le')
                lfn_offs.append(off)
                continue
            base = e[0:8].decode('latin-1').rstrip()
            ext = e[8:11].decode('latin-1').rstrip()
            short = base + ('.' + ext if ext else '')
            long = ''.join(lfn[k] for k in sorted(lfn)).split('\0')[0] if lfn else ''
            yield (long or short, short, off, lfn_offs, e)
            lfn, lfn_offs = {}, []

    def lookup(self, path):
        first = 0
        found = None
        for part in [p for p in path.split('/') if p]:
            found = None
            for name, short, off, lfn_offs, e in self.entries(first):
                if part.lower() in (name.lower(), short.lower()):
                    found = (off, lfn_offs, e)
                    break
            if not found:
                sys.exit('fatcorrupt: no %s' % path)
            e = found[2]
            first = struct.unpack_from('<H', e, 26)[0] | (struct.unpack_from('<H', e, 20)[0] << 16 if self.fat32 else 0)
        return found, first


def file_chain(fat, path, need=1):
    (off, lfn_offs, e), first = fat.lookup(path)
    chain = fat.chain(first)
    if len(chain) < need:
        sys.exit('fatcorrupt: %s has %d clusters, this damage needs %d' % (path, len(chain), need))
    return off, lfn_offs, e, chain


def bad_name(fat, rest):
    off = fat.lookup(rest[0])[0][0]
    fat.write(off + 1, b'?')
    print('%s: 8.3 name byte 1 set to ?' % rest[0])


def after_end(fat, rest, bad=True):
    (off, lfn_offs, e), _ = fat.lookup(rest[0])
    if lfn_offs:
        sys.exit('fatcorrupt: %s has a long name' % rest[0])
    parent = rest[0].rsplit('/', 1)[0]
    first = fat.lookup(parent)[1] if parent.strip('/') else 0
    slots = [o for o, d in fat.dir_slots(first)]
    end = next((i for i, o in enumerate(slots) if fat.read(o, 1)[0] == 0), None)
    if end is None or end + 1 >= len(slots):
        sys.exit('fatcorrupt: %s: no room after the end of its directory' % rest[0])
    moved = bytearray(e)
    if bad:
        moved[1] = ord('?')
    fat.write(slots[end + 1], bytes(moved))
    fat.write(off, bytes([0xE5]))
    print('%s: moved to slot %d, after the end marker in slot %d, as %r' % (rest[0], end + 1, end, bytes(moved[0:11])))


def past_end(fat, rest):
    after_end(fat, rest, bad=False)


def duplicate(fat, rest):
    (_, _, e1), _ = fat.lookup(rest[0])
    (off2, _, _), _ = fat.lookup(rest[1])
    fat.write(off2, e1[0:11])
    print('%s: 8.3 name set to %r' % (rest[1], e1[0:11]))


def dir_size(fat, rest):
    off = fat.lookup(rest[0])[0][0]
    fat.write(off + 28, struct.pack('<I', fat.cb))
    print('%s: size set to %d' % (rest[0], fat.cb))


def dotdot(fat, rest):
    _, first = fat.lookup(rest[0])
    off = fat.cluster_off(first) + 32
    fat.write(off + 26, struct.pack('<H', first & 0xFFFF))
    if fat.fat32:
        fat.write(off + 20, struct.pack('<H', first >> 16))
    print('%s: .. now points at cluster %d' % (rest[0], first))


def size_zero(fat, rest):
    off = fat.lookup(rest[0])[0][0]
    fat.write(off + 28, struct.pack('<I', 0))
    print('%s: size set to 0' % rest[0])


def bad_start(fat, rest):
    off = fat.lookup(rest[0])[0][0]
    fat.write(off + 26, struct.pack('<H', 1))
    if fat.fat32:
        fat.write(off + 20, struct.pack('<H', 0))
    print('%s: first cluster set to 1' % rest[0])


def lfn_orphan(fat, rest):
    (off, lfn_offs, _), _ = fat.lookup(rest[0])
    if not lfn_offs:
        sys.exit('fatcorrupt: %s has no long name' % rest[0])
    fat.write(off, bytes([0xE5]))
    print('%s: 8.3 slot deleted, %d LFN slots kept' % (rest[0], len(lfn_offs)))


def label_differs(fat, rest):
    at = 0x47 if fat.fat32 else 0x2B
    fat.write(at, b'OTHER      ')
    print('boot sector label set to OTHER')


def fsinfo_signature(fat, rest):
    if not fat.fat32:
        sys.exit('fatcorrupt: fsinfo-signature needs FAT32 (FSInfo)')
    fat.write(fat.fsinfo * fat.ss, b'\0\0\0\0')
    print('FSInfo lead signature zeroed')


def next_free(fat, rest):
    if not fat.fat32:
        sys.exit('fatcorrupt: next-free needs FAT32 (FSInfo)')
    bad = fat.clusters + 100
    fat.write(fat.fsinfo * fat.ss + 0x1EC, struct.pack('<I', bad))
    print('FSInfo next free set to %d' % bad)


def fat0(fat, rest):
    fat.set(0, 0)
    fat.flush([0])
    print('FAT[0] of copy 0 zeroed')




def forget(fat, rest):
    (off, lfn_offs, e), first = fat.lookup(rest[0])
    for o in lfn_offs + [off]:
        fat.write(o, bytes([0xE5]))
    print('%s: entry deleted, chain %s kept' % (rest[0], fat.chain(first)))


def dot_entries(fat, rest):
    _, first = fat.lookup(rest[0])
    slots = fat.dir_slots(first)
    if len(slots) < 4 or any(d[0] in (0, 0xE5) or d[11] & 0x3F == 0x0F for _, d in slots[2:4]):
        sys.exit('fatcorrupt: %s needs two 8.3-only entries in slots 2 and 3' % rest[0])
    (o0, dot), (o1, dotdot), (o2, a), (o3, b) = slots[0:4]
    for o, d in ((o0, a), (o1, b), (o2, dotdot), (o3, dot)):
        fat.write(o, d)
    print('%s: slots 0-3 now hold %r, %r, .., .' % (rest[0], a[0:11], b[0:11]))


EXTRA = {'bad-name': bad_name, 'after-end': after_end, 'past-end': past_end, 'duplicate': duplicate, 'dir-size': dir_size, 'dotdot': dotdot,
         'size-zero': size_zero, 'bad-start': bad_start, 'lfn-orphan': lfn_orphan,
         'label-differs': label_differs, 'fsinfo-signature': fsinfo_signature, 'next-free': next_free,
         'fat0': fat0, 'forget': forget, 'dot-entries': dot_entries}


def main(argv):
    args = argv[1:]
    base = 0
    if len(args) > 2 and args[1] == '--offset':
        base = int(args[2])
        del args[1:3]
    if len(args) < 2:
        sys.exit(__doc__)
    fat = Fat(args[0], base)
    what, rest = args[1], args[2:]
    if what == 'copies-differ':
        copy = int(rest[0]) if rest else 1
        used = next(c for c in range(2, fat.clusters + 2) if fat.get(c) != 0)
        fat.set(used, fat.get(used) ^ 0x1)
        fat.flush([copy])
        print('FAT copy %d: entry %d changed' % (copy, used))
    elif what == 'lost-clusters':
        lost = fat.free_clusters(int(rest[0]) if rest else 3)
        for a, b in zip(lost, lost[1:]):
            fat.set(a, b)
        fat.set(lost[-1], fat.eoc)
        fat.flush()
        print('lost chain %s' % lost)
    elif what == 'lost-loop':
        lost = fat.free_clusters(int(rest[0]) if rest else 3)
        for a, b in zip(lost, lost[1:] + lost[:1]):
            fat.set(a, b)
        fat.flush()
        print('lost loop %s' % lost)
    elif what == 'wrong-free-count':
        if not fat.fat32:
            sys.exit('fatcorrupt: wrong-free-count needs FAT32 (FSInfo)')
        off = fat.fsinfo * fat.ss + 0x1E8
        free = struct.unpack('<I', fat.read(off, 4))[0]
        new = (free + (int(rest[0]) if rest else -10)) & 0xFFFFFFFF
        fat.write(off, struct.pack('<I', new))
        print('FSInfo free count %d -> %d' % (free, new))
    elif what == 'chain-longer':
        _, _, _, chain = file_chain(fat, rest[0])
        extra = fat.free_clusters(1)[0]
        fat.set(chain[-1], extra)
        fat.set(extra, fat.eoc)
        fat.flush()
        print('%s: cluster %d appended after %d' % (rest[0], extra, chain[-1]))
    elif what == 'chain-shorter':
        off, _, e, chain = file_chain(fat, rest[0])
        size = struct.unpack_from('<I', e, 28)[0]
        fat.write(off + 28, struct.pack('<I', size + fat.cb))
        print('%s: size %d -> %d' % (rest[0], size, size + fat.cb))
    elif what == 'free-in-chain':
        _, _, _, chain = file_chain(fat, rest[0], 3)
        fat.set(chain[1], 0)
        fat.flush()
        print('%s: cluster %d marked free' % (rest[0], chain[1]))
    elif what == 'cross-link':
        _, _, _, one = file_chain(fat, rest[0])
        _, _, _, two = file_chain(fat, rest[1], 2)
        fat.set(two[-2], one[-1])
        fat.flush()
        print('%s: cluster %d now points to %d, the last of %s' % (rest[1], two[-2], one[-1], rest[0]))
    elif what == 'loop':
        _, _, _, chain = file_chain(fat, rest[0], 2)
        fat.set(chain[-1], chain[0])
        fat.flush()
        print('%s: cluster %d points back to %d' % (rest[0], chain[-1], chain[0]))
    elif what == 'out-of-range':
        _, _, _, chain = file_chain(fat, rest[0])
        bad = fat.clusters + 10
        fat.set(chain[-1], bad)
        fat.flush()
        print('%s: cluster %d points to %d' % (rest[0], chain[-1], bad))
    elif what == 'dirty':
        if fat.bits == 12:
            fat.write(0x25, bytes([fat.read(0x25, 1)[0] | 1]))
            print('boot sector state byte: dirty flag set')
        else:
            bit = 0x8000 if fat.bits == 16 else 0x08000000
            fat.set(1, fat.get(1) & ~bit)
            fat.flush()
            print('FAT[1] = 0x%X' % fat.get(1))
    elif what == 'bad-lfn':
        _, lfn_offs, _ = fat.lookup(rest[0])[0]
        if not lfn_offs:
            sys.exit('fatcorrupt: %s has no long name' % rest[0])
        for off in lfn_offs:
            fat.write(off + 13, bytes([fat.read(off + 13, 1)[0] ^ 0x5A]))
        print('%s: checksum of %d LFN slots changed' % (rest[0], len(lfn_offs)))
    elif what in EXTRA:
        EXTRA[what](fat, rest)
    else:
        sys.exit('fatcorrupt: unknown damage %r\n%s' % (what, __doc__))


if __name__ == '__main__':
    main(sys.argv)
