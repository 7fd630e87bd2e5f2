"""What tools/ext_stress.py and tools/fat_stress.py share: the command line,
the loop over seeded rounds, and the comparison of a tree with a peer's copy
of it."""
import argparse
import os
import random
import shutil
import sys
import tempfile


def differences(src, copied, ignore=(), modes=True):
    """Where COPIED (a peer tool's copy out of an image) differs from the
    tree SRC: names, file bytes, and with MODES the type and permission bits
    and symlink targets. IGNORE names entries of COPIED's top to leave out
    (lost+found). The first three, as sentences."""
    found = []
    names, copied_names = set(os.listdir(src)), set(os.listdir(copied)) - set(ignore)
    for n in sorted(names ^ copied_names)[:3]:
        found.append("%s: only in %s" % (os.path.join(src, n), "the source" if n in names else "the image"))
    for n in sorted(names & copied_names):
        a, b = os.path.join(src, n), os.path.join(copied, n)
        sa, sb = os.lstat(a), os.lstat(b)
        if modes and (sa.st_mode & 0o170777) != (sb.st_mode & 0o170777):
            found.append("%s: mode %o in the source, %o in the image" % (a, sa.st_mode, sb.st_mode))
        elif os.path.isdir(a) != os.path.isdir(b):
            found.append("%s: a directory in one and not in the other" % a)
        elif os.path.islink(a):
            if os.readlink(a) != os.readlink(b):
                found.append("%s: the symlink's target differs" % a)
        elif os.path.isdir(a):
            found += differences(a, b, (), modes)
        else:
            with open(a, "rb") as fa, open(b, "rb") as fb:
                if fa.read() != fb.read():
                    found.append("%s: the bytes differ" % a)
        if len(found) >= 3:
            break
    return found[:3]


def main(name, doc, wide_help, peers, tools, round_ok, clear, summary=lambda: ""):
    """Parses --rounds, --seed, --wide, --build and --work; checks that PEERS
    are installed and TOOLS built; runs round_ok(k, seed, args, work) for
    each round and exits 1 if any failed. CLEAR(work) empties the scratch
    directory; SUMMARY() adds to the last line."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("--rounds", type=int, default=20)
    p.add_argument("--seed", type=int, default=None, help="first round's seed (default: random); round k uses S+k")
    p.add_argument("--wide", action="store_true", help=wide_help)
    p.add_argument("--build", default=os.path.join(os.path.dirname(__file__), "..", "build"))
    p.add_argument("--work", default=None, help="scratch directory (default: a new one under /var/tmp)")
    args = p.parse_args()
    for peer in peers:
        if shutil.which(peer) is None:
            sys.exit("%s: %s is not installed" % (name, peer))
    for tool in tools:
        if not os.access(os.path.join(args.build, "cmd", tool), os.X_OK):
            sys.exit("%s: no %s in %s/cmd: build first (tools/setup.sh)" % (name, tool, args.build))
    first = args.seed if args.seed is not None else random.randrange(1 << 30)
    work = args.work or tempfile.mkdtemp(prefix="fsio-%s." % name.replace("_", "-"), dir="/var/tmp")
    os.makedirs(work, exist_ok=True)
    bad = sum(not round_ok(k, first + k, args, work) for k in range(args.rounds))
    clear(work)
    print("%s: %d rounds from seed %d%s, %d failed%s%s" %
          (name, args.rounds, first, " (--wide)" if args.wide else "", bad, summary(),
           "; images kept in " + work if bad else ""))
    if not bad and not args.work:
        os.rmdir(work)
    sys.exit(1 if bad else 0)
