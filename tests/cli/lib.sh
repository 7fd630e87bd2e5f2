# Sourced by the CLI tests: temp dir, loop devices, skips, assertions.
# Each test runs with BUILD and SRC set by meson; outside meson, guess them.
set -euo pipefail
: "${SRC:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${BUILD:=$SRC/build}"
DDBENCH=$BUILD/cmd/ddbench
MKFAT=$BUILD/cmd/mkfat
EXTWB=$BUILD/cmd/extwb
export MTOOLS_SKIP_CHECK=1
# The system's python3, when a version manager's shim stands before it on
# PATH: pyenv's shim is a shell script that costs a second a call on a busy
# 2-core machine, and the tests call python3 hundreds of times. They need
# only its standard library.
if [ -x /usr/bin/python3 ] && [ "$(command -v python3)" != /usr/bin/python3 ]; then
  python3() { /usr/bin/python3 "$@"; }
  export -f python3
fi

T=$(mktemp -d /var/tmp/fsio-test.XXXXXX)
MOUNTS=()
RMDIRS=()  # directories outside $T to remove at the end (a cgroup of a test's)
SKIPPED_PARTS=()
cleanup() {
  local rc=$?
  for m in "${MOUNTS[@]:+${MOUNTS[@]}}"; do umount "$m" 2>/dev/null || true; done
  # new_loop runs in $(...), a subshell, so it records its loops in a file;
  # the last bound (the top of a stack) goes first. Then any loop still
  # backed by a file of ours.
  # Each line is "DEVICE BACKING": a number another test has bound since
  # (after a detach of ours) backs something else, and is left alone.
  [ -f "$T/.loops" ] && tac "$T/.loops" | while read -r l b; do
    [ "$(losetup -n -O BACK-FILE "$l" 2>/dev/null)" = "$b" ] && losetup -d "$l" 2>/dev/null || true
  done
  losetup -l -n -O NAME,BACK-FILE 2>/dev/null | awk -v t="$T/" 'index($2, t) == 1 {print $1}' |
    while read -r l; do losetup -d "$l" 2>/dev/null || true; done
  rm -rf "$T"
  for d in "${RMDIRS[@]:+${RMDIRS[@]}}"; do rmdir "$d" 2>/dev/null || true; done
  # A test that passed with parts left out did not pass: meson shows it as
  # skipped (77), with the parts named.
  if [ "$rc" -eq 0 ] && [ ${#SKIPPED_PARTS[@]} -gt 0 ]; then
    echo "SKIP: everything else passed, but ${#SKIPPED_PARTS[@]} part(s) were skipped: ${SKIPPED_PARTS[*]}" >&2
    exit 77
  fi
}
trap cleanup EXIT

skip() { echo "SKIP: $*" >&2; exit 77; }
# skip_part REASON: go on with the rest of the test, but end it as skipped.
skip_part() { echo "SKIP part: $*" >&2; SKIPPED_PARTS+=("$*"); }
fail() { echo "FAIL: $*" >&2; exit 1; }
need() { for c in "$@"; do command -v "$c" >/dev/null || skip "$c is not installed"; done; }
need_root() { [ "$(id -u)" -eq 0 ] || skip "needs root for loop devices"; }

# loop_setup LOSETUP-ARGS... FILE -> prints the loop device, remembers it for cleanup
loop_setup() {
  local dev
  need_root
  dev=$(losetup -f --show "$@") || skip "losetup $* failed"
  echo "$dev $(losetup -n -O BACK-FILE "$dev")" >> "$T/.loops"
  echo "$dev"
}
# new_loop FILE [SECTOR_SIZE]
new_loop() { loop_setup ${2:+--sector-size "$2"} "$1"; }
# loop_detach DEV...: detach now, and forget them (the number may be reused
# by someone else before our cleanup runs)
loop_detach() {
  local l
  for l in "$@"; do
    losetup -d "$l"
    awk -v l="$l" '$1 != l' "$T/.loops" > "$T/.loops.new"
    mv "$T/.loops.new" "$T/.loops"
  done
}

# slow_cgroup NAME BYTES_PER_S MAJ:MIN...: prints a new cgroup directory
# whose tasks write to each of those devices at most that fast (cgroup v1
# blkio or v2 io); returns 1 where neither throttle is available. The caller
# adds it to RMDIRS (this runs in a subshell) and starts the tool in it with
#   sh -c "$CGROUP_JOIN" sh "$cg" TOOL ARGS... &
# (sh execs the tool, so $! is the tool's pid and a Ctrl-C reaches it).
slow_cgroup() {
  local name=$1 rate=$2 dir dev; shift 2
  if [ -f /sys/fs/cgroup/blkio/blkio.throttle.write_bps_device ]; then
    dir=/sys/fs/cgroup/blkio/fsio-test-$$-$name; mkdir "$dir" || return 1
    for dev in "$@"; do echo "$dev $rate" > "$dir/blkio.throttle.write_bps_device" || return 1; done
  elif grep -qw io /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
    grep -qw io /sys/fs/cgroup/cgroup.subtree_control || echo +io > /sys/fs/cgroup/cgroup.subtree_control || return 1
    dir=/sys/fs/cgroup/fsio-test-$$-$name; mkdir "$dir" || return 1
    for dev in "$@"; do echo "$dev wbps=$rate" > "$dir/io.max" || return 1; done
  else
    return 1
  fi
  echo "$dir"
}
CGROUP_JOIN='echo $$ > "$1/cgroup.procs" && shift && exec "$@"'
majmin() { lsblk -dno MAJ:MIN "$1" | tr -d ' '; }

# ends_within PID SECONDS: returns the exit code of background job PID, or
# 99 (after killing it) if it is still running after SECONDS: a hang.
ends_within() {
  local pid=$1 i rc=0
  for i in $(seq 1 $(($2 * 20))); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
  if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid"; wait "$pid" 2>/dev/null; return 99; fi
  wait "$pid" || rc=$?
  return $rc
}

# interrupt PID DELAY LIMIT WHAT: Ctrl-C to background job PID after DELAY
# seconds. Fails if WHAT had already ended (it was not slow enough to test)
# or is still running LIMIT seconds later (a hang); sets RC to its exit code.
interrupt() {
  # A command started with & in a script inherits SIGINT ignored, until the
  # tool installs its handler: a Ctrl-C sent before that would be lost, so
  # wait (up to 30 s, for a loaded machine) until SigCgt shows the handler.
  local i mask
  for ((i = 0; i < 300; i++)); do
    mask=$(awk '/^SigCgt:/ {print $2}' "/proc/$1/status" 2>/dev/null) || break
    [ -n "$mask" ] && (( (16#$mask & 2) != 0 )) && break
    sleep 0.1
  done
  sleep "$2"
  kill -INT "$1" || fail "$4 ended before Ctrl-C could reach it"
  RC=0; ends_within "$1" "$3" || RC=$?
  [ "$RC" -ne 99 ] || fail "$4 did not end on Ctrl-C within $3 s"
}

# expect_rc WANT CMD... : run CMD, fail unless its exit code is WANT; output kept in $T/out, $T/err
expect_rc() {
  local want=$1; shift
  local rc=0
  "$@" >"$T/out" 2>"$T/err" || rc=$?
  if [ "$rc" -ne "$want" ]; then
    echo "--- stdout"; cat "$T/out"; echo "--- stderr"; cat "$T/err"
    fail "'$*' exited $rc, expected $want"
  fi
}

# sde_malformed TOOL ARGS...: a SOURCE_DATE_EPOCH that is not a whole number
# of seconds from 0 to 2^63-1 in digits only is a usage error (exit 2) of
# TOOL ARGS, said in the same words by every tool that stamps times.
sde_malformed() {
  local tool=$1 v; shift
  for v in soon -5 "" " 7" +7 1e9 0x10 9223372036854775808; do
    SOURCE_DATE_EPOCH=$v expect_rc 2 "$BUILD/cmd/$tool" "$@"
    grep -qxF "$tool: SOURCE_DATE_EPOCH '$v': expected a whole number of seconds since the epoch, 0 or more" \
      "$T/err" || { cat "$T/err"; fail "$tool with SOURCE_DATE_EPOCH='$v': not the words every tool says"; }
  done
}

# json FILE EXPR: evaluate a python expression on the JSON document in FILE:
# j is the document; for ddbench's fio layout, job is j["jobs"][0], x its
# "ddbench" object and io the bytes it moved in both directions.
json() {
  python3 -c "import json,sys
j=json.load(open(sys.argv[1]))
job=j['jobs'][0] if isinstance(j, dict) and j.get('jobs') else {}
x=job.get('ddbench', {})
io=job['read']['io_bytes']+job['write']['io_bytes'] if job else None
print($2)" "$1"
}

# strace with LeakSanitizer off: LSan cannot run under ptrace and aborts the
# traced program at exit; the ASan build still checks everything else.
traced() { ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace "$@"; }

sha() { sha256sum "$1" | cut -d' ' -f1; }

# debugfs_names IMG DIR: the names debugfs lists in DIR (ls -p:
# /inode/mode/uid/gid/name/size/), without . and .., sorted.
debugfs_names() {
  debugfs -R "ls -p $2" "$1" 2> /dev/null | awk -F/ 'NF > 5 && $6 != "." && $6 != ".." { print $6 }' | sort
}

pass() { echo "ok: $*"; }

# crash_points FIRST LAST: the write numbers a fault sweep crashes at. Every
# one of them, unless FSIO_SWEEP=sample (tests/meson.build sets it for the
# psync and sanitizer reruns of sweeps the main run makes whole): then the first
# two, every third one between, and the last two, so each rerun still
# crashes at the start, the end, and across the middle of the operation.
# count_writes FN ARGS...: the number of write requests an operation makes,
# the largest N at which `FN N ARGS...` returns 0 (FN runs the operation
# with FSIO_FAULT=fail:N and succeeds when the run failed): doubling, then
# bisecting.
count_writes() {
  local fn=$1 lo=0 hi=1 mid
  shift
  while "$fn" "$hi" "$@"; do lo=$hi; hi=$((hi * 2)); done
  while [ $((hi - lo)) -gt 1 ]; do
    mid=$(((lo + hi) / 2))
    if "$fn" "$mid" "$@"; then lo=$mid; else hi=$mid; fi
  done
  echo "$lo"
}

crash_points() {
  local first=$1 last=$2
  if [ "${FSIO_SWEEP:-full}" != sample ]; then seq "$first" "$last"; return; fi
  { seq "$first" $((first + 1)); seq "$first" 3 "$last"; seq $((last - 1)) "$last"; } |
    awk -v f="$first" -v l="$last" '$1 >= f && $1 <= l' | sort -n -u
}
