#!/usr/bin/env bash
# mkext4 -d judged by the peers: e2fsck -fn clean with nothing to fix, and
# the kernel (a read-only loop mount) and debugfs see exactly the source:
# every file's bytes (diff -r, cmp), type, mode with setuid/setgid/sticky,
# owner, link count, atime/mtime/ctime to the nanosecond (stat), symlink
# targets fast and slow, devices, FIFOs, sockets, hard links as one inode;
# SOURCE_DATE_EPOCH clamps newer times and keeps older ones; a directory,
# the same tree made in another order, and tar archives of it (plain, gzip,
# zstd, xz, standard input) give byte-identical images, xattrs and ACLs
# included (tar --xattrs --xattrs-include='*' --acls); a tree that does not
# fit is refused before any write, with the numbers; --dry-run counts it.
. "$(dirname "$0")/lib.sh"
need mke2fs e2fsck debugfs tar zstd xz gzip python3 diff mount umount losetup
need_root
MKEXT4=$BUILD/cmd/mkext4
UUID=0b7e31c2-5d44-4c6e-9f0e-2d1a8c3b7e55
SEED=6a1f0c9e-3b2d-4e8a-b7c6-1d2e3f4a5b6c
export SOURCE_DATE_EPOCH=1900000000  # 2030-03-17
mkdir -p "$T/mnt"
IDS=(-U "$UUID" -E "hash_seed=$SEED")
# xattrs and ACLs in the tree, where the tools are there and the
# filesystem of $T takes them (mkext4_xattr tests them against the peers).
TAR_ATTRS=()
: > "$T/probe"
if command -v setfattr > /dev/null && command -v setfacl > /dev/null &&
  setfattr -n user.probe -v 1 "$T/probe" 2> /dev/null && setfacl -m u:1000:r "$T/probe" 2> /dev/null; then
  TAR_ATTRS=(--xattrs --xattrs-include='*' --acls)
else
  skip_part "xattrs and ACLs in the tree (setfattr/setfacl missing, or $T refuses them)"
fi

