#!/usr/bin/env bash
# mkext4 against the real mke2fs 1.47.0, byte for byte: both make a
# filesystem on new sparse files with the same UUID, hash seed and time
# (SOURCE_DATE_EPOCH; mke2fs reads E2FSPROGS_FAKE_TIME), and every byte
# either file holds must be the other's (tests/cli/sparse_cmp.py reads the
# data regions of both, SEEK_DATA/SEEK_HOLE, and holes as zeros), dumpe2fs
# must print the same (the superblock's part above 16 GiB), and e2fsck -fn
# must find mkext4's clean.
#
# The matrix: sizes from 1 MiB to 16 TiB (16 TiB on tmpfs: ext4 cannot hold
# a 16 TiB file), 1/2/4 KiB blocks, 128/256/512-byte inodes, -N/-i/-m/-G,
# the usage types, the feature sets ext/ writes, -E and -J options, and
# existing targets (mke2fs discards them: the inode tables are marked
# zeroed; with nodiscard old bytes stay where neither writes). With
# FSIO_MKEXT4_FULL=1 every feature set is also made at every size.
. "$(dirname "$0")/lib.sh"
need mke2fs dumpe2fs e2fsck python3
MKEXT4=$BUILD/cmd/mkext4
TIME=1700000000
UUID=0b7e31c2-5d44-4c6e-9f0e-2d1a8c3b7e55
SEED=6a1f0c9e-3b2d-4e8a-b7c6-1d2e3f4a5b6c
# (Not `mke2fs -V | grep -q`: under pipefail grep's early exit can fail the pipe.)
version=$(mke2fs -V 2>&1)
case $version in *"mke2fs 1.47.0"*) ;; *) skip "mke2fs is not 1.47.0 (the version mkext4 matches): ${version%%$'\n'*}" ;; esac
DIR=$T
cases=0

# same NAME SIZE [-E OPTS] [MKE2FS-OPTIONS...]: one case, on new files (or
# on $INIT, an existing image copied for both, when set; or, with PREALLOC
# set, on files preallocated to that size with junk written in parts).
same() {
  local name=$1 size=$2; shift 2
  local e="hash_seed=$SEED"
  if [ "${1:-}" = -E ]; then e="$e,$2"; shift 2; fi
  local a=$DIR/$name.mke2fs b=$DIR/$name.mkext4
  rm -f "$a" "$b"
  if [ -n "${INIT:-}" ]; then cp --sparse=always "$INIT" "$a"; cp --sparse=always "$INIT" "$b"; fi
  if [ -n "${PREALLOC:-}" ]; then
    local f; for f in "$a" "$b"; do
      fallocate -l "$PREALLOC" "$f"
      head -c 3M "$T/junk.img" | dd of="$f" bs=1M seek=1 conv=notrunc status=none
      head -c 1M "$T/junk.img" | dd of="$f" bs=1M seek=40 conv=notrunc status=none
    done
  fi
  E2FSPROGS_FAKE_TIME=$TIME mke2fs -q -F -t ext4 -U "$UUID" -E "$e" "$@" "$a" $size > "$DIR/mke2fs.out" 2>&1 ||
    { cat "$DIR/mke2fs.out"; fail "$name: mke2fs $* failed"; }
  local force=; [ -n "${INIT:-}${PREALLOC:-}" ] && force=-F
  SOURCE_DATE_EPOCH=$TIME "$MKEXT4" -q $force -U "$UUID" -E "$e" "$@" "$b" $size > "$DIR/mkext4.out" 2>&1 ||
    { cat "$DIR/mkext4.out"; fail "$name: mkext4 $* failed"; }
  local bs; bs=$(dumpe2fs -h "$a" 2>/dev/null | awk -F: '/^Block size/ {print $2 + 0}')
  python3 "$SRC/tests/cli/sparse_cmp.py" "$a" "$b" "$bs" > "$DIR/cmp.out" ||
    { cat "$DIR/cmp.out"; fail "$name: mkext4 $* differs from mke2fs"; }
  # Equal bytes print equally; the full listing of a large one (8192 groups
  # and more) costs seconds, so those compare the superblock's part.
  local h=; [ "$(stat -c %s "$a")" -gt $((16 << 30)) ] && h=-h
  dumpe2fs $h "$a" > "$DIR/a.dump" 2>/dev/null; dumpe2fs $h "$b" > "$DIR/b.dump" 2>/dev/null
  diff -q "$DIR/a.dump" "$DIR/b.dump" > /dev/null || { diff "$DIR/a.dump" "$DIR/b.dump" | head; fail "$name: dumpe2fs differs"; }
  e2fsck -fn "$b" > "$DIR/fsck.out" 2>&1 || { cat "$DIR/fsck.out"; fail "$name: e2fsck -fn finds mkext4's image unclean"; }
  rm -f "$a" "$b"
  cases=$((cases + 1))
}

# Sizes, each its usage type and block size by default (floppy < 3 MiB,
# small < 512 MiB with 1 KiB blocks; default; big from 4 TiB), odd sizes
# whose last group is trimmed or kept, and 1 TiB's 8192 groups.
sizes=(200K 1M 2M 3M 5000K 8M 64M 100M 511M 512M 1000M 1G 1048976K 1056768K 2G 4100M 10G 1T)
[ "${FSIO_MKEXT4_FULL:-0}" = 1 ] && sizes+=(100G 4T)
for size in "${sizes[@]}"; do
  same "size-$size" "$size"
