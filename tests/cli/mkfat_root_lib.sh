# Sourced by the mkfat -d tests (mkfat_root*.sh), after lib.sh: trees to
# copy, and what the peers say of an image made from one.
FATCK=$BUILD/cmd/fatck
# mtools turns long names into the locale's character set: UTF-8 here.
export LC_ALL=C.UTF-8

# small_tree DIR: what a boot partition holds, and what FAT finds hard:
# long and non-ASCII names, names that need ~N, empty files and
# directories, nesting 24 deep, a hard link, links to a file and to a
# directory (copied as what they point to), files across cluster sizes,
# times from 1975 (before FAT's 1980) to 2031.
small_tree() {
  local d=$1 i p
  mkdir -p "$d/EFI/BOOT" "$d/empty dir" "$d/loader/entries"
  head -c 300000 /dev/urandom > "$d/EFI/BOOT/BOOTX64.EFI"
  head -c 70001 /dev/urandom > "$d/loader/random seed"
  printf 'title Linux\nlinux /vmlinuz\n' > "$d/loader/entries/linux.conf"
  : > "$d/empty file"
  echo grüße > "$d/Grüße aus Köln.txt"
  echo 日本 > "$d/日本語のファイル名.txt"
  printf 'x%.0s' $(seq 200) > "$d/$(printf 'a%.0s' $(seq 200)).long name of two hundred and more characters"
  for i in 1 2 3 4 5 6 7 8 9 10 11 12; do echo "$i" > "$d/Same Prefix $i.txt"; done
  p=$d/deep
  for i in $(seq 24); do p=$p/level$i; done
  mkdir -p "$p" && echo bottom > "$p/file at the bottom"
  ln "$d/loader/entries/linux.conf" "$d/hard link.conf"
  ln -s loader/entries/linux.conf "$d/link to a file"
  ln -s loader "$d/link to a directory"
  head -c 4096 /dev/urandom > "$d/exactly one 4K cluster"
  head -c 4097 /dev/urandom > "$d/one byte more"
  touch -d '1975-06-01 10:00:00 UTC' "$d/empty file"
  touch -h -d '2031-01-02 03:04:06 UTC' "$d/one byte more"
  touch -d '2021-07-08 09:10:12 UTC' "$d/loader/entries/linux.conf"
}

# wide_dir DIR N: N files with long names in one directory.
wide_dir() {
  mkdir -p "$1"
  python3 - "$1" "$2" <<'EOF'
import os, sys
d, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    with open(os.path.join(d, "entry number %05d of the wide directory.dat" % i), "w") as f:
        f.write("%d\n" % i if i % 3 else "")
EOF
}

# peers_agree IMG SRC WHAT [OFFSET]: fsck.fat -n and fatck -n find
# nothing, and mcopy -s gives back a tree diff -r finds identical to SRC
# (links in SRC followed, as mkfat -d copied them). OFFSET: the volume is a
# partition that many bytes into IMG (mtools' IMG@@OFFSET).
peers_agree() {
  local img=$1 src=$2 what=$3 offset=${4:-0}
  local fsck_img=$img mimg=$img
  if [ "$offset" -ne 0 ]; then  # check the partition alone
    fsck_img=$T/part.img mimg=$img@@$offset
    dd if="$img" of="$fsck_img" bs=512 skip=$((offset / 512)) status=none || fail "$what: dd"
  fi
  fsck.fat -n "$fsck_img" > "$T/fsck.out" 2>&1 || { cat "$T/fsck.out"; fail "$what: fsck.fat -n"; }
  if grep -qiE "free cluster summary|differ|truncat|reclaim|orphan|lost" "$T/fsck.out"; then
    cat "$T/fsck.out"; fail "$what: fsck.fat -n reports"
  fi
  "$FATCK" -n "$fsck_img" > "$T/fatck.out" 2>&1 || { cat "$T/fatck.out"; fail "$what: fatck -n"; }
  rm -rf "$T/back" && mkdir "$T/back"
  mcopy -s -n -i "$mimg" "::*" "$T/back/" 2>"$T/mcopy.err" || { cat "$T/mcopy.err"; fail "$what: mcopy -s"; }
  diff -r "$src" "$T/back" > "$T/diff.out" 2>&1 ||
    { head -20 "$T/diff.out"; fail "$what: the tree mcopy gives back differs"; }
}

# mdir_line IMG DIR NAME: mdir's line for NAME in DIR (its long name last).
mdir_line() { mdir -i "$1" "::$2" | awk -v n="$3" 'substr($0, length($0) - length(n) + 1) == n'; }
