#!/usr/bin/env bash
# fatfill's options, each checked by a peer: --json is one document with the
# counts the issue asks for; --dry-run plans the same clusters and writes
# nothing; --offset finds a volume inside a partitioned image (mtools @@
# offset, fsck.fat on the partition) and leaves the partition table alone;
# SOURCE_DATE_EPOCH gives mdir's dates and byte-identical images; --force
# replaces a file and frees its old clusters; --no-zero leaves what the
# clusters held (as the man page warns); --quiet, --stats, --help; a
# progress bar on a terminal.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fatfill_lib.sh"
need fsck.fat mkfs.fat mcopy mdir mmd python3

img=$T/v.img
head -c $((48 << 20)) /dev/urandom > "$img"; mkfs.fat -F 16 -s 4 "$img" >/dev/null  # 2 KiB clusters
cp "$img" "$T/fresh.img"

# --dry-run: the plan, nothing written; then the real run allocates the same.
before=$(sha "$img")
expect_rc 0 "$FATFILL" --dry-run --json --count 3 --size 5000 --dir /a/b "$img"
[ "$(sha "$img")" = "$before" ] || fail "--dry-run wrote"
cp "$T/out" "$T/dry.json"
expect_rc 0 "$FATFILL" --dry-run --count 3 --size 5000 --dir /a/b "$img"
grep -q "^would write /a/b/FILL0002.BIN: 5000 bytes, 3 clusters from " "$T/out" || fail "--dry-run text: $(cat "$T/out")"
grep -q "^would create directory /a/b$" "$T/out" || fail "--dry-run text: $(cat "$T/out")"
expect_rc 0 "$FATFILL" --json --count 3 --size 5000 --dir /a/b "$img"
python3 - "$T/dry.json" "$T/out" <<'PY' || fail "--dry-run planned other clusters than the run used"
import json, sys
d, r = (json.load(open(p)) for p in sys.argv[1:])
assert d["dry_run"] and not r["dry_run"]
assert [f["extents"] for f in d["files"]] == [f["extents"] for f in r["files"]], (d["files"], r["files"])
assert d["free_clusters_after"] == r["free_clusters_after"]
PY
pass "--dry-run plans exactly what the run then does, and writes nothing"

# --json: one document, with what the issue asks for.
python3 - "$T/out" <<'PY' || fail "--json: $(cat "$T/out")"
import json, sys
j = json.load(open(sys.argv[1]))
for k in ("clusters_allocated", "fragments", "flushes", "bytes_zeroed", "elapsed_seconds", "files_done",
          "free_clusters_before", "free_clusters_after", "created_dirs", "geometry"):
    assert k in j, k
assert j["fat"]["copies"] == 2 and j["fat"]["sectors_per_copy"] >= 1 and j["fat"]["requests"] >= 2
for k in ("requests_submitted", "syscalls", "bytes_written", "flushes", "elapsed_seconds"):
    assert k in j["write_stats"], k
assert j["clusters_allocated"] == 3 * 3 + 2, j["clusters_allocated"]   # 5000 B in 2 KiB clusters, 2 directories
assert j["files_done"] == 3 and j["created_dirs"] == ["/a", "/a/b"]
assert j["write_stats"]["bytes_written"] >= 3 * 3 * 2048
PY
listed "$img" "$T/out" || fail "mdir after --json"
pass "--json holds clusters, fragments, FAT sectors per copy, requests, syscalls, flushes, bytes, elapsed"

# SOURCE_DATE_EPOCH (set by fatfill_lib.sh): mdir shows its date; two runs
# on copies of one image are byte-identical.
mdir -i "$img" ::/a/b | grep -q "FILL0000 BIN      5000 2023-11-14  22:13" || fail "dates: $(mdir -i "$img" ::/a/b)"
cp "$T/fresh.img" "$T/r1.img"; cp "$T/fresh.img" "$T/r2.img"
"$FATFILL" -q --count 3 --size 5000 --dir /a/b "$T/r1.img"; "$FATFILL" -q --count 3 --size 5000 --dir /a/b "$T/r2.img"
cmp -s "$T/r1.img" "$T/r2.img" || fail "SOURCE_DATE_EPOCH runs differ"
cmp -s "$T/r1.img" "$img" || fail "the --json run and a -q run differ"
expect_rc 2 env SOURCE_DATE_EPOCH=yesterday "$FATFILL" --size 1 --path /x "$T/r1.img"
before=$(sha "$T/r1.img")
sde_malformed fatfill --size 1 --path /x "$T/r1.img"
[ "$(sha "$T/r1.img")" = "$before" ] || fail "a malformed SOURCE_DATE_EPOCH changed the image"
pass "SOURCE_DATE_EPOCH: mdir shows 2023-11-14 22:13, and runs are byte-identical; malformed values refused"

