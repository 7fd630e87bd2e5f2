#!/usr/bin/env bash
# Damaged streams: truncations at many offsets and byte flips in the header,
# the frame index records, the zstd frames and the end record (the offsets
# come from fsimg_layout.py, which reads the stream as cmd/img/FORMAT.md says).
# Each must give exit 1 and an error that names the damage, never a crash,
# from restore, verify and info; restore must write nothing past the last
# frame wholly before the damage, and never the first MiB (written last).
# Also: a stream of a newer version, truncations fed through a pipe, and
# Ctrl-C while a pipe on either side stalls.
# Cheap enough for the sanitizer run (tools/test.sh).
. "$(dirname "$0")/lib.sh"
need mke2fs python3
FSIMG=$BUILD/cmd/fsimg
# The system interpreter: a version manager's shim costs a third of a second a call.
PY=$(command -v /usr/bin/python3 || command -v python3)
LAYOUT="$PY $SRC/tests/cli/fsimg_layout.py"
DAMAGE="$PY $SRC/tests/cli/fsimg_damage.py"

mkdir "$T/tree"
head -c 1200000 /dev/urandom > "$T/tree/a.bin"
seq 1 30000 > "$T/tree/b.txt"
mke2fs -q -F -t ext4 -b 1024 -d "$T/tree" "$T/src.img" 4M
"$FSIMG" save -q --frame-size 128K "$T/src.img" "$T/good.fsimg"
$LAYOUT "$T/good.fsimg" > "$T/layout.json"
frames=$(json "$T/layout.json" "len(j['frames'])")
[ "$frames" -ge 6 ] || fail "expected at least 6 frames, got $frames"
head -c 4M /dev/urandom > "$T/old.img"

# The zstd window covers a whole frame (cmd/img/FORMAT.md), read from each
# frame's header as RFC 8878 defines it: 8 MiB frames of text, which zstd's
# level 3 alone would give a 2 MiB window.
mkdir "$T/text"; seq 1 2000000 > "$T/text/a.txt"; seq 3000000 4500000 > "$T/text/b.txt"
mke2fs -q -F -t ext4 -d "$T/text" "$T/text.img" 40M
"$FSIMG" save -q --frame-size 8M "$T/text.img" "$T/text.fsimg"
$LAYOUT "$T/text.fsimg" > "$T/text.json"
$PY - "$T/text.json" <<'PY' || fail "zstd windows: $(cat "$T/text.json")"
import json, sys
frames = json.load(open(sys.argv[1]))["frames"]
assert len(frames) >= 2 and frames[0]["stored"] == 8 << 20, frames
for f in frames:
    assert f["window"] >= f["stored"], f
PY
pass "each zstd frame's window covers the frame ($(json "$T/text.json" "[f['window'] for f in j['frames']]"))"

# damaged FILE OFFSET WHAT: restore, verify and info must refuse it cleanly
damaged() {
  local img=$1 off=$2 what=$3 rc
  cp "$T/old.img" "$T/tgt.img"
  rc=0; "$FSIMG" restore -q "$img" "$T/tgt.img" 2>"$T/err" || rc=$?
  [ "$rc" -eq 1 ] || { cat "$T/err"; fail "$what (byte $off): restore exited $rc, expected 1"; }
  grep -q "^fsimg: .*$(basename "$img")" "$T/err" || { cat "$T/err"; fail "$what: the error does not name the image"; }
  grep -Eqi "byte [0-9]+|truncated|frame [0-9]+" "$T/err" || { cat "$T/err"; fail "$what: the error does not say where"; }
  $DAMAGE untouched "$T/layout.json" "$off" "$T/old.img" "$T/tgt.img" || fail "$what: wrote past the damage"
  rc=0; "$FSIMG" verify -q "$img" "$T/src.img" 2>"$T/err" || rc=$?
  [ "$rc" -eq 1 ] || { cat "$T/err"; fail "$what: verify exited $rc"; }
}

