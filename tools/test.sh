#!/usr/bin/env bash
# Sets up, builds and runs every test: unit tests, CLI tests against the real
# peer tools (fsck.fat, mtools, blkid, fio), man page lint; fourteen CLI tests
# again with the psync engine forced (FSIO_ENGINE=psync: the path a host
# without io_uring takes); and the unit tests plus the refusal/fault/verify
# CLI tests again under ASan/UBSan. Needs root for the loop-device tests
# (they skip loudly otherwise).
#
# The closing lines count what really ran: meson's tests (an executable or
# script each) passed, failed and skipped, and inside the GoogleTest
# executables the cases skipped, each named with its reason. The counts go
# to build/meson-logs/fsio-summary.json for .ci/run. Usage: tools/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."

# -g1: line tables only, enough for file:line in every trace and a fifth
# less compile time than full debug info (cmd/fatfill.cpp: 16.7 -> 12.7 s
# at -O2, 21.6 -> 18.6 s under the sanitizers); CI builds both from scratch.
FSIO_MESON_ARGS="--werror -Dcpp_args=-g1" tools/setup.sh build
if [ ! -f build-asan/build.ninja ]; then
  meson setup build-asan --buildtype=debug -Dcpp_args=-g1 -Db_sanitize=address,undefined -Db_lundef=false --werror
fi
ninja -C build-asan

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
unset FSIO_FAULT FSIO_ENGINE
logs=()
status=0
# run_suite LOG BUILD MESON-TEST-ARGS...: one meson run, its log kept as LOG
run_suite() {
  local log=$1 build=$2; shift 2
  meson test -C "$build" --print-errorlogs "$@" || status=1
  cp "$build/meson-logs/testlog.json" "$build/meson-logs/$log"
  logs+=("$build/meson-logs/$log")
}
run_suite testlog-main.json build --num-processes 2
# The psync engine: the CLI tests that drive each tool's reads and writes
# (formats, fills, checks and repairs, fault sweeps, ext4 reads and writes,
# image streams); the ones that mostly compare against peers' own output
# (geometry matrices, drop-in command lines, packaging) ran above.
# The fault sweeps the main run made whole are sampled in both reruns
# (FSIO_SWEEP=sample: tests/cli/lib.sh's crash_points).
export FSIO_SWEEP=sample
FSIO_ENGINE=psync run_suite testlog-psync.json build --num-processes 2 ddbench_basic ddbench_verify ddbench_eod ddbench_fio \
  mkfat_peers mkfat_blockdev mkfat_fault mkfat_badblocks fatck_fault fatfill_fault fatfill_options \
  extwb_read extwb_fault fsimg_roundtrip
# Sanitizers: the unit tests, then the CLI tests that drive option parsing,
# refusals, fault paths and --verify through the real tools.
run_suite testlog-unit.json build-asan --num-processes 2 --suite unit
run_suite testlog-cli.json build-asan --num-processes 2 mkfat_peers mkfat_refuse mkfat_invariant mkfat_fault mkfat_options \
  mkfat_safety inuse_stack fatck_corpus fatck_fault fatck_safety ddbench_basic ddbench_verify ddbench_refuse \
  ddbench_options ddbench_safety ddbench_fio extwb_read extwb_fault fsimg_stream fsimg_refuse

python3 - build/meson-logs/fsio-summary.json "${logs[@]}" <<'PY'
import json, re, sys
out, paths = sys.argv[1], sys.argv[2:]
count = {"passed": 0, "failed": 0, "skipped": 0, "cases_skipped": 0}
skips = []
for path in paths:
    run = path.rsplit("/", 1)[-1].removeprefix("testlog-").removesuffix(".json")
    for line in open(path):
        t = json.loads(line)
        r, name, text = t["result"], t["name"], t.get("stdout") or ""
        key = "passed" if r == "OK" else "skipped" if r == "SKIP" else "failed"
        count[key] += 1
        if r == "SKIP":
            why = [l for l in text.splitlines() if l.startswith("SKIP") or "[fsio-gtest] skipped:" in l]
            skips.append(f"{run}: {name}: " + ("; ".join(why) or "(no reason printed)"))
        elif r == "OK":
            # An executable that passed may still hold skipped cases.
            for l in text.splitlines():
                m = re.match(r"\[fsio-gtest\] skipped: (.*)", l)
                if m:
                    count["cases_skipped"] += 1
                    skips.append(f"{run}: {name}: case {m.group(1)}")
json.dump(count, open(out, "w"))
for s in skips:
    print("skipped:", s)
print(f"{count['passed']} passed, {count['failed']} failed, {count['skipped']} skipped"
      f" (meson tests); {count['cases_skipped']} GoogleTest cases skipped inside passing executables")
PY
exit $status
