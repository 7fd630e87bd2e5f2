#!/usr/bin/env bash
# ddbench's JSON next to fio 3.33's for the same jobs: the same key sets with
# the same types (an integer where fio has an integer), except fields listed
# with a reason in fio_json_omitted.txt and ddbench's own "ddbench" object;
# json+ adds fio's "bins". Scripts written for fio's JSON work unchanged.
. "$(dirname "$0")/lib.sh"
need python3 fio
img=$T/img
truncate -s 64M "$img"
"$DDBENCH" -q --rw write --bs 1M --force "$img"
cd "$T"
omitted=$SRC/tests/cli/fio_json_omitted.txt

compare() {  # NAME ARGS...: the same arguments to both tools, json and json+
  local name=$1; shift
  for fmt in json json+; do
    expect_rc 0 fio --output-format=$fmt --output="$T/fio.json" "$@"
    expect_rc 0 "$DDBENCH" --output-format=$fmt --output="$T/dd.json" "$@"
    python3 - "$T/dd.json" "$T/fio.json" "$omitted" "$name $fmt" <<'PY' || fail "$name ($fmt): the key sets differ"
import json, os, sys
sys.path.insert(0, os.environ["SRC"] + "/tests/cli")
from fio_json_keys import differences, omitted as listed, paths
dd_json, fio_json = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
dd, fio = paths(dd_json), paths(fio_json)
omitted = listed(sys.argv[3])
bad = differences(fio_json, dd_json, omitted)
for k in omitted:
    if k in dd:
        bad.append(f"{k} is listed as omitted but ddbench has it")
print(f"{sys.argv[4]}: {len(fio)} fio paths, {len(dd)} ddbench paths")
for b in bad:
    print("  " + b)
sys.exit(1 if bad else 0)
PY
  done
  pass "$name: the same keys and types as fio (json and json+)"
}

compare "buffered psync read" --name=a --filename="$img" --size=16m --rw=read
compare "io_uring direct randrw with fdatasync" --name=b --filename="$img" --size=16m --rw=randrw \
  --rwmixread=70 --ioengine=io_uring --direct=1 --iodepth=16 --fdatasync=32
compare "numjobs=2 group_reporting, time based" --name=c --filename="$img" --size=16m --rw=write --bs=64k \
  --numjobs=2 --group_reporting --runtime=1 --time_based
cat >"$T/g.fio" <<EOF2
[global]
filename=$img
size=8m
description=described
[r]
rw=randread
[w]
stonewall
rw=write
EOF2
compare "a job file with [global] and a description" "$T/g.fio"
if [ "$(id -u)" -eq 0 ]; then
  loop=$(new_loop "$img")
  compare "a loop device (disk_util)" --name=l --filename="$loop" --size=16m --rw=randread --direct=1
else
  skip_part "loop device (not root)"
fi

# Scripts written for fio's JSON: the numbers are where fio puts them.
expect_rc 0 "$DDBENCH" --name=s --filename="$img" --size=8m --rw=randread --output-format=json
python3 - "$T/out" <<'PY' || fail "fio-style access: $(cat "$T/out")"
import json, sys
j = json.load(open(sys.argv[1]))
r = j["jobs"][0]["read"]
assert r["io_bytes"] == 8 << 20 and r["total_ios"] == 2048
assert r["bw_bytes"] > 0 and isinstance(r["bw_bytes"], int) and r["bw"] == r["bw_bytes"] // 1024
assert r["iops"] > 0 and isinstance(r["iops"], float)
assert r["clat_ns"]["percentile"]["99.000000"] >= r["clat_ns"]["min"]
PY
if command -v jq >/dev/null; then
  [ "$(jq '.jobs[0].read.total_ios' "$T/out")" = 2048 ] || fail "jq: $(jq '.jobs[0].read' "$T/out")"
  jq -e '.jobs[0].read.iops > 0' "$T/out" >/dev/null || fail "jq .jobs[0].read.iops"
  pass "jq '.jobs[0].read.iops' = $(jq '.jobs[0].read.iops' "$T/out")"
else
  skip_part "jq is not installed"
fi
