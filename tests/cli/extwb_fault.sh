#!/usr/bin/env bash
# Crash safety: fail, then tear, each write of a small put in turn
# (FSIO_FAULT, libfsio/engine.hpp). Whatever the crash point, e2fsck must
# find at most what it repairs (leaked blocks or inodes, counts, an
# unattached inode), e2fsck -fy must leave a clean filesystem, and the file
# written before must read back intact.
. "$(dirname "$0")/lib.sh"
need mke2fs e2fsck debugfs dumpe2fs python3

# What a crash may leave: allocations recorded but not used (leaks), counts
# and bitmap checksums out of step with the bitmaps, an inode written but
# not yet linked, a directory block torn inside (checksum), and with 1 KiB
# blocks a primary superblock torn between its two sectors (e2fsck falls
# back to a backup, as it would after the kernel tore it). Every line
# e2fsck -fn prints must match one of these.
cat > "$T/allowed" <<'PATTERNS'
^$
^e2fsck [0-9.]+ \(
^Pass [1-5]
^Block bitmap differences:
^Inode bitmap differences:
^ *[-+]\(?[0-9]
^Free (blocks|inodes) count wrong
^Directories count wrong
^Fix\? no
^IGNORED\.
^Unattached (zero-length )?inode [0-9]+
^Connect to /lost\+found\? no
^Clear\? no
^Inode [0-9]+ ref count is [0-9]+, should be [0-9]+\.  Fix\? no
^Group [0-9]+ (block|inode) bitmap does not match checksum
^ext2fs_open2: Superblock checksum does not match superblock
^e2fsck: Superblock invalid, trying backup blocks\.\.\.
^Padding at end of inode bitmap is not set\. Fix\? no
^Directory inode [0-9]+, block #[0-9]+(, offset [0-9]+)?: directory passes checks but fails checksum.
^.*: \*+ WARNING: Filesystem still has errors \*+
^.*: [0-9]+/[0-9]+ files \(
PATTERNS

# leaks_only WHAT: e2fsck -fn's output ($T/fsck) holds only what $T/allowed lists.
leaks_only() {
  if grep -vEf "$T/allowed" "$T/fsck" | grep -q .; then cat "$T/fsck"; fail "$1: e2fsck finds more than leaks"; fi
}
# repairs IMG WHAT: e2fsck -fy, after which e2fsck -fn is clean.
repairs() {
  e2fsck -fy "$1" >/dev/null 2>&1 || true
  e2fsck -fn "$1" >"$T/fsck" 2>&1 || { cat "$T/fsck"; fail "$2: still broken after e2fsck -fy"; }
}
# intact IMG PATH FILE WHAT: PATH in IMG reads back as FILE (debugfs dump).
intact() {
  rm -f "$T/peer"; debugfs -R "dump $2 $T/peer" "$1" >/dev/null 2>&1
  cmp -s "$T/peer" "$3" || fail "$4: $2, written before the fault, is damaged"
}

sweep() {  # sweep MKE2FS_OPTS...
  local base=$T/base.img
  mke2fs -q -F -t ext4 "$@" "$base" 64M
  head -c 300000 /dev/urandom > "$T/keep"
  head -c 200000 /dev/urandom > "$T/new"
  "$EXTWB" put -q -p "$base" /dir/keep "$T/keep"
  local n=1 clean=0 repaired=0 kind
  for kind in fail tear; do
    for n in $(crash_points 1 200); do
      cp "$base" "$T/x.img"
      rc=0; FSIO_FAULT=$kind:$n "$EXTWB" put -q "$T/x.img" /dir/new "$T/new" 2>"$T/err" || rc=$?
      if [ "$rc" -eq 0 ]; then
        e2fsck -fn "$T/x.img" >"$T/fsck" 2>&1 || { cat "$T/fsck"; fail "$kind:$n: no fault fired, yet e2fsck complains"; }
        break
      fi
      frc=0; e2fsck -fn "$T/x.img" >"$T/fsck" 2>&1 || frc=$?
      if [ "$frc" -eq 0 ]; then
        clean=$((clean + 1))
      else
        leaks_only "$kind:$n"  # only what e2fsck repairs without losing data we committed
        repairs "$T/x.img" "$kind:$n"
        repaired=$((repaired + 1))
      fi
      intact "$T/x.img" /dir/keep "$T/keep" "$kind:$n"
    done
    [ "$n" -gt 2 ] || fail "$kind: the sweep ended at write $n; it did not reach the metadata"
  done
  pass "ext4 $*: a put of $((n - 1)) writes or fewer, every crash point clean ($clean) or repaired ($repaired), /dir/keep intact"
}
sweep -b 4096
sweep -b 1024 -O ^metadata_csum,uninit_bg

# A put that splits an htree leaf (and grows the directory by a block).
htree_sweep() {
  local base=$T/hbase.img i size0 size1
  mke2fs -q -F -t ext4 -b 1024 "$base" 32M
  "$EXTWB" mkdir -q "$base" /h
  head -c 5000 /dev/urandom > "$T/keep"
  "$EXTWB" put -q "$base" /h/keep "$T/keep"
  for i in $(seq 1 400); do
    size0=$("$EXTWB" stat --json "$base" /h | json /dev/stdin 'j["size"]')
    cp "$base" "$T/next.img"
    echo "$i" | "$EXTWB" put -q "$T/next.img" "/h/a-long-name-to-fill-the-leaves-$i"
    size1=$("$EXTWB" stat --json "$T/next.img" /h | json /dev/stdin 'j["size"]')
    if [ "$size1" -gt "$size0" ] && [ "$size0" -gt 3072 ]; then break; fi
    cp "$T/next.img" "$base"
  done
  [ "$size1" -gt "$size0" ] || fail "no put split a leaf"
  echo "$i" > "$T/new"
  local n kind clean=0 repaired=0
  for kind in fail tear; do
    for n in $(crash_points 1 200); do
      cp "$base" "$T/x.img"
      rc=0; FSIO_FAULT=$kind:$n "$EXTWB" put -q "$T/x.img" "/h/a-long-name-to-fill-the-leaves-$i" "$T/new" 2>/dev/null || rc=$?
      [ "$rc" -eq 0 ] && break
      if e2fsck -fn "$T/x.img" >"$T/fsck" 2>&1; then clean=$((clean + 1)); else
        leaks_only "htree $kind:$n"
        repairs "$T/x.img" "htree $kind:$n"
        repaired=$((repaired + 1))
      fi
      intact "$T/x.img" /h/keep "$T/keep" "htree $kind:$n"
      [ "$("$EXTWB" ls "$T/x.img" /h | wc -l)" -ge "$i" ] || fail "htree $kind:$n: names were lost"
    done
  done
  pass "htree leaf split (put $i): every crash point clean ($clean) or repaired ($repaired), no name lost"
}
htree_sweep

# A put of a tree with the metadata cache cut to eight blocks (FSIO_META_CACHE):
# what no structure on the device refers to yet (new directory and extent
# blocks, inode table blocks past each group's bg_itable_unused) goes out
# while the tree is planned, before the data and the commit. A crash there
# must leave the filesystem exactly as it was (e2fsck -fn clean, nothing to
# repair), and the finished image must be the one the whole cache makes.
# A crash in the commit leaves what e2fsck -fy repairs, /dir/keep intact.
tree_sweep() {
  local base=$T/tbase.img d f n kind whole small clean=0 repaired=0
  mke2fs -q -F -t ext4 -b 4096 "$base" 64M
  head -c 300000 /dev/urandom > "$T/keep"
  "$EXTWB" put -q -p "$base" /dir/keep "$T/keep"
  for d in a b c d; do
    mkdir -p "$T/tree/$d/sub"
    for f in $(seq 1 40); do head -c $((f * 97)) /dev/urandom > "$T/tree/$d/f$f"; done
    head -c 9000 /dev/urandom > "$T/tree/$d/sub/x"
  done
  export SOURCE_DATE_EPOCH=1700000000  # the put's time, and the source's later times (atimes) become it
  cp "$base" "$T/whole.img"
  "$EXTWB" put -q "$T/whole.img" /t "$T/tree"
  cp "$base" "$T/small.img"
  FSIO_META_CACHE=32K "$EXTWB" put -q "$T/small.img" /t "$T/tree"
  # The same image but for the superblocks' s_kbytes_written (early writes
  # write some blocks twice) and their checksums.
  python3 "$SRC/tests/cli/ext_cmp_kbytes.py" "$T/whole.img" "$T/small.img" ||
    fail "tree: the image depends on the metadata cache's size"
  e2fsck -fn "$T/small.img" >"$T/fsck" 2>&1 || { cat "$T/fsck"; fail "tree: e2fsck -fn after the put"; }
  put_fails() {
    cp "$base" "$T/c.img"
    ! FSIO_FAULT=fail:$1 FSIO_META_CACHE=$2 "$EXTWB" put -q "$T/c.img" /t "$T/tree" 2>/dev/null
  }
  whole=$(count_writes put_fails 1G)
  small=$(count_writes put_fails 32K)
  [ "$small" -gt "$whole" ] || fail "tree: $small writes with an eight-block cache, $whole with the whole: none went early"
  for kind in fail tear; do
    for n in $(crash_points 1 "$small"); do
      cp "$base" "$T/x.img"
      rc=0; FSIO_FAULT=$kind:$n FSIO_META_CACHE=32K "$EXTWB" put -q "$T/x.img" /t "$T/tree" 2>/dev/null || rc=$?
      [ "$rc" -ne 0 ] || fail "tree $kind:$n: the put succeeded at a crash point within its $small writes"
      if e2fsck -fn "$T/x.img" >"$T/fsck" 2>&1; then clean=$((clean + 1)); else
        # The first (small - whole) writes are early ones, before the data.
        [ "$n" -gt $((small - whole)) ] || { cat "$T/fsck"; fail "tree $kind:$n: an early write changed the filesystem"; }
        # In the commit, a tree half linked is what e2fsck -fy repairs
        # (unattached inodes, '..' of a directory whose parent's inode is
        # not written yet); what was there before must come through whole.
        repairs "$T/x.img" "tree $kind:$n"
        repaired=$((repaired + 1))
      fi
      intact "$T/x.img" /dir/keep "$T/keep" "tree $kind:$n"
    done
  done
  unset SOURCE_DATE_EPOCH
  pass "tree put: $small writes with an eight-block metadata cache ($whole with the whole), the same image;" \
    "every crash point clean ($clean) or repaired ($repaired), the first $((small - whole)) clean, /dir/keep intact"
}
tree_sweep
