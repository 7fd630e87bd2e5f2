#!/usr/bin/env bash
# exitall, exit_what, thinktime and number_ios (issue 27; fio's
# exitwhat.fio), in a job file written for this test, through fio 3.33 and
# ddbench side by side: which jobs end when another does, and how many
# requests each made.
. "$(dirname "$0")/lib.sh"
need python3 fio
. "$(dirname "$0")/fio_both.sh"

# think makes 10 reads 20 ms apart (number_ios, thinktime), then ends: its
# exit_what=stonewall ends spin, running beside it in another group,
# although spin has 20 s to go. The next wave's later reads its 16 blocks
# 10 ms apart and ends; exit_what's default (group) ends spin2, in its
# group. Every job is over long before any runtime. (later takes its time:
# fio 3.33 ends a job of the group that is still starting with SIGTERM, and
# then its whole run says "terminating on signal 15".)
cat >"$T/exit.fio" <<'EOF2'
[global]
filename=exit.dat
size=1m
exitall
[think]
rw=read
thinktime=20ms
number_ios=10
exit_what=stonewall
[spin]
new_group
rw=write
time_based
runtime=20
[later]
stonewall
rw=read
size=64k
thinktime=10ms
[spin2]
rw=write
time_based
runtime=20
EOF2
both exit 'all(io(j, 0)["total_ios"] == 10 and io(j, 0)["runtime"] >= 180
               and 0 < io(j, 1, "write")["runtime"] < 5000 and io(j, 2)["total_ios"] == 16
               and io(j, 3, "write")["runtime"] < 5000 for j in (f, d))'

# Without exitall the same jobs run out their runtime: exit_what alone ends
# nothing (checked on ddbench, with a runtime of 1 s).
sed -e '/^exitall/d' -e 's/runtime=20/runtime=1/' "$T/exit.fio" >"$T/noexit.fio"
(cd "$T" && "$DDBENCH" --output-format=json --output=noexit.json noexit.fio >/dev/null 2>&1) || fail "noexit: ddbench failed"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if d["jobs"][1]["write"]["runtime"] >= 900 else "spin ended early without exitall")' "$T/noexit.json" ||
  fail "noexit: a job ended early without exitall"
pass "noexit: without exitall every job runs its runtime"
