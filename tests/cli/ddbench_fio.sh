#!/usr/bin/env bash
# ddbench speaks fio (issue 11), judged against fio 3.33 itself where it can
# be: job files ([global], several jobs, stonewall, new_group, ${VAR},
# include), fio's command-line spellings, fio's defaults and units, numjobs
# and groups, the normal and terse layouts next to fio's, fsync counts next
# to fio's, unsupported options named, and a job file never written to.
. "$(dirname "$0")/lib.sh"
need python3
img=$T/img
truncate -s 64M "$img"
"$DDBENCH" -q --rw write --bs 1M --force "$img"
cd "$T"

# A job file as fio users write them.
cat >"$T/common.inc" <<'EOF'
; pulled in by include
bs=4k
EOF
cat >"$T/job.fio" <<EOF
; two groups: readers together, then a writer after a stonewall
[global]
filename=$img
size=\${JOBSIZE}
include common.inc

[reader]
rw=randread
iodepth=4
numjobs=2

[other]
rw=read
new_group

[writer]
stonewall
rw=write
bs=64k
EOF
before=$(sha "$T/job.fio")
expect_rc 0 env JOBSIZE=8m "$DDBENCH" --output-format=json --output="$T/o.json" "$T/job.fio"
[ ! -s "$T/out" ] || fail "--output still printed on stdout: $(cat "$T/out")"
python3 - "$T/o.json" <<'PY' || fail "job file: $(cat "$T/o.json")"
import json, sys
j = json.load(open(sys.argv[1]))
jobs = j["jobs"]
assert [x["jobname"] for x in jobs] == ["reader", "reader", "other", "writer"], [x["jobname"] for x in jobs]
assert [x["groupid"] for x in jobs] == [0, 0, 1, 2], [x["groupid"] for x in jobs]
for x in jobs[:3]:
    assert x["read"]["io_bytes"] == 8 << 20, x["read"]["io_bytes"]      # ${JOBSIZE}
    assert x["ddbench"]["bs"] == 4096 and x["ddbench"]["engine"] == "psync"  # include; fio's default engine
assert jobs[3]["write"]["io_bytes"] == 8 << 20 and jobs[3]["ddbench"]["bs"] == 65536
assert jobs[0]["job options"] == {"rw": "randread", "iodepth": "4", "numjobs": "2"}, jobs[0]["job options"]
assert j["global options"]["size"] == "8m" and j["global options"]["bs"] == "4k", j["global options"]
PY
[ "$(sha "$T/job.fio")" = "$before" ] || fail "the job file changed"
pass "job file: [global], include, \${VAR}, numjobs, new_group, stonewall (groups 0,0,1,2)"

# The normal output has fio's lines in fio's order (judged against fio's own).
need fio
cat >"$T/plain.fio" <<EOF
[global]
filename=$img
size=8m
[seq]
rw=read
EOF
expect_rc 0 fio "$T/plain.fio"; mv "$T/out" "$T/fio.txt"
expect_rc 0 "$DDBENCH" "$T/plain.fio"; mv "$T/out" "$T/dd.txt"
python3 - "$T/fio.txt" "$T/dd.txt" <<'PY' || fail "normal output differs in shape: $(cat "$T/dd.txt")"
import re, sys
def labels(path):
    out = []
    for line in open(path):
        if line.startswith("fio-") or line.startswith("ddbench-") or line.startswith("Starting ") or "|" in line:
            continue
        m = re.match(r"\s*([A-Za-z][A-Za-z /]*?(?: \([a-z]+\))?)\s*[:=]", line)
        # fio and ddbench each pick nsec, usec or msec from the values, so a
        # slower run (a loaded machine, the sanitizers) changes the unit only.
        label = re.sub(r"\((?:nsec|usec|msec)\)", "(time unit)", m.group(1)) if m else None
        if label and label not in out:
            out.append(label)
    return out
fio, dd = labels(sys.argv[1]), labels(sys.argv[2])
it = iter(dd)
missing = [l for l in fio if l not in it]
assert not missing, (missing, fio, dd)
PY
grep -q '^seq: (g=0): rw=read, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=psync, iodepth=1$' "$T/dd.txt" ||
  fail "header: $(head -3 "$T/dd.txt")"
pass "normal output: every line kind fio prints, in fio's order"

