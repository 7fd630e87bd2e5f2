#!/usr/bin/env python3
"""Compare what fsck.fat -n and fatck -n --json found on one image.

usage: fatck_classes.py FSCK_OUTPUT FATCK_JSON [EXTRA_CLASS...]

fsck.fat's lines are mapped to fatck's finding classes by the message each
prints (fsck.fat 4.2 wording, src/check.c, fat.c, boot.c, lfn.c); fatck's
classes are those of its error and warning findings. EXTRA_CLASS names
classes fatck reports and fsck.fat does not look for (the next-free hint).
Prints both sets; exits 1 when they differ.
"""
import json
import re
import sys

# (regular expression on an fsck.fat line, fatck class)
FSCK = [
    (r'FATs differ', 'copies_differ'),
    (r'Reclaimed \d+ unused cluster', 'lost_clusters'),
    (r'Free cluster summary wrong', 'free_count'),
    (r'cluster chain length is > ', 'chain_longer'),
    (r'File size is \d+ bytes, cluster chain length is \d+ bytes', 'size_beyond_chain'),
    (r'Contains a free cluster', 'free_in_chain'),
    (r'Contains a bad cluster', 'bad_in_chain'),
    (r'share clusters', 'cross_link'),
    (r'Circular cluster chain', 'loop'),
    (r'out of range', 'out_of_range'),
    (r'Dirty bit is set', 'dirty'),
    (r'Wrong checksum for long file name|Unfinished long file name|Long filename fragment|'
     r'Checksum in long filename part wrong', 'lfn_damaged'),
    (r'Orphaned long file name part', 'lfn_orphan'),
    (r'Start cluster field in VFAT long filename slot', 'lfn_start_cluster'),
    (r'Bad short file name', 'bad_name'),
    (r'Duplicate directory entry', 'duplicate_name'),
    (r'Directory has non-zero size', 'dir_size'),
    (r"entry in the (first|second) slot|Expected a valid '\.", 'dot_entry'),
    (r'Bad start cluster|Start cluster beyond limit', 'bad_start'),
    (r'Start does point to', 'dir_start'),
    (r'Volume label .* different|Label in boot sector is|no label in boot sector', 'label'),
    (r'FSINFO sector has bad magic', 'fsinfo_signature'),
    (r'differences between boot sector and its backup', 'backup_boot_differs'),
]


def fsck_classes(text):
    found = set()
    for line in text.splitlines():
        for pattern, cls in FSCK:
            if re.search(pattern, line):
                found.add(cls)
    return found


def main(argv):
    fsck = fsck_classes(open(argv[1], errors='replace').read())
    doc = json.load(open(argv[2]))
    ours = {f['class'] for f in doc['findings'] if f['severity'] != 'info'}
    want = fsck | set(argv[3:])
    print('fsck.fat: %s; fatck: %s' % (sorted(fsck), sorted(ours)))
    return 0 if ours == want else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv))
