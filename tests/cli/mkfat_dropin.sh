#!/usr/bin/env bash
# mkfat as a drop-in for mkfs.fat: command lines from provisioning scripts
# (floppies, EFI system partitions, SD cards, -C images, --mbr, -S 4096,
# --offset into a partitioned image, -c, -l, code-page labels, the Atari
# variant, targets holding a filesystem or a partition table, and the
# mistakes scripts make), each run by the real mkfs.fat 4.2 and by mkfat
# under one of mkfs.fat's names (a link called mkfs.fat, mkfs.vfat or
# mkfs.msdos) and under its own name, all with --invariant.
#
# Under mkfs.fat's names: the same exit code; stdout starts with a
# "mkfs.fat 4.2" version line and, on success, the rest of it is the same
# text (-v's lines, "N bad blocks"); stderr is of the same class (an error,
# a warning, or nothing but our notes); the images are equal byte for byte
# outside the boot code (tests/cli/fatcmp.py).
# Under mkfat's own name: success and failure agree, except that a target
# holding a filesystem or partition table is refused (exit 1, the message
# names --force) and then formats to the same image with --force.
. "$(dirname "$0")/lib.sh"
need mkfs.fat mkfs.ext4 sfdisk python3 fatlabel
export LC_ALL=C.UTF-8  # labels are read in the locale's character set, as by mkfs.fat

mkdir -p "$T/bin" "$T/real" "$T/compat" "$T/own"
for n in mkfs.fat mkfs.vfat mkfs.msdos; do ln -s "$MKFAT" "$T/bin/$n"; done
printf '3000\n3001\n\n  12000  \n' > "$T/badlist"
printf 'Not a boot disk.\n\tInsert another\nand press a key\n' > "$T/msg"
REAL=$(command -v mkfs.fat)

# KIND|SIZE|ARGS: KIND is new (sparse file of SIZE), create (-C makes it),
# exists (a file that -C must not replace), none (no such file), ext4, fat
# (mkfs.fat's FAT32 on it), part (an MBR partition table with one partition
# at sector 2048), loop-part (the partitioned image as a loop device with
# partitions). IMG is the target, BADLIST and MSG are files. "bug42" ends a
# line where mkfs.fat 4.2 refuses by a bug that dosfstools has since fixed
# (a label byte from 0x80 compared as a negative char: "Labels with
# characters below 0x20 are not allowed"); there mkfat must succeed and
# fatlabel must read the label back.
cases=(
  "create|0|-C IMG 1440"
  "create|0|-C IMG 720"
  "create|0|-C -F 12 IMG 2880"
  "create|0|-C -n FLOPPY IMG 360"
  "create|0|-C -f 1 -r 112 IMG 1200"
  "new|1440K|-F 12 -n DOSDISK IMG"
  "new|512M|-F 32 -n EFI IMG"
  "new|260M|-F 32 -s 1 -n ESP IMG"
  "new|100M|-F 32 -n EFI-SYSTEM IMG"
  "create|0|-C -F 32 -n EFIBOOT IMG 102400"
  "new|550M|-F 32 -s 8 -n BOOT -I IMG"
  "new|300M|-F 32 -n BOOT -I IMG"
  "new|64M|-F 16 -n SDCARD IMG"
  "new|2G|-F 32 -s 64 -n SDCARD IMG"
  "new|256M|-F 32 -n boot IMG"
  "new|128M|-n RPI-BOOT -F 32 -s 1 IMG"
  "new|32M|-F 16 -s 4 -a IMG"
  "new|8G|-F 32 -n DATA IMG"
  "new|48M|-v IMG"
  "new|600M|-v -F 32 -n VERB IMG"
  "new|256M|--mbr=y -F 32 -n MBRDISK IMG"
  "new|64M|--mbr=y IMG"
  "new|16M|--mbr=n IMG"
  "new|32M|--mbr -F 16 -v IMG"
  "new|512M|-S 4096 -F 32 IMG"
  "new|64M|-S 4096 IMG"
  "new|2G|-S 4096 -s 1 -F 32 -n FOURK IMG"
  "part|64M|--offset 2048 IMG 64512"
  "part|128M|--offset=2048 -F 32 -n PART IMG 129024"
  "new|64M|--offset 8192 -F 16 IMG"
  "part|128M|--offset 2048 --mbr=n -F 32 -v IMG 129024"
  "new|16M|-c IMG"
  "new|64M|-c -F 32 -n CHECKED IMG"
  "create|0|-C -c IMG 4096"
  "new|32M|-l BADLIST IMG"
  "new|32M|--codepage=437 -n BOOT IMG"
  "new|32M|--codepage=437 -n ÄRGER IMG|bug42"
  "new|32M|-n ÉTÉ IMG|bug42"
  "new|64M|-i DEADBEEF -n VOLID IMG"
  "new|64M|-g 255/63 -h 2048 IMG"
  "new|1440K|-M 0xF0 -D 0 IMG"
  "new|64M|-R 8 -f 1 -r 1024 IMG"
  "new|64M|-m MSG IMG"
  "create|0|-C -A IMG 1440"
  "new|32M|--variant=atari IMG"
  "new|16M|-A -F 12 -v IMG"
  "ext4|64M|IMG"
  "fat|64M|-F 32 -n AGAIN IMG"
  "part|64M|IMG"
  "new|1G|-F 12 IMG"
  "new|64M|-s 3 IMG"
  "create|0|-C IMG"
  "exists|64M|-C IMG 1024"
  "new|64M|-n BAD.NAME IMG"
  "none|0|-F 32 IMG"
  "new|64M|--mbr=maybe IMG"
  "new|64M|-c -l BADLIST IMG"
  "new|1M|-F 16 IMG"
  "new|64M|-n TOOLONGLABEL1 IMG"
  "new|64M|--bogus IMG"
  "loop-part|64M|IMG"
  "loop-part|64M|-I IMG"
)