# Terse v3: the same number of fields as fio's for the same job.
expect_rc 0 fio --output-format=terse "$T/plain.fio"; nf_fio=$(awk -F';' '{print NF; exit}' "$T/out")
expect_rc 0 "$DDBENCH" --output-format=terse "$T/plain.fio"; nf_dd=$(awk -F';' '{print NF; exit}' "$T/out")
[ "$nf_fio" -eq "$nf_dd" ] || fail "terse: fio has $nf_fio fields, ddbench $nf_dd: $(cat "$T/out")"
cut -d';' -f1-3 "$T/out" | grep -qx '3;ddbench-[0-9.]*;seq' || fail "terse: $(cat "$T/out")"
[ "$(cut -d';' -f6 "$T/out")" -eq 8192 ] || fail "terse read KiB: $(cut -d';' -f6 "$T/out")"
pass "terse v3: $nf_dd fields, as fio's"

# fio's command line, as a user copies it from fio's documentation.
expect_rc 0 "$DDBENCH" --name=mix --filename="$img" --ioengine=libaio --direct=1 --iodepth=16 --rw=randrw \
  --rwmixread=70 --bs=4k --size=16m --offset=4m --runtime=1s --time_based --ramp_time=100ms --numjobs=2 \
  --group_reporting --output-format=json
grep -q "note: ioengine=libaio runs on io_uring" "$T/err" || fail "no libaio note: $(cat "$T/err")"
python3 - "$T/out" <<'PY' || fail "command line: $(cat "$T/out")"
import json, sys
j = json.load(open(sys.argv[1]))
assert len(j["jobs"]) == 1, "group_reporting gives one entry"
x = j["jobs"][0]
r, w = x["read"], x["write"]
assert x["ddbench"]["engine"] in ("uring", "psync") and x["ddbench"]["direct"] is True and x["ddbench"]["iodepth"] == 16
assert 950 <= r["runtime"] <= 1500, r["runtime"]                   # 1s, ramp not counted
share = r["total_ios"] / (r["total_ios"] + w["total_ios"])
assert 0.6 < share < 0.8, share                                     # rwmixread=70
assert x["ddbench"]["offset"] == 4 << 20 and x["ddbench"]["size"] == 16 << 20
assert type(r["bw_bytes"]) is int and type(r["iops"]) is float
PY
if command -v jq >/dev/null; then
  iops=$(jq '.jobs[0].read.iops' "$T/out")
  python3 -c "import sys; assert float(sys.argv[1]) > 0" "$iops" || fail "jq .jobs[0].read.iops gave $iops"
  pass "fio's command line: randrw 70/30, numjobs=2, group_reporting; jq .jobs[0].read.iops = $iops"
else
  skip_part "jq is not installed"
fi

# fio's defaults in fio's mode; ddbench's own in the terse form; one unit rule.
expect_rc 0 "$DDBENCH" --name=d --filename="$img" --size=1m --output-format=json
[ "$(json "$T/out" '(x["bs"], x["iodepth"], x["engine"], x["direct"])')" = "(4096, 1, 'psync', False)" ] ||
  fail "fio defaults: $(json "$T/out" 'x')"
expect_rc 0 "$DDBENCH" --size 4m --bs 4KB --json "$img"
[ "$(json "$T/out" '(x["bs"], x["iodepth"], x["direct"])')" = "(4096, 32, True)" ] || fail "terse: $(json "$T/out" 'x')"
expect_rc 0 "$DDBENCH" --name=k --filename="$img" --kb_base=1000 --bs=4KB --size=4000k --json
[ "$(json "$T/out" 'x["bs"]')" -eq 4000 ] || fail "kb_base=1000: $(json "$T/out" 'x["bs"]')"
expect_rc 0 "$DDBENCH" --name=p --filename="$img" --size=10% --bs=4k --json
[ "$(json "$T/out" 'io')" -eq 6709248 ] || fail "size=10%: $(json "$T/out" 'io') (fio 3.33 reads 6709248)"
pass "defaults: fio's with --name, ddbench's terse; 4KB = 4096, kb_base=1000, size=10% as fio 3.33"

# fsync=16 over 2048 writes: fio 3.33 issues 127 (none after the last write).
expect_rc 0 fio --name=s --filename="$img" --rw=write --size=8m --fsync=16 --output-format=json
fio_syncs=$(json "$T/out" 'job["sync"]["total_ios"]')
expect_rc 0 "$DDBENCH" --name=s --filename="$img" --rw=write --size=8m --fsync=16 --output-format=json
dd_syncs=$(json "$T/out" 'job["sync"]["total_ios"]')
[ "$dd_syncs" = "$fio_syncs" ] || fail "fsync=16: fio $fio_syncs syncs, ddbench $dd_syncs"
pass "fsync=16: $dd_syncs syncs, as fio"

