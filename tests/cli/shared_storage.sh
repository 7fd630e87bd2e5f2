#!/usr/bin/env bash
# No tool writes to storage it reads from (issue 21), however the two are
# reached: the same file by another path or a hard link, a loop device over
# it, standard input or output. Each refusal is met before the first write,
# the same under --dry-run, and judged by what the read file holds after:
# byte for byte what it held before, and e2fsck -fn / fsck.fat -n accept it.
. "$(dirname "$0")/lib.sh"
need mke2fs e2fsck mkfs.fat fsck.fat python3
FSIMG=$BUILD/cmd/fsimg

# same FILE SHA: FILE still holds what it held (SHA).
same() { [ "$(sha "$1")" = "$2" ] || fail "$1 changed"; }
# onto FILE CMD...: run CMD with standard output opened read-write onto FILE
# (1<>, which does not truncate it); fail unless it exits 1. Errors in $T/err.
onto() {
  local file=$1 rc=0; shift
  "$@" 1<>"$file" 2>"$T/err" || rc=$?
  [ "$rc" -eq 1 ] || { cat "$T/err"; fail "'$*' with stdout onto $file exited $rc, expected 1"; }
}

mkdir "$T/tree"; head -c 300000 /dev/urandom > "$T/tree/f.bin"
mke2fs -q -F -t ext4 -d "$T/tree" "$T/e.img" 16M
e_sum=$(sha "$T/e.img")
ln "$T/e.img" "$T/hard.img"

# fsimg save: OUT is the source by a hard link, with --force: refused, not truncated.
expect_rc 1 "$FSIMG" save --force "$T/e.img" "$T/hard.img"
grep -q "hard.img: shares storage with the source .*e.img (the same file); refusing to write to it" "$T/err" ||
  fail "save onto a hard link of the source: $(cat "$T/err")"
same "$T/e.img" "$e_sum"
pass "fsimg save: OUT a hard link to the source is refused: $(cat "$T/err")"

need_root
# The reproduction of issue 21: OUT is the file behind the loop device saved.
l=$(new_loop "$T/e.img")
for dry in "" --dry-run; do
  expect_rc 1 "$FSIMG" save $dry --force "$l" "$T/e.img"
  grep -q "e.img: shares storage with the source $l ($l is a loop device over .*e.img)" "$T/err" ||
    fail "save $dry $l e.img: $(cat "$T/err")"
done
# Standard output opened onto the image without truncating it (1<>).
onto "$T/e.img" "$FSIMG" save "$l" -
grep -q "standard output: shares storage with the source $l" "$T/err" || fail "save to stdout: $(cat "$T/err")"
loop_detach "$l"
same "$T/e.img" "$e_sum"
e2fsck -fn "$T/e.img" > "$T/fsck" 2>&1 || { cat "$T/fsck"; fail "e2fsck after the refused saves"; }
pass "fsimg save: a loop device over OUT as the source, and stdout onto it, refused; e.img intact (e2fsck -fn)"

# fsimg restore onto a loop device over its own input: a raw stream of
# random data is larger than the filesystem it holds, so the device fits.
head -c 3M /dev/urandom > "$T/r.bin"
expect_rc 0 "$FSIMG" save -q --fs raw "$T/r.bin" "$T/raw.fsimg"
raw_sum=$(sha "$T/raw.fsimg")
l=$(new_loop "$T/raw.fsimg")
[ "$(blockdev --getsize64 "$l")" -ge $((3 << 20)) ] || skip "the stream came out smaller than its filesystem"
for dry in "" --dry-run; do
  expect_rc 1 "$FSIMG" restore $dry --force "$T/raw.fsimg" "$l"
  grep -q "$l: shares storage with the input .*raw.fsimg ($l is a loop device over .*raw.fsimg)" "$T/err" ||
    fail "restore $dry onto its input: $(cat "$T/err")"
done
expect_rc 1 "$FSIMG" restore --force - "$l" < "$T/raw.fsimg"
grep -q "$l: shares storage with the input standard input ($l is a loop device over .*raw.fsimg, which is standard input)" "$T/err" ||
  fail "restore from stdin onto it: $(cat "$T/err")"
loop_detach "$l"
same "$T/raw.fsimg" "$raw_sum"
expect_rc 0 "$FSIMG" restore -q -C "$T/raw.fsimg" "$T/back.bin"
cmp "$T/r.bin" "$T/back.bin" || fail "the stream no longer restores what it was made of"
pass "fsimg restore: onto a loop device over its input (file or stdin) refused; the stream intact and restorable"

# mkfat -m and -l: a loop device over the message or bad-block file as the target.
truncate -s 8M "$T/msg.img"; printf 'hello\n' | dd of="$T/msg.img" conv=notrunc status=none
m_sum=$(sha "$T/msg.img")
l=$(new_loop "$T/msg.img")
for dry in "" --dry-run; do
  expect_rc 1 "$MKFAT" $dry --force -m "$T/msg.img" "$l"
  grep -q "$l: shares storage with the -m file .*msg.img ($l is a loop device over" "$T/err" || fail "mkfat -m $dry: $(cat "$T/err")"
