#!/usr/bin/env bash
# mkext4 -d of /usr/lib as it is on this machine (issue 25's real tree,
# thousands of packages' files, symlinks and hard links), in an image of
# SIZE auto: e2fsck -fn clean, and the kernel's read-only mount gives back
# every name and byte (diff -r), and every node's type, mode, owner, link
# count (its links inside the tree), size, mtime and ctime to the nanosecond (clamped to
# SOURCE_DATE_EPOCH where later, as mke2fs -d would not keep them) and
# extended attributes, read through the mount against the source.
# Main build only: it reads the tree twice (a few GiB on a developer's
# machine, about a minute).
. "$(dirname "$0")/lib.sh"
need e2fsck diff mount umount losetup python3
need_root
MKEXT4=$BUILD/cmd/mkext4
real=${FSIO_REAL_TREE:-/usr/lib}
[ -d "$real" ] && [ -n "$(ls -A "$real")" ] || skip "no $real to copy"
export SOURCE_DATE_EPOCH=1700000000
mkdir -p "$T/mnt"
need_mib=$(( $(du -sm "$real" | cut -f1) * 12 / 10 + 64 ))
free_mib=$(df -m --output=avail "$T" | tail -1)
[ "$free_mib" -ge "$need_mib" ] || skip "the image of $real needs about $need_mib MiB, $T has $free_mib MiB free"

"$MKEXT4" -q -C -d "$real" "$T/real.img" auto || fail "mkext4 -d $real failed"
e2fsck -fn "$T/real.img" > "$T/fsck" 2>&1 || { head -40 "$T/fsck"; fail "e2fsck -fn is not clean on $real"; }
files=$(sed -n 's/.*: \([0-9]*\)\/[0-9]* files.*/\1/p' "$T/fsck")
pass "$real in $(( $(stat -c %s "$T/real.img") >> 20 )) MiB (SIZE auto), $files inodes: e2fsck -fn clean"

loop=$(loop_setup -r "$T/real.img")
mount -o ro "$loop" "$T/mnt" && MOUNTS+=("$T/mnt")
# The image's root has lost+found, which the source has not.
diff -r --no-dereference "$real" "$T/mnt" > "$T/diff" 2>&1 || true
grep -v "^Only in $T/mnt: lost+found$" "$T/diff" > "$T/diff.rest" || true
[ ! -s "$T/diff.rest" ] || { head -20 "$T/diff.rest"; fail "the kernel sees $real otherwise (diff -r)"; }
python3 - "$real" "$T/mnt" "$SOURCE_DATE_EPOCH" > "$T/meta" <<'PY' || { head -20 "$T/meta"; fail "the kernel's stat or xattrs differ from $real's"; }
import os, stat, sys
src, mnt, sde = sys.argv[1], sys.argv[2], int(sys.argv[3]) * 10**9
def clamp(ns):
    return ns if ns <= sde else sde
def facts(p):
    s = os.lstat(p)
    kind = stat.S_IFMT(s.st_mode)
    names = sorted(os.listxattr(p, follow_symlinks=False))
    xattrs = [(n, os.getxattr(p, n, follow_symlinks=False)) for n in names]
    return (s.st_mode, s.st_uid, s.st_gid, s.st_nlink, s.st_size if kind != stat.S_IFDIR else None,
            s.st_rdev if kind in (stat.S_IFCHR, stat.S_IFBLK) else None,
            clamp(s.st_mtime_ns), clamp(s.st_ctime_ns), xattrs)
# A file's links inside the tree are what the image can hold: this machine
# may link some of /usr/lib's files from outside it too.
inside = {}
for root, dirs, files in os.walk(src):
    for name in files:
        s = os.lstat(os.path.join(root, name))
        inside[(s.st_dev, s.st_ino)] = inside.get((s.st_dev, s.st_ino), 0) + 1
bad = nodes = 0
for root, dirs, files in os.walk(src):
    for name in [""] + dirs + files:
        p = os.path.join(root, name) if name else root
        rel = os.path.relpath(p, src)
        q = os.path.normpath(os.path.join(mnt, rel))
        nodes += 1
        a, b = facts(p), facts(q)
        if name in files:
            s = os.lstat(p)
            a = a[:3] + (inside[(s.st_dev, s.st_ino)],) + a[4:]
        if rel == ".":  # the root's link count also counts lost+found
            a, b = a[:3] + a[4:], b[:3] + b[4:]
        if a != b:
            bad += 1
            if bad <= 10:
                print(rel, "source", a[:8], "image", b[:8], "xattrs", a[-1] != b[-1])
print(nodes, "nodes compared,", bad, "differ")
sys.exit(1 if bad else 0)
PY
umount "$T/mnt" && MOUNTS=()
loop_detach "$loop"
pass "the kernel's mount: $real byte for byte (diff -r); $(tail -1 "$T/meta") in type, mode, owner," \
  "links, size, device, mtime and ctime (ns, clamped), xattrs"
