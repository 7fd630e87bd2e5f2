#!/usr/bin/env bash
# What write buffers hold with fio's buffer_compress_percentage,
# buffer_compress_chunk and dedupe options (issue 27): the same small jobs
# written by fio 3.33 and by ddbench (fio_both.sh), then the files measured
# side by side: the share of 4 KiB blocks that repeat an earlier one (over
# the files in order) and zlib's compressed size over the original. The
# bytes differ (each tool has its own random generator); the shares must
# agree within 0.05 and 0.03, a few standard deviations at these sizes.
. "$(dirname "$0")/lib.sh"
need python3 fio
. "$(dirname "$0")/fio_both.sh"

# NAME FILES...: compares the measures of the copies of FILES that fio and
# ddbench wrote for job file NAME.
same_data() {
  python3 - "$T" "$@" <<'PY' || fail "$1: the data differs from fio's"
import hashlib, sys, zlib
t, name, files = sys.argv[1], sys.argv[2], sys.argv[3:]
def measure(d):
    seen, dup, n, comp, total = set(), 0, 0, 0, 0
    for f in files:
        data = open(f"{t}/{name}.{d}.d/{f}", "rb").read()
        total += len(data)
        comp += len(zlib.compress(data, 1))
        for i in range(0, len(data), 4096):
            h = hashlib.md5(data[i:i + 4096]).digest()
            n += 1
            dup += h in seen
            seen.add(h)
    return dup / n, comp / total
(fd, fz), (dd, dz) = measure("fio"), measure("dd")
print(f"{name} {' '.join(files)}: duplicate blocks fio {fd:.3f} ddbench {dd:.3f}; zlib fio {fz:.3f} ddbench {dz:.3f}")
sys.exit(abs(fd - dd) > 0.05 or abs(fz - dz) > 0.03)
PY
}

# fio's dedupe-global example, smaller: two jobs whose duplicates come from
# one working set spread over both, half of each 512-byte chunk zeros.
cat >"$T/global.fio" <<'EOF'
[global]
size=8m
dedupe_mode=working_set
dedupe_global=1
dedupe_percentage=50
dedupe_working_set_percentage=50
buffer_compress_percentage=50
rw=write
[a]
[b]
EOF
both global 'all(io(j,n,"write")["io_bytes"] == 8 << 20 for j in (f, d) for n in (0, 1))'
same_data global a.0.0
same_data global b.0.0
same_data global a.0.0 b.0.0

# repeat: 30% of the writes repeat the last unique block; 40% of each 1 KiB zeros.
printf '[r]\nrw=write\nsize=8m\ndedupe_percentage=30\nbuffer_compress_percentage=40\nbuffer_compress_chunk=1k\n' >"$T/repeat.fio"
both repeat 'io(f,0,"write")["io_bytes"] == io(d,0,"write")["io_bytes"]'
same_data repeat r.0.0

# 64 KiB requests, 70% compressible: in 512-byte chunks no 4 KiB block
# repeats; with buffer_compress_chunk=0 the zeros end each request in whole
# blocks, which repeat.
printf '[c]\nrw=write\nbs=64k\nsize=8m\nbuffer_compress_percentage=70\n[w]\nrw=write\nbs=64k\nsize=8m\nbuffer_compress_percentage=70\nbuffer_compress_chunk=0\n' >"$T/chunk.fio"
both chunk 'io(f,1,"write")["io_bytes"] == io(d,1,"write")["io_bytes"]'
same_data chunk c.0.0
same_data chunk w.0.0

# fio's own refusals: a working set and dedupe_percentage over 100%, and no size.
for bad in 'size=8m\ndedupe_percentage=60\ndedupe_mode=working_set\ndedupe_working_set_percentage=50' \
  'filesize=8m\ndedupe_percentage=10\ndedupe_mode=working_set'; do
  printf "[x]\nrw=write\n$bad\n" >"$T/bad.fio"
  (cd "$T" && fio bad.fio >/dev/null 2>&1) && fail "fio ran: $bad"
  (cd "$T" && "$DDBENCH" bad.fio >/dev/null 2>&1) && fail "ddbench ran: $bad"
done
pass "a working set with no room, or without size=, is refused by fio and by ddbench"
