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
import os
import random
import shutil
import subprocess
import uuid

import stress_rounds

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


def holds(image, path, tree, work):
    """Compares the image's PATH, dumped by debugfs, with TREE."""
    out = os.path.join(work, "dump")
    shutil.rmtree(out, ignore_errors=True)
    os.mkdir(out)
    r = subprocess.run(["debugfs", "-R", "rdump %s %s" % (path, out), image], capture_output=True, text=True)
    if r.returncode != 0:
        return ["debugfs rdump %s exited %d" % (path, r.returncode)]
    dumped = out if path == "/" else os.path.join(out, os.path.basename(path))
    found = stress_rounds.differences(tree, dumped, ignore=() if path != "/" else ("lost+found",))
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


if __name__ == "__main__":
    stress_rounds.main("ext_stress", __doc__, "most names in one directory of 2,000-20,000", ("e2fsck", "debugfs"),
                       ("mkext4", "extwb"), round_ok, clear)
