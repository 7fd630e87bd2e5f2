#!/usr/bin/env bash
# ddbench's contract as a user sees it: --create, every --rw on an image and a
# loop device, one JSON document with fio's field names and sane numbers,
# human output like fio's, merging only with --batch, usage errors (exit 2),
# and SIGINT: finish what is in flight, report it, exit 130.
. "$(dirname "$0")/lib.sh"
need python3
[ -x "$DDBENCH" ] || fail "$DDBENCH not built"
img=$T/a.img

# --create makes the file; a write covers it; the JSON is the whole stdout.
expect_rc 0 "$DDBENCH" --create 32M --rw write --bs 1M --iodepth 8 --json "$img"
[ "$(stat -c %s "$img")" -eq $((32 << 20)) ] || fail "--create 32M made $(stat -c %s "$img") bytes"
check_json() {  # FILE RW IO_BYTES
  python3 - "$@" <<'PY' || fail "bad JSON for $2: $(cat "$1")"
import json, sys
path, rw, io = sys.argv[1], sys.argv[2], int(sys.argv[3])
j = json.load(open(path))            # fails on anything but one JSON document
assert j["rw"] == rw, j["rw"]
assert j["io_bytes"] == io, (j["io_bytes"], io)
assert isinstance(j["runtime"], int) and j["runtime"] >= 0
assert j["bw_bytes"] > 0 and j["iops"] > 0
c = j["clat_ns"]
assert 0 < c["min"] <= c["p50"] <= c["p99"] <= c["p99.9"] <= c["max"], c
assert c["percentile"]["50.000000"] == c["p50"] and c["percentile"]["99.900000"] == c["p99.9"]
assert j["total_ios"] * j["bs"] >= io
# bw and iops agree with bytes and runtime (fio's definitions), within the
# rounding of runtime to whole milliseconds
assert abs(j["bw_bytes"] * j["runtime"] / 1000 - io) <= j["bw_bytes"] * 0.0005 + 0.01 * io, (j["bw_bytes"], j["runtime"])
assert abs(j["iops"] * j["runtime"] / 1000 - j["total_ios"]) <= j["iops"] * 0.0005 + 0.01 * j["total_ios"] + 1
s = j["stats"]
key = "bytes_written" if "write" in rw else "bytes_read"
assert s[key] == io, s
assert s["requests_queued"] == j["total_ios"] and s["peak_in_flight"] >= 1
PY
}
check_json "$T/out" write $((32 << 20))
pass "--create + sequential write, JSON fields like fio's"
# tools/test.sh runs the CLI suite again with FSIO_ENGINE=psync: the forced
# engine must be the one used, and announced.
if [ -n "${FSIO_ENGINE:-}" ]; then
  [ "$(json "$T/out" 'j["engine"]')" = "$FSIO_ENGINE" ] || fail "FSIO_ENGINE=$FSIO_ENGINE ignored: $(cat "$T/out")"
  grep -q "note: FSIO_ENGINE=$FSIO_ENGINE is set" "$T/err" || fail "FSIO_ENGINE not announced: $(cat "$T/err")"
  pass "FSIO_ENGINE=$FSIO_ENGINE is used and announced"
fi

for rw in read randread randwrite; do
  expect_rc 0 "$DDBENCH" --rw "$rw" --bs 4K --iodepth 16 --json "$img"
  check_json "$T/out" "$rw" $((32 << 20))
done
pass "read, randread, randwrite cover the whole image"

# Engines and modes all work and count the same bytes.
expect_rc 0 "$DDBENCH" --rw read --bs 64K --iodepth 4 --engine psync --buffered --json "$img"
check_json "$T/out" read $((32 << 20))
json "$T/out" 'j["engine"]' | grep -qx psync || fail "engine is $(json "$T/out" 'j["engine"]')"
[ "$(json "$T/out" 'j["direct"]')" = False ] || fail "--buffered still direct"
expect_rc 0 "$DDBENCH" --rw write --bs 64K --sync --engine uring --size 4M --offset 1M --json "$img"
check_json "$T/out" write $((4 << 20))
pass "psync, buffered, --sync, --size and --offset"

# Human output: fio's summary line and latency percentiles, nothing on stderr
# (without test overrides: FSIO_ENGINE would be announced there).
expect_rc 0 env -u FSIO_ENGINE -u FSIO_FAULT "$DDBENCH" --rw read --bs 1M "$img"
grep -Eq '^  read: IOPS=[0-9.k]+, BW=[0-9.]+MiB/s \([0-9.]+MB/s\)\(32 MiB/[0-9]+msec\)$' "$T/out" || fail "summary: $(cat "$T/out")"
grep -q 'p99.9=' "$T/out" || fail "no percentiles: $(cat "$T/out")"
[ ! -s "$T/err" ] || fail "stderr not empty: $(cat "$T/err")"
expect_rc 0 "$DDBENCH" --quiet --rw read "$img"
[ ! -s "$T/out" ] || fail "--quiet printed: $(cat "$T/out")"
pass "human summary and --quiet"

