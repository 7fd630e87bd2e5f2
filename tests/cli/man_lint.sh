#!/usr/bin/env bash
# Every man page must be clean under mandoc's linter, and every tool must have one.
set -euo pipefail
command -v mandoc >/dev/null || { echo "SKIP: mandoc not installed" >&2; exit 77; }
cd "$SRC/man"
status=0; count=0
for page in *.[1-8]; do
  count=$((count + 1))
  out=$(mandoc -T lint -W warning "$page" 2>&1 || true)
  if [ -n "$out" ]; then echo "$out"; status=1; fi
done
for tool in ddbench mkfat fatck fatfill extwb fsimg mkext4; do
  ls "$tool".[1-8] >/dev/null 2>&1 || { echo "no man page for $tool"; status=1; }
done
echo "linted $count man pages"
exit $status
