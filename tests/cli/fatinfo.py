#!/usr/bin/env python3
"""Print the BPB of a FAT volume as JSON, so CLI tests can compare mkfat with mkfs.fat.

Fields are decoded independently of fsio's own code (Microsoft FAT spec
offsets), so a shared misunderstanding cannot hide a mistake.
usage: fatinfo.py IMAGE [OFFSET_BYTES]
"""
import json
import struct
import sys

path = sys.argv[1]
base = int(sys.argv[2]) if len(sys.argv) > 2 else 0
with open(path, 'rb') as f:
    f.seek(base)
    bs = f.read(512)

le = lambda off, n: int.from_bytes(bs[off:off + n], 'little')
info = {
    'bytes_per_sector': le(11, 2),
    'sectors_per_cluster': bs[13],
    'reserved_sectors': le(14, 2),
    'num_fats': bs[16],
    'root_entries': le(17, 2),
    'total_sectors_16': le(19, 2),
    'media': bs[21],
    'fat_length_16': le(22, 2),
    'sectors_per_track': le(24, 2),
    'heads': le(26, 2),
    'hidden_sectors': le(28, 4),
    'total_sectors_32': le(32, 4),
    'signature': le(510, 2),
}
if info['fat_length_16'] == 0:
    info.update({
        'fat_length': le(36, 4),
        'ext_flags': le(40, 2),
        'root_cluster': le(44, 4),
        'fsinfo_sector': le(48, 2),
        'backup_boot': le(50, 2),
        'drive_number': bs[64],
        'ext_signature': bs[66],
        'volume_id': '%08x' % le(67, 4),
        'label': bs[71:82].decode('latin-1'),
        'fs_type': bs[82:90].decode('latin-1'),
    })
else:
    info.update({
        'fat_length': info['fat_length_16'],
        'drive_number': bs[36],
        'ext_signature': bs[38],
        'volume_id': '%08x' % le(39, 4),
        'label': bs[43:54].decode('latin-1'),
        'fs_type': bs[54:62].decode('latin-1'),
    })
total = info['total_sectors_16'] or info['total_sectors_32']
ss = info['bytes_per_sector'] or 1
root_secs = (info['root_entries'] * 32 + ss - 1) // ss
data = total - info['reserved_sectors'] - info['num_fats'] * info['fat_length'] - root_secs
info['clusters'] = data // max(info['sectors_per_cluster'], 1)
info['fat_bits'] = 12 if info['clusters'] < 4085 else 16 if info['clusters'] < 65525 else 32
if info['fat_length_16'] == 0:
    info['fat_bits'] = 32
print(json.dumps(info, sort_keys=True))
