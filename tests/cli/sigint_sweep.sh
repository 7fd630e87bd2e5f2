#!/usr/bin/env bash
# Ctrl-C at every write. FSIO_FAULT=sigint:N raises SIGINT as the Nth write
# is queued; N runs from 1 until the tool finishes (exit 0: the signal came
# after its last point of no return). Each interrupted run must exit 130,
# say so, and leave what its man page promises, judged by the peers:
# - mkfat -d and mkext4 -d: no filesystem blkid recognises;
# - extwb put of a tree holding a 20 MiB file: e2fsck -fn clean, the new
#   directory absent and the files put before it intact;
# - fatfill --sync: fsck.fat -n clean, every file it counts complete;
# - fatck -a on lost clusters and FATs that differ: fatck -a finishes it,
#   fsck.fat -n is clean and the files are intact;
# - fsimg restore: no filesystem signature on the target.
# The finished run must give what an uninterrupted one gives.
# (fatck_safety interrupts the check too, with readsigint.)
. "$(dirname "$0")/lib.sh"
need blkid e2fsck debugfs fsck.fat mkfs.fat mcopy mtype python3
export SOURCE_DATE_EPOCH=1700000000
MKFAT=$BUILD/cmd/mkfat MKEXT4=$BUILD/cmd/mkext4 EXTWB=$BUILD/cmd/extwb
FATFILL=$BUILD/cmd/fatfill FATCK=$BUILD/cmd/fatck FSIMG=$BUILD/cmd/fsimg
mkdir -p "$T/tree/a/b"
for i in $(seq 1 40); do head -c $((i * 997)) /dev/urandom > "$T/tree/a/f$i"; done
head -c 20M /dev/urandom > "$T/tree/big"
ln -s f1 "$T/tree/a/link"

# sweep NAME PREP RUN JUDGE [DONE]: for N = 1, 2, ...: PREP, then RUN with
# FSIO_FAULT=sigint:N (stderr in $T/err); JUDGE N RC checks what is left.
# Ends when RUN exits DONE (0; fatck's is 1, errors fixed); fails on any
# code but DONE and 130, or after 400 writes.
sweep() {
  local name=$1 prep=$2 run=$3 judge=$4 done=${5:-0} n rc
  for ((n = 1; n <= 400; n++)); do
    $prep
    rc=0; FSIO_FAULT=sigint:$n $run 2>"$T/err" >/dev/null || rc=$?
    [ "$rc" -eq "$done" ] || [ "$rc" -eq 130 ] || fail "$name, SIGINT at write $n: exit $rc: $(cat "$T/err")"
    [ "$rc" -eq "$done" ] || grep -q "interrupted" "$T/err" || fail "$name, SIGINT at write $n: not said: $(cat "$T/err")"
    $judge "$n" "$rc"
    if [ "$rc" -eq "$done" ]; then
      pass "$name: SIGINT at writes 1-$((n - 1)) exits 130 and leaves what it says; at write $n it had finished"
      return
    fi
  done
  fail "$name: still interrupted at write 400"
}
no_signature() { blkid -p "$1" >/dev/null 2>&1 && fail "SIGINT at write $2 left a signature: $(blkid -p "$1")"; true; }

# mkfat -d and mkext4 -d onto a blank image.
blank() { rm -f "$T/t.img"; truncate -s 64M "$T/t.img"; }
judge_fat() {
  if [ "$2" -eq 130 ]; then no_signature "$T/t.img" "$1"; return; fi
  fsck.fat -n "$T/t.img" >/dev/null || fail "mkfat -d: fsck.fat -n after the finished run"
  mtype -i "$T/t.img" ::/big | cmp -s - "$T/tree/big" || fail "mkfat -d: /big differs"
}
sweep "mkfat -d" blank "$MKFAT -q -d $T/tree $T/t.img" judge_fat
judge_ext() {
  if [ "$2" -eq 130 ]; then no_signature "$T/t.img" "$1"; return; fi
  e2fsck -fn "$T/t.img" >/dev/null 2>&1 || fail "mkext4 -d: e2fsck -fn after the finished run"
}
sweep "mkext4 -d" blank "$MKEXT4 -q -d $T/tree $T/t.img" judge_ext

