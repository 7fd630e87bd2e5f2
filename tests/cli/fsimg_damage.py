#!/usr/bin/env python3
"""Helpers for fsimg_stream.sh, from img/FORMAT.md (not from fsio's code).

  fsimg_damage.py offsets LAYOUT_JSON            truncation and flip offsets, one "OFFSET WHERE" a line
  fsimg_damage.py flip IMAGE OFFSET OUT          OUT = IMAGE with the byte at OFFSET inverted
  fsimg_damage.py version IMAGE OUT              OUT = IMAGE with header version 2 and a valid CRC
  fsimg_damage.py untouched LAYOUT_JSON OFFSET OLD TARGET
      after a failed restore of a stream damaged at OFFSET: the first 1 MiB
      (written last) and everything from the end of the last frame wholly
      before the damage on must still be OLD's bytes.
"""
import json
import struct
import sys


def crc32c(data, crc=0):
    table = crc32c.table
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


crc32c.table = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    crc32c.table.append(c)
assert crc32c(b'123456789') == 0xE3069283


def sample(frames):
    """The first, a middle one and the last frame: enough to reach every kind of spot."""
    idx = sorted({0, len(frames) // 2, len(frames) - 1} & set(range(len(frames))))
    return [frames[i] for i in idx]


def offsets(layout):
    L = json.load(open(layout))
    out = [(0, 'start'), (4, 'header magic'), (8, 'header tag'), (12, 'header version'),
           (8 + 0x0C, 'header block size'), (8 + 0x18, 'header image bytes'),
           (8 + 0x38, 'header map bytes'), (8 + 0x7C, 'header crc'), (8 + 128, 'header map'),
           (L['header_end'] - 1, 'header end')]
    for f in sample(L['frames']):
        s = f"frame {f['sequence']}"
        out += [(f['index_offset'], s + ' index magic'), (f['index_offset'] + 8, s + ' index tag'),
                (f['index_offset'] + 8 + 0x08, s + ' index first block'),
                (f['index_offset'] + 8 + 0x20, s + ' index compressed bytes'),
                (f['index_offset'] + 8 + 0x3C, s + ' index crc'),
                (f['zstd_offset'], s + ' zstd magic'), (f['zstd_offset'] + 5, s + ' zstd header'),
                ((f['zstd_offset'] + f['end_offset']) // 2, s + ' zstd data'),
                (f['end_offset'] - 2, s + ' zstd checksum')]
    e = L['end_offset']
    out += [(e, 'end magic'), (e + 8, 'end tag'), (e + 8 + 0x08, 'end covered'),
            (e + 8 + 0x2C, 'end crc'), (L['stream_bytes'] - 1, 'last byte')]
    for off, what in out:
        print(off, what.replace(' ', '_'))


def untouched(layout, offset, old_path, tgt_path):
    L = json.load(open(layout))
    safe = 0
    for f in L['frames']:
        if f['end_offset'] <= offset:
            safe = f['device_end']
    old = open(old_path, 'rb').read()
    tgt = open(tgt_path, 'rb').read()
    head = min(1 << 20, L['image_bytes'])
    if tgt[:head] != old[:head]:
        sys.exit(f'damage at {offset}: the first MiB was written')
    safe = max(safe, head)
    if tgt[safe:] != old[safe:]:
        first = next(i for i in range(safe, len(old)) if tgt[i] != old[i])
        sys.exit(f'damage at {offset}: byte {first} written, past the last whole frame (ends at {safe})')


cmd = sys.argv[1]
if cmd == 'offsets':
    offsets(sys.argv[2])
elif cmd == 'flip':
    d = bytearray(open(sys.argv[2], 'rb').read())
    d[int(sys.argv[3])] ^= 0xFF
    open(sys.argv[4], 'wb').write(d)
elif cmd == 'version':
    d = bytearray(open(sys.argv[2], 'rb').read())
    size, = struct.unpack_from('<I', d, 4)
    struct.pack_into('<H', d, 8 + 4, 2)
    struct.pack_into('<I', d, 8 + 0x7C, 0)
    struct.pack_into('<I', d, 8 + 0x7C, crc32c(bytes(d[8:8 + size])))
    open(sys.argv[3], 'wb').write(d)
elif cmd == 'untouched':
    untouched(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5])
