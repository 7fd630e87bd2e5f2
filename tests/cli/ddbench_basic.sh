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
doc = json.load(open(path))          # fails on anything but one JSON document
assert doc["fio version"].startswith("ddbench-") and isinstance(doc["timestamp"], int)
job = doc["jobs"][0]
x = job["ddbench"]
assert x["rw"] == rw, x["rw"]
d = job["write" if "write" in rw else "read"]
other = job["read" if "write" in rw else "write"]
assert d["io_bytes"] == io, (d["io_bytes"], io)
assert other["io_bytes"] == 0 and other["runtime"] == 0
# fio's types: bytes, counts, ms and ns are integers; rates are floats
for k in ("io_bytes", "io_kbytes", "bw_bytes", "bw", "runtime", "total_ios", "bw_min", "bw_max", "bw_samples"):
    assert type(d[k]) is int, (k, d[k])
for k in ("iops", "bw_agg", "bw_mean", "bw_dev", "iops_mean", "iops_stddev"):
    assert type(d[k]) is float, (k, d[k])
assert d["runtime"] >= 0 and d["bw_bytes"] > 0 and d["iops"] > 0 and d["bw"] == d["bw_bytes"] // 1024
c = d["clat_ns"]
p = c["percentile"]
assert 0 < c["min"] <= p["50.000000"] <= p["99.000000"] <= p["99.900000"] <= c["max"], c
assert c["N"] == d["total_ios"] and d["lat_ns"]["N"] == d["total_ios"]
assert d["total_ios"] * x["bs"] >= io
# bw and iops agree with bytes and runtime (fio's definitions), within the
# rounding of runtime to whole milliseconds
assert abs(d["bw_bytes"] * d["runtime"] / 1000 - io) <= d["bw_bytes"] * 0.0005 + 0.01 * io, (d["bw_bytes"], d["runtime"])
assert abs(d["iops"] * d["runtime"] / 1000 - d["total_ios"]) <= d["iops"] * 0.0005 + 0.01 * d["total_ios"] + 1
s = x["stats"]
key = "bytes_written" if "write" in rw else "bytes_read"
assert s[key] == io, s
assert s["requests_queued"] == d["total_ios"] and s["peak_in_flight"] >= 1
PY
}
check_json "$T/out" write $((32 << 20))
pass "--create + sequential write, JSON fields like fio's"
# tools/test.sh runs the CLI suite again with FSIO_ENGINE=psync: the forced
# engine must be the one used, and announced.
if [ -n "${FSIO_ENGINE:-}" ]; then
  [ "$(json "$T/out" 'x["engine"]')" = "$FSIO_ENGINE" ] || fail "FSIO_ENGINE=$FSIO_ENGINE ignored: $(cat "$T/out")"
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
json "$T/out" 'x["engine"]' | grep -qx psync || fail "engine is $(json "$T/out" 'x["engine"]')"
[ "$(json "$T/out" 'x["direct"]')" = False ] || fail "--buffered still direct"
expect_rc 0 "$DDBENCH" --rw write --bs 64K --sync --engine uring --size 4M --offset 1M --json "$img"
check_json "$T/out" write $((4 << 20))
pass "psync, buffered, --sync, --size and --offset"

# Human output: fio's summary line and latency percentiles, nothing on stderr
# (without test overrides: FSIO_ENGINE would be announced there).
expect_rc 0 env -u FSIO_ENGINE -u FSIO_FAULT "$DDBENCH" --rw read --bs 1M "$img"
grep -Eq '^  read: IOPS=[0-9.k]+, BW=[0-9.]+[KMG]iB/s \([0-9.]+[kMG]B/s\)\(32.0MiB/[0-9]+msec\)$' "$T/out" || fail "summary: $(cat "$T/out")"
grep -Eq '^     \| 99.00th=\[ *[0-9]+\], 99.50th=' "$T/out" || fail "no percentiles: $(cat "$T/out")"
grep -Eq '^   READ: bw=[0-9.]+[KMG]iB/s \([0-9.]+[kMG]B/s\), .*, io=32.0MiB \(33.6MB\), run=[0-9]+-[0-9]+msec$' "$T/out" ||
  fail "group line: $(cat "$T/out")"
[ ! -s "$T/err" ] || fail "stderr not empty: $(cat "$T/err")"
expect_rc 0 "$DDBENCH" --quiet --rw read "$img"
[ ! -s "$T/out" ] || fail "--quiet printed: $(cat "$T/out")"
pass "human summary and --quiet"

# Merging: only with --batch, never with --no-merge; fewer submissions.
expect_rc 0 "$DDBENCH" --rw write --bs 4K --iodepth 32 --json "$img"
plain_sub=$(json "$T/out" 'x["stats"]["requests_submitted"]'); plain_sys=$(json "$T/out" 'x["stats"]["syscalls"]')
[ "$plain_sub" -eq 8192 ] || fail "default submitted $plain_sub requests for 8192 blocks (fio does not merge)"
expect_rc 0 "$DDBENCH" --rw write --bs 4K --iodepth 32 --batch 16 --json "$img"
sub=$(json "$T/out" 'x["stats"]["requests_submitted"]'); sys=$(json "$T/out" 'x["stats"]["syscalls"]')
[ "$sub" -le 1024 ] || fail "--batch 16 submitted $sub requests"
# Syscall counts depend on how fast completions arrive (a reap that finds
# CQEs in the ring costs none), so they are reported, not compared.
expect_rc 0 "$DDBENCH" --rw write --bs 4K --iodepth 32 --batch 16 --no-merge --json "$img"
[ "$(json "$T/out" 'x["stats"]["requests_submitted"]')" -eq 8192 ] || fail "--no-merge merged"
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
j = json.load(open(sys.argv[1]))["jobs"][0]
assert j["ddbench"]["runtime_capped"] is True
r = j["read"]
assert r["io_bytes"] > 2 * (32 << 20) and r["io_bytes"] == r["total_ios"] << 20, r["io_bytes"]
assert r["runtime"] >= 500, r["runtime"]
PY
pass "--time-based read $(json "$T/out" 'io >> 20') MiB of a 32 MiB image in $(json "$T/out" 'job["read"]["runtime"]') ms"

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
# FSIO_FAULT=readsigint:1000 raises it as the 1000th read is queued, so it
# lands mid-run however fast this machine reads a hole.
truncate -s 4G "$T/big.img"
rc=0
FSIO_FAULT=readsigint:1000 "$DDBENCH" --rw read --bs 4K --iodepth 1 --engine psync --buffered --json "$T/big.img" \
  >"$T/int.json" 2>"$T/int.err" || rc=$?
[ "$rc" -eq 130 ] || fail "SIGINT: exit $rc, stderr: $(cat "$T/int.err")"
grep -q interrupted "$T/int.err" || fail "SIGINT not reported: $(cat "$T/int.err")"
python3 - "$T/int.json" <<'PY' || fail "SIGINT report: $(cat "$T/int.json")"
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
assert j["ddbench"]["interrupted"] is True
r = j["read"]
# One at a time: the 1000th read, in flight when the signal came, is reaped.
assert r["io_bytes"] == 1000 * 4096 and r["total_ios"] == 1000, (r["io_bytes"], r["total_ios"])
PY
pass "SIGINT at the 1000th read: $(json "$T/int.json" io) bytes reported, exit 130"
