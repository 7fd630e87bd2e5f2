#!/usr/bin/env bash
# What fio's own example and t/jobs files use (issue 27), in job files
# written for this test: each runs through fio 3.33 and through ddbench, in
# a directory of its own, and the two must agree: exit 0, the bytes and
# requests per direction, the files made, and the JSON's keys and types
# (fio_json_omitted.txt lists what ddbench leaves out, and why).
. "$(dirname "$0")/lib.sh"
need python3 fio
. "$(dirname "$0")/fio_both.sh"

# ioengine=null: nothing moves, no file is made; 4 MiB in 4 KiB writes.
cat >"$T/null.fio" <<'EOF'
[nothing]
ioengine=null
size=4m
rw=randwrite
iodepth=8
EOF
both null 'io(f,0,"write")["total_ios"] == io(d,0,"write")["total_ios"] == 1024
           and not os.listdir(D).count("nothing.0.0")'

# gtod_reduce: no latencies (N 0, no percentiles), no bw samples, on either side.
cat >"$T/gtod.fio" <<'EOF'
[global]
gtod_reduce=1
[quick]
ioengine=null
size=8m
rw=randread
norandommap
EOF
both gtod 'all(io(j)["clat_ns"]["N"] == 0 and "percentile" not in io(j)["clat_ns"] and io(j)["bw_samples"] == 0
               and io(j)["io_bytes"] == 8 << 20 for j in (f, d))'

# filesize: a 512 KiB file; size= caps the bytes at the file, io_size= goes over it again.
cat >"$T/filesize.fio" <<'EOF'
[small]
filesize=512k
size=2m
rw=read
[again]
filesize=512k
io_size=2m
rw=read
EOF
both filesize 'io(f)["io_bytes"] == io(d)["io_bytes"] == 512 << 10
               and io(f,1)["io_bytes"] == io(d,1)["io_bytes"] == 2 << 20
               and os.path.getsize(F + "/small.0.0") == os.path.getsize(D + "/small.0.0") == 512 << 10'

# bsrange: sizes drawn from 1k to 4k, 2.5 KiB on average (fio's rule: 1k,
# 2k, 3k and 4k a quarter each).
cat >"$T/bsrange.fio" <<'EOF'
[ranged]
bsrange=1k-4k
size=8m
rw=write
EOF
both bsrange 'all(2300 < io(j,0,"write")["io_bytes"] / io(j,0,"write")["total_ios"] < 2800 for j in (f, d))
              and io(f,0,"write")["io_bytes"] == io(d,0,"write")["io_bytes"] == 8 << 20'

# Offset modifiers: backwards reads, and writes with holes.
cat >"$T/modifiers.fio" <<'EOF'
[backwards]
rw=read:-8k
bs=4k
size=1m
filename=back.dat
[holes]
rw=write:12k
bs=4k
size=1m
filename=holes.dat
EOF
both modifiers 'io(f)["total_ios"] == io(d)["total_ios"] == 256
                and io(f,1,"write")["total_ios"] == io(d,1,"write")["total_ios"] == 256'

# random_distribution: zoned over a file, zipf and pareto on the null engine.
cat >"$T/distributions.fio" <<'EOF'
[zoned]
rw=randread
random_distribution=zoned:60/10:30/20:10/70
size=4m
[zipf]
ioengine=null
rw=randread
random_distribution=zipf:1.2
size=16m
[pareto]
ioengine=null
rw=randwrite
random_distribution=pareto:0.9
size=16m
EOF
both distributions 'all(io(f,n,k)["io_bytes"] == io(d,n,k)["io_bytes"] for n, k in ((0,"read"),(1,"read"),(2,"write")))'

# do_verify=0 writes without reading back; a later job checks the data
# (each tool reads what it wrote itself); verify_fatal, experimental_verify,
# verify_dump, posixaio and serialize_overlap too (io_submit_mode=offload hangs fio 3.33 here).
cat >"$T/verify.fio" <<'EOF'
[global]
filename=verified.dat
size=1m
verify=crc32c
verify_dump=1
[pre]
rw=write
do_verify=0
ioengine=posixaio
iodepth=4
[post]
stonewall
rw=read
verify_fatal=1
experimental_verify=1
serialize_overlap=1
EOF
both verify 'io(f,0,"read")["io_bytes"] == io(d,0,"read")["io_bytes"] == 0
             and io(f,1)["io_bytes"] == io(d,1)["io_bytes"] == 1 << 20'

