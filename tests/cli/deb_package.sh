#!/usr/bin/env bash
# The Debian package made by tools/deb.sh from this build: dpkg installs it
# into a scratch root (dpkg --root, its own empty database), the installed
# mkfat runs from there (--version, and a format fsck.fat accepts), dpkg
# lists its files, and dpkg removes it again leaving none of them.
. "$(dirname "$0")/lib.sh"
need dpkg dpkg-deb dpkg-shlibdeps meson tar
deb=$("$SRC/tools/deb.sh" "$BUILD" "$T/out") || fail "tools/deb.sh failed"
dpkg-deb -I "$deb" > "$T/info"
grep -q '^ Depends:.*libc6' "$T/info" || fail "no computed Depends: $(cat "$T/info")"
dpkg-deb -c "$deb" > "$T/contents"
grep -q ' ./usr/sbin/mkfat$' "$T/contents" || fail "usr/sbin/mkfat is not in the package"
root=$T/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
touch "$root/var/lib/dpkg/status"
# The scratch root has no libc6 package to satisfy Depends: the host's
# libraries stand in for it.
dpkg --root="$root" --force-depends -i "$deb" > "$T/dpkg.log" 2>&1 || { cat "$T/dpkg.log"; fail "dpkg -i failed"; }
dpkg --root="$root" -s fsio | grep -q '^Status: install ok installed' || fail "dpkg does not list fsio as installed"
lib=$(dirname "$(find "$root/usr/lib" -name 'libfsio.so.*' | head -1)")
version=$(LD_LIBRARY_PATH=$lib "$root/usr/sbin/mkfat" --version) || fail "mkfat --version from the scratch root failed"
[[ $version == mkfat\ * ]] || fail "unexpected version line: $version"
truncate -s 16M "$T/f.img"
LD_LIBRARY_PATH=$lib "$root/usr/sbin/mkfat" -q "$T/f.img" || fail "the packaged mkfat failed"
command -v fsck.fat >/dev/null && { fsck.fat -n "$T/f.img" >/dev/null || fail "fsck.fat -n rejects its image"; }
# libarchive is opened only when a tar is read (dlopen), so dpkg-shlibdeps
# cannot find it: the package must name it, and a tar must still go in.
grep -q '^ Depends:.*libarchive13' "$T/info" || fail "Depends does not name libarchive13: $(grep Depends "$T/info")"
mkdir -p "$T/src/EFI" && echo "boot" > "$T/src/EFI/boot.txt"
tar -cf "$T/src.tar" -C "$T/src" .
LD_LIBRARY_PATH=$lib "$root/usr/sbin/mkfat" -q -C -d "$T/src.tar" "$T/t.img" || fail "the packaged mkfat -d of a tar failed"
if command -v mtype >/dev/null; then
  [ "$(MTOOLS_SKIP_CHECK=1 mtype -i "$T/t.img" ::/EFI/boot.txt)" = boot ] || fail "mtype does not read the file mkfat -d put in from a tar"
fi
pass "installed into a scratch root: $version; mkfat -d of a tar works from it"
files=$(dpkg --root="$root" -L fsio | grep -c '^/usr/.*[^/]$' || true)
dpkg --root="$root" -r fsio > "$T/dpkg.log" 2>&1 || { cat "$T/dpkg.log"; fail "dpkg -r failed"; }
[ ! -e "$root/usr/sbin/mkfat" ] && [ -z "$(find "$root/usr" -type f 2>/dev/null)" ] || fail "files left after dpkg -r"
pass "dpkg -r removes all $files files"