# Merging: only with --batch, never with --no-merge; fewer submissions.
expect_rc 0 "$DDBENCH" --rw write --bs 4K --iodepth 32 --json "$img"
plain_sub=$(json "$T/out" 'j["stats"]["requests_submitted"]'); plain_sys=$(json "$T/out" 'j["stats"]["syscalls"]')
[ "$plain_sub" -eq 8192 ] || fail "default submitted $plain_sub requests for 8192 blocks (fio does not merge)"
expect_rc 0 "$DDBENCH" --rw write --bs 4K --iodepth 32 --batch 16 --json "$img"
sub=$(json "$T/out" 'j["stats"]["requests_submitted"]'); sys=$(json "$T/out" 'j["stats"]["syscalls"]')
[ "$sub" -le 1024 ] || fail "--batch 16 submitted $sub requests"
# Syscall counts depend on how fast completions arrive (a reap that finds
# CQEs in the ring costs none), so they are reported, not compared.
expect_rc 0 "$DDBENCH" --rw write --bs 4K --iodepth 32 --batch 16 --no-merge --json "$img"
[ "$(json "$T/out" 'j["stats"]["requests_submitted"]')" -eq 8192 ] || fail "--no-merge merged"
pass "merging: default $plain_sub requests/$plain_sys syscalls, --batch 16 $sub/$sys, --no-merge none"

# Usage errors exit 2 and name the problem.
expect_rc 2 "$DDBENCH" --rw sideways "$img"
expect_rc 2 "$DDBENCH" --bs 12Q "$img"; grep -q -- '--bs' "$T/err" || fail "bad --bs not named: $(cat "$T/err")"
expect_rc 2 "$DDBENCH" --iodepth 8 --batch 9 "$img"; grep -q batch "$T/err" || fail "$(cat "$T/err")"
expect_rc 2 "$DDBENCH" --direct --buffered "$img"
expect_rc 2 "$DDBENCH" --size 64M "$img"; grep -q 'past the end' "$T/err" || fail "$(cat "$T/err")"
expect_rc 2 "$DDBENCH" --bs 1000 "$img"; grep -q -- '--buffered' "$T/err" || fail "$(cat "$T/err")"
expect_rc 2 "$DDBENCH" --engine warp "$img"
expect_rc 2 "$DDBENCH"
expect_rc 1 "$DDBENCH" "$T/missing.img"
pass "usage errors exit 2, a missing target exits 1"

# --time-based: the 32 MiB image is read over and over until --runtime is up.
expect_rc 2 "$DDBENCH" --time-based "$img"
grep -q -- "--time-based needs --runtime" "$T/err" || fail "--time-based without --runtime: $(cat "$T/err")"
expect_rc 0 "$DDBENCH" --rw read --bs 1M --iodepth 4 --buffered --runtime 0.5 --time-based --json "$img"
python3 - "$T/out" <<'PY' || fail "--time-based: $(cat "$T/out")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["runtime_capped"] is True
assert j["io_bytes"] > 2 * (32 << 20) and j["io_bytes"] == j["total_ios"] << 20, j["io_bytes"]
assert j["runtime"] >= 500, j["runtime"]
PY
pass "--time-based read $(json "$T/out" 'j["io_bytes"] >> 20') MiB of a 32 MiB image in $(json "$T/out" 'j["runtime"]') ms"

# A loop device: the whole device is read, bytes equal its size.
if [ "$(id -u)" -eq 0 ]; then
  loop=$(new_loop "$img")
  expect_rc 0 "$DDBENCH" --rw randread --bs 4K --iodepth 32 --json "$loop"
  check_json "$T/out" randread "$(blockdev --getsize64 "$loop")"
  pass "randread of $loop"
else
  skip_part "loop device (not root)"
fi

# SIGINT: stops issuing, reaps what is in flight, reports it, exits 130
# (128 + SIGINT, as if the signal had ended it: not a failure, not success).
truncate -s 4G "$T/big.img"
"$DDBENCH" --rw read --bs 4K --iodepth 1 --engine psync --buffered --json "$T/big.img" >"$T/int.json" 2>"$T/int.err" &
pid=$!
sleep 1
kill -INT $pid
rc=0; wait $pid || rc=$?
[ "$rc" -eq 130 ] || fail "SIGINT: exit $rc, stderr: $(cat "$T/int.err")"
grep -q interrupted "$T/int.err" || fail "SIGINT not reported: $(cat "$T/int.err")"
python3 - "$T/int.json" <<'PY' || fail "SIGINT report: $(cat "$T/int.json")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["interrupted"] is True
assert 0 < j["io_bytes"] < 4 << 30 and j["io_bytes"] == j["total_ios"] * 4096, j["io_bytes"]
PY
pass "SIGINT after 1 s: $(json "$T/int.json" 'j["io_bytes"]') bytes reported, exit 130"