# per_job_logs=0: one PREFIX_bw.log, no PREFIX_bw.1.log.
cat >"$T/logs.fio" <<'EOF'
[logged]
ioengine=null
filesize=1m
write_bw_log=shared
per_job_logs=0
log_offset=1
EOF
both logs 'all(os.path.exists(x + "/shared_bw.log") and not os.path.exists(x + "/shared_bw.1.log") for x in (F, D))'

# bsrange and filesize on the null engine with a random generator, as
# fio's t/jobs do; the note says ddbench's order is its own.
cat >"$T/generator.fio" <<'EOF'
[gen]
ioengine=null
filesize=1m
rw=randread
random_generator=lfsr
EOF
both generator 'io(f)["io_bytes"] == io(d)["io_bytes"] == 1 << 20'
grep -q "note: random_generator=lfsr" "$T/generator.dd.d/err.txt" || fail "no random_generator note"

# rate and rate_iops cap a job as fio's do: 1 MiB at 1 MiB/s, 400 writes at
# 400/s. Wide bounds (a busy machine slows a job, never speeds it past the cap).
cat >"$T/rate.fio" <<'EOF2'
[bytes]
ioengine=null
size=1m
rw=read
rate=1m
[requests]
ioengine=null
size=1600k
rw=write
rate_iops=,400
EOF2
both rate 'all(0.5 * 2**20 < io(j)["bw_bytes"] < 1.1 * 2**20 for j in (f, d))
           and all(200 < io(j,1,"write")["iops"] < 440 for j in (f, d))
           and io(f)["io_bytes"] == io(d)["io_bytes"] == 1 << 20'

# A write job's verify reads are its reads, as fio reports them
# (basic-verify.fio): the same requests, bytes and latency keys (the
# percentiles too, which both() compares), over the read-back's own runtime
# (on basic-verify.fio fio's job_runtime was 501 ms, 279 of writes and 223
# of reads; ddbench's is their sum).
cat >"$T/verifyreads.fio" <<'EOF2'
[w]
filename=verifyreads.dat
size=1m
bs=4k
rw=randwrite
iodepth=4
verify=crc32c
EOF2
both verifyreads 'all(io(j)["total_ios"] == io(j, 0, "write")["total_ios"] == 256 for j in (f, d))
                  and io(f)["io_bytes"] == io(d)["io_bytes"] == 1 << 20
                  and all(io(j)["clat_ns"]["N"] == 256 and io(j)["runtime"] > 0 for j in (f, d))'

# verify_backlog's reads too (t0005.fio): counted as the job's reads.
cat >"$T/backlogreads.fio" <<'EOF2'
[w]
filename=backlogreads.dat
size=256k
bs=4k
rw=write
ioengine=psync
verify=crc32c
verify_backlog=16
EOF2
both backlogreads 'all(io(j)["total_ios"] == io(j, 0, "write")["total_ios"] == io(j)["clat_ns"]["N"] == 64
                    for j in (f, d)) and io(f)["io_bytes"] == io(d)["io_bytes"] == 256 << 10'

# Options written by their aliases are reported by fio's own names
# (blocksize as bs, readwrite as rw, ...) in "global options" and "job
# options": both() fails on a key path one tool has and the other not.
cat >"$T/aliases.fio" <<'EOF2'
[global]
ioengine=null
blocksize=8k
io_limit=64k
[one]
readwrite=write
size=1m
timeout=10
iodepth_batch_submit=1
blocksize_range=4k-8k
[two]
wait_for_previous
size=64k
EOF2
both aliases 'f["global options"].keys() == d["global options"].keys()
              and all(f["jobs"][n]["job options"].keys() == d["jobs"][n]["job options"].keys() for n in (0, 1))'

# With group_reporting fio reports one entry per group, named after its
# first job, with its last job's "job options".
cat >"$T/groupopts.fio" <<'EOF2'
[global]
ioengine=null
size=1m
group_reporting=1
[a]
bs=4k
[b]
bs=8k
rw=write
[c]
bs=16k
iodepth=2
EOF2
both groupopts 'len(f["jobs"]) == len(d["jobs"]) == 1 and f["jobs"][0]["jobname"] == d["jobs"][0]["jobname"] == "a"
                and f["jobs"][0]["job options"] == d["jobs"][0]["job options"] == {"bs": "16k", "iodepth": "2"}'

