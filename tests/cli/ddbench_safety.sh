#!/usr/bin/env bash
# ddbench as a careless admin meets it (issue 9): read errors are reported
# with their offset (FSIO_FAULT=readfail:N, announced on stderr); an
# interrupted --verify is not "ok" and exits 130; a write that fills the
# disk names the file; read-only targets are refused before any work; and
# with io_uring refused by the kernel and stdin closed, write and verify
# still run, on psync.
. "$(dirname "$0")/lib.sh"
need python3
img=$T/v.img
expect_rc 0 "$DDBENCH" --create 16M --rw write --bs 64K --verify "$img"

# A read error: exit 1, the failed request named, nothing reported as done.
expect_rc 1 env FSIO_FAULT=readfail:3 "$DDBENCH" --rw read --bs 64K --iodepth 1 --json "$img"
head -1 "$T/err" | grep -q "^ddbench: note: FSIO_FAULT=readfail:3 is set: test fault injection is on: read request 3" ||
  fail "the fault is not announced first: $(cat "$T/err")"
grep -q "read 65536 bytes at 0x20000: Input/output error" "$T/err" || fail "$(cat "$T/err")"
[ ! -s "$T/out" ] || fail "a failed run printed a report: $(cat "$T/out")"
pass "a read error names its request: $(tail -1 "$T/err")"

# ... also in the read-back of a write --verify (write requests are not reads).
expect_rc 1 env FSIO_FAULT=readfail:2 "$DDBENCH" --rw write --bs 1M --iodepth 1 --verify "$img"
grep -q "read 1048576 bytes at 0x100000: Input/output error" "$T/err" || fail "$(cat "$T/err")"
pass "a read error in the verify pass: $(tail -1 "$T/err")"

# Crash mode: the error is the injected write's, not the last one failed after it.
expect_rc 1 env FSIO_FAULT=fail:2 "$DDBENCH" --rw write --bs 64K --iodepth 16 "$img"
grep -q "write 65536 bytes at 0x10000: Input/output error" "$T/err" || fail "not the injected write: $(cat "$T/err")"
pass "crash mode names the injected write: $(tail -1 "$T/err")"

# An interrupted --verify: exit 130, "ok": false, and it says so.
# FSIO_FAULT=readsigint:2000 raises SIGINT as the 2000th 512-byte read of
# 131,072 is queued, however fast this machine reads.
expect_rc 0 "$DDBENCH" --create 64M --rw write --verify "$T/big.img"
rc=0
FSIO_FAULT=readsigint:2000 "$DDBENCH" --rw read --verify --bs 512 --iodepth 1 --engine psync --json "$T/big.img" \
  >"$T/int.json" 2>"$T/int.err" || rc=$?
[ "$rc" -eq 130 ] || fail "interrupted --verify: exit $rc: $(cat "$T/int.err")"
python3 - "$T/int.json" <<'PY' || fail "interrupted --verify report: $(cat "$T/int.json")"
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]["ddbench"]
assert j["interrupted"] is True
v = j["verify"]
assert v["ok"] is False and v["complete"] is False, v
assert 0 < v["bytes_checked"] < 64 << 20 and v["bad_blocks"] == 0, v
PY
grep -q "nothing was verified" "$T/int.err" || fail "$(cat "$T/int.err")"
pass "an interrupted --verify exits 130 with \"ok\": false: $(grep -v " note: " "$T/int.err")"

need_root
# A full disk: the write that fails names the file, and the file --create
# made is removed again.
mkdir "$T/small"; mount -t tmpfs -o size=4m tmpfs "$T/small" || skip "cannot mount tmpfs"
MOUNTS+=("$T/small")
expect_rc 1 "$DDBENCH" --create 64M --rw write --bs 1M "$T/small/f.img"
grep -q "f.img: write [0-9]* bytes at 0x[0-9a-f]*: No space left on device" "$T/err" || fail "ENOSPC: $(cat "$T/err")"
[ -z "$(ls -A "$T/small")" ] || fail "the file --create made was left on the full disk"
pass "a full disk: $(cat "$T/err")"

# Read-only targets: refused before any work.
truncate -s 16M "$T/ro.img"
ro=$(loop_setup -r "$T/ro.img")
expect_rc 1 "$DDBENCH" --rw write --force "$ro"
grep -q "read-only" "$T/err" || fail "losetup -r: $(cat "$T/err")"
expect_rc 0 "$DDBENCH" --rw read "$ro"
chmod 0444 "$img"
expect_rc 1 "$DDBENCH" --rw write "$img"
grep -q "read-only file (mode 0444)" "$T/err" || fail "chmod 444: $(cat "$T/err")"
chmod 0644 "$img"
pass "read-only device and file refused for writing, read as usual"

# io_uring refused with stdin closed: write + verify on psync, same data.
need strace
expect_rc 0 traced -f -o /dev/null -e inject=io_uring_setup:error=ENOSYS "$DDBENCH" --rw randwrite --bs 4K --verify --json "$img" <&-
python3 - "$T/out" <<'PY' || fail "io_uring refused: $(cat "$T/out")"
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]["ddbench"]
assert j["engine"] == "psync" and j["verify"]["ok"] is True, j
PY
pass "io_uring_setup refused (ENOSYS), stdin closed: randwrite --verify ok on psync"
