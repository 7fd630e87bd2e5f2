#!/usr/bin/env python3
"""Random trees through mkfat -d, judged by fsck.fat -n, mtools and fatck -n.

Each round makes a tree from its own seed (nested directories, files of
random bytes from empty to several clusters, short 8.3 names, long names
with spaces, dots, mixed case and non-ASCII letters, up to 120 characters;
with --wide most names in one directory of 2,000-8,000), picks a FAT type,
a sector size and a cluster size that fit, and runs
  mkfat -C -d TREE IMAGE auto --slack 10%
The image must be clean for fsck.fat -n and for fatck -n, and mtools must
copy out the same tree: names, file bytes and directories, with nothing
more. A failing round keeps its image and names the seed that remakes it;
the exit status is 1.

Usage: tools/fat_stress.py [--rounds N] [--seed S] [--wide] [--build DIR] [--work DIR]
"""
import os
import random
import shutil
import subprocess

import stress_rounds

LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
EXTRA = " .-_+,;=[]()'&%~éüßøæÅ日本語"
REFUSED = []  # rounds whose geometry no volume could have for the tree (mkfat said so)


def name(rnd, index):
    """A unique name: FAT compares case-insensitively, so the index keeps names apart."""
    if rnd.random() < 0.3:
        stem = "".join(rnd.choice(LETTERS[26:]) for _ in range(rnd.randint(1, 5)))
        ext = "".join(rnd.choice(LETTERS[26:]) for _ in range(rnd.randint(0, 3)))
        return "%s%03X%s" % (stem, index, "." + ext if ext else "")
    body = "".join(rnd.choice(LETTERS + EXTRA) for _ in range(rnd.randint(1, 110)))
    # Windows and mtools drop trailing dots and spaces; a leading space is legal but awkward.
    return ("n%05d %s" % (index, body)).rstrip(" .")


def make_tree(root, rnd, wide, cluster):
    os.mkdir(root)
    dirs = [root]
    count = 0
    for _ in range(rnd.randint(0, 30)):
        path = os.path.join(rnd.choice(dirs), name(rnd, count))
        count += 1
        os.mkdir(path)
        dirs.append(path)
    if wide:
        dirs.append(os.path.join(root, "wide"))
        os.mkdir(dirs[-1])
    for _ in range(rnd.randint(2000, 8000) if wide else rnd.randint(10, 1500)):
        where = dirs[-1] if wide and rnd.random() < 0.9 else rnd.choice(dirs)
        size = rnd.choice([0, 1, cluster - 1, cluster, cluster + 1, rnd.randint(0, 4 * cluster)])
        with open(os.path.join(where, name(rnd, count)), "wb") as out:
            out.write(rnd.randbytes(size))
        count += 1


def geometry(rnd):
    """-F, -S and a cluster size in bytes that the type allows at a small size."""
    fat = rnd.choice(["12", "16", "32"])
    sector = rnd.choice([512, 512, 4096])
    cluster = sector * rnd.choice([1, 2, 4, 8]) if fat != "12" else sector * rnd.choice([4, 8, 16])
    return fat, sector, cluster


def clear(work):
    shutil.rmtree(os.path.join(work, "tree"), ignore_errors=True)
    shutil.rmtree(os.path.join(work, "copy"), ignore_errors=True)
    if os.path.exists(os.path.join(work, "fat.img")):
        os.remove(os.path.join(work, "fat.img"))


def round_ok(n, seed, args, work):
    rnd = random.Random(seed)
    clear(work)
    fat, sector, cluster = geometry(rnd)
    tree, copy, image = os.path.join(work, "tree"), os.path.join(work, "copy"), os.path.join(work, "fat.img")
    make_tree(tree, rnd, args.wide, cluster)
    env = dict(os.environ, SOURCE_DATE_EPOCH="1700000000", MTOOLS_SKIP_CHECK="1")
    cmd = [os.path.join(args.build, "cmd/mkfat"), "-q", "-C", "-F", fat, "-S", str(sector),
           "--cluster-size", str(cluster), "-d", tree, image, "auto", "--slack", "10%"]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    what = "-F %s -S %d --cluster-size %d" % (fat, sector, cluster)
    if r.returncode != 0:
        if "volume holds the tree" in r.stderr and not os.path.exists(image):
            REFUSED.append(n)  # no volume of this type and geometry holds the tree: refused, nothing left
            return True
        problems = ["mkfat %s exited %d: %s" % (what, r.returncode, r.stderr.strip()[:300])]
    else:
        problems = []
        if subprocess.run(["fsck.fat", "-n", image], capture_output=True).returncode != 0:
            problems.append("fsck.fat -n finds errors")
        if subprocess.run([os.path.join(args.build, "cmd/fatck"), "-n", image], capture_output=True).returncode != 0:
            problems.append("fatck -n finds errors")
        os.mkdir(copy)
        r = subprocess.run(["mcopy", "-s", "-n", "-i", image, "::*", copy], env=env, capture_output=True, text=True)
        if r.returncode != 0 and os.listdir(tree):
            problems.append("mcopy -s exited %d: %s" % (r.returncode, r.stderr.strip()[:200]))
        else:
            problems += stress_rounds.differences(tree, copy, modes=False)
    if not problems:
        return True
    if os.path.exists(image):
        shutil.copy(image, os.path.join(work, "round%d-fat.img" % n))
    print("round %d (--seed %d%s, %s): %s" % (n, seed, " --wide" if args.wide else "", what, "; ".join(problems)),
          flush=True)
    return False


if __name__ == "__main__":
    stress_rounds.main("fat_stress", __doc__, "most names in one directory of 2,000-8,000", ("fsck.fat", "mcopy"),
                       ("mkfat", "fatck"), round_ok, clear, lambda: ", %d refused as too big for the type" % len(REFUSED))
