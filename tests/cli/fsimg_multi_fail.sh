#!/usr/bin/env bash
# fsimg restore to several targets when something goes wrong: one target
# failing at its 5th write (FSIO_FAULT aimed at it with FSIO_FAULT_PATH) is
# dropped and named while the other three are written and verified; a byte
# changed on one target between the writes and the read-back is caught and
# named by its offset; a range whose SHA-256 does not match its bmap is
# refused before any of it is written, and a bmap changed after bmaptool
# made it before anything is; mixed targets (one mounted, one read-only,
# one too small) are all refused by name and none of the four is written;
# targets sharing storage with each other or with the input are refused;
# --dry-run writes nothing; Ctrl-C on slow targets exits 130 and leaves
# no filesystem on any, and a rerun restores them.
. "$(dirname "$0")/lib.sh"
need mke2fs e2fsck mkfs.fat mcopy bmaptool blkid python3
need_root
FSIMG=$BUILD/cmd/fsimg

mkdir -p "$T/tree"
head -c 3000000 /dev/urandom > "$T/tree/a.bin"
seq 1 30000 > "$T/tree/b.txt"
mke2fs -q -F -t ext4 -d "$T/tree" "$T/src.img" 16M
size=$(stat -c %s "$T/src.img")
head -c 20M /dev/urandom > "$T/old.img"
loops=()
for i in 1 2 3 4; do
  cp "$T/old.img" "$T/t$i.img"
  loops+=("$(new_loop "$T/t$i.img")")
done
shas() { for l in "$@"; do sha "$l"; done; }

# One target fails at its 5th write; the others go on and verify.
expect_rc 1 env FSIO_FAULT=fail:5 FSIO_FAULT_PATH="${loops[1]}" "$FSIMG" restore --json --verify "$T/src.img" "${loops[@]}"
grep -q "note: FSIO_FAULT_PATH=${loops[1]} is set: FSIO_FAULT applies only to ${loops[1]}" "$T/err" ||
  { cat "$T/err"; fail "FSIO_FAULT_PATH not announced"; }
json "$T/out" "[(t['target'], t['written'], t['verified']) for t in j['targets']]" > "$T/states"
want="[('${loops[0]}', True, True), ('${loops[1]}', False, False), ('${loops[2]}', True, True), "
want+="('${loops[3]}', True, True)]"
[ "$(cat "$T/states")" = "$want" ] ||
  { cat "$T/out"; fail "fault on one target: $(cat "$T/states")"; }
json "$T/out" "j['targets'][1]['error']" | grep -q "Input/output error" || { cat "$T/out"; fail "the failed write's error not named"; }
json "$T/out" "j['targets'][1]['holds']" | grep -q "nothing was written past byte [0-9]* of $size.*holds no filesystem" ||
  { cat "$T/out"; fail "what the failed target holds is not said"; }
grep -q "1 of 4 targets failed or did not verify" "$T/err" || { cat "$T/err"; fail "the failure count is not said"; }
for i in 0 2 3; do cmp -n "$size" "$T/src.img" "${loops[$i]}" || fail "fault on another target: ${loops[$i]} differs"; done
blkid -p "${loops[1]}" > /dev/null 2>&1 && fail "the failed target holds a filesystem signature"
pass "one target failing at its 5th write is dropped and named; the other three written and verified"

# A byte changed on one target after the writes, before the read-back
# (FSIMG_PAUSE_BEFORE_VERIFY holds fsimg there until the file is gone).
off=$(python3 - "$T/src.img" <<'PY'
import sys
d = open(sys.argv[1], 'rb').read()
at = next(o for o in range(4 << 20, len(d), 4096) if d[o:o + 4096].count(0) < 100)
print(at + 1234)
PY
)
new=$(( ($(od -An -tu1 -j "$off" -N1 "$T/src.img") + 1) % 256 ))
FSIMG_PAUSE_BEFORE_VERIFY="$T/pause" "$FSIMG" restore --json --verify --force "$T/src.img" "${loops[@]}" > "$T/out" 2> "$T/err" & pid=$!
for _ in $(seq 400); do [ -e "$T/pause" ] && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
[ -e "$T/pause" ] || { cat "$T/err"; fail "fsimg did not pause before verifying"; }
printf "$(printf '\\%03o' "$new")" | dd of="${loops[2]}" bs=1 seek="$off" conv=notrunc,fsync status=none
rm "$T/pause"
rc=0; ends_within "$pid" 30 || rc=$?
[ "$rc" -eq 1 ] || { cat "$T/err"; fail "a changed byte: exit $rc, expected 1"; }
json "$T/out" "[t['verified'] for t in j['targets']]" | grep -qx "\[True, True, False, True\]" ||
  { cat "$T/out"; fail "a changed byte: not caught on ${loops[2]} alone"; }
