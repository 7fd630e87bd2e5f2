#!/usr/bin/env python3
"""Random trees through mkext4 -d and extwb put, judged by e2fsck -fn.

Each round makes a tree from its own seed (directories, files of random
bytes, hard links, fast and slow symlinks, names up to 100 bytes; with
--wide most names in one directory of 2,000-20,000, a two-level htree in
1 KiB blocks), picks a hash seed and a metadata cache size
(FSIO_META_CACHE, 4 KiB to 1 MiB, so the cache spills at random points),
and runs
  - mkext4 -d TREE into a new image, and
  - mkext4, then extwb put TREE twice (/a, /b) into another.
Both images must be e2fsck -fn clean, and hold the tree: debugfs rdump of
each copy gives the same names, types, permission bits, file bytes and
symlink targets as the source. A failing round keeps its two images and
names the seeds that remake it; the exit status is 1.

The fixed tests pin the cases found so far (ext_spill_split: a leaf split
after a spill lost its lower half under about one hash seed in ten); this
looks for the next one, for as long as it is given.

Usage: tools/ext_stress.py [--rounds N] [--seed S] [--wide] [--build DIR] [--work DIR]
"""
import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import uuid

CACHES = ["4K", "8K", "16K", "64K", "256K", "1M"]
IMAGE = "256M"  # 1 KiB blocks (mke2fs.conf's "small"): htrees grow levels early


def make_tree(root, rnd, wide):
    os.mkdir(root)
    dirs = [root]
    for d in range(rnd.randint(1, 40)):
        path = os.path.join(rnd.choice(dirs), "d%03d_%s" % (d, "x" * rnd.randint(0, 60)))
        os.mkdir(path)
        dirs.append(path)
    if wide:
        os.mkdir(os.path.join(root, "wide"))
    files = []
    for f in range(rnd.randint(2000, 20000) if wide else rnd.randint(100, 3000)):
        where = os.path.join(root, "wide") if wide and rnd.random() < 0.9 else rnd.choice(dirs)
        path = os.path.join(where, "%s%05d" % ("n" * rnd.randint(1, 100), f))
        kind = rnd.random()
        if kind < 0.05 and files:
            os.link(rnd.choice(files), path)
        elif kind < 0.10:
            os.symlink("t" * rnd.randint(1, 200), path)  # over 59 bytes: a slow symlink
        else:
            with open(path, "wb") as out:
                out.write(rnd.randbytes(rnd.randint(0, 100 if wide else 9000)))
            files.append(path)


def run(cmd, env):
    return subprocess.run(cmd, env=env, capture_output=True, text=True)


def clean(image):
    return subprocess.run(["e2fsck", "-fn", image], capture_output=True).returncode == 0


def differences(src, dumped, top=True):
    """Where debugfs's dump of a copy differs from the source tree (the first few)."""
    found = []
    names = set(os.listdir(src))
    dumped_names = set(os.listdir(dumped)) - ({"lost+found"} if top else set())
    for name in sorted(names ^ dumped_names)[:3]:
        found.append("%s: only in %s" % (os.path.join(src, name), "the source" if name in names else "the image"))
    for name in sorted(names & dumped_names):
        a, b = os.path.join(src, name), os.path.join(dumped, name)
        sa, sb = os.lstat(a), os.lstat(b)
        if (sa.st_mode & 0o170777) != (sb.st_mode & 0o170777):
            found.append("%s: mode %o in the source, %o in the image" % (a, sa.st_mode, sb.st_mode))
        elif os.path.islink(a):
            if os.readlink(a) != os.readlink(b):
                found.append("%s: the symlink's target differs" % a)
        elif os.path.isdir(a):
            found += differences(a, b, False)
        else:
            with open(a, "rb") as fa, open(b, "rb") as fb:
                if fa.read() != fb.read():
                    found.append("%s: the bytes differ" % a)
        if len(found) >= 3:
            break
    return found[:3]


