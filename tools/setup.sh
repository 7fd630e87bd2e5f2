#!/usr/bin/env bash
# Installs everything fsio needs to build and test on Debian 12, then builds.
# Usage: tools/setup.sh [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}

packages=(
  meson ninja-build g++ pkg-config
  libcli11-dev libblkid-dev libzstd-dev libboost1.81-dev liburing-dev libarchive-dev
  liblzma-dev libexpat1-dev libssl-dev
  libgtest-dev nlohmann-json3-dev
  dosfstools mtools e2fsprogs e2tools fdisk fio mandoc strace util-linux time
  # fatck_dosfstools: dosfstools' test images are hex dumps (xxd -r).
  xxd
  # mkext4_xattr: setfattr/getfattr, setfacl/getfacl and setcap make and read
  # the source tree's extended attributes and ACLs; bsdtar archives chattr
  # flags (GNU tar does not).
  attr acl libcap2-bin libarchive-tools
  # fsimg restore's tests: bmaptool create makes the maps, xz and zstd the images.
  bmap-tools xz-utils zstd
  # The fuzz build only (tools/fuzz.sh): Debian 12's clang is clang 14, whose
  # libFuzzer (libclang_rt.fuzzer) comes in libclang-rt-14-dev.
  clang libclang-rt-14-dev
  # tools/format.sh and its test: the layout .clang-format gives, version 14.
  clang-format
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  echo "setup: installing ${missing[*]}" >&2
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${missing[@]}"
fi

if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" --buildtype=debugoptimized ${FSIO_MESON_ARGS:-}
fi
ninja -C "$build"
