#!/usr/bin/env bash
# Holes of a copied tree (issue 25): mkext4 -d and extwb put give a sparse
# file blocks only where it has data, from a directory (SEEK_DATA/SEEK_HOLE)
# and from a tar's sparse map (pax 1.0 written here byte by byte with data
# at odd offsets, GNU tar's old sparse headers). A data range that starts
# or ends inside a 4 KiB block of the image takes that block whole, with
# zeros around the data; two ranges in one block share it. The numbers
# (blocks, 512-byte sectors, logical extents) are worked by hand below;
# e2fsck -fn is clean, the kernel's read-only mount reads every file equal
# to the source (cmp) and counts the same blocks (stat %b), debugfs lists
# the extents at the logical blocks expected. A fail and tear sweep over
# every write of a sparse fill leaves no ext4 or a clean one.
. "$(dirname "$0")/lib.sh"
need mke2fs e2fsck debugfs tar python3 mount umount losetup cmp blkid
need_root
MKEXT4=$BUILD/cmd/mkext4
EXTWB=$BUILD/cmd/extwb
mkdir -p "$T/mnt" "$T/srcfs"

# The source directory on an ext4 of 1 KiB blocks, so that SEEK_DATA finds
# data at 1 KiB edges: inside the image's 4 KiB blocks, not on their edges.
truncate -s 32M "$T/srcfs.img"
mke2fs -q -t ext4 -b 1024 "$T/srcfs.img" || fail "mke2fs for the source"
SRCDEV=$(new_loop "$T/srcfs.img")
mount "$SRCDEV" "$T/srcfs" || fail "mount the source filesystem"
MOUNTS+=("$T/srcfs")
S=$T/srcfs/tree
mkdir "$S"
# make PATH SIZE [OFFSET LENGTH BYTE]...: a sparse file with data only there
python3 - "$S" "$T/sparse.tar" <<'PY'
import io, os, sys, tarfile
src, tar_path = sys.argv[1], sys.argv[2]
files = {  # name: (size, [(offset, length, byte)])
    'f1': (1_000_000, [(5000, 1000, 0x61), (13000, 100, 0x62), (14500, 100, 0x63), (999_990, 10, 0x64)]),
    'straddle': (9000, [(4000, 200, 0x65)]),
    'hole': (5_000_001, []),
    'dense': (10_000, [(0, 10_000, 0x66)]),
    'tailhole': (1 << 20, [(0, 100, 0x67)]),
}
with tarfile.open(tar_path, 'w', format=tarfile.PAX_FORMAT) as tar:
    for name, (size, runs) in sorted(files.items()):
        fd = os.open(os.path.join(src, name), os.O_CREAT | os.O_WRONLY, 0o644)
        os.ftruncate(fd, size)
        for off, length, b in runs:
            os.pwrite(fd, bytes([b]) * length, off)
        os.close(fd)
        # pax 1.0 sparse (GNU tar's --sparse-version=1.0): the map as decimal
        # lines padded to 512 bytes, then the data runs one after another; a
        # file of no data has one empty run at its end, as GNU tar writes it.
        amap = [(o, l) for o, l, _ in runs] or [(size, 0)]
        m = ('%d\n' % len(amap) + ''.join('%d\n%d\n' % r for r in amap)).encode()
        m += b'\0' * (-len(m) % 512)
        payload = m + b''.join(bytes([b]) * l for _, l, b in runs)
        ti = tarfile.TarInfo('GNUSparseFile.0/' + name)
        ti.size, ti.mode, ti.mtime = len(payload), 0o644, 1600000000
        ti.pax_headers = {'GNU.sparse.major': '1', 'GNU.sparse.minor': '0', 'GNU.sparse.name': name,
                          'GNU.sparse.realsize': str(size)}
        tar.addfile(ti, io.BytesIO(payload))
PY
sync
tar --format=gnu --sparse -cf "$T/gnu.tar" -C "$S" .
[ "$(stat -c %b "$S/f1")" -lt 100 ] || fail "the source filesystem did not keep f1 sparse"