# A rated job ends with its last request, as fio's does: one 4 KiB read at
# rate=1 (a byte a second) would otherwise wait 4096 s for a next one.
cat >"$T/lastrate.fio" <<'EOF2'
[one]
ioengine=null
size=4k
rw=read
rate=1
EOF2
for tool in fio "$DDBENCH"; do
  rc=0; timeout 60 "$tool" --output-format=json --output="$T/lastrate.json" "$T/lastrate.fio" >/dev/null 2>&1 || rc=$?
  [ $rc -eq 0 ] || fail "lastrate: $(basename "$tool") exited $rc (124: still waiting after 60 s)"
  [ "$(json "$T/lastrate.json" 'j["jobs"][0]["read"]["io_bytes"]')" = 4096 ] || fail "lastrate: $tool read other than 4 KiB"
done
pass "lastrate: a rated job ends with its last request in fio and ddbench"

# flow: two jobs of one flow_id do I/O 1:3. The first is held to 500/s for
# 2 s; the second, capped at 4000/s (8 times as much without flow), runs
# for the first second, so it should do about 3 x 500. It ends first: a job
# that ends leaves its group, and the other is held by its rate alone then.
# fio 3.33's own flow drifts under load (1:1.6 seen with the machine busy),
# so for fio only that flow holds at all (under 4.2, not 8); ddbench must
# come near 1:3.
cat >"$T/flow.fio" <<'EOF2'
[global]
ioengine=null
size=1g
time_based
[one]
flow=1
rate_iops=500
runtime=2
[three]
flow=3
rate_iops=4000
runtime=1
EOF2
both flow '1.0 < io(f,1)["total_ios"] / (io(f,0)["total_ios"] / 2) < 4.2
           and 1.8 < io(d,1)["total_ios"] / (io(d,0)["total_ios"] / 2) < 4.2'

# Two jobs on one file, the second past its end: the file grows to the
# second's offset + size, as fio lays it out.
cat >"$T/extend.fio" <<'EOF2'
[global]
filename=shared.dat
size=1m
rw=write
[first]
[second]
offset=8m
EOF2
both extend 'os.path.getsize(F + "/shared.dat") == os.path.getsize(D + "/shared.dat") == 9 << 20
             and io(f,1,"write")["io_bytes"] == io(d,1,"write")["io_bytes"] == 1 << 20'

# blockalign: random 512-byte reads at 4 KiB boundaries only (the random map
# off: fio turns it off anyway, and warns into its JSON output unless told),
# as jesd219.fio asks; per-I/O logs say where.
cat >"$T/blockalign.fio" <<'EOF2'
[ba]
ioengine=null
size=4m
rw=randread
bs=512
blockalign=4k
norandommap
write_iops_log=ba
log_offset=1
EOF2
both blockalign 'all(sum(1 for l in open(x + "/ba_iops.1.log")) == 8192
                     and all(int(l.split(",")[4]) % 4096 == 0 for l in open(x + "/ba_iops.1.log"))
                     and len({l.split(",")[4] for l in open(x + "/ba_iops.1.log")}) <= 1024 for x in (F, D))'

# log_prio: the logs' last column is the I/O's priority value as fio prints
# it; with no priority set, 0x0000 on every line (ddbench_fio_prio.sh: set ones).
cat >"$T/prio.fio" <<'EOF2'
[prio]
ioengine=null
size=64k
write_lat_log=prio
log_prio=1
EOF2
both prio 'all([l.rstrip("\n").split(", ")[-1] for l in open(x + "/prio_clat.1.log")] == ["0x0000"] * 16 for x in (F, D))'

# verify on mixed workloads (t0002's and t0026's jobs): the writes are read
# back and checked, the pass's reads are not; fio's verify reads count in
# read.* and ddbench's do not (README), so only the written bytes compare.
cat >"$T/mixverify.fio" <<'EOF2'
[global]
filename=mixed.dat
size=2m
verify=md5
[seq]
rw=rw
bsrange=512-64k
[rand]
stonewall
rw=randrw
rwmixread=30
EOF2
both mixverify 'all(d["jobs"][n]["ddbench"]["verify"]["ok"] and
                    d["jobs"][n]["ddbench"]["verify"]["bytes_checked"] == io(d,n,"write")["io_bytes"] > 0 for n in (0, 1))'