def holds(image, path, tree, work):
    """Compares the image's PATH, dumped by debugfs, with TREE."""
    out = os.path.join(work, "dump")
    shutil.rmtree(out, ignore_errors=True)
    os.mkdir(out)
    r = subprocess.run(["debugfs", "-R", "rdump %s %s" % (path, out), image], capture_output=True, text=True)
    if r.returncode != 0:
        return ["debugfs rdump %s exited %d" % (path, r.returncode)]
    dumped = out if path == "/" else os.path.join(out, os.path.basename(path))
    found = differences(tree, dumped)
    shutil.rmtree(out, ignore_errors=True)
    return found


def clear(work):
    """Removes the last round's tree and images (a failed round's are kept under other names)."""
    shutil.rmtree(os.path.join(work, "tree"), ignore_errors=True)
    for image in ("made.img", "put.img"):
        if os.path.exists(os.path.join(work, image)):
            os.remove(os.path.join(work, image))


def round_ok(n, seed, args, work):
    rnd = random.Random(seed)
    clear(work)
    tree = os.path.join(work, "tree")
    make_tree(tree, rnd, args.wide)
    hash_seed = str(uuid.UUID(int=rnd.getrandbits(128)))
    cache = rnd.choice(CACHES)
    ids = ["-U", "11111111-2222-3333-4444-555555555555", "-E", "hash_seed=" + hash_seed]
    env = dict(os.environ, SOURCE_DATE_EPOCH="1700000000", FSIO_META_CACHE=cache)
    mkext4, extwb = os.path.join(args.build, "cmd/mkext4"), os.path.join(args.build, "cmd/extwb")
    made, put = os.path.join(work, "made.img"), os.path.join(work, "put.img")
    problems = []

    def judge(what, r, image, paths):
        if r.returncode != 0:
            problems.append("%s exited %d: %s" % (what, r.returncode, r.stderr.strip()[:200]))
        elif not clean(image):
            problems.append("%s made an image e2fsck -fn finds errors in" % what)
        else:
            for path in paths:
                problems.extend("%s, %s: %s" % (what, path, d) for d in holds(image, path, tree, work))

    judge("mkext4 -d", run([mkext4, "-q", "-C", *ids, "-d", tree, made, IMAGE], env), made, ["/"])
    r = run([mkext4, "-q", "-C", *ids, put, IMAGE], env)
    for dest in ("/a", "/b"):
        if r.returncode == 0:
            r = run([extwb, "put", "-q", put, dest, tree], env)
    judge("extwb put", r, put, ["/a", "/b"])
    if not problems:
        return True
    for image in (made, put):
        shutil.copy(image, os.path.join(work, "round%d-%s" % (n, os.path.basename(image))))
    print("round %d (--seed %d%s): hash seed %s, FSIO_META_CACHE=%s: %s" %
          (n, seed, " --wide" if args.wide else "", hash_seed, cache, "; ".join(problems)), flush=True)
    return False


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=20)
    p.add_argument("--seed", type=int, default=None, help="first round's seed (default: random); round k uses S+k")
    p.add_argument("--wide", action="store_true", help="most names in one directory of 2,000-20,000")
    p.add_argument("--build", default=os.path.join(os.path.dirname(__file__), "..", "build"))
    p.add_argument("--work", default=None, help="scratch directory (default: a new one under /var/tmp)")
    args = p.parse_args()
    for peer in ("e2fsck", "debugfs"):
        if shutil.which(peer) is None:
            sys.exit("ext_stress: %s is not installed" % peer)
    for tool in ("mkext4", "extwb"):
        if not os.access(os.path.join(args.build, "cmd", tool), os.X_OK):
            sys.exit("ext_stress: no %s in %s/cmd: build first (tools/setup.sh)" % (tool, args.build))
    first = args.seed if args.seed is not None else random.randrange(1 << 30)
    work = args.work or tempfile.mkdtemp(prefix="fsio-ext-stress.", dir="/var/tmp")
    os.makedirs(work, exist_ok=True)
    bad = sum(not round_ok(k, first + k, args, work) for k in range(args.rounds))
    clear(work)
    print("ext_stress: %d rounds from seed %d%s, %d failed%s" %
          (args.rounds, first, " (--wide)" if args.wide else "", bad, "; images kept in " + work if bad else ""))
    if not bad and not args.work:
        os.rmdir(work)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
