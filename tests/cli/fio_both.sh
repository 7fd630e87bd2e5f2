# Sourced by the ddbench-vs-fio CLI tests (after lib.sh): both NAME CHECK
# runs a job file through fio 3.33 and ddbench and compares them.
omitted=$SRC/tests/cli/fio_json_omitted.txt

# NAME CHECK: runs $T/NAME.fio with both tools (in $T/NAME.fio.d and
# $T/NAME.dd.d), then CHECK, a python expression over f (fio's JSON), d
# (ddbench's), F and D (their directories), and what $T/check_helpers.py
# defines; fails with both JSONs if not.
both() {
  local name=$1 check=$2 tool dir rc
  for tool in fio dd; do
    dir=$T/$name.$tool.d
    rm -rf "$dir" && mkdir "$dir"
    rc=0  # set -e would end the script at a failing run without saying which
    if [ $tool = fio ]; then
      (cd "$dir" && fio --output-format=json --output=out.json "$T/$name.fio" >out.txt 2>err.txt) || rc=$?
    else
      (cd "$dir" && "$DDBENCH" --output-format=json --output=out.json "$T/$name.fio" >out.txt 2>err.txt) || rc=$?
    fi
    # fio writes its errors into the --output file, so each job's error is taken from there too.
    [ $rc -eq 0 ] || fail "$name: $tool exited $rc: $( (cat "$dir/err.txt" "$dir/out.txt"
      grep -hE '"(jobname|error)" :|^fio:' "$dir/out.json" 2>/dev/null) | tail -8)"
  done
  python3 - "$T/$name.fio.d" "$T/$name.dd.d" "$omitted" "$check" <<'PY' || fail "$name: fio and ddbench differ"
import json, os, sys
F, D, omitted_path, check = sys.argv[1:5]
f = json.load(open(os.path.join(F, "out.json")))
d = json.load(open(os.path.join(D, "out.json")))
sys.path.insert(0, os.environ["SRC"] + "/tests/cli")
from fio_json_keys import differences, omitted
bad = differences(f, d, omitted(omitted_path))
if bad:
    sys.exit("keys: " + "; ".join(bad[:10]))
def io(j, n=0, dirn="read"):
    return j["jobs"][n][dirn]
# A test may keep helpers for its checks in $T/check_helpers.py.
helpers = os.path.join(os.path.dirname(F), "check_helpers.py")
if os.path.exists(helpers):
    exec(open(helpers).read())
if not eval("(" + check + ")"):
    for name, j in (("fio", f), ("ddbench", d)):
        for n, x in enumerate(j["jobs"]):
            print(name, n, {k: (x[k]["io_bytes"], x[k]["total_ios"]) for k in ("read", "write")})
    sys.exit("check failed: " + check)
PY
  pass "$name: fio and ddbench agree (exit 0, keys and types, $(echo "$check" | tr -s ' \n' ' ' | cut -c1-60)...)"
}
