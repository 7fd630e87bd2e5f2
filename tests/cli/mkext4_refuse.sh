#!/usr/bin/env bash
# mkext4 refuses to destroy data and says why: an existing filesystem or
# partition table needs -F; a mounted or read-only target is refused
# whatever the options; bad options and what mkext4 does not make are
# named; -n and --dry-run write nothing. Every refusal leaves the target
# byte-identical (sha256 before and after), and a sparse target unwritten.
# Ctrl-C exits 130 and leaves no filesystem; -C removes what it created.
. "$(dirname "$0")/lib.sh"
need mke2fs mkfs.fat sfdisk blkid e2fsck sha256sum
MKEXT4=$BUILD/cmd/mkext4

unchanged() {  # unchanged IMG SHA WHAT
  [ "$(sha "$1")" = "$2" ] || fail "$3: the target was modified"
}
still_sparse() {  # still_sparse IMG WHAT: nobody wrote to a new sparse image
  [ "$(stat -c %b "$1")" -eq 0 ] || fail "$2: the target was written to"
}

# Existing filesystems and partition tables: refused and named, untouched.
truncate -s 64M "$T/ext.img"; mke2fs -q -F -t ext4 "$T/ext.img"
truncate -s 64M "$T/fat.img"; mkfs.fat -F 16 "$T/fat.img" > /dev/null
truncate -s 64M "$T/pt.img"; echo 'start=2048, type=83' | sfdisk -q "$T/pt.img"
for img in ext fat pt; do
  before=$(sha "$T/$img.img")
  expect_rc 1 "$MKEXT4" "$T/$img.img"
  grep -Eq "ext4|vfat|dos" "$T/err" || fail "$img: the refusal does not name what is there: $(cat "$T/err")"
  grep -q -- "--force" "$T/err" || fail "$img: the refusal does not say how to override it"
  unchanged "$T/$img.img" "$before" "$img refusal"
  expect_rc 0 "$MKEXT4" -n "$T/$img.img"
  expect_rc 0 "$MKEXT4" -F --dry-run --json "$T/$img.img"
  unchanged "$T/$img.img" "$before" "$img -n / --dry-run"
done
pass "an ext4, a FAT and a partition table are refused without -F, named; -n and --dry-run write nothing"
expect_rc 0 "$MKEXT4" -q -F "$T/ext.img"
expect_rc 0 e2fsck -fn "$T/ext.img"
blkid -p "$T/fat.img" | grep -q vfat && expect_rc 0 "$MKEXT4" -q -F "$T/fat.img"
blkid -p -o export "$T/fat.img" | grep -qx TYPE=ext4 || fail "-F over FAT: $(blkid -p "$T/fat.img")"
pass "-F makes it over an ext4 and a FAT (blkid sees only ext4)"

# Bad options: usage errors (exit 2) naming the option; nothing written.
truncate -s 1G "$T/big.img"
for bad in "-b 3000" "-b 128K" "-G 3" "-G 0" "-N 5000000000" "-i 512" "-I 100" "-I 384" "-m 60" "-m x" \
           "-O nonsense" "-O ^needs_recovery" "-E bogus" "-E hash_seed=xyz" "-E root_owner=1" "-E num_backup_sb=3" \
           "-J size=abc" "-J bogus" "-U not-a-uuid" "-e sometimes" "--offset 12Q" "-C"; do
  # shellcheck disable=SC2086
  expect_rc 2 "$MKEXT4" $bad "$T/big.img"
  opt=${bad%% *}
  grep -q -- "$opt" "$T/err" || fail "'$bad': the message does not name $opt: $(cat "$T/err")"
  still_sparse "$T/big.img" "$bad"
done
expect_rc 2 "$MKEXT4" "$T/big.img" 1Q
expect_rc 2 "$MKEXT4" -N 100000000 "$T/big.img"   # inode tables larger than the groups
grep -q "inodes" "$T/err" || fail "too many inodes not said: $(cat "$T/err")"
truncate -s 100K "$T/tiny.img"
expect_rc 2 "$MKEXT4" "$T/tiny.img"
grep -q "too small" "$T/err" || fail "a 100 KiB target: $(cat "$T/err")"
still_sparse "$T/big.img" "usage errors"
pass "bad options and sizes: exit 2 naming the option or the limit; nothing written"

