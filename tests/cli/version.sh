#!/usr/bin/env bash
# Every tool prints the same --version line, "TOOL (fsio) VERSION", with the
# version meson.build's project() declares (read back with `meson
# introspect`, not from our code); mkfat under mkfs.fat's name prints
# mkfs.fat's line first, as mkfs.fat does.
. "$(dirname "$0")/lib.sh"
need meson python3
version=$(meson introspect --projectinfo "$BUILD" | python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])')
[ -n "$version" ] || fail "meson introspect gave no version"
for tool in mkfat fatfill fatck extwb fsimg ddbench mkext4; do
  out=$("$BUILD/cmd/$tool" --version) || fail "$tool --version exited $?"
  [ "$out" = "$tool (fsio) $version" ] || fail "$tool --version: '$out', expected '$tool (fsio) $version'"
done
pass "six tools: '<tool> (fsio) $version'"
ln -s "$MKFAT" "$T/mkfs.fat"
out=$("$T/mkfs.fat" --version)
[ "$out" = "mkfs.fat 4.2 (fsio mkfat $version)" ] || fail "mkfs.fat --version: '$out'"
pass "as mkfs.fat: '$out'"