# --force: the file is replaced in place, its old clusters freed.
cp "$T/fresh.img" "$T/force.img"
head -c 100000 /dev/urandom > "$T/old"; mcopy -i "$T/force.img" "$T/old" "::Old File.bin"
expect_rc 0 "$FATFILL" --dry-run --json --size 1 --path /y "$T/force.img"; free0=$(json "$T/out" 'j["free_clusters_before"]')
expect_rc 0 "$FATFILL" --json --force --path "/old file.BIN" --size 3000 "$T/force.img"
[ "$(json "$T/out" 'j["clusters_freed"]')" -eq 49 ] || fail "--force freed $(json "$T/out" 'j["clusters_freed"]') clusters, not 49"
[ "$(json "$T/out" 'j["free_clusters_after"]')" -eq $((free0 + 49 - 2)) ] || fail "--force: free count"
fsck_clean "$T/force.img" || fail "--force"
zeros_of "$T/force.img" "/Old File.bin" 3000 || fail "--force: the new file"
[ "$(mdir -b -i "$T/force.img" :: | grep -ci "old file")" -eq 1 ] || fail "--force left two entries"
pass "--force: replaced in place under its old name, 49 old clusters freed, 2 new"

# --no-zero: nothing written to the clusters; over old bytes the file shows them.
cp "$T/fresh.img" "$T/nz.img"
expect_rc 0 "$FATFILL" --json --no-zero --path /NZ.BIN --size 65536 "$T/nz.img"
[ "$(json "$T/out" 'j["bytes_zeroed"]')" -eq 0 ] || fail "--no-zero zeroed"
mcopy -n -i "$T/nz.img" ::NZ.BIN "$T/nz"
cmp -s "$T/nz" <(head -c 65536 /dev/zero) && fail "--no-zero over random bytes read back as zeros"
fsck_clean "$T/nz.img" || fail "--no-zero"
pass "--no-zero: no data written; the file holds the old random bytes, as documented"

# --offset: a volume at sector 2048 of a partitioned image.
truncate -s 64M "$T/disk.img"
if command -v sfdisk >/dev/null; then echo 'start=2048, type=c' | sfdisk -q "$T/disk.img"; fi
mkfs.fat --offset 2048 -F 16 "$T/disk.img" 40000 >/dev/null 2>&1
head -c $((2048 * 512)) "$T/disk.img" | sha256sum > "$T/mbr.sha"
expect_rc 0 "$FATFILL" --offset 2048 --count 2 --size 100K "$T/disk.img"
expect_rc 0 "$FATFILL" --offset 1M --path /X/Y.BIN --size 1 "$T/disk.img"
head -c $((2048 * 512)) "$T/disk.img" | sha256sum | cmp -s - "$T/mbr.sha" || fail "--offset wrote before the volume"
mdir -/ -b -i "$T/disk.img@@1M" :: | grep -q "::/FILL0001.BIN" || fail "--offset: $(mdir -/ -b -i "$T/disk.img@@1M" ::)"
dd if="$T/disk.img" of="$T/part.img" bs=512 skip=2048 status=none
fsck_clean "$T/part.img" || fail "--offset: the partition"
fat_copies_same "$T/disk.img" $((2048 * 512)) || fail "--offset: FAT copies"
expect_rc 1 "$FATFILL" --offset 1000 --size 1 "$T/disk.img"
grep -q "not a FAT volume" "$T/err" || fail "--offset 1000: $(cat "$T/err")"
expect_rc 2 "$FATFILL" --offset 1000000 --size 1 "$T/disk.img"
expect_rc 2 "$FATFILL" --offset 1001B --size 1 "$T/disk.img"
grep -q "not a multiple of the 512-byte sector" "$T/err" || fail "--offset 1001B: $(cat "$T/err")"
pass "--offset in sectors and in bytes: the files are in the partition, the table before it untouched"

