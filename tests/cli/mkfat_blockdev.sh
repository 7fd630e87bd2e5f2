#!/usr/bin/env bash
# mkfat on loop devices with 512 and 4096-byte logical sectors, including an
# odd-sized backing file: same geometry as mkfs.fat on the same device, clean
# under fsck.fat, readable by mtools; and few large writes (strace counts).
. "$(dirname "$0")/lib.sh"
need_root; need mkfs.fat fsck.fat python3 minfo
for ss in 512 4096; do
  rm -f "$T/a.img" "$T/b.img"
  truncate -s $((300 * 1024 * 1024 + 4096 * 3 + 512)) "$T/a.img"; cp --sparse=always "$T/a.img" "$T/b.img"
  a=$(new_loop "$T/a.img" "$ss"); b=$(new_loop "$T/b.img" "$ss")
  mkfs.fat --invariant "$a" >/dev/null
  expect_rc 0 "$MKFAT" --invariant --json "$b"
  sync
  fa=$(python3 "$SRC/tests/cli/fatinfo.py" "$a"); fb=$(python3 "$SRC/tests/cli/fatinfo.py" "$b")
  [ "$fa" = "$fb" ] || { echo "mkfs.fat: $fa"; echo "mkfat:    $fb"; fail "geometry differs on a $ss-byte-sector loop"; }
  expect_rc 0 fsck.fat -n "$b"
  expect_rc 0 minfo -i "$b" ::
  pass "$ss-byte sectors: same geometry as mkfs.fat, fsck.fat clean"
done
if command -v strace >/dev/null; then
  rm -f "$T/s.img"; truncate -s 1G "$T/s.img"
  strace -f -c -o "$T/strace" "$MKFAT" -F 32 -s 1 "$T/s.img" >/dev/null
  writes=$(awk '$NF ~ /^(pwrite64|pwritev|pwritev2|write|io_uring_enter)$/ {n += $4} END {print n+0}' "$T/strace")
  [ "$writes" -lt 200 ] || { cat "$T/strace"; fail "$writes write syscalls for a 1 GiB -s 1 format"; }
  expect_rc 0 fsck.fat -n "$T/s.img"
  pass "1 GiB FAT32 -s 1 formatted with $writes write/submit syscalls"
else
  skip_part "strace missing"
fi
