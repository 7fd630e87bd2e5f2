#!/usr/bin/env bash
# mkfat -d refuses, before its first write, what FAT cannot hold, naming
# the path: names equal when case is ignored, characters vfat refuses, a
# trailing dot, more than 255 UTF-16 units (from an archive: no Linux
# filesystem holds such a name), a file of 4 GiB, a FIFO, a socket, a
# device (--skip-special skips them, naming each), a dangling or looping
# symbolic link, a file it cannot read, '..' in an archive, a damaged
# archive, a tree larger than the volume, and a source that shares storage
# with the target. Each time the target, a FAT volume holding files, is left
# byte-identical, and a -C image is removed. Usage mistakes exit 2.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mkfat_root_lib.sh"
need fsck.fat mcopy python3 zstd tar

# The target: a volume holding a file, which every refusal must leave as it is.
truncate -s 32M "$T/target.img"
"$MKFAT" -q "$T/target.img"
echo precious > "$T/precious"; mcopy -i "$T/target.img" "$T/precious" ::PRECIOUS.TXT
keep=$(sha "$T/target.img")

# refused RC WHAT-GREP SRC [OPTIONS...]: refused on the target (with -I) and with -C.
refused() {
  local rc=$1 msg=$2 src=$3; shift 3
  expect_rc "$rc" "$MKFAT" -I "$@" -d "$src" "$T/target.img"
  grep -qF -- "$msg" "$T/err" || fail "-d $src $*: '$msg' not in: $(cat "$T/err")"
  [ "$(sha "$T/target.img")" = "$keep" ] || fail "-d $src $*: the target changed"
  expect_rc "$rc" "$MKFAT" -C "$@" -d "$src" "$T/new.img"
  [ ! -e "$T/new.img" ] || fail "-C -d $src $*: left its image"
  pass "$(head -1 "$T/err")"
}

case_dir() { rm -rf "$T/s"; mkdir -p "$T/s/d"; echo ok > "$T/s/ok.txt"; }

case_dir; echo a > "$T/s/d/README.md"; echo b > "$T/s/d/readme.md"
refused 1 "$T/s/d/README.md and $T/s/d/readme.md: the same name when case is ignored" "$T/s"
case_dir; echo a > "$T/s/d/Ärger"; echo b > "$T/s/d/ärger"
refused 1 "the same name when case is ignored" "$T/s"
case_dir; echo a > "$T/s/d/a:b"
refused 1 "$T/s/d/a:b: name 'a:b': a control character or one of" "$T/s"
case_dir; echo a > "$T/s/d/trailing."
refused 1 "ends with a dot or a space" "$T/s"
case_dir; truncate -s 4G "$T/s/d/huge"
refused 1 "$T/s/d/huge: 4294967296 bytes; a FAT file holds at most 4 GiB - 1" "$T/s"
case_dir; mkfifo "$T/s/d/fifo"
refused 1 "$T/s/d/fifo: a FIFO; FAT holds only files and directories (--skip-special leaves it out)" "$T/s"
case_dir; python3 -c "import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])" "$T/s/d/sock"
refused 1 "$T/s/d/sock: a socket" "$T/s"
case_dir; mknod "$T/s/d/null" c 1 3
refused 1 "$T/s/d/null: a character device" "$T/s"
expect_rc 0 "$MKFAT" -C --skip-special -d "$T/s" "$T/skip.img"
grep -qF "warning: skipped $T/s/d/null: a character device" "$T/err" || fail "--skip-special: $(cat "$T/err")"
fsck.fat -n "$T/skip.img" >/dev/null || fail "--skip-special: fsck.fat -n"
mcopy -i "$T/skip.img" ::d/null - >/dev/null 2>&1 && fail "--skip-special copied the device"
pass "--skip-special leaves it out, named on stderr"
case_dir; ln -s nowhere "$T/s/d/dangling"
refused 1 "$T/s/d/dangling: a dangling symbolic link (to 'nowhere')" "$T/s"
case_dir; ln -s .. "$T/s/d/up"
refused 1 "$T/s/d/up: a symbolic link loop (to '..', a directory that contains it)" "$T/s"
case_dir; ln -s self "$T/s/d/self"
refused 1 "$T/s/d/self: a symbolic link loop (to 'self')" "$T/s"

# Larger than the volume, with the numbers.
case_dir; head -c 40M /dev/zero > "$T/s/d/big"
expect_rc 1 "$MKFAT" -I -d "$T/s" "$T/target.img"
grep -q "target.img: the tree needs 20,482 clusters of 2 KiB; the volume has 16,[0-9]*$" "$T/err" ||
  fail "too large: $(cat "$T/err")"
