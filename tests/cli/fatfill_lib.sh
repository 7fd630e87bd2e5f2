# Sourced by the fatfill CLI tests after lib.sh: the tool, and the peer-side
# checks every one of them makes. FAT structures are decoded here from the
# Microsoft spec offsets (as tests/cli/fatinfo.py does), independently of
# fsio's C++ code.
FATFILL=$BUILD/cmd/fatfill
export SOURCE_DATE_EPOCH=1700000000 TZ=UTC LC_ALL=C.UTF-8

# fat_copies_same IMG [OFFSET]: every FAT copy byte-identical.
fat_copies_same() {
  python3 - "$1" "${2:-0}" <<'PY'
import sys
path, base = sys.argv[1], int(sys.argv[2])
f = open(path, 'rb'); f.seek(base); bs = f.read(512)
le = lambda o, n: int.from_bytes(bs[o:o + n], 'little')
ss, res, nfats = le(11, 2), le(14, 2), bs[16]
fatsz = le(22, 2) or le(36, 4)
copies = []
for i in range(nfats):
    f.seek(base + (res + i * fatsz) * ss); copies.append(f.read(fatsz * ss))
bad = [i for i in range(1, nfats) if copies[i] != copies[0]]
if bad:
    i = bad[0]; d = next(k for k in range(len(copies[0])) if copies[i][k] != copies[0][k])
    sys.exit(f"FAT copy {i} differs from copy 0 at byte {d}")
PY
}

# fsck_clean IMG: fsck.fat -n exits 0 and reports nothing: its output is the
# version line and the summary line only.
fsck_clean() {
  local rc=0
  fsck.fat -n "$1" > "$T/fsck.out" 2>&1 || rc=$?
  [ "$rc" -eq 0 ] && [ "$(grep -cv -e '^fsck.fat ' -e ': [0-9]* files, [0-9]*/[0-9]* clusters$' "$T/fsck.out")" -eq 0 ] ||
    { cat "$T/fsck.out"; return 1; }
}

# fsck_repairable OUTPUT: what fsck.fat -n printed holds nothing but lost
# clusters ("Reclaimed N unused clusters") and a wrong free count.
fsck_repairable() {
  ! grep -v -e '^fsck.fat ' -e ': [0-9]* files, [0-9]*/[0-9]* clusters$' -e '^$' \
      -e '^Reclaimed [0-9]* unused clusters\? ([0-9]* bytes)\.$' \
      -e '^Free cluster summary wrong ([0-9]* vs\. really [0-9]*)$' -e '^  Auto-correcting\.$' \
      -e '^Leaving filesystem unchanged\.$' "$1"
}

# fragment IMG DIR N: N files of 1..4 clusters of random bytes written with
# mcopy, every other one deleted again, so the free space is full of holes
# holding old non-zero data. The kept files are left in DIR/keep (NAME.BIN).
fragment() {
  local img=$1 dir=$2 n=$3 cb i
  cb=$(python3 "$SRC/tests/cli/fatinfo.py" "$img" | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["bytes_per_sector"]*j["sectors_per_cluster"])')
  mkdir -p "$dir/keep" "$dir/gone"
  for i in $(seq 1 "$n"); do
    head -c $(( (i % 4 + 1) * cb - i % 7 )) /dev/urandom > "$dir/f$i"
    mcopy -i "$img" "$dir/f$i" "::F$i.BIN"
  done
  for i in $(seq 1 "$n"); do
    if [ $((i % 2)) -eq 0 ]; then mdel -i "$img" "::F$i.BIN"; mv "$dir/f$i" "$dir/gone/F$i.BIN"
    else mv "$dir/f$i" "$dir/keep/F$i.BIN"; fi
  done
}

# kept_intact IMG DIR: every file fragment kept reads back byte for byte.
kept_intact() {
  local f
  for f in "$2"/keep/*; do
    mcopy -n -i "$1" "::$(basename "$f")" "$T/back" || return 1
    cmp -s "$f" "$T/back" || { echo "$(basename "$f") changed"; return 1; }
  done
}

# zeros_of IMG PATH SIZE: the file reads back as SIZE zero bytes.
zeros_of() {
  mcopy -n -i "$1" "::$2" "$T/back" || return 1
  [ "$(stat -c %s "$T/back")" -eq "$3" ] || { echo "$2: $(stat -c %s "$T/back") bytes, expected $3"; return 1; }
  cmp -s "$T/back" <(head -c "$3" /dev/zero) || { echo "$2 is not all zeros"; return 1; }
}

# listed IMG JSON: mdir lists every file of fatfill's --json report in its
# directory, by its long (or short) name, at its size.
listed() {
  python3 - "$1" "$2" <<'PY'
import collections, json, os, re, subprocess, sys
img, report = sys.argv[1], json.load(open(sys.argv[2]))
by_dir = collections.defaultdict(list)
for f in report["files"]:
    d, n = f["path"].rsplit("/", 1)
    by_dir[d or "/"].append((n, f["size"]))
line = re.compile(r"^(.{8}) (.{3})\s+(\d+) \d{4}-\d\d-\d\d\s+\d+:\d\d\s*(.*?)\s*$")
for d, files in by_dir.items():
    out = subprocess.run(["mdir", "-i", img, "::" + d], capture_output=True, text=True,
                         env=dict(os.environ, MTOOLS_SKIP_CHECK="1")).stdout
    seen = {}
    for l in out.splitlines():
        m = line.match(l)
        if not m: continue
        short = m[1].strip() + ("." + m[2].strip() if m[2].strip() else "")
        seen[(m[4] or short).lower()] = int(m[3])
    for n, size in files:
        got = seen.get(n.lower())
        if got != size:
            sys.exit(f"mdir ::{d}: {n} listed with size {got}, expected {size}\n{out}")
PY
}
