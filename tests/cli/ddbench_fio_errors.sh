#!/usr/bin/env bash
# continue_on_error, ignore_error and error_dump (issue 27; fio's
# enospc-pressure.fio), in a job file written for this test, through fio
# 3.33 and ddbench side by side: writes into a 256 KiB tmpfs run out of
# space, and the job goes on after each ENOSPC, counting them.
. "$(dirname "$0")/lib.sh"
need python3 fio
. "$(dirname "$0")/fio_both.sh"
need_root
mkdir "$T/small"
mount -t tmpfs -o size=256k tmpfs "$T/small" || skip "cannot mount a tmpfs"
trap 'umount "$T/small" 2>/dev/null; cleanup' EXIT

# 1 MiB in 4 KiB writes: 64 fit, the other 192 fail with ENOSPC (28) and are
# counted in total_err and total_ios, not in io_bytes.
cat >"$T/full.fio" <<EOF2
[full]
filename=$T/small/full.dat
rw=write
size=1m
continue_on_error=write
ignore_error=,ENOSPC
error_dump=0
EOF2
both full 'all(j["jobs"][0]["total_err"] == 192 and j["jobs"][0]["first_error"] == 28
               and io(j, 0, "write")["total_ios"] == 256 and io(j, 0, "write")["io_bytes"] == 256 << 10
               for j in (f, d))'
rm -f "$T/small/full.dat"

# Without ENOSPC in the list (the default is EIO and EILSEQ), the first one
# ends the job with an error, under fio as under ddbench.
sed -e '/ignore_error/d' "$T/full.fio" >"$T/fatal.fio"
for tool in fio "$DDBENCH"; do
  rm -f "$T/small/full.dat"
  (cd "$T" && "$tool" "$T/fatal.fio" >"$T/fatal.out" 2>&1) && fail "fatal: $tool went on after ENOSPC"
  grep -q "No space left on device" "$T/fatal.out" || fail "fatal: $tool: $(cat "$T/fatal.out")"
done
pass "fatal: ENOSPC outside ignore_error ends the job under fio and ddbench"
