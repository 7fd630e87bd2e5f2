#!/usr/bin/env bash
# fio's logs (write_bw_log, write_lat_log, write_iops_log, log_avg_msec,
# log_offset) in fio's format, judged next to fio 3.33's logs of the same
# job; and --plot: a self-contained SVG whose charts have axes, one series
# per job, and points that read back as the values in the logs.
. "$(dirname "$0")/lib.sh"
need python3 fio
img=$T/img
truncate -s 64M "$img"
"$DDBENCH" -q --rw write --bs 1M --force "$img"
mkdir "$T/fio" "$T/dd"

# Windowed logs of two jobs, side by side with fio's.
job=(--filename="$img" --size=32m --bs=4k --runtime=1 --time_based --log_avg_msec=100
     --write_bw_log=w --write_lat_log=w --write_iops_log=w
     --name=r --rw=randread --name=m --rw=randrw --rwmixread=50)
(cd "$T/fio" && fio --output-format=terse "${job[@]}" >/dev/null) || fail "fio failed"
(cd "$T/dd" && "$DDBENCH" --output-format=terse --plot="$T/dd/plot.svg" "${job[@]}" >/dev/null) || fail "ddbench failed"
fio_logs=$(cd "$T/fio" && ls *.log | sort | tr '\n' ' ')
dd_logs=$(cd "$T/dd" && ls *.log | sort | tr '\n' ' ')
[ "$fio_logs" = "$dd_logs" ] || fail "log files: fio [$fio_logs], ddbench [$dd_logs]"
python3 - "$T/fio" "$T/dd" <<'PY' || fail "windowed logs differ in form from fio's"
import os, sys
def rows(path):
    return [[int(x) for x in line.split(", ")] for line in open(path)]
for name in sorted(os.listdir(sys.argv[2])):
    if not name.endswith(".log"):
        continue
    f, d = rows(os.path.join(sys.argv[1], name)), rows(os.path.join(sys.argv[2], name))
    if "slat" in name:   # psync: fio's slat log is empty, so is ours
        assert f == [] and d == [], name
        continue
    assert f and d, name
    assert {len(r) for r in d} == {len(r) for r in f} == {5}, name
    assert {r[2] for r in d} == {r[2] for r in f}, (name, "directions")
    assert all(r[3] == 0 and r[4] == 0 for r in d), (name, "windowed: bs and prio 0")
    times = sorted({r[0] for r in d})
    # One entry per 100 ms window that had samples: a latency log skips a
    # window in which nothing completed (seen on a loaded machine), as fio's does.
    assert all(t % 100 == 0 for t in times), (name, times)
    assert 6 <= len(times) <= 11, (name, len(times))
    if "_bw." in name:
        # both tools measured the same workload: the same order of magnitude
        fm = sum(r[1] for r in f) / len(f)
        dm = sum(r[1] for r in d) / len(d)
        assert 0.1 < dm / fm < 10, (name, fm, dm)
PY
pass "windowed logs: the files fio writes ($dd_logs), 5 columns, 100 ms apart"

# The plot: three charts with axes; in each, one series per job and
# direction; the bandwidth and IOPS points are the logs' windows.
python3 - "$T/dd/plot.svg" "$T/dd" <<'PY' || fail "plot: $(head -c 600 "$T/dd/plot.svg")"
import sys, xml.etree.ElementTree as ET
ns = {"s": "http://www.w3.org/2000/svg"}
root = ET.parse(sys.argv[1]).getroot()                  # well-formed XML
assert root.tag == "{http://www.w3.org/2000/svg}svg"
assert not root.findall(".//s:script", ns) and "href" not in open(sys.argv[1]).read()
charts = {g.get("id"): g for g in root.findall(".//s:g[@class='chart']", ns)}
assert set(charts) == {"bandwidth", "iops", "latency"}, charts.keys()
def log(name):
    out = {}
    for line in open(f"{sys.argv[2]}/{name}"):
        t, v, d = [int(x) for x in line.split(", ")[:3]]
        out.setdefault(d, []).append((t, v))
    return out
for cid, logname, scale in (("bandwidth", "w_bw", 1 / 1024), ("iops", "w_iops", 1)):
    g = charts[cid]
    assert len(g.findall("s:g[@data-axis]", ns)) == 2, cid
    series = g.findall("s:polyline[@class='series']", ns)
    labels = [s.get("data-label") for s in series]
    assert labels == ["r.1", "m.2 read", "m.2 write"], labels
    x0, x1 = float(g.get("data-x-min")), float(g.get("data-x-max"))
    y0, y1 = float(g.get("data-y-min")), float(g.get("data-y-max"))
    for s, (job, d) in zip(series, ((1, 0), (2, 0), (2, 1))):
        pts = [tuple(map(float, p.split(","))) for p in s.get("points").split()]
        want = log(f"{logname}.{job}.log")[d]
        assert len(pts) == len(want), (cid, s.get("data-label"), len(pts), len(want))
        for (px, py), (t, v) in zip(pts, want):
            x = x0 + px / 800 * (x1 - x0)
            y = y0 + (230 - py) / 230 * (y1 - y0)
            assert abs(x - t / 1000) < 0.002 * x1 + 1e-9, (cid, x, t)
            assert abs(y - v * scale) <= 0.01 * y1 + 1, (cid, y, v * scale)
lat = charts["latency"]
assert lat.get("data-x-scale") == "nines"
assert len(lat.findall("s:polyline[@class='series']", ns)) == 3
for s in lat.findall("s:polyline[@class='series']", ns):
    ys = [float(p.split(",")[1]) for p in s.get("points").split()]
    assert len(ys) > 50 and all(a >= b - 1e-6 for a, b in zip(ys, ys[1:])), "latency grows with the percentile"
PY
pass "plot: 3 charts with axes, a series per job and direction, points equal to the logs"

# Per-request logs with offsets: fio's 6 columns, one line per request.
(cd "$T/dd" && rm -f *.log && "$DDBENCH" --name=o --filename="$img" --size=1m --rw=randread --write_lat_log=o \
  --log_offset=1 --output-format=terse >/dev/null) || fail "ddbench failed"
python3 - "$T/dd/o_clat.1.log" <<'PY' || fail "per-request log: $(head -3 "$T/dd/o_clat.1.log")"
import sys
rows = [[int(x) for x in l.split(", ")] for l in open(sys.argv[1])]
assert len(rows) == 256, len(rows)
assert all(len(r) == 6 and r[2] == 0 and r[3] == 4096 and r[5] == 0 for r in rows)
assert sorted(r[4] for r in rows) == [k * 4096 for k in range(256)]   # every block once
PY
pass "per-request logs: 256 lines of 6 columns, every offset once"
