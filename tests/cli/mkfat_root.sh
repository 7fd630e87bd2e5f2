#!/usr/bin/env bash
# mkfat -d judged by the peers: fsck.fat -n and fatck -n find nothing, and
# mcopy -s gives back a tree diff -r finds identical to the source (long and
# non-ASCII names, empty files and directories, 24 levels of nesting, a
# directory of 5,000 entries, links followed) on FAT12, FAT16 and FAT32
# with 512-byte to 32 KiB clusters, 4 KiB sectors, a partition at --offset,
# a given size and the smallest (-C auto); mdir shows each file's time (UTC,
# SOURCE_DATE_EPOCH clamping newer ones, --tz); the same tree made in
# another order, and GNU tar's archives of it (plain, gzip, zstd, xz,
# standard input, members out of their disk order), give
# byte-identical images; --dry-run and --json say what the volume holds.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mkfat_root_lib.sh"
need fsck.fat mcopy mdir tar zstd xz gzip python3 diff
export SOURCE_DATE_EPOCH=1900000000  # 2030-03-17: only "one byte more" is newer

small_tree "$T/src"

# -C with the size left out: the smallest volume mkfs.fat's rules make for it.
expect_rc 0 "$MKFAT" -C --json -d "$T/src" "$T/auto.img"
json "$T/out" 'j["tree"]["size_auto"] and j["tree"]["image_bytes"]' > "$T/size"
[ "$(cat "$T/size")" = "$(stat -c %s "$T/auto.img")" ] || fail "--json's image_bytes is not the image's size"
[ "$(json "$T/out" 'j["tree"]["files"]')" = 26 ] || fail "files: $(json "$T/out" 'j["tree"]')"
[ "$(json "$T/out" 'j["tree"]["directories"]')" = 32 ] || fail "directories: $(json "$T/out" 'j["tree"]')"
peers_agree "$T/auto.img" "$T/src" "-C auto"
# One KiB less does not hold it: the size is the smallest.
kib=$(( $(cat "$T/size") / 1024 ))
expect_rc 1 "$MKFAT" -C -d "$T/src" "$T/less.img" $((kib - 1))
grep -q "the tree needs" "$T/err" || fail "$((kib - 1)) KiB: $(cat "$T/err")"
[ ! -e "$T/less.img" ] || fail "a refused -C left its image"
pass "-C auto: $(tr -d '\n' < "$T/size") bytes, the smallest; peers agree; one KiB less refused"

# mdir: modification times in UTC at FAT's two seconds; 1975 is 1980's
# first second; 2031-01-02 is clamped to SOURCE_DATE_EPOCH's 2030-03-17.
shows() {  # shows IMG DIR NAME WHEN
  mdir_line "$1" "$2" "$3" | grep -q "$4" || fail "$3 in $1: $(mdir_line "$1" "$2" "$3"), not $4"
}
shows "$T/auto.img" /loader/entries linux.conf "2021-07-08   9:10"
shows "$T/auto.img" / "empty file" "1980-01-01   0:00"
shows "$T/auto.img" / "one byte more" "2030-03-17  17:46"
expect_rc 0 env -u SOURCE_DATE_EPOCH "$MKFAT" -C --tz America/New_York -d "$T/src" "$T/tz.img"
shows "$T/tz.img" /loader/entries linux.conf "2021-07-08   5:10"
pass "mdir shows UTC times, 1980 for older, SOURCE_DATE_EPOCH for newer, --tz's zone"

