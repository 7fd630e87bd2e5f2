#!/usr/bin/env bash
# `meson install` into a scratch root: tools in sbin (mkfat) and bin
# (ddbench, extwb), man pages in their sections, bash completions, libfsio
# with a versioned soname, its headers and a pkg-config file; then
# tests/install/fsio_zero.cpp is built against that installed copy with
# pkg-config alone and run, and the installed mkfat runs on it too.
. "$(dirname "$0")/lib.sh"
need meson pkg-config c++ readelf
root=$T/root
meson install -C "$BUILD" --no-rebuild --destdir "$root" --quiet >"$T/install.log" 2>&1 ||
  { cat "$T/install.log"; fail "meson install failed"; }
prefix=$(meson introspect "$BUILD" --buildoptions | python3 -c \
  'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')
p=$root$prefix
for f in sbin/mkfat sbin/fatck sbin/mkext4 bin/fatfill bin/ddbench bin/extwb share/man/man8/mkfat.8 \
         share/man/man8/mkext4.8 share/man/man1/ddbench.1 share/man/man7/fsio.7 include/fsio/libfsio/io_queue.hpp; do
  [ -e "$p/$f" ] || fail "not installed: $prefix/$f"
done
for t in mkfat ddbench extwb fatck fatfill fsimg mkext4; do
  [ -f "$p/share/bash-completion/completions/$t" ] || fail "completion not installed: $prefix/share/bash-completion/completions/$t"
done
[ ! -e "$p/sbin/mkfs.fat" ] || fail "mkfs.fat link installed although mkfs_links is off"
lib=$(find "$p" -name 'libfsio.so.*.*' | head -1)
[ -n "$lib" ] || fail "no libfsio.so.X.Y.Z installed"
soname=$(readelf -d "$lib" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[[ $soname =~ ^libfsio\.so\.[0-9]+$ ]] || fail "soname '$soname' is not versioned"
libdir=$(dirname "$lib")
[ -L "$libdir/$soname" ] && [ -L "$libdir/libfsio.so" ] || fail "the $soname and libfsio.so links are missing"
readelf -d "$p/sbin/mkfat" | grep -q "NEEDED.*\[$soname\]" || fail "mkfat does not link $soname"
pass "installed: sbin/mkfat, bin/ddbench, bin/extwb, man pages, completions for all seven tools, $soname with its links"

export PKG_CONFIG_PATH=$libdir/pkgconfig PKG_CONFIG_SYSROOT_DIR=$root
pkg-config --exists fsio || fail "pkg-config does not find fsio in $PKG_CONFIG_PATH"
# shellcheck disable=SC2046
c++ -o "$T/fsio_zero" "$SRC/tests/install/fsio_zero.cpp" $(pkg-config --cflags --libs fsio) 2>"$T/cc.log" ||
  { cat "$T/cc.log"; fail "the example does not build against the installed libfsio"; }
readelf -d "$T/fsio_zero" | grep -q "NEEDED.*\[$soname\]" || fail "the example does not link $soname"
head -c 8M /dev/urandom > "$T/data.img"
LD_LIBRARY_PATH=$libdir "$T/fsio_zero" "$T/data.img" 1048576 4194304 > "$T/out" || fail "the example failed"
cmp -n 4194304 -i 1048576:0 "$T/data.img" /dev/zero || fail "the example did not zero the range"
pass "tests/install/fsio_zero.cpp built with pkg-config against the installed copy: $(cat "$T/out")"

truncate -s 32M "$T/fat.img"
LD_LIBRARY_PATH=$libdir "$p/sbin/mkfat" -q "$T/fat.img" || fail "the installed mkfat failed"
if command -v fsck.fat >/dev/null; then fsck.fat -n "$T/fat.img" >/dev/null || fail "fsck.fat -n rejects it"; fi
pass "the installed mkfat formats, fsck.fat -n accepts"