# make_target DIR KIND SIZE: the target in DIR as the case wants it; prints its path.
make_target() {
  local dir=$1 kind=$2 size=$3 img=$1/t.img
  rm -f "$img"
  case $kind in
    new) truncate -s "$size" "$img" ;;
    exists) truncate -s "$size" "$img" ;;
    ext4)  # made once per size and copied: mkfs.ext4's UUIDs and times differ per run
      [ -f "$T/ext4-$size" ] || { truncate -s "$size" "$T/ext4-$size"; mkfs.ext4 -q -F "$T/ext4-$size"; }
      cp --sparse=always "$T/ext4-$size" "$img" ;;
    fat) truncate -s "$size" "$img"; mkfs.fat -F 32 "$img" >/dev/null ;;
    part|loop-part) truncate -s "$size" "$img"; printf 'label-id: 0x46534f49\nstart=2048, type=c\n' | sfdisk -q "$img" ;;
  esac
  echo "$img"
}

# run TOOL DIR KIND SIZE ARGS...: one run; rc in $dir/rc, output in $dir/out, $dir/err.
run() {
  local tool=$1 dir=$2 kind=$3 size=$4; shift 4
  local img target args=()
  img=$(make_target "$dir" "$kind" "$size")
  target=$img
  if [ "$kind" = loop-part ]; then target=$(loop_setup -P "$img"); fi
  for w in "$@"; do
    case $w in IMG) args+=("$target") ;; BADLIST) args+=("$T/badlist") ;; MSG) args+=("$T/msg") ;; *) args+=("$w") ;; esac
  done
  local rc=0
  "$tool" --invariant "${args[@]}" >"$dir/out" 2>"$dir/err" || rc=$?
  echo $rc > "$dir/rc"
  if [ "$kind" = loop-part ]; then loop_detach "$target"; fi
  # The target's name differs between the runs: compare the words, not it.
  sed -i "s|$target|TARGET|g" "$dir/out" "$dir/err"
}

stderr_class() {  # error / warning / quiet (nothing, or only notes)
  if [ "$(cat "$1/rc")" -ne 0 ]; then echo error
  elif grep -qi 'warning' "$1/err"; then echo warning
  elif grep -v ': note: ' "$1/err" | grep -q .; then echo other
  else echo quiet; fi
}

offset_bytes() {  # the --offset of ARGS in bytes (-S sectors, or 512)
  local ss=512 off=0 prev=""
  for w in "$@"; do
    [ "$prev" = -S ] && ss=$w
    [ "$prev" = --offset ] && off=$w
    case $w in --offset=*) off=${w#--offset=} ;; esac
    prev=$w
  done
  echo $((off * ss))
}

