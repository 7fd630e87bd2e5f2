#!/usr/bin/env python3
"""Judge a target written from a raw image and bmaptool's map of it.

usage: fsimg_multi_bmap.py BMAP SOURCE TARGET OLD zero|keep

The ranges come from the bmap file itself (Python's XML parser, not
fsio's): every mapped byte must equal the source's; every unmapped byte of
the image must read as zeros (zero) or still hold OLD's bytes (keep); past
the image, the target must still hold OLD's bytes. Prints the counts.
"""
import sys
import xml.etree.ElementTree as ET

bmap_path, src_path, tgt_path, old_path, mode = sys.argv[1:6]
root = ET.parse(bmap_path).getroot()
bs = int(root.find('BlockSize').text)
size = int(root.find('ImageSize').text)
src = open(src_path, 'rb').read()
old = open(old_path, 'rb').read()
with open(tgt_path, 'rb') as f:
    tgt = f.read(len(old))

ranges = []
for r in root.find('BlockMap').findall('Range'):
    first, _, last = r.text.strip().partition('-')
    ranges.append((int(first) * bs, min((int(last or first) + 1) * bs, size)))

bad = []
pos = mapped = 0
for begin, end in ranges + [(size, size)]:
    want = old[pos:begin] if mode == 'keep' else bytes(begin - pos)
    if tgt[pos:begin] != want:
        bad.append(f'unmapped bytes {pos}-{begin - 1} are not {"the old data" if mode == "keep" else "zeros"}')
    if tgt[begin:end] != src[begin:end]:
        first = next(i for i in range(begin, end) if tgt[i] != src[i])
        bad.append(f'mapped byte {first} differs from the source')
    mapped += end - begin
    pos = end
if tgt[size:] != old[size:]:
    bad.append('bytes past the image were changed')
print(f'bmap: {size} bytes, {mapped} mapped in {len(ranges)} ranges ({mode}), {len(bad)} problems')
for line in bad[:5]:
    print('  ' + line)
sys.exit(1 if bad else 0)
