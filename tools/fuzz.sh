#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, -Dfuzz=true, in build-fuzz) and runs
# each for SECONDS with its corpus, tests/fuzz/corpus/TARGET. What a run
# adds to the corpus goes to a scratch directory (FUZZ_WORK, default a new
# one under /var/tmp), never into the repository; a crashing input is kept
# there as crash-*, leak-* or timeout-* and named at the end (a scratch
# directory of its own making is removed when nothing was found).
#
# Usage: tools/fuzz.sh SECONDS [TARGET...]   (default: every target)
#   FUZZ_JOBS=N  run N targets at a time (default 1)
# Exits 1 when any target found something, 2 on a build failure.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
seconds=${1:?usage: tools/fuzz.sh SECONDS [TARGET...]}
shift
build=${FUZZ_BUILD:-build-fuzz}
# Every target there is: one tests/fuzz/fuzz_NAME.cpp each (a list written
# here once missed three new targets, and CI's corpus replay failed on them).
mapfile -t all < <(cd tests/fuzz && ls fuzz_*.cpp | sed 's/^fuzz_//; s/\.cpp$//')
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")

if [ ! -f "$build/build.ninja" ]; then
  CXX=${FUZZ_CXX:-clang++} meson setup "$build" --buildtype=debugoptimized -Dfuzz=true -Dtests=false \
    -Ddefault_library=static -Db_lundef=false -Dcpp_args=-g1 >/dev/null || exit 2
fi
# Only the targets (and what they link): the tools need not be built here.
ninja -C "$build" "${targets[@]/#/tests/fuzz/fuzz_}" || exit 2

work=${FUZZ_WORK:-}
own_work=false
[ -n "$work" ] || { work=$(mktemp -d /var/tmp/fsio-fuzz.XXXXXX); own_work=true; }
mkdir -p "$work"
echo "fuzz: $seconds s per target; new corpus entries and findings in $work"
# halt_on_error: the first report stops the run; detect_leaks: a leak is a finding.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

run_one() {
  local t=$1 dir=$work/$1
  mkdir -p "$dir/new" "$dir/artifacts"
  # -rss_limit_mb: a run that needs 2 GiB is a finding; -timeout: one input
  # taking 25 s is a hang.
  local rc=0
  "$build/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -error_exitcode=1 -timeout=25 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$dir/artifacts/" "$dir/new" "$src/tests/fuzz/corpus/$t" >"$dir/log" 2>&1 || rc=$?
  local runs cov
  # (A run that crashed at its first input has no stats and no coverage line.)
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -1)
  cov=$( (grep -o 'cov: [0-9]*' "$dir/log" || true) | tail -1 | cut -d' ' -f2)
  local found
  found=$(find "$dir/artifacts" -type f | wc -l)
  printf 'fuzz: %-15s %10s runs  cov %6s  corpus +%s  findings %s%s\n' "$t" "${runs:-?}" "${cov:-?}" \
    "$(find "$dir/new" -type f | wc -l)" "$found" "$([ "$rc" -ne 0 ] && echo "  (exit $rc, see $dir/log)")"
  find "$dir/artifacts" -type f -printf '  %p\n'
  [ "$rc" -eq 0 ] && [ "$found" -eq 0 ]
}

status=0
jobs=${FUZZ_JOBS:-1}
pids=()
for t in "${targets[@]}"; do
  if [ "$jobs" -le 1 ]; then
    run_one "$t" || status=1
  else
    run_one "$t" &
    pids+=($!)
    if [ ${#pids[@]} -ge "$jobs" ]; then
      wait "${pids[0]}" || status=1
      pids=("${pids[@]:1}")
    fi
  fi
done
for p in "${pids[@]:+${pids[@]}}"; do wait "$p" || status=1; done
if [ "$status" -eq 0 ]; then
  echo "fuzz: no findings"
  # A scratch directory of our own with nothing found in it is not kept.
  if $own_work; then rm -rf "$work"; fi
else
  echo "fuzz: FINDINGS above (inputs kept in $work)"
fi
exit $status
