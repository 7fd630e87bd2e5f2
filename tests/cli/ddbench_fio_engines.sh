#!/usr/bin/env bash
# fio's engines that move no data (issue 27): cpuio and exec, in job files
# written for this test, each run through fio 3.33 and through ddbench
# (fio_both.sh): exit 0, JSON keys and types, requests counted with no bytes
# and no runtime, and for exec the files the program's output goes to.
. "$(dirname "$0")/lib.sh"
need python3 fio
. "$(dirname "$0")/fio_both.sh"

# cpuio noop: 20 ms busy, then 60 ms asleep (cpuload=25), for 1 s: about
# 12 requests, each at least a 20 ms completion latency (how many fit in the
# second depends on the machine's load: not asserted), no bytes, runtime 0.
cat >"$T/cpu_noop.fio" <<'EOF'
[spin]
ioengine=cpuio
cpuload=25
cpuchunks=20000
cpumode=noop
time_based
runtime=1
EOF
both cpu_noop 'all(io(j)["total_ios"] >= 1 and io(j)["io_bytes"] == 0 and io(j)["runtime"] == 0
                   and 19.9e6 <= io(j)["clat_ns"]["min"] for j in (f, d))'

# cpuio qsort, beside a second job of the same engine: each request sorts
# as long as it takes, then sleeps as long again (cpuload=50); the spinning
# job's requests take 10 ms each (fio's clock counts whole microseconds, so
# a hair under is allowed).
cat >"$T/cpu_qsort.fio" <<'EOF'
[global]
ioengine=cpuio
runtime=1
[sort]
cpuload=50
cpumode=qsort
[spin]
cpuload=100
cpuchunks=10000
EOF
both cpu_qsort 'all(io(j)["total_ios"] >= 1 and io(j)["io_bytes"] == 0 and io(j,1)["total_ios"] >= 1
                    and io(j,1)["clat_ns"]["min"] >= 9.9e6 for j in (f, d))'

# exec: %n and %r in the arguments, the output in JOB.stdout; grace_time=0.
# A cpuio job runs beside it, as in fio's exec.fio.
cat >"$T/exec.fio" <<'EOF'
[global]
runtime=1
[echoer]
ioengine=exec
program=/bin/echo
arguments=job %n ran for %r s
grace_time=0
[burn]
ioengine=cpuio
cpuload=10
EOF
both exec 'all(open(x + "/echoer.stdout").read() == "job echoer ran for 1 s\n" and os.path.getsize(x + "/echoer.stderr") == 0
               for x in (F, D)) and all(io(j)["total_ios"] >= 1 and io(j)["runtime"] == 0 for j in (f, d))'

# A program that is not there fails the program, not the job (exit 0): its
# complaint is in JOB.stderr. Without std_redirect no files are made.
cat >"$T/exec_missing.fio" <<'EOF'
[missing]
ioengine=exec
program=/nonexistent/tool
arguments=-x
runtime=1
grace_time=0
[quiet]
ioengine=exec
program=/bin/true
std_redirect=0
runtime=1
EOF
both exec_missing 'all(os.path.getsize(x + "/missing.stderr") > 0 and os.path.getsize(x + "/missing.stdout") == 0
                       and not os.path.exists(x + "/quiet.stdout") for x in (F, D))'
grep -q "missing.*/nonexistent/tool.*No such file" "$T/exec_missing.dd.d/err.txt" || fail "exec_missing: no note of the missing program"
out=$(cd "$T" && "$DDBENCH" --readonly exec_missing.fio 2>&1) && fail "exec_missing: --readonly let a program run"
echo "$out" | grep -q "runs a program (ioengine=exec)" || fail "exec_missing: under --readonly: $out"

# What fio refuses, ddbench refuses: cpuio without cpuload, exec without a
# program; and an engine's option on another engine (fio: unknown option).
refused() {
  local name=$1 text=$2 want=$3
  printf '%b' "$text" >"$T/$name.fio"
  (cd "$T" && timeout 20 fio --output-format=json "$name.fio" >/dev/null 2>&1) && fail "$name: fio ran it"
  local out
  out=$(cd "$T" && "$DDBENCH" "$name.fio" 2>&1) && fail "$name: ddbench ran it"
  echo "$out" | grep -q "$want" || fail "$name: ddbench said: $out"
  pass "$name: refused by fio and by ddbench ($want)"
}
refused no_load '[c]\nioengine=cpuio\nruntime=1\n' 'needs cpuload='
refused no_program '[e]\nioengine=exec\nruntime=1\n' 'needs program='
refused stray_option '[p]\nioengine=psync\ncpuload=50\nsize=1m\n' "cpuload '50': an option of ioengine=cpuio"

