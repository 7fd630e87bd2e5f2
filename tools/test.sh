#!/usr/bin/env bash
# Sets up, builds and runs every test: unit tests, CLI tests against the real
# peer tools (fsck.fat, mtools, blkid, fio), man page lint; seventeen CLI tests
# again with the psync engine forced (FSIO_ENGINE=psync: the path a host
# without io_uring takes; the 'psync' suite); and the unit tests plus the
# refusal/fault/verify CLI tests again under ASan/UBSan (the 'sanitize'
# suite). Needs root for the loop-device tests (they skip loudly otherwise).
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
unset FSIO_FAULT FSIO_ENGINE FSIO_SWEEP
logs=()
status=0
# run_suite LOG BUILD MESON-TEST-ARGS...: one meson run, its log kept as LOG
run_suite() {
  local log=$1 build=$2; shift 2
  meson test -C "$build" --print-errorlogs "$@" || status=1
  cp "$build/meson-logs/testlog.json" "$build/meson-logs/$log"
  logs+=("$build/meson-logs/$log")
}
# One meson run a build, two tests at a time (tests/meson.build names the
# selections): everything in the main build, the psync reruns included;
# the 'sanitize' suite in the sanitizer build.
run_suite testlog-main.json build --num-processes 2
run_suite testlog-sanitize.json build-asan --num-processes 2 --suite sanitize

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