# tree DIR ORDER [-m]: the same tree made in two orders (forward, reverse),
# so readdir gives its names differently. With -m the old times set are
# modification times only: reading a file moves an atime set in the past,
# so two copies read a different number of times would differ in it.
tree() {
  local d=$1 order=$2 m=${3:-} i names
  mkdir -p "$d"
  names=$(seq 1 300); [ "$order" = reverse ] && names=$(seq 300 -1 1)
  mkdir -p "$d/many" "$d/deep/a/b/c/d/e" "$d/empty-dir"
  for i in $names; do printf 'small file %d\n' "$i" > "$d/many/f$i"; done
  head -c 1500000 /dev/zero | tr '\0' 'x' > "$d/deep/a/b/c/d/e/big"
  python3 -c "import os,sys; sys.stdout.buffer.write(bytes(range(256))*2000)" > "$d/bytes"
  : > "$d/empty"
  printf 'linked\n' > "$d/hard1"; ln "$d/hard1" "$d/deep/hard2"; ln "$d/hard1" "$d/many/hard3"
  ln -s many/f1 "$d/fast-link"
  ln -s "$(printf 'long/%.0s' $(seq 1 30))target" "$d/slow-link"
  mknod "$d/chr" c 4 64; mknod "$d/blk" b 259 300000; mkfifo "$d/fifo"
  python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])" "$d/sock"
  printf 'suid\n' > "$d/suid"; chmod 4755 "$d/suid"
  mkdir "$d/sticky"; chmod 1777 "$d/sticky"; mkdir "$d/sgid"; chmod 2750 "$d/sgid"
  chown 1234:5678 "$d/many/f7" "$d/sgid"; chown -h 42:43 "$d/fast-link"
  printf '%0255d' 0 > "$d/$(printf 'n%.0s' $(seq 1 255))"
  if [ ${#TAR_ATTRS[@]} -gt 0 ]; then
    setfattr -n user.mime -v application/octet-stream "$d/bytes"
    setfattr -n trusted.t -v 0x0102 "$d/empty"
    setfattr -n user.big -v "$(printf 'b%.0s' $(seq 1 400))" "$d/many/f3"  # too big for the inode
    setfattr -h -n trusted.link -v x "$d/fast-link"
    setfacl -m u:1000:rw,g:100:r "$d/hard1"
    setfacl -m u:1001:rwx -d -m u:1001:rwx,g:100:rx "$d/sticky"
  fi
  touch $m -d '2001-02-03 04:05:06.123456789' "$d/bytes" "$d/deep/a"
  touch $m -h -d '1999-12-31 23:59:59.5' "$d/fast-link"
  touch $m -d '2031-01-02 00:00:00' "$d/many/f2"   # after SOURCE_DATE_EPOCH: clamped
  # directories last: making their entries changed their times
  touch $m -d '2002-01-01 00:00:00.25' "$d/deep" "$d/empty-dir"
}
tree "$T/src" forward
tree "$T/fwd" forward -m
tree "$T/rev" reverse -m

clean() {  # clean IMG WHAT: e2fsck -fn finds nothing, -fnD nothing to optimise
  e2fsck -fn "$1" > "$T/fsck" 2>&1 || { cat "$T/fsck"; fail "$2: e2fsck -fn is not clean"; }
}

# stats DIR: per node its name, type and mode, owner, links, size (not a
# directory's: it depends on the block size), device numbers and times to
# the nanosecond.
stats() {
  (cd "$1" && find . -mindepth 1 -not -path './lost+found*' | sort | while read -r p; do
    stat -c '%n %f %u %g %h %s %t:%T %x %y %z' "$p"; done) |
    awk '$2 ~ /^4/ { $6 = "-" } { print }'
}

# sees IMG SRC WANT: e2fsck clean; the kernel's view of IMG has SRC's bytes
# and the stats in WANT (taken before mkext4 read SRC, which moved atimes),
# with times after SOURCE_DATE_EPOCH (2030-03-17 17:46:40 UTC) clamped.
sees() {
  local img=$1 src=$2 want=$3 dev
  clean "$img" "$img"
  dev=$(new_loop "$img")
  mount -o ro,noatime "$dev" "$T/mnt" || fail "the kernel does not mount $img: $(dmesg | tail -3)"
  MOUNTS+=("$T/mnt")
  # diff -r names special files of the same type on both sides (and exits 1 for them): anything else differs
  diff -r --no-dereference "$src" "$T/mnt" -x lost+found 2>&1 |
    grep -Ev "^File .* is a (fifo|socket|character special file|block special file) while file .* is a \1$" \
      > "$T/diff" && { cat "$T/diff"; fail "diff -r: $img"; }
  stats "$T/mnt" > "$T/have"
  umount "$T/mnt"; MOUNTS=()
  loop_detach "$dev"
  python3 - "$want" > "$T/want" <<'PY'
import sys, datetime
clamp = 1900000000
for line in open(sys.argv[1]):
    f = line.split()
    out = f[:7]
    for i in range(7, len(f), 3):
        d, t, z = f[i], f[i + 1], f[i + 2]
        sec, _, ns = t.partition('.')
        dt = datetime.datetime.fromisoformat(d + 'T' + sec + z[:3] + ':' + z[3:])
        if dt.timestamp() > clamp:
            dt = datetime.datetime.fromtimestamp(clamp, dt.tzinfo); ns = '000000000'
        out += [dt.strftime('%Y-%m-%d'), dt.strftime('%H:%M:%S') + '.' + ns, z]
    print(' '.join(out))
PY
  diff "$T/want" "$T/have" > "$T/sdiff" || { cat "$T/sdiff"; fail "stat differs between $src and $img"; }
}

# 1. A directory: the kernel sees exactly the source.
stats "$T/src" > "$T/src.stats"
expect_rc 0 "$MKEXT4" -q "${IDS[@]}" -d "$T/src" "$T/dir.img" 64M
sees "$T/dir.img" "$T/src" "$T/src.stats"
debugfs -R "stat /hard1" "$T/dir.img" 2>/dev/null | grep -q "Links: 3" || fail "/hard1 should have 3 links"
[ "$(debugfs -R "stat /many/hard3" "$T/dir.img" 2>/dev/null | sed -n 's/^Inode: \([0-9]*\).*/\1/p')" = \
  "$(debugfs -R "stat /hard1" "$T/dir.img" 2>/dev/null | sed -n 's/^Inode: \([0-9]*\).*/\1/p')" ] ||
  fail "hard links should be one inode"
debugfs -R "htree /many" "$T/dir.img" > /dev/null 2>&1 || fail "debugfs htree rejects /many"
debugfs -R "stat /slow-link" "$T/dir.img" 2>/dev/null | grep -q "EXTENTS" || fail "/slow-link should have a block"
debugfs -R "stat /fast-link" "$T/dir.img" 2>/dev/null | grep -q "Fast link dest: \"many/f1\"" ||
  fail "/fast-link should be fast"
# 123456789 ns << 2 (the _extra word's low two bits are the epoch) = 0x1d6f3454
sec=$(printf '%08x' "$(date -d '2001-02-03 04:05:06' +%s)")
debugfs -R "stat /deep/a" "$T/dir.img" 2>/dev/null | grep -q "mtime: 0x$sec:1d6f3454" ||
  fail "/deep/a: mtime with nanoseconds: $(debugfs -R 'stat /deep/a' "$T/dir.img" 2>/dev/null | grep mtime)"
mkdir -p "$T/rdump"; debugfs -R "rdump /deep $T/rdump" "$T/dir.img" > /dev/null 2>&1
cmp "$T/rdump/deep/a/b/c/d/e/big" "$T/src/deep/a/b/c/d/e/big" || fail "debugfs rdump reads big differently"
pass "a tree of every kind: e2fsck clean; the kernel and debugfs see its bytes, modes, owners, links, times"

# 2. The same tree made in the reverse order, and tar archives of it, give
# the same image byte for byte (its old times are mtimes, and the times no one can set
# are clamped). SOURCE_DATE_EPOCH before the copies were made
# clamps the times no one can set (ctime, the creation time, atimes the
# reads moved) and keeps the older ones touch set.
export SOURCE_DATE_EPOCH=1700000000  # 2023-11-14
rm "$T/fwd/sock" "$T/rev/sock"       # tar keeps no sockets
expect_rc 0 "$MKEXT4" -q "${IDS[@]}" -d "$T/fwd" "$T/ref.img" 64M
expect_rc 0 "$MKEXT4" -q "${IDS[@]}" -d "$T/rev" "$T/rev.img" 64M
cmp "$T/ref.img" "$T/rev.img" || fail "the tree made in another order gives another image"
tar --format=posix "${TAR_ATTRS[@]}" -C "$T/fwd" -cf "$T/src.tar" .
tar --format=posix "${TAR_ATTRS[@]}" -C "$T/rev" -cf "$T/rev.tar" .   # members in the reverse order's readdir
for c in "" gzip zstd xz; do
  tarf=$T/rev.tar
  if [ -n "$c" ]; then $c -c < "$T/rev.tar" > "$T/rev.tar.$c"; tarf=$T/rev.tar.$c; fi
  expect_rc 0 "$MKEXT4" -q "${IDS[@]}" -d "$tarf" "$T/tar.img" 64M
  cmp "$T/ref.img" "$T/tar.img" || fail "the ${c:-plain} tar gives another image than the directory"
  rm -f "$T/tar.img"
done
expect_rc 0 sh -c "'$MKEXT4' -q -U $UUID -E hash_seed=$SEED -d - '$T/stdin.img' 64M < '$T/src.tar'"
cmp "$T/ref.img" "$T/stdin.img" || fail "the tar on standard input gives another image"
pass "a directory, one made in another order, and its tar (plain, gzip, zstd, xz, stdin): one image"

# 2b. A metadata cache of 8 KiB (FSIO_META_CACHE) makes mkext4 -d write its
# metadata out early, again and again: the same image but for what the
# superblocks count of bytes written (s_kbytes_written, 0x178, and so their
# checksum, 0x3FC), in every copy dumpe2fs lists (ext_cmp_kbytes.py).
expect_rc 0 env FSIO_META_CACHE=8K "$MKEXT4" -q "${IDS[@]}" -d "$T/fwd" "$T/spill.img" 64M
clean "$T/spill.img" "with an 8 KiB metadata cache"
python3 "$SRC/tests/cli/ext_cmp_kbytes.py" "$T/ref.img" "$T/spill.img" ||
  fail "an 8 KiB metadata cache changes the image beyond the bytes-written count"
pass "with an 8 KiB metadata cache (early writes): the same image but for the bytes-written count"

# 2c. Data batches of 64 KiB (FSIO_DATA_BATCH) are fewer bytes than the
# tree's data (1.5 MB in big alone), so two threads read the directory, each
# its own runs of files into 16 KiB arenas, the queue writing whichever comes
# first: the same image, byte for byte (the tar above was read by one).
expect_rc 0 env FSIO_DATA_BATCH=64K "$MKEXT4" -q "${IDS[@]}" -d "$T/fwd" "$T/two.img" 64M
cmp "$T/ref.img" "$T/two.img" || fail "two reading threads give another image"
pass "read by two threads in 64 KiB batches: the same image"
export SOURCE_DATE_EPOCH=1900000000

# 3. Older times are kept, newer ones clamped (checked by sees); without
# SOURCE_DATE_EPOCH the newer time is kept too.
expect_rc 0 env -u SOURCE_DATE_EPOCH "$MKEXT4" -q -d "$T/src" "$T/now.img" 64M
clean "$T/now.img" "without SOURCE_DATE_EPOCH"
debugfs -R "stat /many/f2" "$T/now.img" 2>/dev/null | grep -q "mtime: .*2031" || fail "/many/f2 should keep 2031"
pass "SOURCE_DATE_EPOCH clamps newer times only"

# 4. A tree that does not fit: refused before any write, with the numbers;
# the target is unchanged, and a file mkext4 would create is not left.
mkdir -p "$T/fat"; head -c 3000000 /dev/urandom > "$T/fat/blob"
truncate -s 2M "$T/small.img"; head -c 2M /dev/urandom | dd of="$T/small.img" conv=notrunc status=none
before=$(sha "$T/small.img")
expect_rc 1 "$MKEXT4" -q -F -d "$T/fat" "$T/small.img"
grep -q "the tree takes at least .* blocks of 1024 bytes and 1 inode; the new filesystem has" "$T/err" ||
  fail "no numbers: $(cat "$T/err")"
[ "$(sha "$T/small.img")" = "$before" ] || fail "a refused tree changed the target"
expect_rc 1 "$MKEXT4" -q -C -d "$T/fat" "$T/created.img" 2M
[ ! -e "$T/created.img" ] || fail "a refused -C left its image"
pass "a tree that does not fit is refused before any write, with the numbers; the target unchanged"

# 5. --dry-run counts the tree and writes nothing.
truncate -s 16M "$T/dry.img"; head -c 1M /dev/urandom | dd of="$T/dry.img" conv=notrunc status=none
before=$(sha "$T/dry.img")
expect_rc 0 "$MKEXT4" -F --dry-run -d "$T/src" "$T/dry.img"
grep -q "would fill it from $T/src with 308 files, 10 directories, 2 symbolic links, 4 devices, FIFOs or sockets" \
  "$T/out" || fail "--dry-run: $(cat "$T/out")"
[ "$(sha "$T/dry.img")" = "$before" ] || fail "--dry-run wrote"
expect_rc 0 "$MKEXT4" -F --dry-run --json -d "$T/src" "$T/dry.img"
[ "$(json "$T/out" '(j["tree"]["files"], j["tree"]["hard_links"], j["tree"]["specials"])')" = "(308, 2, 4)" ] ||
  fail "--json tree: $(json "$T/out" 'j["tree"]')"
pass "--dry-run and --json count the tree and write nothing"
