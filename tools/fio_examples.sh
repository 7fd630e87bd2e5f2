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
# 16 MiB (16 KiB when rate= is under 16 KiB/s and no runtime ends the job),
# runtime at 1 s, ramp_time at 0, loops at 8, startdelay at 2 s,
# and every /dev/ path in a filename replaced by a 64 MiB image file. Another
# absolute filename (/tmp/testfile) is moved into the temp directory, and
# laid out at 64 MiB when the job file gives no size (butterfly.fio reads a
# file it expects to exist); a relative directory= (1mbs_clients.fio's tmp)
# is made for both tools. A job file that names an engine a plain Linux
# machine lacks (rdma, http, sg, xnvme, ...) is skipped, and so is a zoned
# job that names no device. A job gets 100 s: a rated one runs as long as fio's
# (poisson-rate-submission.fio: 16 MiB in 4 KiB reads at 50/s is 82 s).
# Prints one line a file ("ran", or "refused: FIRST ERROR LINE"; with --fio,
# fio's exit code first, and where both ran whether ddbench's JSON has fio's
# key paths and types), then "ddbench ran N of M".
set -u
ddbench=build/cmd/ddbench
run_fio=0
while [ $# -gt 0 ]; do
  case $1 in
    --fio) run_fio=1; shift ;;
    --ddbench) ddbench=$2; shift 2 ;;
    -h | --help) sed -n '2,23p' "$0"; exit 0 ;;
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
import os, re, sys
src, dst, work = sys.argv[1:4]
units = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
def capped(v, cap):
    m = re.fullmatch(r"(\d+)([kmgt]?)i?b?", v.strip().lower())
    if not m or int(m.group(1)) * units[m.group(2)] > cap:
        return v if "%" in v or not m else "%dk" % (cap >> 10)
    return v
out, devs, files, sized = [], {}, {}, False
lines = open(src).readlines()
# A job rated under 16 KiB/s with nothing to end it but its size
# (1mbs_clients.fio: rate=1250, bytes a second) gets 16 KiB, some seconds.
rates = [int(m.group(1)) for m in (re.fullmatch(r"rate=(\d+)", l.strip()) for l in lines) if m]
timed = any(re.match(r"\s*(runtime|time_based)\b", l) for l in lines)
size_cap = 16 << 10 if rates and min(rates) < 16 << 10 and not timed else 16 << 20
for line in lines:
    s = line.strip()
    k, eq, v = s.partition("=")
    k = k.strip().lower()
    if eq and k in ("size", "io_size", "io_limit", "filesize"):
        line = "%s=%s\n" % (k, capped(v, size_cap))
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
    elif eq and k == "filename" and v.strip().startswith("/"):
        parts = [files.setdefault(p, "%s/%s" % (work, p.strip("/").replace("/", "_"))) for p in v.strip().split(":")]
        line = "filename=%s\n" % ":".join(parts)
    elif eq and k == "directory" and v.strip().startswith("/"):
        line = "directory=%s\n" % work
    elif eq and k == "startdelay" and v.strip().isdigit():
        line = "startdelay=%d\n" % min(int(v), 2)
    sized = sized or (eq and k in ("size", "filesize", "io_size"))
    out.append(line)
open(dst, "w").writelines(out)
for d in list(devs.values()) + ([] if sized else list(files.values())):
    if not os.path.exists(d):
        open(d, "wb").truncate(64 << 20)
PY
}

# make_dirs WHERE: the relative directory= paths of $w/job.fio made under
# WHERE (the tool's working directory), as the job expects them there.
make_dirs() {
  sed -n 's|^[[:space:]]*directory[[:space:]]*=[[:space:]]*\([^/[:space:]].*\)$|\1|p' "$w/job.fio" |
    while read -r d; do mkdir -p "$1/$d"; done
}

# json_keys FIO_JSON DD_JSON: "keys as fio's", or how many key paths differ
# (tests/cli/fio_json_keys.py, which ddbench's fio tests use) and the first.
json_keys() {
  python3 - "$1" "$2" "$(dirname "$0")/../tests/cli" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[3])
from fio_json_keys import differences, omitted
def load(p):  # fio may print notes before its JSON
    text = open(p).read()
    return json.loads(text[text.find("{"):])
bad = differences(load(sys.argv[1]), load(sys.argv[2]), omitted(sys.argv[3] + "/fio_json_omitted.txt"))
print("keys as fio's" if not bad else "%d key paths differ: %s" % (len(bad), bad[0]))
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
    make_dirs "$w"
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
      make_dirs "$w/fio"
      [ -f "$w/pre.fio" ] && (cd "$w/fio" && timeout -k 5 100 fio ../pre.fio >/dev/null 2>&1)
      (cd "$w/fio" && timeout -k 5 100 fio --output-format=json --output=fio.json job.fio >fio.out 2>fio.err)
      frc=$?
      [ $frc -eq 0 ] && [ $rc -eq 0 ] && result="$result, $(json_keys "$w/fio/fio.json" "$w/dd.json")"
      result="fio exit $frc | $result"
    fi
    printf '%-40s %s\n' "$(basename "$dir")/$(basename "$f")" "$result"
    rm -rf "$w"
  done
done
echo "ddbench ran $ran of $total"
