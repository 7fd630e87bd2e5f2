#!/usr/bin/env bash
# fatfill judged by the peers on FAT12, FAT16 and FAT32 with 512-byte to
# 32 KiB clusters, on images made by mkfs.fat and by mkfat over random
# bytes, whose free space mtools fragmented (files written, every other one
# deleted). Each case fills the big free run with one file, then puts files
# that cannot be contiguous into the holes, in a new nested directory with
# long names. After every run: fsck.fat -n reports nothing, fatck -n exits
# 0 (clean), every FAT copy is byte-identical, mdir lists the new files at
# their sizes, the files mtools wrote read back byte for byte, and the new
# files read back as zeros where the holes held random bytes. The same runs with --mirror serial give
# a byte-identical image. --contiguous refuses the fragmented request and
# leaves the image unchanged.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fatfill_lib.sh"
need fsck.fat mkfs.fat mcopy mdel mdir python3 cmp

cb_of() { python3 "$SRC/tests/cli/fatinfo.py" "$1" | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["bytes_per_sector"]*j["sectors_per_cluster"])'; }

# check IMG JSON DIR WHAT: everything the peers can say after one run.
check() {
  local img=$1 js=$2 dir=$3 what=$4
  fsck_clean "$img" || fail "$what: fsck.fat -n is not silent"
  "$BUILD/cmd/fatck" -n "$img" > "$T/fatck.out" 2>&1 || { cat "$T/fatck.out"; fail "$what: fatck -n is not clean"; }
  fat_copies_same "$img" || fail "$what: FAT copies differ"
  listed "$img" "$js" || fail "$what: mdir"
  kept_intact "$img" "$dir" || fail "$what: a file mtools wrote changed"
}

# run_case MAKER FAT SPC SIZE: one image, three fatfill runs, then serial.
run_case() {
  local maker=$1 fat=$2 spc=$3 size=$4
  local name="$maker-fat$fat-$((spc * 512))"
  local dir=$T/$name img=$T/$name.img
  mkdir -p "$dir"
  if [ "${size%M}" -le 64 ]; then head -c "$((${size%M} << 20))" /dev/urandom > "$img"; else truncate -s "$size" "$img"; fi
  if [ "$maker" = mkfs.fat ]; then mkfs.fat -F "$fat" -s "$spc" "$img" >/dev/null
  else "$MKFAT" -q -F "$fat" -s "$spc" "$img"; fi
  local cb; cb=$(cb_of "$img")
  [ "$cb" -eq $((spc * 512)) ] || fail "$name: $cb-byte clusters"
  fragment "$img" "$dir" 31
  cp --sparse=always "$img" "$dir/serial.img"
  local sync=""; [ $((spc % 2)) -eq 0 ] && sync=--sync

  # 1. the big run: a file as large as the free space minus the holes.
  local holes=0 f free
  for f in "$dir"/gone/*; do holes=$((holes + ($(stat -c %s "$f") + cb - 1) / cb)); done
  expect_rc 0 "$FATFILL" --dry-run --json --path /x "$img" --size 1
  free=$(json "$T/out" 'j["free_clusters_before"]')
  local big=$(( (free - holes) * cb ))
  [ "$big" -gt 4294967295 ] && big=4294967295
  local runs=("--path /BIG.BIN --size $big --no-zero"
              "--dir /deep/er --name Recording-%03d.dat --count 4 --size $((5 * cb - 1))"
              "--dir /deep/er --name x%d --start 7 --count 3 --size 1")
  local i=0 r
  for r in "${runs[@]}"; do
    i=$((i + 1))
    # shellcheck disable=SC2086
    expect_rc 0 "$FATFILL" --json $sync $r "$img"
    cp "$T/out" "$dir/run$i.json"
    check "$img" "$dir/run$i.json" "$dir" "$name run $i ($r)"
    # shellcheck disable=SC2086
    expect_rc 0 "$FATFILL" -q $sync --mirror serial $r "$dir/serial.img"
    [ "$i" -eq 1 ] || continue
    # --contiguous, now that only holes of 1 and 3 clusters are left: a
    # request for 4 is refused whole, and the image is unchanged.
    local before; before=$(sha "$img")
    expect_rc 1 "$FATFILL" --contiguous --count 2 --size $((3 * cb + 1)) --dir /c "$img"
    grep -q "in one piece, but the longest free run is 3 clusters" "$T/err" || fail "$name --contiguous: $(cat "$T/err")"
    [ "$(sha "$img")" = "$before" ] || fail "$name: --contiguous changed the image"
  done
  # The files in the holes are fragmented, and read back as zeros where
  # mtools' random bytes were.
  local frags; frags=$(json "$dir/run2.json" 'sum(f["fragments"] for f in j["files"])')
  [ "$frags" -gt 4 ] || fail "$name: 4 files of 5 clusters in holes of 1 and 3 made only $frags fragments"
  for f in $(json "$dir/run2.json" '" ".join(f["path"] for f in j["files"])'); do
    zeros_of "$img" "$f" $((5 * cb - 1)) || fail "$name: $f"
  done
  cmp -s "$img" "$dir/serial.img" || fail "$name: --mirror serial wrote a different image"

  pass "$name: big run, $frags fragments in holes, names, zeros, serial = batched ($(json "$dir/run2.json" 'j["fat"]["sectors_per_copy"]') FAT sectors per copy)"
  rm -rf "$dir" "$img"
}

run_case mkfs.fat 12 1 2M
run_case mkfat 12 8 12M
run_case mkfat 16 1 16M
run_case mkfs.fat 16 4 48M
run_case mkfat 16 64 200M
run_case mkfs.fat 32 1 40M
run_case mkfat 32 8 300M
run_case mkfs.fat 32 64 2200M
