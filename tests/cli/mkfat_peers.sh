#!/usr/bin/env bash
# Images mkfat makes are judged by the real peers: fsck.fat -n exits 0, mtools
# reads them and round-trips a file byte for byte, blkid reports the type,
# FAT version, label and the volume id we set.
. "$(dirname "$0")/lib.sh"
need fsck.fat minfo mcopy mdir blkid python3

head -c 300000 /dev/urandom > "$T/payload"
check() {  # check NAME FATBITS SIZE MKFAT-ARGS...
  local name=$1 bits=$2 size=$3; shift 3
  local img=$T/$name.img
  rm -f "$img"; truncate -s "$size" "$img"
  expect_rc 0 "$MKFAT" -n "${name^^}" -i 2a3b4c5d "$@" "$img"
  expect_rc 0 fsck.fat -n "$img"
  expect_rc 0 minfo -i "$img" ::
  grep -q "disk type=\"FAT$bits" "$T/out" || { cat "$T/out"; fail "$name: minfo does not say FAT$bits"; }
  expect_rc 0 mcopy -i "$img" "$T/payload" ::PAYLOAD.BIN
  expect_rc 0 mcopy -i "$img" ::PAYLOAD.BIN "$T/back"
  cmp "$T/payload" "$T/back" || fail "$name: file changed on the round trip"
  rm -f "$T/back"
  expect_rc 0 mdir -i "$img" ::
  grep -q PAYLOAD "$T/out" || fail "$name: mdir does not list the file"
  expect_rc 0 fsck.fat -n "$img"     # still clean after mtools wrote into it
  local out; out=$(blkid -p -o export "$img")
  grep -qx 'TYPE=vfat' <<<"$out" || fail "$name: blkid: $out"
  grep -qx "VERSION=FAT$bits" <<<"$out" || fail "$name: blkid version: $out"
  grep -qx "LABEL=${name^^}" <<<"$out" || fail "$name: blkid label: $out"
  grep -qx 'UUID=2A3B-4C5D' <<<"$out" || fail "$name: blkid uuid: $out"
  pass "$name: fsck.fat, mtools and blkid agree (FAT$bits)"
}
check fat12 12 1440K
check fat16 16 64M
check fat32 32 600M
check small32 32 40M -F 32 -s 1
check f16big 16 2G -F 16
check onefat 16 100M -f 1
check sect4k 32 1G -S 4096

# --discard punches the old contents out of an image: a card image full of
# old data becomes sparse, and is still a clean FAT volume.
rm -f "$T/d.img"; head -c 64M /dev/urandom > "$T/d.img"
before=$(stat -c %b "$T/d.img")
expect_rc 0 "$MKFAT" --discard "$T/d.img"
after=$(stat -c %b "$T/d.img")
[ "$after" -lt $((before / 8)) ] || fail "--discard left $after of $before blocks allocated"
expect_rc 0 fsck.fat -n "$T/d.img"
pass "--discard: $before -> $after 512-byte blocks allocated, fsck.fat clean"
