#!/usr/bin/env bash
# Every numeric option of ddbench is range-checked before it is used: values
# past 64 bits, past the target, below or above the documented limits, and
# values that would wrap (a negative seed, a runtime that rounds to a zero
# deadline) are usage errors (exit 2) naming the option; the target is never
# written and --create never leaves a file behind.
. "$(dirname "$0")/lib.sh"

truncate -s 64M "$T/t.img"
untouched() { [ "$(stat -c %b "$T/t.img")" -eq 0 ] || fail "$1: the target was written to"; }

# refuse NAME-IN-MESSAGE ARGS...: exit 2, the message names it, nothing written
refuse() {
  local name=$1; shift
  expect_rc 2 "$DDBENCH" --rw write --force "$@" "$T/t.img"
  grep -qF -- "$name" "$T/err" || fail "ddbench $*: the message does not name $name: $(cat "$T/err")"
  untouched "$*"
}

big=18446744073709551615  # 2^64 - 1
refuse size --size $big
refuse size --size 99999999999999999999
refuse size --size 64M --offset 512
refuse offset --offset $big
refuse offset --offset 64M
refuse --offset --offset -1
refuse bs --bs 0
refuse bs --bs $big
refuse bs --bs 512M
refuse bs --bs 1000                       # not a whole sector, with O_DIRECT
refuse iodepth --iodepth 0
refuse iodepth --iodepth 32769
refuse --iodepth --iodepth 4294967297
refuse --iodepth --iodepth -1
refuse 'bs x iodepth' --bs 256M --iodepth 32
refuse batch --batch 33
refuse --batch --batch 4294967297
refuse runtime --runtime -1
refuse runtime --runtime 1e-9             # would be a deadline of 0 ns: no cap at all
refuse runtime --runtime 1e400
refuse runtime --runtime nan
refuse --seed --seed -1
refuse --seed --seed 18446744073709551616
refuse create --create 0
refuse 'a file can hold' --create 9223372036854775808
refuse --create --create 16E
pass "out-of-range, wrapped and empty values: exit 2 naming the option, target untouched"

# A --create the filesystem cannot hold fails (exit 1, naming the file) and
# leaves nothing behind.
expect_rc 1 "$DDBENCH" --rw write --create 1P "$T/new.img"
grep -q "new.img" "$T/err" || fail "$(cat "$T/err")"
[ ! -e "$T/new.img" ] || fail "--create 1P left $T/new.img behind"
pass "--create 1P: $(cat "$T/err"); nothing left behind"

# The limits themselves still work.
expect_rc 0 "$DDBENCH" --rw read --bs 4K --iodepth 1 --size 4K --offset $(((64 << 20) - 4096)) "$T/t.img"
expect_rc 0 "$DDBENCH" --rw read --bs 256M --iodepth 1 --runtime 0.001 --buffered "$T/t.img"
expect_rc 0 "$DDBENCH" --rw read --seed 18446744073709551615 --size 1M "$T/t.img"
expect_rc 0 "$DDBENCH" --rw read --seed 0x10 --size 1M "$T/t.img"
untouched "reads at the limits"
pass "values at the limits are accepted"
