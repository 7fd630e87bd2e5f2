#!/usr/bin/env bash
# Runs every fio job file in a directory through ddbench (and, with --fio,
# through fio too) and tallies which ran and the first option refused
# (issue 27). The job files are fio's own examples/*.fio and t/jobs/*.fio,
# read from a checkout of fio; none is kept in this repository.
#
#   tools/fio_examples.sh [--fio] [--ddbench PATH] DIR [DIR...]
#
# Each file is copied into a temp directory and run there, with small sizes
# and runtimes forced where fio allows it: size, io_size, filesize capped at
# 16 MiB, runtime at 1 s, ramp_time at 0, loops at 8, and every /dev/ path in a filename
# replaced by a 64 MiB image file. A job file that names an engine a plain
# Linux machine lacks (rdma, http, sg, xnvme, ...) is skipped, and so is a zoned
# job that names no device. A job gets 100 s: a rated one runs as long as fio's
# (poisson-rate-submission.fio: 16 MiB in 4 KiB reads at 50/s is 82 s).
# Prints one line a file ("ran", or "refused: FIRST ERROR LINE"), then
# "ddbench ran N of M".
set -u
ddbench=build/cmd/ddbench
run_fio=0
while [ $# -gt 0 ]; do
  case $1 in
    --fio) run_fio=1; shift ;;
    --ddbench) ddbench=$2; shift 2 ;;
    -h | --help) sed -n '2,17p' "$0"; exit 0 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { echo "usage: $0 [--fio] [--ddbench PATH] DIR [DIR...]" >&2; exit 2; }
ddbench=$(realpath "$ddbench")
unavailable='http|rdma|libzbc|libcufile|ime_|rbd|rados|pmem|libpmem|nfs|nbd|mtd|librpma|libiscsi|libhdfs|gfapi|dfs'
unavailable+='|dev-dax|cpp_null|io_uring_cmd|sg|e4defrag|falloc|xnvme'
tmp=$(mktemp -d /tmp/fio_examples.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# Copies job file $1 to $2 with the sizes, runtimes and device paths forced small.
shrink() {
  python3 - "$1" "$2" "$3" <<'PY'
import re, sys
src, dst, work = sys.argv[1:4]
units = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
def capped(v, cap):
    m = re.fullmatch(r"(\d+)([kmgt]?)i?b?", v.strip().lower())
    if not m or int(m.group(1)) * units[m.group(2)] > cap:
        return v if "%" in v or not m else "16m"
    return v
out, devs = [], {}
for line in open(src):
    s = line.strip()
    k, eq, v = s.partition("=")
    k = k.strip().lower()
    if eq and k in ("size", "io_size", "io_limit", "filesize"):
        line = "%s=%s\n" % (k, capped(v, 16 << 20))
    elif eq and k in ("runtime", "timeout"):
        line = "%s=1\n" % k
    elif eq and k == "loops":
        line = "loops=%d\n" % min(int(v) if v.strip().isdigit() else 8, 8)
    elif eq and k == "ramp_time":
        line = "ramp_time=0\n"
    elif eq and k == "filename" and "/dev/" in v:
        parts = [p if not p.startswith("/dev/") else devs.setdefault(p, "%s/dev%d.img" % (work, len(devs)))
                 for p in v.strip().split(":")]
        line = "filename=%s\n" % ":".join(parts)
    elif eq and k == "directory" and v.strip().startswith("/"):
        line = "directory=%s\n" % work
    out.append(line)
open(dst, "w").writelines(out)
for d in devs.values():
    open(d, "wb").truncate(64 << 20)
PY
}

ran=0
total=0
for dir in "$@"; do
  for f in "$dir"/*.fio; do
    grep -qE "^[[:space:]]*ioengine[[:space:]]*=[[:space:]]*($unavailable)" "$f" && continue
    # zoned jobs that name no device are for a zoned device given on the command line
    grep -q '^zonemode=zbd' "$f" && ! grep -q '^filename=' "$f" && continue
    total=$((total + 1))
    w=$tmp/$(basename "$f" .fio)
    mkdir -p "$w"
    shrink "$f" "$w/job.fio" "$w"
    # fio's t/jobs pairs: NAME-post.fio checks what NAME-pre.fio wrote, so pre runs first
    pre=${f%-post.fio}-pre.fio
    if [ "$pre" != "$f" ] && [ -f "$pre" ]; then
      shrink "$pre" "$w/pre.fio" "$w"
      (cd "$w" && timeout -k 5 100 "$ddbench" pre.fio >/dev/null 2>&1)
    fi
    (cd "$w" && timeout -k 5 100 "$ddbench" --output-format=json --output=dd.json job.fio >dd.out 2>dd.err)
    rc=$?
    result="ran"
    if [ $rc -ne 0 ]; then
      result="refused (exit $rc): $(grep -v '^ *$' "$w/dd.err" | grep -m1 -v '^ddbench: note:' | sed "s|$w/||g" | cut -c1-150)"
    else
      ran=$((ran + 1))
    fi
    if [ $run_fio = 1 ]; then
      rm -rf "$w/fio" && mkdir "$w/fio" && cp "$w/job.fio" "$w/fio/"
      [ -f "$w/pre.fio" ] && (cd "$w/fio" && timeout -k 5 100 fio ../pre.fio >/dev/null 2>&1)
      (cd "$w/fio" && timeout -k 5 100 fio --output-format=json --output=fio.json job.fio >fio.out 2>fio.err)
      result="fio exit $? | $result"
    fi
    printf '%-40s %s\n' "$(basename "$dir")/$(basename "$f")" "$result"
    rm -rf "$w"
  done
done
echo "ddbench ran $ran of $total"