# What mkext4 does not make: named, exit 1, nothing written.
for bad in "-t ext3" "-t ext2" "-O bigalloc" "-O quota" "-O inline_data" "-O encrypt,casefold" "-O meta_bg,^resize_inode" \
           "-O mmp" "-O project" "-O ^extent,^64bit" "-J device=/dev/null" "-E packed_meta_blocks=1" "-U time"; do
  # shellcheck disable=SC2086
  expect_rc 1 "$MKEXT4" $bad "$T/big.img"
  want=$(sed -E 's/^-[a-zA-Z] //; s/^\^//; s/[=,].*//' <<<"$bad")
  grep -q -- "$want" "$T/err" || fail "'$bad': '$want' not named: $(cat "$T/err")"
  still_sparse "$T/big.img" "$bad"
done
pass "ext2, ext3 and the features ext/ cannot write are refused by name"

# -C: never replaces a file, never follows a symlink; without -C a
# missing target needs a SIZE; nothing is left behind.
echo keep > "$T/exists"
expect_rc 1 "$MKEXT4" -C "$T/exists" 64M
grep -q "exists" "$T/err" || fail "-C over a file: $(cat "$T/err")"
[ "$(cat "$T/exists")" = keep ] || fail "-C changed an existing file"
ln -s "$T/nowhere" "$T/link"
expect_rc 1 "$MKEXT4" -C "$T/link" 64M
[ ! -e "$T/nowhere" ] || fail "-C followed a symlink"
expect_rc 2 "$MKEXT4" "$T/missing.img"
[ ! -e "$T/missing.img" ] || fail "a missing target without SIZE was created"
expect_rc 0 "$MKEXT4" -q -C "$T/made.img" 64M
expect_rc 0 e2fsck -fn "$T/made.img"
expect_rc 0 "$MKEXT4" -q "$T/made2.img" 1G
[ "$(stat -c %s "$T/made2.img")" -eq $((1 << 30)) ] || fail "SIZE with a missing target: wrong length"
pass "-C and SIZE create new files; -C never replaces a file or follows a symlink"

# Mounted (through a loop device; read-only, so the kernel itself writes
# nothing to compare against): refused with -F, the image unchanged.
truncate -s 64M "$T/m.img"; mke2fs -q -F -t ext4 "$T/m.img"
dev=$(new_loop "$T/m.img"); mkdir "$T/mnt"
mount -o ro "$dev" "$T/mnt" || fail "mount failed"
MOUNTS+=("$T/mnt")
before=$(sha "$T/m.img")
expect_rc 1 "$MKEXT4" -F "$dev"; grep -qi mount "$T/err" || fail "the loop device: not named as mounted: $(cat "$T/err")"
expect_rc 1 "$MKEXT4" -F "$T/m.img"; grep -qi mount "$T/err" || fail "the backing file: not seen as mounted: $(cat "$T/err")"
expect_rc 1 "$MKEXT4" -F --dry-run "$T/m.img"; grep -qi mount "$T/err" || fail "--dry-run: $(cat "$T/err")"
umount "$T/mnt"; MOUNTS=()
loop_detach "$dev"
unchanged "$T/m.img" "$before" "mounted refusal"
pass "a mounted filesystem is refused through its loop device and its file, -F or not"

# Read-only: losetup -r, a file without write permission; -F or not.
ro=$(loop_setup -r "$T/m.img")
expect_rc 1 "$MKEXT4" -F "$ro"; grep -qi "read-only" "$T/err" || fail "losetup -r: $(cat "$T/err")"
loop_detach "$ro"
chmod 444 "$T/m.img"
expect_rc 1 "$MKEXT4" -F "$T/m.img"; grep -qi "read-only" "$T/err" || fail "mode 0444: $(cat "$T/err")"
chmod 644 "$T/m.img"
unchanged "$T/m.img" "$before" "read-only refusal"
pass "read-only targets refused, -F or not"

# A size beyond a block device is refused; --offset places it in an image.
truncate -s 64M "$T/d.img"
d=$(new_loop "$T/d.img")
expect_rc 2 "$MKEXT4" -F "$d" 128M
grep -q "larger than" "$T/err" || fail "SIZE beyond the device: $(cat "$T/err")"
loop_detach "$d"
truncate -s 80M "$T/part.img"; echo 'start=32768, type=83' | sfdisk -q "$T/part.img"
expect_rc 0 "$MKEXT4" -q --offset 16MiB "$T/part.img" 64M
sfdisk -d "$T/part.img" | grep -q "start=       32768" || fail "--offset wrote over the partition table"
part=$(loop_setup -o $((16 << 20)) --sizelimit $((64 << 20)) "$T/part.img")
expect_rc 0 e2fsck -fn "$part"
loop_detach "$part"
pass "--offset makes it inside a partition of an image, the table kept"