# ioengine=ftruncate (ftruncate.fio): each write truncates the file to its
# offset, so the file ends at the last request's offset (the second job
# shrinks it); no data moves.
cat >"$T/ftruncate.fio" <<'EOF2'
[grow]
ioengine=ftruncate
filename=truncated
size=1m
bs=4k
rw=write
[shrink]
stonewall
ioengine=ftruncate
filename=truncated
offset=256k
size=512k
bs=64k
rw=write
EOF2
both ftruncate 'io(f,0,"write")["total_ios"] == io(d,0,"write")["total_ios"] == 256
                and os.path.getsize(F + "/truncated") == os.path.getsize(D + "/truncated") == 720896'

# The file engines (filecreate-, filestat- and filedelete-ioengine.fio):
# each of nrfiles files is created, stat'ed or deleted once, timed as one
# completion-latency sample; its filesize/bs requests count in bytes only.
cat >"$T/fileops.fio" <<'EOF2'
[global]
nrfiles=5
filesize=8k
[made]
ioengine=filecreate
create_on_open=1
openfiles=1
fallocate=none
[looked]
stonewall
ioengine=filestat
[gone]
stonewall
ioengine=filedelete
EOF2
both fileops 'all(io(f,n)["total_ios"] == io(d,n)["total_ios"] == 10 and io(f,n)["io_bytes"] == io(d,n)["io_bytes"]
                  and io(f,n)["clat_ns"]["N"] == io(d,n)["clat_ns"]["N"] == 5 and io(d,n)["lat_ns"]["N"] == 0 for n in (0, 1, 2))
              and sorted(os.listdir(F)) == sorted(os.listdir(D))
              and os.path.getsize(F + "/made.0.4") == os.path.getsize(D + "/made.0.4") == 0
              and os.path.getsize(F + "/looked.0.4") == os.path.getsize(D + "/looked.0.4") == 8192
              and not os.path.exists(D + "/gone.0.0")'

# write_iolog (t0007): every request appended to the log as fio's version 3
# iolog has it; two jobs append to one log, one after the other. Times differ,
# the lines after them must not.
cat >"$T/iolog.fio" <<'EOF2'
[global]
filename=logged.dat
size=1m
write_iolog=requests.log
[fill]
rw=write
bs=64k
[back]
stonewall
rw=read
bs=128k
iodepth=4
ioengine=io_uring
EOF2
both iolog '[l.split(" ", 1)[-1] for l in open(F + "/requests.log")]
            == [l.split(" ", 1)[-1] for l in open(D + "/requests.log")]
            and sum(" write " in l for l in open(D + "/requests.log")) == 16
            and sum(" read " in l for l in open(D + "/requests.log")) == 8'

# verify_backlog (t0005, t0008, cross-stripe-verify.fio): the writes are
# checked every N of them during the job; all of them in the end, as many
# bytes as fio's verify reads, which both count in read.* (the mixed job's
# directions are drawn apart: its reads are its own and the checks of its
# writes, 1 MiB in both).
cat >"$T/backlog.fio" <<'EOF2'
[global]
filename=backlog.dat
size=1m
bs=4k
verify=crc32c
[seq]
rw=write
verify_backlog=32
[mixed]
stonewall
rw=readwrite
verify_backlog=1
[deep]
stonewall
rw=randwrite
ioengine=io_uring
iodepth=8
verify_backlog=5
EOF2
both backlog 'all(d["jobs"][n]["ddbench"]["verify"]["ok"]
                  and d["jobs"][n]["ddbench"]["verify"]["bytes_checked"] == io(d,n,"write")["io_bytes"] for n in (0, 1, 2))
              and all(io(f,n,"write")["io_bytes"] == io(d,n,"write")["io_bytes"] == io(f,n)["io_bytes"]
                      == io(d,n)["io_bytes"] for n in (0, 2))
              and io(d,1)["io_bytes"] == io(f,1)["io_bytes"] == 1 << 20'

