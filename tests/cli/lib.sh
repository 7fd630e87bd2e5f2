# Sourced by the CLI tests: temp dir, loop devices, skips, assertions.
# Each test runs with BUILD and SRC set by meson; outside meson, guess them.
set -euo pipefail
: "${SRC:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${BUILD:=$SRC/build}"
DDBENCH=$BUILD/cmd/ddbench
MKFAT=$BUILD/cmd/mkfat
EXTWB=$BUILD/cmd/extwb
export MTOOLS_SKIP_CHECK=1

T=$(mktemp -d /var/tmp/fsio-test.XXXXXX)
MOUNTS=()
cleanup() {
  for m in "${MOUNTS[@]:+${MOUNTS[@]}}"; do umount "$m" 2>/dev/null || true; done
  # new_loop runs in $(...), a subshell, so find our loops by backing file.
  losetup -l -n -O NAME,BACK-FILE 2>/dev/null | awk -v t="$T/" 'index($2, t) == 1 {print $1}' |
    while read -r l; do losetup -d "$l" 2>/dev/null || true; done
  rm -rf "$T"
}
trap cleanup EXIT

skip() { echo "SKIP: $*" >&2; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
need() { for c in "$@"; do command -v "$c" >/dev/null || skip "$c is not installed"; done; }
need_root() { [ "$(id -u)" -eq 0 ] || skip "needs root for loop devices"; }

# new_loop FILE [SECTOR_SIZE] -> prints the loop device, remembers it for cleanup
new_loop() {
  local dev
  need_root
  dev=$(losetup -f --show ${2:+--sector-size "$2"} "$1") || skip "losetup failed"
  echo "$dev"
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

# json FILE EXPR: evaluate a python expression on the JSON document in FILE (bound to j)
json() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"; }

sha() { sha256sum "$1" | cut -d' ' -f1; }

pass() { echo "ok: $*"; }
