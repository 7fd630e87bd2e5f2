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
  # One clang-format for every file (a process a file took 35 s, this 1.4 s):
  # each file that would change is named in its "FILE:LINE:COL: error" lines.
  rc=0
  out=$("$cf" --dry-run --Werror "${files[@]}" 2>&1 >/dev/null) || rc=$?
  mapfile -t bad < <(sed -n 's/^\([^: ]*\):[0-9]*:[0-9]*: error: .*/\1/p' <<<"$out" | sort -u)
  if [ "$rc" -ne 0 ] && [ "${#bad[@]}" -eq 0 ]; then
    printf 'format.sh: clang-format failed (exit %d):\n%s\n' "$rc" "$out" >&2
    exit 1
  fi
  if [ "${#bad[@]}" -gt 0 ]; then
    printf 'format.sh: %d files are not as .clang-format lays them out (tools/format.sh fixes them):\n' "${#bad[@]}" >&2
    printf '  %s\n' "${bad[@]}" >&2
    exit 1
  fi
  echo "format.sh: ${#files[@]} files as .clang-format lays them out"
else
  "$cf" -i "${files[@]}"
fi