# A live entry after a directory's 0x00 slot is a file to Linux and
# fsck.fat (Windows and mtools stop at the slot): new names go around it,
# never over it. Before, the new entry took the slots after the marker and
# fsck.fat reclaimed the hidden file's clusters.
cp "$T/fresh.img" "$T/pe.img"
head -c 30000 /dev/urandom > "$T/B.BIN"
mmd -i "$T/pe.img" ::/D
for d in / /D/; do
  mcopy -i "$T/pe.img" "$T/B.BIN" "::${d}A.BIN"; mcopy -i "$T/pe.img" "$T/B.BIN" "::${d}B.BIN"
  python3 "$SRC/tests/fatcorrupt.py" "$T/pe.img" past-end "${d}B.BIN" >/dev/null
done
fsck.fat -n "$T/pe.img" > "$T/fsck" 2>&1 || { cat "$T/fsck"; fail "fsck.fat -n rejects the entries after the end"; }
grep -q " 5 files, " "$T/fsck" || fail "fsck.fat does not count the hidden files: $(cat "$T/fsck")"
expect_rc 0 "$FATFILL" --count 3 --size 3000 --name "A rather long name %d.bin" "$T/pe.img"
expect_rc 0 "$FATFILL" --count 3 --size 3000 --dir /D --name "Another long one %d.bin" "$T/pe.img"
fsck.fat -n "$T/pe.img" > "$T/fsck" 2>&1 || { cat "$T/fsck"; fail "fsck.fat -n after fatfill beside entries after the end"; }
grep -q " 11 files, " "$T/fsck" || fail "a file after the end was overwritten: $(cat "$T/fsck")"
pass "a live entry after a 0x00 slot: fatfill's new names go around it, fsck.fat -n clean, 11 files"

# --quiet, --stats, --help.
cp "$T/fresh.img" "$T/q.img"
expect_rc 0 "$FATFILL" -q --size 1 "$T/q.img"; [ ! -s "$T/out" ] || fail "-q printed: $(cat "$T/out")"
expect_rc 0 "$FATFILL" --stats --mirror serial --count 2 --size 1 --start 5 "$T/q.img"
grep -q "FAT: 1 sectors per copy x 2 copies in 2 requests (serial)" "$T/out" || fail "--stats: $(cat "$T/out")"
grep -q "submitted after merging" "$T/out" || fail "--stats: $(cat "$T/out")"
expect_rc 0 "$FATFILL" --help; grep -q -- "--mirror" "$T/out" || fail "--help"
pass "--quiet, --stats, --help"

# Progress on a terminal (script(1) gives fatfill a pseudo-terminal). The
# bar is drawn five times a second, so the fill goes to a loop device that a
# cgroup of this test's lets write at 4 MB/s: 8 MiB take two seconds.
if ! command -v script >/dev/null; then
  skip_part "no script(1) for a pseudo-terminal"
elif [ "$(id -u)" -ne 0 ]; then
  skip_part "progress: a throttled loop device needs root"
else
  truncate -s 64M "$T/p.img"; mkfs.fat -F 16 "$T/p.img" >/dev/null
  pl=$(new_loop "$T/p.img")
  if cg=$(slow_cgroup card 4194304 "$(majmin "$pl")"); then
    RMDIRS+=("$cg")
    script -qec "sh -c '$CGROUP_JOIN' sh $cg $FATFILL --count 2 --size 4M $pl" "$T/typescript" >/dev/null
    grep -q "fatfill .*%" "$T/typescript" || fail "no progress line drawn in a two-second fill: $(cat "$T/typescript")"
    fsck.fat -n "$pl" >/dev/null || fail "fsck.fat -n after the throttled fill"
    pass "progress on a terminal"
  else
    skip_part "no cgroup write throttle (blkio or io) to make a slow device"
  fi
  loop_detach "$pl"
fi
