#!/usr/bin/env bash
# ss, ss_dur, ss_ramp (issue 27; fio's steadystate.fio), in a job file
# written for this test, through fio 3.33 and ddbench side by side: a job
# held at 1000 requests a second is steady after two seconds, by deviation
# from the mean and by slope, and ends there, not at its 10 s runtime; the
# JSON's "steadystate" object says so as fio's does. (Each job is a group of
# its own: fio refuses a group whose jobs' steady-state options differ, and
# so does ddbench.)
. "$(dirname "$0")/lib.sh"
need python3 fio
. "$(dirname "$0")/fio_both.sh"

cat >"$T/steady.fio" <<'EOF2'
[global]
ioengine=null
size=1g
time_based
runtime=10
rate_iops=1000
[steady]
ss=iops:20%
ss_dur=2
[slope]
new_group
steadystate=iops_slope:5%
steadystate_duration=2
EOF2
both steady 'all(j["jobs"][n]["steadystate"]["attained"] == 1 and 1500 < j["jobs"][n]["job_runtime"] < 4000
                 and all(900 < x < 1100 for x in j["jobs"][n]["steadystate"]["data"]["iops"])
                 and j["jobs"][n]["steadystate"]["duration"] == 2 for j in (f, d) for n in (0, 1))
             and [x["steadystate"]["ss"] for x in d["jobs"]] == [x["steadystate"]["ss"] for x in f["jobs"]]'

# With group_reporting the group is judged as one: two jobs of 500 a second
# are one of 1000, steady after two seconds, and both end.
cat >"$T/group.fio" <<'EOF2'
[global]
ioengine=null
size=1g
time_based
runtime=10
rate_iops=500
group_reporting
[pair]
numjobs=2
ss=iops:20%
ss_dur=2
EOF2
both group 'all(j["jobs"][0]["steadystate"]["attained"] == 1 and io(j)["runtime"] < 4000
                and all(900 < x < 1100 for x in j["jobs"][0]["steadystate"]["data"]["iops"]) for j in (f, d))'

# ss_ramp longer than the run: nothing recorded, never attained, the
# seconds all 0, as fio reports them.
printf '[ramp]\nioengine=null\nsize=1m\nss=bw:10%%\nss_dur=3\nss_ramp=30\n' >"$T/ramp.fio"
both ramp 'all(j["jobs"][0]["steadystate"]["attained"] == 0 and j["jobs"][0]["steadystate"]["data"]["bw"] == [0, 0, 0]
                and j["jobs"][0]["steadystate"]["ss"] == "bw:10.000000%" for j in (f, d))'

printf '[a]\nioengine=null\nsize=1m\nss=iops:10%%\nss_dur=2\n[b]\nioengine=null\nsize=1m\n' >"$T/mixed.fio"
for tool in fio "$DDBENCH"; do
  (cd "$T" && "$tool" "$T/mixed.fio" >"$T/mixed.out" 2>&1) && fail "mixed: $tool ran a group with two steady-state settings"
done
grep -q "steadystate options must be the same" "$T/mixed.out" || fail "mixed: $(cat "$T/mixed.out")"
pass "mixed: a reporting group with two steady-state settings is refused by fio and ddbench"