json "$T/out" "j['targets'][2]['verify']['difference']['offset'], j['targets'][2]['verify']['difference']['exact']" |
  grep -qx "$off True" || { cat "$T/out"; fail "a changed byte at $off: not named by its offset"; }
json "$T/out" "j['targets'][2]['verify']['difference']['text']" | grep -q "^byte $off (0x[0-9a-f]*) is $(printf '0x%02X' "$new")" ||
  { cat "$T/out"; fail "a changed byte: the value not named"; }
grep -q "note: FSIMG_PAUSE_BEFORE_VERIFY" "$T/err" || { cat "$T/err"; fail "the pause hook not announced"; }
pass "a byte changed between write and read-back: $(json "$T/out" "j['targets'][2]['verify']['difference']['text']")"

# A bmap whose range does not match the image: refused before that range is
# written. A FAT image with a hole, so that its map has two ranges.
truncate -s 16M "$T/fat.img"; mkfs.fat -F 16 "$T/fat.img" > /dev/null
head -c 4000000 /dev/urandom > "$T/f.bin"; mcopy -i "$T/fat.img" "$T/f.bin" ::/
fallocate -p -o $((1 << 20)) -l $((1 << 20)) "$T/fat.img"
bmaptool create -o "$T/fat.bmap" "$T/fat.img"
second=$(python3 -c "
import xml.etree.ElementTree as E, sys
r = E.parse(sys.argv[1]).getroot().find('BlockMap').findall('Range')[1].text.strip()
print(int(r.split('-')[0]) * 4096)" "$T/fat.bmap")
cp "$T/fat.img" "$T/bad.img"
printf 'X' | dd of="$T/bad.img" bs=1 seek=$((second + 5000)) conv=notrunc status=none
for l in "${loops[@]}"; do dd if="$T/old.img" of="$l" bs=4M oflag=direct status=none; done
expect_rc 1 "$FSIMG" restore --force --bmap "$T/fat.bmap" "$T/bad.img" "${loops[0]}" "${loops[1]}"
grep -q "range 1 (blocks [0-9-]*): sha256 [0-9a-f]*, the bmap says [0-9a-f]*; nothing of this range was written" "$T/err" ||
  { cat "$T/err"; fail "a range whose checksum does not match: not refused by name"; }
for l in "${loops[0]}" "${loops[1]}"; do
  cmp -i "$second" -n $((1 << 20)) "$T/old.img" "$l" || fail "$l: the range whose checksum did not match was written"
  blkid -p "$l" > /dev/null 2>&1 && fail "$l: a filesystem signature after a refused range"
done
pass "a bmap range whose SHA-256 does not match: refused before any of it was written"
# The first digit of each range's checksum changed (to 1 where it was 0:
# writing 0 over a 0 left one bmap in sixteen unchanged).
perl -pe 's/chksum="(.)/"chksum=\"" . ($1 eq "0" ? "1" : "0")/e' "$T/fat.bmap" > "$T/edited.bmap"
cmp -s "$T/fat.bmap" "$T/edited.bmap" && fail "the bmap edit changed nothing"
before=$(shas "${loops[0]}")
expect_rc 1 "$FSIMG" restore --force --bmap "$T/edited.bmap" "$T/fat.img" "${loops[0]}"
grep -q "BmapFileChecksum says .*: the bmap was changed after bmaptool made it" "$T/err" ||
  { cat "$T/err"; fail "an edited bmap: not said"; }
[ "$(shas "${loops[0]}")" = "$before" ] || fail "an edited bmap: the target was written"
pass "a bmap changed after bmaptool made it: refused, nothing written"

# Mixed targets: one mounted, one read-only, one too small, one fine. All
# three refusals named; none of the four written.
cp "$T/src.img" "$T/m.img"; mounted=$(new_loop "$T/m.img")
# Read-only and without the journal: a read-write mount writes its superblock
# when the kernel likes, which would look like fsimg writing.
mkdir "$T/mnt"; mount -o ro,noload "$mounted" "$T/mnt"; MOUNTS+=("$T/mnt")
ro=$(loop_setup -r "$T/t2.img")
head -c 8M /dev/urandom > "$T/small.img"; small=$(new_loop "$T/small.img")
before=$(shas "$mounted" "$ro" "$small" "${loops[0]}")
expect_rc 1 "$FSIMG" restore --force "$T/src.img" "$mounted" "$ro" "$small" "${loops[0]}"
grep -q "3 of 4 targets refused; nothing was written to any of them" "$T/err" || { cat "$T/err"; fail "mixed targets: not all refused"; }
grep -q "^  $mounted: mounted on $T/mnt" "$T/err" || { cat "$T/err"; fail "mixed targets: the mounted one not named"; }
grep -q "^  $ro: .*read-only" "$T/err" || { cat "$T/err"; fail "mixed targets: the read-only one not named"; }
grep -q "^  $small: 8 MiB.* is smaller than the image" "$T/err" || { cat "$T/err"; fail "mixed targets: the small one not named"; }
[ "$(shas "$mounted" "$ro" "$small" "${loops[0]}")" = "$before" ] || fail "mixed targets: something was written"
umount "$T/mnt"
pass "mixed targets (mounted, read-only, too small): all named, none of the four written"

# Targets that share storage: a loop device and its own file, one device
# twice, two loop devices over one file, a target over the input itself.
before=$(shas "${loops[0]}" "$T/t1.img")
expect_rc 1 "$FSIMG" restore --force "$T/src.img" "${loops[0]}" "$T/t1.img"
grep -q "$T/t1.img: shares storage with the target ${loops[0]}" "$T/err" || { cat "$T/err"; fail "a loop and its file: not refused"; }
expect_rc 1 "$FSIMG" restore --force "$T/src.img" "${loops[0]}" "${loops[0]}"
grep -q "shares storage with the target ${loops[0]} (the same" "$T/err" || { cat "$T/err"; fail "one target twice: not refused"; }
twin=$(new_loop "$T/t1.img")  # a second loop device over loops[0]'s file
expect_rc 1 "$FSIMG" restore --force "$T/src.img" "${loops[0]}" "$twin"
grep -q "$twin: shares storage with the target ${loops[0]} (both use $T/t1.img)" "$T/err" ||
  { cat "$T/err"; fail "two loop devices over one file: not refused"; }
loop_detach "$twin"
cp "$T/src.img" "$T/in.img"; over=$(new_loop "$T/in.img")
expect_rc 1 "$FSIMG" restore --force "$T/in.img" "${loops[0]}" "$over"
grep -q "$over: shares storage with the input $T/in.img" "$T/err" || { cat "$T/err"; fail "a target over the input: not refused"; }
[ "$(shas "${loops[0]}" "$T/t1.img")" = "$before" ] || fail "shared storage: something was written"
pass "targets sharing storage with each other or with the input: refused, nothing written"

# --dry-run: the whole input read and checked, nothing written.
before=$(shas "${loops[@]}")
expect_rc 0 "$FSIMG" restore --dry-run --json --force --bmap "$T/fat.bmap" "$T/fat.img" "${loops[@]}"
json "$T/out" "j['dry_run'] and all(t['data_bytes'] > 0 for t in j['targets'])" | grep -qx True ||
  { cat "$T/out"; fail "--dry-run: not counted"; }
[ "$(shas "${loops[@]}")" = "$before" ] || fail "--dry-run wrote"
pass "--dry-run: every target checked, nothing written"

# Ctrl-C while two targets are written at 4 MB/s (a cgroup write limit):
# exit 130, each target's state said, no filesystem signature on either,
# and a rerun restores both.
if cg=$(slow_cgroup cards 4194304 "$(majmin "${loops[0]}")" "$(majmin "${loops[1]}")"); then
  RMDIRS+=("$cg")
  sh -c "$CGROUP_JOIN" sh "$cg" \
    "$FSIMG" restore --force "$T/src.img" "${loops[0]}" "${loops[1]}" > "$T/out" 2>"$T/err" & pid=$!
  interrupt "$pid" 1.5 20 "the restore to two targets throttled to 4 MB/s"
  [ "$RC" -eq 130 ] || { cat "$T/out" "$T/err"; fail "Ctrl-C: exit $RC, expected 130"; }
  [ "$(grep -c "nothing was written past byte [0-9]* of $size.*holds no filesystem: run fsimg restore again" "$T/out")" -eq 2 ] ||
    { cat "$T/out" "$T/err"; fail "Ctrl-C: what each target holds is not said"; }
  grep -q "interrupted" "$T/err" || { cat "$T/err"; fail "Ctrl-C: not said"; }
  for l in "${loops[0]}" "${loops[1]}"; do blkid -p "$l" > /dev/null 2>&1 && fail "Ctrl-C left a signature on $l"; done
  expect_rc 0 "$FSIMG" restore -q --verify "$T/src.img" "${loops[0]}" "${loops[1]}"
  for l in "${loops[0]}" "${loops[1]}"; do cmp -n "$size" "$T/src.img" "$l" || fail "rerun after Ctrl-C: $l differs"; done
  pass "Ctrl-C on two slow targets: exit 130, no signature left on either, a rerun restores both"
else
  skip_part "no cgroup write throttle (blkio or io) to make slow targets"
fi