# Hand-worked, in 4 KiB blocks. f1 from the tar: 5000..5999 in block 1,
# 13000..13099 and 14500..14599 both in block 3, 999990..999999 in block 244
# (999424..1003519): 3 blocks, 24 sectors, extents at logical 1, 3, 244.
# From the directory SEEK_DATA gives 1 KiB blocks 4-5, 12, 14 and 976
# (4096..6143, 12288..13311, 14336..15359, 999424..999999): the same
# image blocks. straddle: 4000..4199 crosses blocks 0 and 1 (the source's
# 1 KiB blocks 3-4, 3072..5119, too): 2 blocks. hole: none. dense: 10000
# bytes, 3 blocks. tailhole: 0..99, block 0.
check() {  # check IMG DIR WHAT: the files of DIR in IMG as worked out above
  local img=$1 dir=$2 what=$3 dev want p=/${2:+$2/}
  e2fsck -fn "$img" > "$T/fsck" 2>&1 || { cat "$T/fsck"; fail "$what: e2fsck -fn is not clean"; }
  dev=$(new_loop "$img")
  mount -o ro "$dev" "$T/mnt" || fail "$what: the kernel does not mount it"
  MOUNTS+=("$T/mnt")
  for want in "f1 1000000 24" "straddle 9000 16" "hole 5000001 0" "dense 10000 24" "tailhole 1048576 8"; do
    set -- $want
    cmp "$S/$1" "$T/mnt/$dir/$1" || fail "$what: $1 reads differently through the kernel"
    [ "$(stat -c '%s %b' "$T/mnt/$dir/$1")" = "$2 $3" ] ||
      fail "$what: $1 is $(stat -c '%s bytes in %b sectors' "$T/mnt/$dir/$1"), expected $2 bytes in $3"
  done
  umount "$T/mnt"; MOUNTS=("$T/srcfs")
  loop_detach "$dev"
  debugfs -R "stat ${p}f1" "$img" 2>/dev/null | sed -n '/^EXTENTS:/{n;p}' > "$T/ext"
  grep -qE '^\(1\):[0-9]+, \(3\):[0-9]+, \(244\):[0-9]+$' "$T/ext" ||
    fail "$what: f1's extents are not at logical 1, 3 and 244: $(cat "$T/ext")"
  [ "$(debugfs -R "blocks ${p}f1" "$img" 2>/dev/null | wc -w)" = 3 ] || fail "$what: debugfs blocks f1: not 3"
  debugfs -R "stat ${p}straddle" "$img" 2>/dev/null | grep -qE '^\(0-1\):[0-9]+-[0-9]+$' ||
    fail "$what: straddle is not one extent of logical 0-1"
  debugfs -R "stat ${p}hole" "$img" 2>/dev/null | grep -q 'Blockcount: 0$' || fail "$what: hole has blocks"
}

for src in "$S" "$T/sparse.tar" "$T/gnu.tar"; do
  rm -f "$T/img"
  expect_rc 0 "$MKEXT4" -q -b 4096 -C -d "$src" "$T/img" 64M
  check "$T/img" "" "mkext4 -d $(basename "$src")"
done
expect_rc 0 "$MKEXT4" -q -b 4096 -C -d - "$T/stdin.img" 64M < "$T/sparse.tar"
check "$T/stdin.img" "" "mkext4 -d - (pax sparse on standard input)"
pass "mkext4 -d: holes stay holes from a directory, pax 1.0 and GNU sparse tars and stdin; partial blocks whole"

expect_rc 0 "$MKEXT4" -q -b 4096 -C "$T/put.img" 64M
expect_rc 0 "$EXTWB" put -q "$T/put.img" /dir "$S"
expect_rc 0 "$EXTWB" put -q --tar "$T/put.img" /tar "$T/sparse.tar"
expect_rc 0 "$EXTWB" put -q --tar "$T/put.img" /gnu < "$T/gnu.tar"
for d in dir tar gnu; do check "$T/put.img" "$d" "extwb put /$d"; done
pass "extwb put: the same holes from a directory and from both tars"

# mkfat reads the same sources without holes: its files are whole.
if [ -x "$BUILD/cmd/mkfat" ] && command -v mcopy > /dev/null; then
  expect_rc 0 "$BUILD/cmd/mkfat" -C -d "$T/sparse.tar" "$T/fat.img" 32M
  for f in f1 hole tailhole straddle; do
    MTOOLS_SKIP_CHECK=1 mcopy -i "$T/fat.img" "::/$f" "$T/$f.fat" || fail "mcopy $f from the FAT image"
    cmp "$S/$f" "$T/$f.fat" || fail "mkfat -d of the sparse tar: $f differs"
  done
  pass "mkfat -d of the sparse tar reads each file whole, holes (a trailing one too) as zeros"
fi

# A fail and tear sweep over every write of mkext4 -d of the sparse tar:
# no ext4 blkid sees, or one e2fsck -fn finds clean (tests/cli/mkext4_root_fault.sh's rule).
fails() {  # fails N: does the run fail at write N?
  rm -f "$T/x.img"; truncate -s 16M "$T/x.img"
  ! FSIO_FAULT=fail:$1 "$MKEXT4" -q -F -d "$T/sparse.tar" "$T/x.img" > /dev/null 2>&1
}
writes=$(count_writes fails) valid=0
[ "$writes" -gt 5 ] || fail "only $writes writes counted"
for kind in fail tear; do
  for n in $(crash_points 1 $((writes + 1))); do
    rm -f "$T/x.img"; truncate -s 16M "$T/x.img"
    rc=0; FSIO_FAULT=$kind:$n "$MKEXT4" -q -F -d "$T/sparse.tar" "$T/x.img" > /dev/null 2> "$T/err" || rc=$?
    if [ "$n" -le "$writes" ] && [ "$rc" -eq 0 ]; then fail "$kind:$n: mkext4 -d said success over a failed write"; fi
    if blkid -p "$T/x.img" 2> /dev/null | grep -q 'TYPE="ext4"'; then
      e2fsck -fn "$T/x.img" > "$T/fsck" 2>&1 || { cat "$T/err" "$T/fsck"; fail "$kind:$n left an ext4 e2fsck rejects"; }
      valid=$((valid + 1))
    fi
  done
done
[ "$valid" -ge 2 ] || fail "no crash point left a filesystem: the sweep did not reach the end"
pass "mkext4 -d of sparse files: every crash point over $writes writes leaves no ext4 or a clean one"