# extwb put beside a tree put before.
truncate -s 128M "$T/base.img"; "$MKEXT4" -q "$T/base.img"
"$EXTWB" put -q "$T/base.img" /first "$T/tree/a"
from_base() { cp "$T/base.img" "$T/e.img"; }
judge_put() {
  e2fsck -fn "$T/e.img" >/dev/null 2>&1 || fail "extwb put, SIGINT at write $1: e2fsck -fn is not clean"
  "$EXTWB" get "$T/e.img" /first/f40 | cmp -s - "$T/tree/a/f40" || fail "extwb put, SIGINT at write $1: /first/f40 changed"
  local got
  got=$(debugfs -R "ls -p /" "$T/e.img" 2>/dev/null | grep -c "/new/") || true
  if [ "$2" -eq 130 ]; then
    [ "$got" -eq 0 ] || fail "extwb put, SIGINT at write $1: /new is linked after exit 130"
  else
    "$EXTWB" get "$T/e.img" /new/big | cmp -s - "$T/tree/big" || fail "extwb put: /new/big differs"
  fi
}
sweep "extwb put" from_base "$EXTWB put -q $T/e.img /new $T/tree" judge_put

# fatfill --sync: file by file.
truncate -s 256M "$T/ffbase.img"; mkfs.fat -F 32 "$T/ffbase.img" >/dev/null
ff_base() { cp "$T/ffbase.img" "$T/ff.img"; }
judge_fill() {
  fsck.fat -n "$T/ff.img" >/dev/null || fail "fatfill, SIGINT at write $1: fsck.fat -n is not clean"
  local done
  done=$(mdir -b -i "$T/ff.img" :: 2>/dev/null | grep -c FILL) || true
  if [ "$2" -eq 130 ]; then
    grep -q "interrupted after $done of 6 files" "$T/err" || fail "fatfill, SIGINT at write $1: $done files, said: $(cat "$T/err")"
  else
    [ "$done" -eq 6 ] || fail "fatfill: $done files after the finished run"
  fi
}
sweep "fatfill --sync" ff_base "$FATFILL --sync --count 6 --size 3M $T/ff.img" judge_fill

# fatck -a: 30,000 lost clusters, and the FAT copies differing in a used entry
# (tests/fatcorrupt.py, the damage corpus).
truncate -s 300M "$T/kbase.img"; mkfs.fat -F 32 "$T/kbase.img" >/dev/null
mcopy -s -i "$T/kbase.img" "$T/tree/a" ::/a
python3 "$SRC/tests/fatcorrupt.py" "$T/kbase.img" lost-clusters 30000 >/dev/null
python3 "$SRC/tests/fatcorrupt.py" "$T/kbase.img" copies-differ >/dev/null
k_base() { cp "$T/kbase.img" "$T/k.img"; }
judge_repair() {
  local rc=0
  if [ "$2" -eq 130 ]; then
    "$FATCK" -a "$T/k.img" >/dev/null 2>&1 || rc=$?
    [ "$rc" -eq 1 ] || fail "fatck -a after SIGINT at write $1: exit $rc, not 1 (errors fixed)"
  fi
  fsck.fat -n "$T/k.img" >/dev/null || fail "fatck -a, SIGINT at write $1: fsck.fat -n is not clean after it"
  mtype -i "$T/k.img" ::/a/f40 | cmp -s - "$T/tree/a/f40" || fail "fatck -a, SIGINT at write $1: /a/f40 changed"
}
sweep "fatck -a" k_base "$FATCK -a $T/k.img" judge_repair 1

# fsimg restore of the ext4 image made above, over a FAT volume (--force).
"$MKEXT4" -q -d "$T/tree" "$T/src.img" 64M
"$FSIMG" save -q "$T/src.img" "$T/src.fsimg"
fat_target() { rm -f "$T/r.img"; truncate -s 64M "$T/r.img"; mkfs.fat "$T/r.img" >/dev/null; }
judge_restore() {
  if [ "$2" -eq 130 ]; then no_signature "$T/r.img" "$1"; return; fi
  cmp -s "$T/src.img" "$T/r.img" || fail "fsimg restore: the finished run differs from the source"
}
sweep "fsimg restore" fat_target "$FSIMG restore -q --force $T/src.fsimg $T/r.img" judge_restore