# verify_pattern (t0006, surface-scan.fio): the pattern fills each block
# after the verify header, and the read-back checks it, in both tools.
cat >"$T/vpattern.fio" <<'EOF2'
[global]
filename=pattern.dat
size=1m
bs=4k
verify=meta
verify_pattern=0xaaa
verify_fatal=1
[stamp]
rw=randwrite
verify_backlog=16
[check]
stonewall
rw=read
EOF2
both vpattern 'io(f,0,"write")["io_bytes"] == io(d,0,"write")["io_bytes"] == io(f,1)["io_bytes"] == io(d,1)["io_bytes"]
               and all(d["jobs"][n]["ddbench"]["verify"]["ok"] for n in (0, 1))
               and all(bytes.fromhex("0aaa") * 200 in open(x + "/pattern.dat", "rb").read() for x in (F, D))'

# zonemode=strided (disk-zone-profile.fio): 192 KiB in each zone of 128 KiB
# (starting over inside it), then 64 KiB skipped; the requests, as both
# tools log them, go to the same offsets in the same order.
cat >"$T/strided.fio" <<'EOF2'
[zones]
filename=zoned.dat
size=1m
bs=64k
rw=read
zonemode=strided
zonesize=192k
zonerange=128k
zoneskip=64k
write_iolog=zones.log
EOF2
both strided '[l.split(" ", 1)[-1] for l in open(F + "/zones.log")] == [l.split(" ", 1)[-1] for l in open(D + "/zones.log")]
              and io(f)["total_ios"] == io(d)["total_ios"] == 16'

# An offset modifier's pass that ends a request at the end of the range is
# over (t0007's rw=read:512k with bs=1m: 0, 1.5m, ... 15m), where one that
# ends short of it wraps to the start (modifiers.fio above).
cat >"$T/holeend.fio" <<'EOF2'
[ends]
rw=read:512k
bs=1m
size=16m
filename=ends.dat
EOF2
both holeend 'io(f)["total_ios"] == io(d)["total_ios"] == 11'

# trimwrite and randtrimwrite (t0023, t0024) on the null engine: each block
# trimmed, then written. With bs=4k,4k,8k fio 3.33 makes 128 trims of 8k and
# 255 writes of 4k (the writes catch up with each trim; the pass ends where
# the next trim would start past the end); randtrimwrite with bs=8k writes
# each 8k it trims, 128 of each, in trim-write pairs at one offset (the
# iolog's lines). (With bs=4k,4k,8k fio's random map, of 4k blocks, finds
# fewer free 8k trims; ddbench's map is of the trims' size.)
cat >"$T/trimwrite.fio" <<'EOF2'
[global]
ioengine=null
filesize=1m
bs=4k,4k,8k
[seq]
rw=trimwrite
[rand]
rw=randtrimwrite
bs=8k
write_iolog=rand.log
EOF2
both trimwrite 'all(io(j,0,"trim")["total_ios"] == 128 and io(j,0,"trim")["io_bytes"] == 1 << 20
                    and io(j,0,"write")["total_ios"] == 255 and io(j,1,"trim")["total_ios"] == 128
                    and io(j,1,"write")["io_bytes"] == 1 << 20 and io(j,0,"read")["total_ios"] == 0
                    and io(j,0,"trim")["clat_ns"]["N"] == 128 for j in (f, d))
                and [l.split()[3:] for l in open(D + "/rand.log") if " trim " in l]
                    == [l.split()[3:] for l in open(D + "/rand.log") if " write " in l]'

# fio 3.33 trims with BLKDISCARD only: on a regular file the job fails with
# ENOTTY, under fio as under ddbench.
printf '[punch]\nfilename=punch.dat\nsize=64k\nrw=trimwrite\n' >"$T/punch.fio"
for tool in fio "$DDBENCH"; do
  rc=0
  (cd "$T" && "$tool" "$T/punch.fio" >"$T/punch.out" 2>&1) || rc=$?
  [ $rc -eq 1 ] && grep -q "Inappropriate ioctl for device" "$T/punch.out" ||
    fail "punch: $tool exited $rc without ENOTTY: $(cat "$T/punch.out")"
done
pass "punch: a trim on a regular file fails with ENOTTY under fio and ddbench"
