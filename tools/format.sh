#!/usr/bin/env bash
# Applies .clang-format to every C++ file git knows (tools/format.sh), or
# checks that nothing would change (tools/format.sh --check: exit 1 and the
# files named when something would). The layout clang-format gives differs
# between its versions: the files are formatted with Debian 12's
# clang-format 14, and another version's --check is refused rather than
# trusted (exit 77, as a skipped test).
set -euo pipefail
cd "$(dirname "$0")/.."
want=14
cf=$(command -v "clang-format-$want" || command -v clang-format || true)
[ -n "$cf" ] || { echo "format.sh: clang-format is not installed (apt-get install clang-format)" >&2; exit 77; }
version=$("$cf" --version)
case $version in
  *"version $want."*) ;;
  *) echo "format.sh: $cf is not clang-format $want ($version); its layout differs" >&2; exit 77 ;;
esac
mapfile -t files < <(git ls-files '*.cpp' '*.hpp')
if [ "${1:-}" = --check ]; then
  bad=()
  for f in "${files[@]}"; do
    "$cf" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
  done
  if [ "${#bad[@]}" -gt 0 ]; then
    printf 'format.sh: %d files are not as .clang-format lays them out (tools/format.sh fixes them):\n' "${#bad[@]}" >&2
    printf '  %s\n' "${bad[@]}" >&2
    exit 1
  fi
  echo "format.sh: ${#files[@]} files as .clang-format lays them out"
else
  "$cf" -i "${files[@]}"
fi