done
pass "$cases sizes from 200 KiB to ${sizes[-1]}: byte-identical, dumpe2fs equal, e2fsck clean"

n=$cases
for b in 1024 2048 4096; do
  same "b$b-64M" 64M -b "$b"
  same "b$b-1G" 1G -b "$b"
done
same b1024-8G 8G -b 1024   # a journal over several groups
same i128-64M 64M -I 128
same i128-1G 1G -I 128
same i512-1G 1G -I 512
same N16-64M 64M -N 16      # 8 inodes per group: lost+found in group 1
same N100000 1G -N 100000
same i65536 1G -i 65536
same i4096-2G 2G -i 4096
same m0 1G -m 0
same m1-5 1G -m 1.5
same G4 1G -G 4
same G64 2G -G 64
same G1 1G -G 1
for t in floppy small default big huge; do same "T$t" 1G -T "$t"; done
same Tsmall-news 1G -T small,news
pass "$((cases - n)) block sizes, inode sizes, -N, -i, -m, -G and -T: byte-identical"

n=$cases
sets=("^metadata_csum" "^64bit" "^has_journal" "^flex_bg" "metadata_csum_seed" "orphan_file" "^metadata_csum,uninit_bg"
      "sparse_super2" "^resize_inode" "^resize_inode,^sparse_super" "fast_commit" "^dir_index,^filetype,^ext_attr"
      "^huge_file,^dir_nlink,^extra_isize" "^flex_bg,^metadata_csum,uninit_bg" "orphan_file,metadata_csum_seed")
sizes=(64M 1G)
[ "${FSIO_MKEXT4_FULL:-0}" = 1 ] && sizes=(1M 3M 64M 511M 1G 10G 1T)
for size in "${sizes[@]}"; do
  for f in "${sets[@]}"; do same "O${f//[^a-z0-9_]/_}-$size" "$size" -O "$f"; done
done
same O-flex-1T 1T -O ^flex_bg          # one journal extent per group's free run
same O-orphan-10G 10G -O orphan_file     # 512 orphan blocks
same O-64bit-10G 10G -O ^64bit
pass "$((cases - n)) feature sets: byte-identical"

n=$cases
same E-root-owner 1G -E root_owner=1000:100
same E-root-owner-hi 1G -E root_owner=100000:70000
same E-stride 1G -E stride=16
same E-stride-noflex 1G -E stride=16 -O ^flex_bg
same E-stripe 1G -E stride=8,stripe_width=32
same E-resize 1G -E resize=100000000
same E-lazy0 1G -E lazy_itable_init=0
same E-lazyjournal 1G -E lazy_journal_init=1
same E-testfs 1G -E test_fs
same E-backup0 1G -E num_backup_sb=0 -O sparse_super2
same E-backup1 1G -E num_backup_sb=1 -O sparse_super2
same E-orphan-size 1G -E orphan_file_size=1M -O orphan_file
same J-size 1G -J size=64
same J-fc 1G -O fast_commit -J size=32,fast_commit_size=512
same j-small 64M -j
same L-label 1G -L my-label -M /srv/data
same L-long 1G -L a-label-longer-than-sixteen
same e-panic 1G -e panic
pass "$((cases - n)) -E, -J, -L, -M, -e options: byte-identical"

# Existing targets: mke2fs discards (punches) a file it did not create and
# then leaves the inode tables, marking them zeroed; with nodiscard the old
# bytes stay wherever neither writes.
n=$cases
head -c 64M /dev/urandom > "$T/junk.img"
INIT=$T/junk.img same old-junk ""
INIT=$T/junk.img same old-junk-nodiscard "" -E nodiscard
INIT=$T/junk.img same old-junk-nocsum "" -O ^metadata_csum
truncate -s 1G "$T/zero.img"
INIT=$T/zero.img same old-zero-1G ""
INIT=$T/zero.img same old-zero-1G-uninit "" -O ^metadata_csum,uninit_bg
# Preallocated, part written: mkext4 punches only what SEEK_DATA finds
# (mke2fs the whole file); the bytes must not tell.
PREALLOC=256M same old-prealloc-junk "" -b 4096
rm -f "$T/junk.img" "$T/zero.img"
pass "$((cases - n)) existing targets (discarded or nodiscard): byte-identical"

# 16 TiB on tmpfs: 131072 groups, above 2^32 - 1 blocks (no resize inode),
# the huge usage type. ext4 files end 4 KiB short of 16 TiB.
if [ -d /dev/shm ] && [ "$(df --output=avail -k /dev/shm | tail -1)" -gt 2000000 ]; then
  DIR=$(mktemp -d /dev/shm/fsio-mkext4.XXXXXX); RMDIRS+=("$DIR")
  same size-16T 16T
  rm -rf "${DIR:?}"/*
  DIR=$T
  pass "16 TiB on tmpfs: byte-identical"
else
  skip_part "16 TiB: no tmpfs with 2 GB free at /dev/shm"
fi
pass "$cases cases in all"
