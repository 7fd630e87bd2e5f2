#!/usr/bin/env python3
"""Walk an fsimg stream as cmd/img/FORMAT.md describes it and print its layout as JSON.

Written from the format document, not from fsio's code, so the tests can say
where each frame starts in the stream and how far into the image each frame
reaches, and check restore's promise (nothing written past the damage)
against an independent reading.  usage: fsimg_layout.py IMAGE
"""
import json
import struct
import sys

SKIPPABLE = 0x184D2A5F
data = open(sys.argv[1], 'rb').read()


def record(pos, tag):
    magic, size = struct.unpack_from('<II', data, pos)
    assert magic == SKIPPABLE, f'no skippable frame at {pos}'
    assert data[pos + 8:pos + 12] == tag, f'expected {tag} at {pos}'
    return pos + 8, pos + 8 + size


def runs(buf):
    """LEB128 (gap, length) pairs -> [(start, length)]."""
    vals, v, shift = [], 0, 0
    for b in buf:
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            vals.append(v)
            v, shift = 0, 0
    out, end = [], 0
    for gap, length in zip(vals[0::2], vals[1::2]):
        start = end + gap
        out.append((start, length))
        end = start + length
    return out


body, pos = record(0, b'FSIH')
block_size, = struct.unpack_from('<I', data, body + 0x0C)
image_bytes, = struct.unpack_from('<Q', data, body + 0x18)
map_bytes, = struct.unpack_from('<Q', data, body + 0x38)
the_map = runs(data[body + 128:body + 128 + map_bytes])


def device_end(ordinal_end):
    """Byte offset in the image just past the map block with ordinal ordinal_end - 1."""
    seen = 0
    for start, length in the_map:
        if ordinal_end <= seen + length:
            return (start + ordinal_end - seen) * block_size
        seen += length
    raise AssertionError('ordinal past the map')


def zstd_window(pos):
    """Window size of the zstd frame at pos (RFC 8878 3.1.1.1): the content
    size when Single_Segment_flag is set, else the Window_Descriptor's."""
    fhd = data[pos + 4]
    if fhd & 0x20:
        n = (1, 2, 4, 8)[fhd >> 6]  # Frame_Content_Size bytes with a single segment
        did = (0, 1, 2, 4)[fhd & 3]
        value = int.from_bytes(data[pos + 5 + did:pos + 5 + did + n], 'little')
        return value + (256 if n == 2 else 0)
    wd = data[pos + 5]
    base = 1 << (10 + (wd >> 3))
    return base + base // 8 * (wd & 7)


frames = []
while data[pos + 8:pos + 12] == b'FSIF':
    body, after = record(pos, b'FSIF')
    seq, first, covered, stored, compressed = struct.unpack_from('<IQQQQ', data, body + 4)
    frames.append({'sequence': seq, 'index_offset': pos, 'zstd_offset': after, 'stored': stored,
                   'window': zstd_window(after),
                   'end_offset': after + compressed, 'device_end': device_end(first + covered)})
    pos = after + compressed
body, end = record(pos, b'FSIE')
assert end == len(data), 'bytes after the end record'
print(json.dumps({'block_size': block_size, 'image_bytes': image_bytes, 'map_bytes': map_bytes,
                  'header_end': frames[0]['index_offset'] if frames else pos,
                  'end_offset': pos, 'stream_bytes': len(data), 'frames': frames}))