# Ctrl-C, on targets a cgroup of this test's makes slow: a loop device
# written at 4 MB/s (a card's speed: the journal's zeroing takes seconds)
# and, for -C, the disk under $T at 64 KB/s. Exit 130, said; no
# filesystem left, or no file; a rerun finishes.
truncate -s 1G "$T/sd.img"; mke2fs -q -F -t ext4 "$T/sd.img"
sd=$(loop_setup --direct-io=on "$T/sd.img")
if cg=$(slow_cgroup card 4194304 "$(majmin "$sd")"); then
  RMDIRS+=("$cg")
  sh -c "$CGROUP_JOIN" sh "$cg" "$MKEXT4" -q -F -E nodiscard "$sd" 2>"$T/err" & pid=$!
  interrupt "$pid" 1.5 20 "mkext4 on a device throttled to 4 MB/s"
  [ "$RC" -eq 130 ] || { cat "$T/err"; fail "Ctrl-C: exit $RC, expected 130"; }
  grep -q "old superblock was erased" "$T/err" || fail "the message hides the state: $(cat "$T/err")"
  said=$(cat "$T/err")
  blkid -p "$sd" >/dev/null 2>&1 && fail "an interrupted format left a filesystem: $(blkid -p "$sd")"
  expect_rc 0 "$MKEXT4" -q -F "$sd"
  expect_rc 0 e2fsck -fn "$sd"
  pass "Ctrl-C mid-format exits 130 ($said); no filesystem left; a rerun finishes"
else
  skip_part "no cgroup write throttle (blkio or io) to make a slow device"
fi
loop_detach "$sd"
host=$(findmnt -no MAJ:MIN -T "$T" | head -1 | tr -d ' ')
if [ -n "$host" ] && cg=$(slow_cgroup disk 65536 "$host"); then
  RMDIRS+=("$cg")
  sh -c "$CGROUP_JOIN" sh "$cg" "$MKEXT4" -q -C "$T/new.img" 1G 2>"$T/err" & pid=$!
  interrupt "$pid" 1.5 30 "mkext4 -C writing at 64 KB/s"
  [ "$RC" -eq 130 ] || { cat "$T/err"; fail "Ctrl-C during -C: exit $RC"; }
  grep -q "removed" "$T/err" || fail "-C: $(cat "$T/err")"
  [ ! -e "$T/new.img" ] || fail "Ctrl-C during -C left the file behind"
  pass "Ctrl-C during -C: the file is removed ($(cat "$T/err"))"
else
  skip_part "no cgroup write throttle for the disk under $T"
fi

# libarchive is opened only when a tar is read: without it (hidden by a bind
# mount in a private mount namespace) a tar is refused naming the library,
# before the target is created, and a directory still goes in.
lib=$(python3 -c 'import ctypes.util; print(ctypes.util.find_library("archive") or "")')
real=$(for d in /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib; do
  [ -e "$d/$lib" ] && readlink -f "$d/$lib" && break; done)
if [ "$(id -u)" -eq 0 ] && [ -n "$real" ] && command -v unshare >/dev/null && unshare -m true 2>/dev/null; then
  mkdir -p "$T/la/d" && echo a > "$T/la/d/a" && tar -cf "$T/la/t.tar" -C "$T/la/d" .
  unshare -m bash -c "mount --bind /dev/null '$real' &&
    { '$MKEXT4' -q -d '$T/la/t.tar' '$T/la/t.img' 8M 2>'$T/la/err'; echo \$? > '$T/la/rc';
      '$MKEXT4' -q -d '$T/la/d' '$T/la/d.img' 8M; echo \$? > '$T/la/drc'; }"
  [ "$(cat "$T/la/rc")" = 1 ] || fail "a tar without libarchive: exit $(cat "$T/la/rc"), not 1"
  grep -q "needs libarchive (libarchive.so.13)" "$T/la/err" || fail "a tar without libarchive: $(cat "$T/la/err")"
  [ ! -e "$T/la/t.img" ] || fail "a tar without libarchive left $T/la/t.img behind"
  [ "$(cat "$T/la/drc")" = 0 ] || fail "a directory without libarchive: exit $(cat "$T/la/drc")"
  e2fsck -fn "$T/la/d.img" >/dev/null 2>&1 || fail "e2fsck -fn rejects the image of the directory"
  pass "without libarchive: a tar refused naming it, nothing created; a directory still goes in"
else
  skip_part "hiding libarchive needs root and unshare -m"
fi