# verify=crc32c maps onto ddbench's stamps, and says so.
expect_rc 0 "$DDBENCH" --name=v --filename="$img" --rw=randwrite --size=4m --verify=crc32c --output-format=json
grep -q "verify=crc32c is done with ddbench's own check" "$T/err" || fail "$(cat "$T/err")"
[ "$(json "$T/out" 'x["verify"]["ok"]')" = True ] || fail "verify: $(json "$T/out" 'x')"
pass "verify=crc32c: written, read back, checked"

# Options ddbench does not have: named, with the reason, never ignored.
expect_rc 2 "$DDBENCH" --name=r --filename="$img" --thinktime_spin=100
grep -q -- "--thinktime_spin: fio's thinktime_spin is not supported by ddbench: ddbench's thinktime sleeps" "$T/err" || fail "$(cat "$T/err")"
expect_rc 2 "$DDBENCH" --name=r --filename="$img" --bogus=1
grep -q -- "--bogus: unknown option" "$T/err" || fail "$(cat "$T/err")"
printf '[j]\nfilename=%s\n\nlockfile=exclusive\n' "$img" >"$T/bad.fio"
expect_rc 2 "$DDBENCH" "$T/bad.fio"
grep -q "bad.fio:4: lockfile: fio's lockfile is not supported" "$T/err" || fail "$(cat "$T/err")"
expect_rc 2 "$DDBENCH" --name=r --filename="$img" --ioengine=rdma
grep -q "ioengine 'rdma'" "$T/err" || fail "$(cat "$T/err")"
pass "unsupported and unknown options: exit 2, named: $(cat "$T/err")"

# fio refuses "include" before any section ("outside of [] job section"):
# so does ddbench, and it neither reads nor writes the file as a target.
printf '; shared settings\ninclude %s\n' "$T/bad.fio" >"$T/top.fio"
ibefore=$(sha "$T/top.fio")
expect_rc 1 fio "$T/top.fio"
grep -q "outside of \[\] job section" "$T/out" "$T/err" || fail "fio: $(cat "$T/out" "$T/err")"
expect_rc 2 "$DDBENCH" --rw=write "$T/top.fio"
grep -q "top.fio:2: include outside of a \[section\]" "$T/err" || fail "$(cat "$T/err")"
[ "$(sha "$T/top.fio")" = "$ibefore" ] || fail "the job file that opens with include changed"
pass "include before any section: fio and ddbench refuse it: $(cat "$T/err")"

# A job file is never a target: with fio's --rw=write in front, the job file
# runs (its own filename), and a job that names itself is refused, --force or not.
printf '[w]\nfilename=%s\nsize=1m\n' "$img" >"$T/w.fio"
wbefore=$(sha "$T/w.fio")
expect_rc 0 "$DDBENCH" --rw=write "$T/w.fio"
[ "$(sha "$T/w.fio")" = "$wbefore" ] || fail "ddbench --rw=write w.fio wrote the job file"
grep -q "rw=write" "$T/out" || fail "the job did not write: $(head -2 "$T/out")"
printf '[self]\nfilename=%s\nrw=write\n' "$T/self.fio" >"$T/self.fio"
sbefore=$(sha "$T/self.fio")
expect_rc 1 "$DDBENCH" --force "$T/self.fio"
grep -q "self.fio: shares storage with the job file .*self.fio (the same file)" "$T/err" || fail "$(cat "$T/err")"
[ "$(sha "$T/self.fio")" = "$sbefore" ] || fail "a job file that names itself was written"
pass "job files are never written: $(cat "$T/err")"

# A job without filename makes NAME.0.0 in the current directory, as fio does.
expect_rc 0 "$DDBENCH" --name=made --rw=read --size=2m --output-format=terse
[ "$(stat -c %s "$T/made.0.0")" -eq $((2 << 20)) ] || fail "made.0.0: $(ls -l "$T")"
pass "a job without filename makes made.0.0 (2 MiB), written before it is read"

# The man page names every fio option ddbench accepts and every one it refuses.
if command -v mandoc >/dev/null; then
  mandoc -T utf8 "$SRC/man/ddbench.1" | col -b >"$T/man.txt"
  "$DDBENCH" --cmdhelp >"$T/cmdhelp.txt"
  python3 - "$T/cmdhelp.txt" "$T/man.txt" <<'PY' || fail "ddbench.1 misses options"
import re, sys
names = [l.split()[0] for l in open(sys.argv[1]) if l.startswith("  ")]
words = set(re.findall(r"[A-Za-z0-9_-]+", open(sys.argv[2]).read()))
missing = [n for n in names if n not in words]
assert len(names) > 200, len(names)
assert not missing, missing
PY
  pass "ddbench.1 names all $(grep -c '^  ' "$T/cmdhelp.txt") options of ddbench --cmdhelp"
else
  skip_part "mandoc is not installed"
fi
