#!/usr/bin/env python3
"""Helpers for fsimg_stream.sh, from img/FORMAT.md (not from fsio's code).

  fsimg_damage.py offsets LAYOUT_JSON            truncation and flip offsets, one "OFFSET WHERE" a line
  fsimg_damage.py flip IMAGE OFFSET OUT          OUT = IMAGE with the byte at OFFSET inverted
  fsimg_damage.py version IMAGE OUT              OUT = IMAGE with header version 2 and a valid CRC
  fsimg_damage.py forge OUT [FIELD=VALUE...] [end]
      OUT = a header record of a 4 KiB raw image with no mapped block, with
      the header fields given (image_bytes=..., map_bytes=...; block_count
      follows image_bytes unless given) and a valid CRC; with map_bytes the
      record claims that many map bytes but none follow. "end" appends a
      valid end record, which makes a whole stream when nothing is mapped.
      frame_compressed=N maps one block and appends frame 0's index (valid
      CRC) claiming N compressed bytes, none of which follow.
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


def forge(out, args):
    f = {'version': 1, 'fixed_bytes': 128, 'fs_type': 0, 'block_size': 4096, 'image_bytes': 4096,
         'mapped_blocks': 0, 'run_count': 0, 'map_bytes': 0, 'frame_bytes': 4096, 'level': 3,
         'created': 0, 'flags': 0}
    end = 'end' in args
    for a in args:
        if '=' in a:
            k, v = a.split('=')
            f[k] = int(v, 0)
    frame = f.pop('frame_compressed', None)
    themap = b''
    if frame is not None:
        f.update(mapped_blocks=1, run_count=1, map_bytes=2)
        themap = bytes([0, 1])  # one run: gap 0, length 1
    f.setdefault('source_bytes', f['image_bytes'])
    f.setdefault('block_count', (f['image_bytes'] - 1) // f['block_size'] + 1)
    fixed = bytearray(128)
    fixed[0:4] = b'FSIH'
    struct.pack_into('<HHII', fixed, 4, f['version'], f['fixed_bytes'], f['fs_type'], f['block_size'])
    struct.pack_into('<QQQQQQ', fixed, 0x10, f['source_bytes'], f['image_bytes'], f['block_count'],
                     f['mapped_blocks'], f['run_count'], f['map_bytes'])
    struct.pack_into('<IIQ', fixed, 0x40, f['frame_bytes'], f['level'], f['created'])
    fixed[0x50:0x50 + 6] = b'forged'
    struct.pack_into('<I', fixed, 0x78, f['flags'])
    struct.pack_into('<I', fixed, 0x7C, crc32c(themap, crc32c(bytes(fixed))))
    data = struct.pack('<II', 0x184D2A5F, 128 + f['map_bytes']) + bytes(fixed) + themap
    if frame is not None:
        x = bytearray(64)
        x[0:4] = b'FSIF'
        struct.pack_into('<IQQQQQQ', x, 4, 0, 0, 1, f['block_size'], frame, 0, 0)
        struct.pack_into('<I', x, 0x3C, crc32c(bytes(x)))
        data += struct.pack('<II', 0x184D2A5F, 64) + bytes(x)
    if end:
        e = bytearray(48)
        e[0:4] = b'FSIE'
        struct.pack_into('<IQQQQ', e, 4, 0, 0, 0, 0, len(data))
        struct.pack_into('<I', e, 0x2C, crc32c(bytes(e)))
        data += struct.pack('<II', 0x184D2A5F, 48) + bytes(e)
    open(out, 'wb').write(data)


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
elif cmd == 'forge':
    forge(sys.argv[2], sys.argv[3:])
elif cmd == 'untouched':
    untouched(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5])
