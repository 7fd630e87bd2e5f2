#!/usr/bin/env bash
# Sets up, builds and runs every test: unit tests, CLI tests against the real
# peer tools (fsck.fat, mtools, blkid, fio), man page lint, and the unit tests
# plus the refusal/fault/verify CLI tests again under ASan/UBSan. Needs root
# for the loop-device tests (they skip loudly otherwise). Usage: tools/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."

FSIO_MESON_ARGS="--werror" tools/setup.sh build
if [ ! -f build-asan/build.ninja ]; then
  meson setup build-asan --buildtype=debug -Db_sanitize=address,undefined -Db_lundef=false --werror
fi
ninja -C build-asan

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
status=0
meson test -C build --print-errorlogs --num-processes 2 || status=1
cp build/meson-logs/testlog.json build/meson-logs/testlog-main.json
# Sanitizers: the unit tests, then the CLI tests that drive option parsing,
# refusals, fault paths and --verify through the real tools.
meson test -C build-asan --print-errorlogs --num-processes 2 --suite unit || status=1
cp build-asan/meson-logs/testlog.json build-asan/meson-logs/testlog-unit.json
meson test -C build-asan --print-errorlogs mkfat_peers mkfat_refuse mkfat_invariant mkfat_fault \
  ddbench_basic ddbench_verify ddbench_refuse extwb_read extwb_fault || status=1

# One closing line over both runs, counted from meson's own logs.
python3 - build/meson-logs/testlog-main.json build-asan/meson-logs/testlog-unit.json \
  build-asan/meson-logs/testlog.json <<'PY'
import json, sys
count = {"OK": 0, "FAIL": 0, "SKIP": 0}
for path in sys.argv[1:]:
    for line in open(path):
        r = json.loads(line)["result"]
        count["OK" if r == "OK" else "SKIP" if r == "SKIP" else "FAIL"] += 1
print(f"{count['OK']} passed, {count['FAIL']} failed, {count['SKIP']} skipped")
PY
exit $status
