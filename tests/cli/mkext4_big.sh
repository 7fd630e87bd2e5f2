#!/usr/bin/env bash
# mkext4 -d on issue 25's large trees, judged by the peers: a directory of
# 100,000 entries (htree-indexed: debugfs's htree dump walks it; mke2fs -d
# gives up on such a directory near 65,000 names), 5,000 hard links (one
# inode each, debugfs's link count), a 5 GiB sparse file with data at odd
# offsets (only its data blocks allocated), and a real tree of this machine
# (/usr/share/locale); e2fsck -fn clean, and the kernel's read-only mount
# sees every name, byte and hole. Also made with a metadata cache of
# 256 KiB (FSIO_META_CACHE): the metadata goes out early dozens of times,
# the peak memory stays near the fixed buffers, and the image is the same.
. "$(dirname "$0")/lib.sh"
need e2fsck debugfs dumpe2fs python3 diff mount umount losetup /usr/bin/time
need_root
MKEXT4=$BUILD/cmd/mkext4
export SOURCE_DATE_EPOCH=1700000000
IDS=(-U 0b7e31c2-5d44-4c6e-9f0e-2d1a8c3b7e55 -E hash_seed=6a1f0c9e-3b2d-4e8a-b7c6-1d2e3f4a5b6c)
src=$T/src
mkdir -p "$src/wide" "$src/links" "$src/sparse" "$T/mnt"
python3 - "$src" <<'PY'
import os, sys
root = sys.argv[1]
for i in range(100000):
    with open(os.path.join(root, "wide", "entry-%06d" % i), "w") as f:
        if i % 1000 == 0:
            f.write("file %d\n" % i)
for i in range(5000):
    os.link(os.path.join(root, "wide", "entry-%06d" % (i * 20)), os.path.join(root, "links", "l%04d" % i))
# 5 GiB, data at odd offsets: the start, across the 2 GiB mark, the end.
with open(os.path.join(root, "sparse", "five"), "wb") as f:
    for off, data in ((1, b"head"), ((2 << 30) - 3, b"across-the-mark"), ((5 << 30) - 7, b"the end")):
        f.seek(off)
        f.write(data)
PY
real=/usr/share/locale
if [ -d "$real" ] && [ -n "$(ls -A "$real")" ]; then
  cp -a "$real" "$src/locale"
else
  skip_part "no $real to copy as the real tree"
  real=""
fi

/usr/bin/time -f %M -o "$T/rss" "$MKEXT4" -q "${IDS[@]}" -N 120000 -d "$src" "$T/big.img" 1G ||
  fail "mkext4 -d of the big tree failed"
e2fsck -fn "$T/big.img" > "$T/fsck" 2>&1 || { cat "$T/fsck"; fail "e2fsck -fn is not clean on the big tree"; }
debugfs -R "htree /wide" "$T/big.img" > "$T/htree" 2>/dev/null
grep -q "Indirect levels: 1" "$T/htree" || fail "/wide (100,000 entries) is not a two-level htree: $(head -8 "$T/htree")"
leaves=$(grep -c "^Entry #" "$T/htree" || true)
[ "$leaves" -gt 100 ] || fail "/wide's htree lists only $leaves blocks"
debugfs -R "stat /wide/entry-000020" "$T/big.img" > "$T/stat" 2>/dev/null
grep -q "Links: 2" "$T/stat" || fail "a hard-linked file has not 2 links: $(grep Links "$T/stat")"
debugfs -R "stat /sparse/five" "$T/big.img" > "$T/stat" 2>/dev/null
grep -q "Size: 5368709120" "$T/stat" || fail "the sparse file is not 5 GiB: $(grep Size "$T/stat")"
blocks=$(sed -n 's/.*Blockcount: \([0-9]*\).*/\1/p' "$T/stat")
[ "$blocks" -le 64 ] || fail "the 5 GiB sparse file takes $blocks sectors: its holes were filled"
pass "100,000 entries in one htree-indexed directory, 5,000 hard links, a 5 GiB sparse file ($blocks sectors)," \
  "$real: e2fsck clean, peak RSS $(cat "$T/rss") KiB"

loop=$(loop_setup -r "$T/big.img")
mount -o ro "$loop" "$T/mnt" && MOUNTS+=("$T/mnt")
[ "$(find "$T/mnt/wide" -type f | wc -l)" -eq 100000 ] || fail "the kernel does not list 100,000 files in /wide"
if [ -n "$real" ]; then
  diff -r --no-dereference "$src/locale" "$T/mnt/locale" > "$T/diff" || { head "$T/diff"; fail "the kernel sees $real otherwise"; }
fi
cmp "$src/sparse/five" "$T/mnt/sparse/five" || fail "the kernel reads the sparse file otherwise"
[ "$(cat "$T/mnt/links/l0050")" = "file 1000" ] || fail "a hard link (to entry-001000) reads otherwise"
umount "$T/mnt" && MOUNTS=()
loop_detach "$loop"
pass "the kernel's mount: 100,000 names in /wide, $real byte for byte (diff -r), the sparse file's bytes"

FSIO_META_CACHE=256K /usr/bin/time -f %M -o "$T/rss2" "$MKEXT4" -q "${IDS[@]}" -N 120000 -d "$src" "$T/small.img" 1G ||
  fail "mkext4 -d with a 256 KiB metadata cache failed"
e2fsck -fn "$T/small.img" > "$T/fsck" 2>&1 || { cat "$T/fsck"; fail "e2fsck -fn is not clean with a 256 KiB cache"; }
# The same image but for s_kbytes_written and the checksum of each superblock copy.
python3 "$SRC/tests/cli/ext_cmp_kbytes.py" "$T/big.img" "$T/small.img" ||
  fail "a 256 KiB metadata cache changes the image beyond the bytes-written count"
[ "$(cat "$T/rss2")" -lt "$(cat "$T/rss")" ] || fail "a 256 KiB cache did not lower the peak RSS ($(cat "$T/rss2") KiB)"
pass "with a 256 KiB metadata cache: the same image but for the bytes-written count, peak RSS $(cat "$T/rss2") KiB"