n=0; compared=0; own_refused=0
for c in "${cases[@]}"; do
  IFS='|' read -r kind size argline flag <<<"$c"
  read -ra args <<<"$argline"
  names=(mkfs.fat mkfs.vfat mkfs.msdos); compat=$T/bin/${names[$((n % 3))]}
  n=$((n + 1))
  if [ "$kind" = loop-part ] && [ "$(id -u)" -ne 0 ]; then skip_part "case $n needs root: $argline"; continue; fi
  what="case $n ($kind $size: ${compat##*/} $argline)"
  run "$REAL" "$T/real" "$kind" "$size" "${args[@]}"
  run "$compat" "$T/compat" "$kind" "$size" "${args[@]}"
  rr=$(cat "$T/real/rc"); rc=$(cat "$T/compat/rc")
  show() { for d in real compat own; do echo "--- $d rc=$(cat "$T/$d/rc" 2>/dev/null)"; cat "$T/$d/out" "$T/$d/err" 2>/dev/null; done; }
  if [ "$flag" = bug42 ]; then
    [ "$rr" -ne 0 ] || { show; fail "$what: mkfs.fat 4.2 accepted it; drop the bug42 mark"; }
    [ "$rc" -eq 0 ] || { show; fail "$what: exit $rc"; }
    label=$(fatlabel "$T/compat/t.img" 2>/dev/null) || true
    want=$(sed -n 's/.*-n \([^ ]*\) .*/\1/p' <<<"$argline")
    [ "$label" = "$want" ] || fail "$what: fatlabel reads '$label', expected '$want'"
    pass "$what: mkfs.fat 4.2 refuses (its signed-char bug), mkfat writes it and fatlabel reads '$label'"
    continue
  fi
  [ "$rr" = "$rc" ] || { show; fail "$what: exit $rc, mkfs.fat $rr"; }
  for d in real compat; do
    head -1 "$T/$d/out" | grep -q '^mkfs.fat 4.2 ' || { show; fail "$what: $d's stdout does not start with mkfs.fat's version line"; }
  done
  [ "$(stderr_class "$T/real")" = "$(stderr_class "$T/compat")" ] ||
    { show; fail "$what: stderr is $(stderr_class "$T/compat"), mkfs.fat's $(stderr_class "$T/real")"; }
  if [ "$rr" -eq 0 ]; then
    diff <(tail -n +2 "$T/real/out") <(tail -n +2 "$T/compat/out") >/dev/null ||
      { diff <(tail -n +2 "$T/real/out") <(tail -n +2 "$T/compat/out"); fail "$what: stdout differs"; }
    python3 "$SRC/tests/cli/fatcmp.py" "$T/real/t.img" "$T/compat/t.img" "$(offset_bytes "${args[@]}")" ||
      fail "$what: the images differ outside the boot code"
    compared=$((compared + 1))
  fi
  # Our own name.
  run "$MKFAT" "$T/own" "$kind" "$size" "${args[@]}"
  ro=$(cat "$T/own/rc")
  # What the volume holds: with --offset mkfat probes only the volume, so a
  # partition table before it (where the volume is a partition) is no refusal.
  case $kind in ext4|fat|part|loop-part) holds=1 ;; *) holds=0 ;; esac
  [[ " $argline " == *" --offset"* ]] && holds=0
  if [ "$rr" -eq 0 ] && [ $holds = 1 ] && [[ " $argline " != *" -I "* ]]; then
    [ "$ro" -eq 1 ] && grep -q -- --force "$T/own/err" || { show; fail "$what: mkfat did not refuse naming --force"; }
    run "$MKFAT" "$T/own" "$kind" "$size" --force "${args[@]}"
    ro=$(cat "$T/own/rc")
    own_refused=$((own_refused + 1))
  fi
  if [ "$rr" -eq 0 ]; then
    [ "$ro" -eq 0 ] || { show; fail "$what: mkfat exited $ro"; }
    python3 "$SRC/tests/cli/fatcmp.py" "$T/real/t.img" "$T/own/t.img" "$(offset_bytes "${args[@]}")" ||
      fail "$what: mkfat's image differs outside the boot code"
  else
    [ "$ro" -ne 0 ] || { show; fail "$what: mkfat succeeded where mkfs.fat failed"; }
  fi
  pass "$what: exit $rr, $(stderr_class "$T/real")"
done
[ $n -ge 40 ] || fail "only $n cases"
pass "$n command lines: $compared images equal outside the boot code under mkfs.fat's names; mkfat refused $own_refused overwrites without --force"
