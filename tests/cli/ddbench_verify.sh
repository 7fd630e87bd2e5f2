#!/usr/bin/env bash
# --verify: a write stamps every sector with its offset and the seed and reads
# it back; a read checks the stamps. A flipped byte, a misplaced sector, a
# stale run (other seed) and a failed write are each caught and named.
. "$(dirname "$0")/lib.sh"
need python3 dd
img=$T/v.img
seed=12345

expect_rc 0 "$DDBENCH" --create 16M --rw randwrite --bs 8K --iodepth 16 --verify --seed $seed --json "$img"
python3 - "$T/out" <<'PY' || fail "write --verify: $(cat "$T/out")"
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]["ddbench"]
v = j["verify"]
assert v["ok"] is True and v["bad_blocks"] == 0 and v["bytes_checked"] == 16 << 20, v
PY
# Judge the stamps independently of ddbench: every 512-byte sector starts with
# its own offset and the seed, little-endian.
python3 - "$img" $seed <<'PY' || fail "stamps on disk are wrong"
import struct, sys
data = open(sys.argv[1], "rb").read()
seed = int(sys.argv[2])
for off in range(0, len(data), 512):
    o, s = struct.unpack_from("<QQ", data, off)
    assert (o, s) == (off, seed), (off, o, s)
PY
pass "randwrite --verify: all 32768 sectors stamped with offset and seed"

expect_rc 0 "$DDBENCH" --rw read --verify --seed $seed "$img"
grep -Eq 'verify +: 16 MiB checked, no mismatch' "$T/out" || fail "$(cat "$T/out")"
pass "read --verify of an intact image"

# One flipped byte: exit 1, the exact offset in hex on stderr and in the JSON.
cp "$img" "$T/flip.img"
printf '\x5a' | dd of="$T/flip.img" bs=1 seek=$((0x345678)) conv=notrunc status=none
expect_rc 1 "$DDBENCH" --rw randread --bs 4K --verify --seed $seed --json "$T/flip.img"
grep -q 'first mismatch at byte 0x345678' "$T/err" || fail "stderr: $(cat "$T/err")"
grep -q '(1 bad blocks)' "$T/err" || fail "stderr: $(cat "$T/err")"
[ "$(json "$T/out" 'x["verify"]["first_mismatch"]["offset"]')" -eq $((0x345678)) ] || fail "JSON: $(cat "$T/out")"
[ "$(json "$T/out" 'x["verify"]["ok"]')" = False ] || fail "JSON says ok"
pass "a flipped byte at 0x345678 is named"

# A sector written to the wrong place: the message says where it belongs.
cp "$img" "$T/moved.img"
dd if="$img" of="$T/moved.img" bs=512 skip=$((0x3000 / 512)) seek=$((0x1000 / 512)) count=1 conv=notrunc status=none
expect_rc 1 "$DDBENCH" --rw read --bs 64K --verify --seed $seed "$T/moved.img"
grep -q 'first mismatch at byte 0x1001' "$T/err" || fail "stderr: $(cat "$T/err")"
grep -q 'holds the stamp of offset 0x3000' "$T/err" || fail "stderr: $(cat "$T/err")"
pass "a misplaced sector is named: $(cut -c1-150 "$T/err")"

# A sector zeroed after the write (trimmed, never written): it holds no
# stamp, which must not read as "the stamp of offset 0x0, seed 0". (Byte
# 0x5000 is 0x5000's low byte, 0x00: the first to differ is 0x5001.) And one
# whose header names a place but whose rest is noise holds no valid stamp.
cp "$img" "$T/zero.img"
dd if=/dev/zero of="$T/zero.img" bs=512 seek=$((0x5000 / 512)) count=1 conv=notrunc status=none
expect_rc 1 "$DDBENCH" --rw read --bs 64K --verify --seed $seed "$T/zero.img"
grep -q 'first mismatch at byte 0x5001' "$T/err" || fail "stderr: $(cat "$T/err")"
grep -q 'the sector at 0x5000 holds no stamp (all zeros)' "$T/err" || fail "stderr: $(cat "$T/err")"
! grep -q 'holds the stamp' "$T/err" || fail "an all-zero sector said to hold a stamp: $(cat "$T/err")"
cp "$img" "$T/noise.img"
python3 - "$T/noise.img" <<'PY'
import struct, sys
with open(sys.argv[1], "r+b") as f:
    f.seek(0x7000)
    f.write(struct.pack("<QQ", 0x9000, 99) + bytes([0xA5]) * 496)
PY
expect_rc 1 "$DDBENCH" --rw read --bs 64K --verify --seed $seed "$T/noise.img"
grep -q 'the sector at 0x7000 holds no valid stamp' "$T/err" || fail "stderr: $(cat "$T/err")"
pass "a zeroed sector holds no stamp, a noisy one no valid stamp: $(cut -c1-160 "$T/err")"

# Another run's data (other seed) is not ours.
expect_rc 1 "$DDBENCH" --rw read --verify --seed 7 "$img"
grep -q "seed $seed" "$T/err" || fail "stderr: $(cat "$T/err")"
pass "data of another seed is caught"

# A write that fails (fault injection on the 5th request): exit 1, named, no "ok".
expect_rc 1 env FSIO_FAULT=fail:5 "$DDBENCH" --rw write --bs 64K --iodepth 1 --verify --json "$img"
grep -q 'write 65536 bytes at 0x40000' "$T/err" || fail "stderr: $(cat "$T/err")"
grep -qi 'input/output error' "$T/err" || fail "stderr: $(cat "$T/err")"
[ ! -s "$T/out" ] || fail "a failed run printed a report: $(cat "$T/out")"
pass "a failed write is reported with its offset: $(cat "$T/err")"

# On 512- and 4096-byte-sector loop devices, merged batches included.
if [ "$(id -u)" -eq 0 ]; then
  for ss in 512 4096; do
    truncate -s 24M "$T/l$ss.img"
    loop=$(new_loop "$T/l$ss.img" "$ss")
    expect_rc 0 "$DDBENCH" --rw write --bs 128K --iodepth 8 --batch 4 --verify --force --json "$loop"
    [ "$(json "$T/out" 'x["verify"]["ok"]')" = True ] || fail "$ss: $(cat "$T/out")"
    expect_rc 0 "$DDBENCH" --rw randread --bs 4K --verify "$loop"
  done
  pass "write+verify and randread --verify on 512 and 4096-byte-sector loops"
else
  skip_part "loop devices (not root)"
fi