n=0
while read -r off what; do
  # Cut just before the spot, and flip the byte there.
  head -c "$off" "$T/good.fsimg" > "$T/cut.fsimg"
  damaged "$T/cut.fsimg" "$off" "cut at $what"
  $DAMAGE flip "$T/good.fsimg" "$off" "$T/flip.fsimg"
  damaged "$T/flip.fsimg" "$off" "flip at $what"
  rc=0; "$FSIMG" info "$T/flip.fsimg" > /dev/null 2>"$T/err" || rc=$?
  # info reads records only: a flip inside a zstd frame is for restore/verify to find.
  case $what in *zstd_*) ;; *)
    [ "$rc" -eq 1 ] || { cat "$T/err"; fail "flip at $what: info exited $rc"; } ;;
  esac
  n=$((n + 1))
done < <($DAMAGE offsets "$T/layout.json")
pass "$n spots cut and flipped: clean errors, nothing written past the damage"

# More cuts, spread over the whole stream, some through a pipe.
size=$(stat -c %s "$T/good.fsimg")
for i in $(seq 1 8); do
  off=$(( (size * i) / 9 + i * 7 ))
  head -c "$off" "$T/good.fsimg" > "$T/cut.fsimg"
  damaged "$T/cut.fsimg" "$off" "cut at byte $off"
  cp "$T/old.img" "$T/tgt.img"
  rc=0; head -c "$off" "$T/good.fsimg" | "$FSIMG" restore -q - "$T/tgt.img" 2>"$T/err" || rc=$?
  [ "$rc" -eq 1 ] || { cat "$T/err"; fail "piped cut at $off: exited $rc"; }
  grep -q "stdin" "$T/err" || { cat "$T/err"; fail "piped cut at $off: the error does not name stdin"; }
  $DAMAGE untouched "$T/layout.json" "$off" "$T/old.img" "$T/tgt.img" || fail "piped cut at $off: wrote past the damage"
done
pass "8 more cuts, from files and through pipes"

# After any of these, the target holds no filesystem: restore runs without --force.
"$FSIMG" restore -q "$T/good.fsimg" "$T/tgt.img" || fail "restore after a damaged one needed more than a rerun"
"$FSIMG" verify -q --unused "$T/good.fsimg" "$T/tgt.img" || fail "rerun restore: not identical"
pass "a rerun after damage restores cleanly"

# A newer format version (valid CRC): refused by name.
$DAMAGE version "$T/good.fsimg" "$T/v2.fsimg"
expect_rc 1 "$FSIMG" info "$T/v2.fsimg"
grep -q "version 2" "$T/err" || { cat "$T/err"; fail "version 2: not named"; }
# Bytes after the end record: refused.
{ cat "$T/good.fsimg"; echo trailing; } > "$T/tail.fsimg"
expect_rc 1 "$FSIMG" info "$T/tail.fsimg"
# Not an image at all.
expect_rc 1 "$FSIMG" info "$T/src.img"
expect_rc 1 "$FSIMG" restore /dev/null "$T/tgt.img"
pass "newer version, trailing bytes, not an image, empty input"

# Forged sizes in a tiny stream: a header claiming a 1 GiB map (136 bytes
# in all), a frame index claiming 67 MB of zstd data (none follows). Every
# reader fails "truncated" having allocated only what the bytes that came
# held: peak RSS far below the claims (before: 1 GB and 72 MB).
need /usr/bin/time
$DAMAGE forge "$T/map.fsimg" map_bytes=1073741824
$DAMAGE forge "$T/frame.fsimg" frame_bytes=67108864 frame_compressed=67000000
# small_peak RC GREP CMD...: exits RC, says GREP, peak RSS under 40 MB.
# A sanitizer build adds its shadow memory and quarantine (74 MB seen
# where the plain build peaks at 7): there the bound is 150 MB, which still
# catches the 1 GB map; the plain build's run catches the 72 MB frame.
peak_limit=40000
grep -qa __asan_init "$FSIMG" && peak_limit=150000
small_peak() {
  local want=$1 says=$2; shift 2
  expect_rc "$want" /usr/bin/time -f "peak %M KB" "$@"
  grep -q -- "$says" "$T/err" || { cat "$T/err"; fail "$*: expected '$says'"; }
  local kb; kb=$(sed -n 's/^peak \([0-9]*\) KB$/\1/p' "$T/err")
  [ -n "$kb" ] && [ "$kb" -lt "$peak_limit" ] || { cat "$T/err"; fail "$*: peak RSS ${kb:-?} KB on a forged stream"; }
  echo "  $kb KB: $(grep '^fsimg:' "$T/err")"
}
map_says="truncated: the stream ends at byte 136, 0 bytes into the header's map of 1073741824"
frame_says="truncated: the stream ends at byte 210, 0 bytes into frame 0 data of 67000000"
for f in map frame; do
  says=${f}_says
  small_peak 1 "${!says}" "$FSIMG" info "$T/$f.fsimg"
  small_peak 1 "${!says}" "$FSIMG" verify "$T/$f.fsimg" "$T/src.img"
  small_peak 1 "${!says}" "$FSIMG" restore --force "$T/$f.fsimg" "$T/tgt.img"