[ "$(sha "$T/target.img")" = "$keep" ] || fail "too large: the target changed"
expect_rc 1 "$MKFAT" -C -d "$T/s" "$T/new.img" 16M
[ ! -e "$T/new.img" ] || fail "too large: -C left its image"
pass "$(cat "$T/err")"

# Archives: a name of 300 UTF-16 units, '..', a damaged archive.
python3 - "$T/long.tar" "$T/up.tar" <<'EOF'
import io, sys, tarfile
for path, name in ((sys.argv[1], "n" * 300), (sys.argv[2], "d/../../x")):
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as t:
        i = tarfile.TarInfo(name); i.size = 1; t.addfile(i, io.BytesIO(b"x"))
EOF
refused 1 "300 UTF-16 units; FAT holds at most 255" "$T/long.tar"
refused 1 "climbs out of the archive with '..'" "$T/up.tar"
case_dir; head -c 300000 /dev/urandom > "$T/s/d/noise"
tar -C "$T/s" --zstd -cf "$T/whole.tar.zst" .
head -c 100000 "$T/whole.tar.zst" > "$T/cut.tar.zst"
expect_rc 1 "$MKFAT" -I -d "$T/cut.tar.zst" "$T/target.img"
[ "$(sha "$T/target.img")" = "$keep" ] || fail "a damaged archive changed the target"
pass "a damaged archive: $(cat "$T/err")"

# A file the caller cannot read (as nobody: root reads everything).
need setpriv
mkdir -m 0777 "$T/pub"; case_dir; mv "$T/s" "$T/pub/s"; chmod -R a+rX "$T/pub/s"
echo secret > "$T/pub/s/d/secret"; chmod 0600 "$T/pub/s/d/secret"
cp "$T/target.img" "$T/pub/t.img"; chmod 0666 "$T/pub/t.img"; chmod 0755 "$T"
expect_rc 1 setpriv --reuid=65534 --regid=65534 --clear-groups "$MKFAT" -I -d "$T/pub/s" "$T/pub/t.img"
grep -qF "$T/pub/s/d/secret: cannot be read: Permission denied" "$T/err" || fail "unreadable: $(cat "$T/err")"
[ "$(sha "$T/pub/t.img")" = "$keep" ] || fail "an unreadable file: the target changed"
pass "$(cat "$T/err")"

# The source shares storage with the target: the image inside the tree,
# or a loop device over an image inside the tree.
case_dir; cp "$T/target.img" "$T/s/d/inside.img"
expect_rc 1 "$MKFAT" -I -d "$T/s" "$T/s/d/inside.img"
grep -q "shares storage with the source file $T/s/d/inside.img (the same file)" "$T/err" ||
  fail "inside: $(cat "$T/err")"
need_root
loop=$(new_loop "$T/s/d/inside.img")
expect_rc 1 "$MKFAT" -I -d "$T/s" "$loop"
grep -q "shares storage with the source file $T/s/d/inside.img ($loop is a loop device over" "$T/err" ||
  fail "loop: $(cat "$T/err")"
[ "$(sha "$T/s/d/inside.img")" = "$keep" ] || fail "sharing storage: the target changed"
pass "a target inside the source tree, directly or through $loop, is refused"

# Usage mistakes: exit 2, nothing made.
case_dir
expect_rc 2 "$MKFAT" -d "$T/s" "$T/target.img" auto
grep -q "SIZE auto goes with -C and -d" "$T/err" || fail "auto without -C: $(cat "$T/err")"
expect_rc 2 "$MKFAT" -C --slack 10% "$T/x.img" 1M
expect_rc 2 "$MKFAT" -C -d "$T/s" --slack 10 "$T/x.img" 1M
expect_rc 2 "$MKFAT" -C -d "$T/s" --slack 2000% "$T/x.img"
expect_rc 2 "$MKFAT" -C -d "$T/s" --tz Nowhere/Else "$T/x.img"
expect_rc 2 "$MKFAT" -C -A -d "$T/s" "$T/x.img"
[ ! -e "$T/x.img" ] || fail "a usage mistake left an image"
expect_rc 1 "$MKFAT" -C -d "$T/missing" "$T/x.img"
[ ! -e "$T/x.img" ] || fail "a missing source left an image"
[ "$(sha "$T/target.img")" = "$keep" ] || fail "the target changed"
pass "usage mistakes exit 2, a missing source 1, nothing made"
