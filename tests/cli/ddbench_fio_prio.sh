#!/usr/bin/env bash
# I/O priorities (issue 27; fio's cmdprio-percentage.fio and
# cmdprio-bssplit.fio): prioclass and prio for the job, cmdprio_percentage,
# cmdprio_class, cmdprio and cmdprio_bssplit per request, the logs' priority
# column and the JSON's per-priority "prios", in job files written for this
# test, through fio 3.33 and ddbench side by side.
. "$(dirname "$0")/lib.sh"
need python3 fio
. "$(dirname "$0")/fio_both.sh"

# The last column of a clat log, per block size: {bs: {prio, ...}}.
cat >"$T/check_helpers.py" <<'PY'
import collections
def cols(where, prefix):
    out = collections.defaultdict(set)
    for l in open(where + "/" + prefix + "_clat.1.log"):
        f = [x.strip() for x in l.split(",")]
        out[int(f[3])].add(f[-1])
    return dict(out)
def lines(where, prefix, bs):
    return sum(1 for l in open(where + "/" + prefix + "_clat.1.log") if int(l.split(",")[3]) == bs)
def prios(j, n=0, dirn="read"):
    return [(p["prioclass"], p["prio"], p["clat_ns"]["N"]) for p in j["jobs"][n][dirn].get("prios", [])]
PY

# cmdprio_bssplit (simple and advanced forms) decides by block size: the 4k
# reads all realtime level 0 (cmdprio_class=1, cmdprio=0), the 8k ones
# without a priority (0x0000); the writes, 16k, half idle level 2 and half
# best effort 5. Every log line carries its request's value, and "prios"
# counts each as the log does.
cat >"$T/bssplit.fio" <<'EOF2'
[split]
filename=split.dat
size=2m
ioengine=libaio
direct=1
iodepth=4
rw=randrw
bssplit=4k/50:8k/50,16k/100
cmdprio_bssplit=4k/100:8k/0,16k/50/3/2:16k/50/2/5
cmdprio_class=1
cmdprio=0
write_lat_log=split
log_prio=1
EOF2
both bssplit 'all(
                  cols(x, "split")[4096] == {"0x2000"} and cols(x, "split")[8192] == {"0x0000"}
                  and cols(x, "split")[16384] == {"0x6002", "0x4005"}
                  and prios(j) == [(0, 0, lines(x, "split", 8192)), (1, 0, lines(x, "split", 4096))]
                  and [p[:2] for p in prios(j, 0, "write")] == [(3, 2), (2, 5)]
                  for x, j in ((F, f), (D, d)))'

# cmdprio_percentage=25 beside the job's own prioclass=3 prio=6: about a
# quarter of 512 reads realtime (cmdprio_class's default), the rest idle 6;
# fio and ddbench draw apart, so the share is checked, not the count.
# Without log_prio the column is fio's realtime bit: 1 or 0.
cat >"$T/percent.fio" <<'EOF2'
[percent]
filename=percent.dat
size=2m
ioengine=io_uring
direct=1
iodepth=8
rw=randread
prioclass=3
prio=6
cmdprio_percentage=25
write_lat_log=percent
EOF2
both percent 'all(
                  [p[:2] for p in prios(j)] == [(3, 6), (1, 0)] and 80 < prios(j)[1][2] < 180
                  and sum(prios(j)[k][2] for k in (0, 1)) == 512 and cols(x, "percent")[4096] == {"0", "1"}
                  and sum(1 for l in open(x + "/percent_clat.1.log") if l.rstrip().endswith(", 1")) == prios(j)[1][2]
                  for x, j in ((F, f), (D, d)))'

# prioclass and prio on psync: the job's thread runs at best effort 5
# (ioprio_set), every request logs it, and one priority makes no "prios".
cat >"$T/thread.fio" <<'EOF2'
[thread]
filename=thread.dat
size=256k
rw=write
prioclass=2
prio=5
write_lat_log=thread
log_prio=1
EOF2
both thread 'all(
                 cols(x, "thread") == {4096: {"0x4005"}} and "prios" not in j["jobs"][0]["write"]
                 for x, j in ((F, f), (D, d)))'

# cmdprio is an option of fio's io_uring and libaio engines: with psync
# fio fails on it, and ddbench refuses it by name.
printf '[p]\nfilename=p.dat\nsize=64k\ncmdprio_percentage=10\n' >"$T/psync.fio"
for tool in fio "$DDBENCH"; do
  (cd "$T" && "$tool" "$T/psync.fio" >"$T/psync.out" 2>&1) && fail "psync: $tool ran cmdprio_percentage on psync"
done
grep -q "cmdprio_percentage.*io_uring and libaio" "$T/psync.out" || fail "psync: ddbench's refusal: $(cat "$T/psync.out")"
pass "psync: cmdprio_percentage fails under fio and is refused by ddbench, naming it"
