#!/usr/bin/env bash
# latency_target, latency_window, latency_percentile (issue 27; fio's
# latency-profile.fio), in job files written for this test, through fio 3.33
# and ddbench side by side: the depth the search settles at, the window the
# job is measured over, and the error at depth 1.
. "$(dirname "$0")/lib.sh"
need python3 fio
. "$(dirname "$0")/fio_both.sh"

# On the null engine every request meets a 1 s target: the depth doubles
# each 50 ms window (1, 2, 4, 8), stays at iodepth 8, runs one last window
# there with fresh statistics and ends, long before its 10 s runtime. The
# JSON reports the depth and the options as fio does (target in ns, window
# in us).
cat >"$T/search.fio" <<'EOF2'
[search]
ioengine=null
size=1g
time_based
runtime=10
iodepth=8
rw=randread
latency_target=1s
latency_window=50ms
latency_percentile=99.5
EOF2
both search 'all(j["jobs"][0]["latency_depth"] == 8 and j["jobs"][0]["latency_target"] == 10**9
                 and j["jobs"][0]["latency_window"] == 50000 and j["jobs"][0]["latency_percentile"] == 99.5
                 and 50 <= io(j)["runtime"] < 1000 for j in (f, d))'

# Without latency_target the depth is iodepth and the target 0.
printf '[plain]\nioengine=null\nsize=1m\niodepth=4\n' >"$T/plain.fio"
both plain 'all(j["jobs"][0]["latency_depth"] == 4 and j["jobs"][0]["latency_target"] == 0
                and j["jobs"][0]["latency_percentile"] == 100.0 for j in (f, d))'

# A direct write never takes under 1 us: at depth 1, with the default
# percentile of 100, the first one ends the job with ETIMEDOUT (exit 1).
printf '[slow]\nfilename=slow.dat\nsize=1m\nrw=write\ndirect=1\nlatency_target=1\nlatency_window=10ms\n' >"$T/slow.fio"
for tool in fio "$DDBENCH"; do
  rc=0
  (cd "$T" && rm -f slow.dat && "$tool" "$T/slow.fio" >"$T/slow.out" 2>&1) || rc=$?
  [ $rc -eq 1 ] && grep -q "Connection timed out" "$T/slow.out" ||
    fail "slow: $tool exited $rc without ETIMEDOUT: $(cat "$T/slow.out")"
done
pass "slow: over latency_target at depth 1 ends the job with ETIMEDOUT under fio and ddbench"

# max_latency=1 (us): the first direct write ends the job with ETIMEDOUT,
# under fio as under ddbench.
sed -e 's/^latency_target=1$/max_latency=1/' -e '/latency_window/d' "$T/slow.fio" >"$T/max.fio"
for tool in fio "$DDBENCH"; do
  rc=0
  (cd "$T" && rm -f slow.dat && "$tool" "$T/max.fio" >"$T/max.out" 2>&1) || rc=$?
  [ $rc -eq 1 ] && grep -q "exceeds" "$T/max.out" && grep -q "Connection timed out" "$T/max.out" ||
    fail "max: $tool exited $rc without ETIMEDOUT: $(cat "$T/max.out")"
done
pass "max: a write over max_latency ends the job with ETIMEDOUT under fio and ddbench"
