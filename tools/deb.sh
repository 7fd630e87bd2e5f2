#!/usr/bin/env bash
# Builds a Debian package of fsio from a build directory, with meson and
# dpkg-deb: `meson install` into a staging tree, moved from the build's
# prefix to /usr, dependencies from dpkg-shlibdeps, libfsio's shlibs and
# ldconfig trigger. One package, fsio, holds the tools, the library, its
# headers and pkg-config file (no split into libfsio0/libfsio-dev yet).
# Usage: tools/deb.sh [BUILD_DIR [OUT_DIR]]   (default: build, .)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
out=$(mkdir -p "${2:-.}" && cd "${2:-.}" && pwd)
for c in meson dpkg-deb dpkg-shlibdeps dpkg-architecture; do
  command -v "$c" >/dev/null || { echo "deb.sh: $c is not installed (dpkg-dev)" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

meson install -C "$build" --no-rebuild --destdir "$work/stage" --quiet >/dev/null
opt() { meson introspect "$build" --buildoptions |
  python3 -c "import json,sys; print(next(o['value'] for o in json.load(sys.stdin) if o['name'] == '$1'))"; }
prefix=$(opt prefix)
version=$(meson introspect "$build" --projectinfo | python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')
arch=$(dpkg-architecture -qDEB_HOST_ARCH)

# dpkg-shlibdeps wants a source tree: debian/control, and the package's
# own tree under debian/PACKAGE (its DEBIAN/shlibs names our library).
pkg=$work/debian/fsio
mkdir -p "$pkg/usr" "$pkg/DEBIAN"
cp -a "$work/stage$prefix/." "$pkg/usr/"
find "$pkg/usr" -name '*.pc' -exec sed -i "s|^prefix=.*|prefix=/usr|" {} +
gzip -9n "$pkg"/usr/share/man/man*/*.[0-9] 2>/dev/null || true
soname=$(basename "$(find "$pkg/usr" -name 'libfsio.so.[0-9]*' -type l | head -1)")
echo "libfsio ${soname##*.so.} fsio (>= $version)" > "$pkg/DEBIAN/shlibs"
echo "activate-noawait ldconfig" > "$pkg/DEBIAN/triggers"
printf 'Source: fsio\n\nPackage: fsio\nArchitecture: any\n' > "$work/debian/control"
mapfile -t elves < <(find "$pkg/usr/bin" "$pkg/usr/sbin" "$pkg/usr/lib" -type f -perm -u+x)
# As dh_strip does: no debug info in the package (it would make it 10 times
# larger and dpkg-deb's compression take a minute).
strip --strip-unneeded --remove-section=.comment --remove-section=.note "${elves[@]}"
depends=$(cd "$work" && dpkg-shlibdeps -O -S"$pkg" "${elves[@]}" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
# libarchive is opened with dlopen when a tar is read (cmd/tree/libarchive.hpp),
# so dpkg-shlibdeps cannot see it: named here, with its soname's package.
depends="$depends, libarchive13"
cat > "$pkg/DEBIAN/control" <<CONTROL
Package: fsio
Version: $version
Architecture: $arch
Maintainer: fsio developers <fsio@localhost>
Installed-Size: $(du -sk "$pkg/usr" | cut -f1)
Depends: $depends
Section: admin
Priority: optional
Description: block-device tools on one batched I/O library
 mkfat formats FAT12/16/32 with mkfs.fat's geometry and options in a few
 merged writes (a drop-in for mkfs.fat under its names); ddbench measures
 a device like fio; extwb writes files into ext4 images; libfsio is the
 I/O library they share, with its headers and pkg-config file.
CONTROL
(cd "$pkg" && find usr -type f -exec md5sum {} + > DEBIAN/md5sums)
deb=$out/fsio_${version}_$arch.deb
dpkg-deb --root-owner-group --build "$pkg" "$deb" >/dev/null
echo "$deb"