# Types and cluster sizes, each on a given size of an image of old bytes.
for c in "-F 12 -s 1:2M" "-F 12 -s 8:8M" "-F 16 -s 2:32M" "-F 16 -s 64:200M" "-F 32 -s 1:40M" "-F 32 -s 16:600M" \
         "-F 32 -S 4096 -s 1:300M" "-F 16 -S 4096 -s 2:64M" "-F 12 -S 4096 -s 1:8M"; do
  opts=${c%:*} size=${c#*:}
  rm -f "$T/t.img"; truncate -s "$size" "$T/t.img"
  head -c 1M /dev/urandom | dd of="$T/t.img" conv=notrunc status=none
  # shellcheck disable=SC2086
  expect_rc 0 "$MKFAT" -q $opts -d "$T/src" "$T/t.img"
  peers_agree "$T/t.img" "$T/src" "$opts on $size"
done
pass "FAT12, FAT16, FAT32; 512-byte to 32 KiB clusters; 4 KiB sectors: peers agree"

# A partition at --offset of a larger image.
truncate -s 80M "$T/disk.img"
expect_rc 0 "$MKFAT" -q --offset 2048 -d "$T/src" "$T/disk.img"
peers_agree "$T/disk.img" "$T/src" "--offset 2048" $((2048 * 512))
pass "--offset 2048: the partition alone is clean and holds the tree"

# 5,000 entries in one directory (10,000 slots: an LFN and an 8.3 entry each).
mkdir "$T/wide"; wide_dir "$T/wide/many" 5000; cp -r "$T/src/EFI" "$T/wide/"
expect_rc 0 "$MKFAT" -C -F 32 -d "$T/wide" "$T/wide.img"
peers_agree "$T/wide.img" "$T/wide" "5,000 entries"
[ "$(mdir -i "$T/wide.img" ::many | grep -c 'of the wide directory.dat$')" = 5000 ] || fail "mdir does not list 5,000"
pass "a directory of 5,000 entries, every file back"

# Order: the same tree made in reverse order; GNU tar's archives of it.
python3 - "$T/src" "$T/rev" <<'EOF'
import os, shutil, sys
src, dst = sys.argv[1], sys.argv[2]
entries = []
for root, dirs, files in os.walk(src):
    entries += [os.path.join(root, n) for n in dirs + files]
os.mkdir(dst)
for p in sorted(entries, reverse=True):  # children before parents, names descending
    q = os.path.join(dst, os.path.relpath(p, src))
    os.makedirs(os.path.dirname(q), exist_ok=True)
    if os.path.islink(p): os.symlink(os.readlink(p), q)
    elif os.path.isdir(p): os.makedirs(q, exist_ok=True)
    else: shutil.copyfile(p, q)
for root, dirs, files in os.walk(src):
    for n in dirs + files:
        p = os.path.join(root, n); q = os.path.join(dst, os.path.relpath(p, src))
        st = os.lstat(p); os.utime(q, ns=(st.st_atime_ns, st.st_mtime_ns), follow_symlinks=False)
st = os.stat(src); os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns))
EOF
"$MKFAT" -q -C --invariant -d "$T/src" "$T/a.img" 16M
"$MKFAT" -q -C --invariant -d "$T/rev" "$T/b.img" 16M
want=$(sha "$T/a.img")
[ "$(sha "$T/b.img")" = "$want" ] || fail "the tree made in reverse order gives another image"
tar -C "$T/src" -cf "$T/src.tar" .
tar -C "$T/src" --sort=name -czf "$T/src.tgz" .
tar -C "$T/src" --zstd -cf "$T/src.tar.zst" .
tar -C "$T/rev" -cJf "$T/src.txz" .
for a in src.tar src.tgz src.tar.zst src.txz; do
  rm -f "$T/c.img"; "$MKFAT" -q -C --invariant -d "$T/$a" "$T/c.img" 16M
  [ "$(sha "$T/c.img")" = "$want" ] || fail "$a gives another image than the directory"
done
rm -f "$T/c.img"; zstd -dc "$T/src.tar.zst" | "$MKFAT" -q -C --invariant -d - "$T/c.img" 16M
[ "$(sha "$T/c.img")" = "$want" ] || fail "standard input gives another image than the directory"
peers_agree "$T/c.img" "$T/src" "from standard input"
pass "reverse-made tree, tar, tar.gz, tar.zst, tar.xz, standard input: one image ($want)"

# An archive whose members come out of their order on the disk (every other
# file, then the rest): 12 files of 9 MiB each straddle two 8 MiB windows,
# so the first pass leaves more windows partly filled than are held at
# once; what has arrived is written and the windows are let go, and the
# image is still the directory's.
mkdir -p "$T/big/d"
for i in $(seq 10 21); do head -c $((9 << 20)) /dev/urandom > "$T/big/d/f$i"; done
ln "$T/big/d/f10" "$T/big/hard"  # one content, two places far apart
"$MKFAT" -q -C --invariant -d "$T/big" "$T/big-dir.img" 160M
( cd "$T/big" && tar --no-recursion -cf "$T/big.tar" d hard $(printf 'd/f%s ' 11 13 15 17 19 21 12 14 16 18 20 10) )
"$MKFAT" -q -C --invariant -d "$T/big.tar" "$T/big-tar.img" 160M
cmp -s "$T/big-dir.img" "$T/big-tar.img" || fail "an archive out of disk order gives another image"
peers_agree "$T/big-tar.img" "$T/big" "an archive out of disk order"
rm -rf "$T/big" "$T/big.tar" "$T"/big-*.img
pass "an archive out of disk order (12 x 9 MiB, windows let go half-filled): the directory's image"

# --dry-run: the volume it would make, the target untouched.
cp "$T/t.img" "$T/keep.img"
expect_rc 0 "$MKFAT" --dry-run -I -d "$T/src" "$T/t.img"
grep -q "would fill it with 26 files in 32 directories" "$T/out" || fail "--dry-run: $(cat "$T/out")"
grep -q "clusters used, .* free" "$T/out" || fail "--dry-run: $(cat "$T/out")"
cmp -s "$T/t.img" "$T/keep.img" || fail "--dry-run wrote"
expect_rc 0 "$MKFAT" -C --dry-run --json -d "$T/src" "$T/never.img"
[ ! -e "$T/never.img" ] || fail "-C --dry-run created the image"
json "$T/out" '[j["geometry"]["fat_type"], j["tree"]["clusters_used"] > 0, j["tree"]["clusters_free"] >= 0]' |
  grep -q "True, True" || fail "--dry-run --json: $(cat "$T/out")"
pass "--dry-run (with and without -C) writes nothing and names what it would make"