done
expect_rc 1 "$MKFAT" --force -l - "$l" < "$T/msg.img"
grep -q "$l: shares storage with the -l file standard input" "$T/err" || fail "mkfat -l -: $(cat "$T/err")"
loop_detach "$l"
same "$T/msg.img" "$m_sum"
pass "mkfat: -m and -l files behind the target refused: the files intact"

# extwb put: the image as its own source, in a source tree, or behind a loop device.
e_sum=$(sha "$T/e.img")
l=$(new_loop "$T/e.img")
expect_rc 1 "$EXTWB" put "$l" /copy "$T/e.img"
grep -q "$l: shares storage with the source .*e.img ($l is a loop device over" "$T/err" || fail "extwb put: $(cat "$T/err")"
expect_rc 1 "$EXTWB" put --dry-run "$T/e.img" /copy - < "$l"
grep -q "e.img: shares storage with the source standard input (standard input ($l) is a loop device over .*e.img)" "$T/err" ||
  fail "extwb put - < loop: $(cat "$T/err")"
mkdir -p "$T/src/sub"; echo x > "$T/src/a.txt"; mv "$T/hard.img" "$T/src/sub/hard.img"
expect_rc 1 "$EXTWB" put "$T/e.img" /tree "$T/src"
grep -q "e.img: shares storage with .*src/sub/hard.img, a file of the source tree .*src (the same file)" "$T/err" ||
  fail "extwb put of a tree holding the image: $(cat "$T/err")"
expect_rc 1 "$EXTWB" put "$l" /tree "$T/src"
grep -q "a file of the source tree" "$T/err" || fail "extwb put of the tree onto the loop device: $(cat "$T/err")"
# extwb get: standard output onto the image it reads.
onto "$T/e.img" "$EXTWB" get "$l" /f.bin
grep -q "standard output: shares storage with the image $l" "$T/err" || fail "extwb get: $(cat "$T/err")"
loop_detach "$l"
same "$T/e.img" "$e_sum"
e2fsck -fn "$T/e.img" > "$T/fsck" 2>&1 || { cat "$T/fsck"; fail "e2fsck after the refused puts"; }
rm "$T/src/sub/hard.img"
expect_rc 0 "$EXTWB" put "$T/e.img" /tree "$T/src"
pass "extwb: put from the image, stdin on it, a tree holding it; get onto it: refused, e2fsck -fn clean; the tree alone goes in"

# ddbench: a job whose target is a loop device over a file its job file
# includes, two names for one storage, and --output over the job file.
python3 -c 'import sys; open(sys.argv[1], "w").write("size=1m\n" + "\n" * ((1 << 20) - 8))' "$T/inc.fio"
l=$(new_loop "$T/inc.fio")
printf '[w]\ninclude %s\nfilename=%s\nrw=write\n' "$T/inc.fio" "$l" > "$T/job.fio"
i_sum=$(sha "$T/inc.fio")
expect_rc 1 "$DDBENCH" --force "$T/job.fio"
grep -q "$l: shares storage with the job file .*inc.fio ($l is a loop device over .*inc.fio)" "$T/err" ||
  fail "ddbench, a target over an include: $(cat "$T/err")"
loop_detach "$l"
same "$T/inc.fio" "$i_sum"
truncate -s 8M "$T/d.img"
l=$(new_loop "$T/d.img")
printf '[a]\nfilename=%s\nrw=write\nsize=1m\n[b]\nfilename=%s\nrw=read\nsize=1m\n' "$T/d.img" "$l" > "$T/two.fio"
expect_rc 1 "$DDBENCH" --force "$T/two.fio"
grep -q "job a (0): .*d.img: shares storage with the target of job b (0), $l ($l is a loop device over .*d.img)" "$T/err" ||
  fail "two names for one storage: $(cat "$T/err")"
# Windows of the two names that do not overlap are apart; one name twice is fio's way.
printf '[a]\nfilename=%s\nrw=write\nsize=1m\n[b]\nfilename=%s\nrw=read\noffset=4m\nsize=1m\n' "$T/d.img" "$l" > "$T/apart.fio"
expect_rc 0 "$DDBENCH" --force "$T/apart.fio"
printf '[a]\nfilename=%s\nrw=write\nsize=1m\nnumjobs=2\n' "$l" > "$T/same.fio"
expect_rc 0 "$DDBENCH" --force "$T/same.fio"
s_sum=$(sha "$T/same.fio")
expect_rc 1 "$DDBENCH" --force "$T/same.fio" --output "$T/same.fio"
grep -q "same.fio: shares storage with the job file .*same.fio (the same file)" "$T/err" || fail "--output: $(cat "$T/err")"
same "$T/same.fio" "$s_sum"
loop_detach "$l"
pass "ddbench: a target over an included file, two names for one storage, --output over the job file: refused"