# net over TCP on the loopback: a receiver listening, a sender connecting a
# second later (startdelay); the sender's 2 MiB as 512 requests, the
# receiver's as what each recv brought, never more. A port of its own per
# run, so two runs of the suite do not meet, and below Linux's ephemeral
# range (32768 up), where any connection of the machine may hold it.
# The receiver asks for 4 MiB and ends when the sender closes: fio 3.33's
# receiver counts a short recv as a whole request, so asked for 2 MiB on a
# busy machine it stopped some KiB short and closed, and fio's sender got
# ECONNRESET (5 of 25 runs beside two busy loops; fio exit 1, error 104).
port=$((20000 + RANDOM % 12000))
cat >"$T/net_tcp.fio" <<EOF
[global]
ioengine=net
port=$port
protocol=tcp
bs=4k
[receiver]
listen
rw=read
size=4m
[sender]
hostname=127.0.0.1
startdelay=1
rw=write
nodelay=1
size=2m
EOF
both net_tcp 'all(io(j,1,"write")["io_bytes"] == 2 << 20 and io(j,1,"write")["total_ios"] == 512
                  and 0 < io(j)["io_bytes"] <= 2 << 20 and io(j)["total_ios"] >= 512 for j in (f, d))'
# A sender writes to a socket, not to storage: --readonly lets it run.
(cd "$T" && "$DDBENCH" --readonly net_tcp.fio >/dev/null 2>&1) || fail "net_tcp: refused under --readonly"
pass "net_tcp: runs under --readonly"

# UDP with pingpong: every datagram is answered before the next goes, so none
# is lost: the reader gets all 256 of the writer's 1 KiB, and counts no drops.
cat >"$T/net_udp.fio" <<EOF
[global]
ioengine=net
port=$((port + 1))
protocol=udp
bs=1k
size=256k
pingpong=1
[reader]
rw=read
[writer]
hostname=127.0.0.1
startdelay=1
rw=write
EOF
both net_udp 'all(io(j)["total_ios"] == io(j,1,"write")["total_ios"] == 256 and io(j)["drop_ios"] == 0 for j in (f, d))'

# The same to a multicast group, when this machine routes one (a sandbox may not).
sed -e 's/^hostname=.*/hostname=239.0.0.1/' -e 's/^\[reader\]/[reader]\nhostname=239.0.0.1\nttl=1/' \
  -e "s/^port=.*/port=$((port + 2))/" "$T/net_udp.fio" >"$T/net_multicast.fio"
if (cd "$T" && timeout 20 fio --output-format=json net_multicast.fio >/dev/null 2>&1); then
  both net_multicast 'all(io(j)["total_ios"] == 256 for j in (f, d))'
else
  skip_part "net_multicast: fio 3.33 cannot send to 239.0.0.1 here"
fi

# startdelay holds a job back from its wave's start; its own runtime does not count the wait.
printf '[late]\nioengine=null\nsize=1m\nstartdelay=1500ms\n' >"$T/late.fio"
start=$(date +%s%N)
(cd "$T" && "$DDBENCH" --output-format=json --output=late.json late.fio >/dev/null) || fail "late: ddbench failed"
[ $(($(date +%s%N) - start)) -ge 1500000000 ] || fail "late: ddbench did not wait 1.5 s"
python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["jobs"][0]["job_runtime"] >= 1000)' "$T/late.json" ||
  fail "late: the wait counted in job_runtime"
pass "startdelay=1500ms: ddbench waited 1.5 s before the job, not in its runtime"

refused net_no_port '[n]\nioengine=net\nhostname=127.0.0.1\nrw=write\nsize=1m\n' 'needs port='
refused net_udp_listen '[n]\nioengine=net\nprotocol=udp\nlisten\nport=9\nsize=1m\n' 'listen is for TCP only'
refused net_random '[n]\nioengine=net\nlisten\nport=9\nrw=randread\nsize=1m\n' 'cannot be random'