done
small_peak 1 "0 bytes into the header's map of 1073741824" sh -c '"$0" info - < "$1"' "$FSIMG" "$T/map.fsimg"
small_peak 1 "0 bytes into frame 0 data of 67000000" sh -c 'cat "$1" | "$0" restore --force - "$2"' "$FSIMG" "$T/frame.fsimg" "$T/tgt.img"
pass "forged map and frame sizes: truncated, with a small peak RSS, from files and pipes"

# Ctrl-C while the other end of a pipe stalls (an ssh that hangs): restore
# waiting for input and save waiting for its reader must both end, exit
# 130, say so, and leave a target that a rerun restores. The bound below
# is for a hang, not for speed: the waits look for Ctrl-C every 100 ms.
mkfifo "$T/fifo"
off=$(( $(stat -c %s "$T/good.fsimg") * 6 / 10 ))
cp "$T/old.img" "$T/tgt.img"
{ head -c "$off" "$T/good.fsimg"; exec sleep 60; } > "$T/fifo" 2>/dev/null & feeder=$!
"$FSIMG" restore -q - "$T/tgt.img" < "$T/fifo" 2>"$T/err" & pid=$!
interrupt "$pid" 1 10 "the restore waiting on a stalled pipe"
kill "$feeder"; wait "$feeder" 2>/dev/null || true
[ "$RC" -eq 130 ] || { cat "$T/err"; fail "restore interrupted on a stalled pipe: exit $RC, expected 130"; }
grep -q "stdin: interrupted while waiting to read.*run fsimg restore again" "$T/err" || { cat "$T/err"; fail "interrupted restore: not said"; }
$DAMAGE untouched "$T/layout.json" "$off" "$T/old.img" "$T/tgt.img" || fail "interrupted restore wrote past what it had read"
"$FSIMG" restore -q "$T/good.fsimg" "$T/tgt.img" || fail "restore after an interrupted one needed more than a rerun"
"$FSIMG" verify -q --unused "$T/good.fsimg" "$T/tgt.img" || fail "rerun after Ctrl-C: not identical"
pass "Ctrl-C during a restore stalled on its input pipe: exit 130, a rerun restores"

# 6 MB of random bytes: more than any pipe holds (fsimg asks for 1 MiB).
rm -f "$T/fifo"; mkfifo "$T/fifo"
mkdir "$T/rand"; head -c 6000000 /dev/urandom > "$T/rand/r.bin"
mke2fs -q -F -t ext4 -d "$T/rand" "$T/rand.img" 12M
exec 3<>"$T/fifo"  # a reader that never reads: the pipe fills and stays full
"$FSIMG" save -q "$T/rand.img" - > "$T/fifo" 2>"$T/err" & pid=$!
interrupt "$pid" 1 10 "the save writing to a stalled pipe"
exec 3<&-
[ "$RC" -eq 130 ] || { cat "$T/err"; fail "save interrupted on a stalled pipe: exit $RC, expected 130"; }
grep -q "interrupted" "$T/err" || { cat "$T/err"; fail "interrupted save: not said"; }
pass "Ctrl-C during a save stalled on its output pipe: exit 130"
