#!/usr/bin/env bash
# Sets up, builds and runs every test: unit tests, CLI tests against the real
# peer tools (fsck.fat, mtools, blkid, fio), man page lint, and the unit tests
# again under ASan/UBSan. Needs root for the loop-device tests (they skip
# loudly otherwise). Usage: tools/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."

FSIO_MESON_ARGS="--werror" tools/setup.sh build
meson test -C build --print-errorlogs --num-processes 2

# Sanitizers: the unit tests, then the CLI tests that drive option parsing,
# refusals, fault paths and --verify through the real tools.
if [ ! -f build-asan/build.ninja ]; then
  meson setup build-asan --buildtype=debug -Db_sanitize=address,undefined -Db_lundef=false --werror
fi
ninja -C build-asan
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  meson test -C build-asan --print-errorlogs --num-processes 2 --suite unit
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  meson test -C build-asan --print-errorlogs mkfat_peers mkfat_refuse mkfat_invariant mkfat_fault \
  ddbench_basic ddbench_verify ddbench_refuse
