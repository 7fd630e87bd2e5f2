#!/usr/bin/env bash
# The bash completions complete options and their values, as bash calls
# them (COMP_WORDS, COMP_CWORD), with plain bash.
. "$(dirname "$0")/lib.sh"
# complete_words FILE FUNCTION WORD...: COMPREPLY for the last word, one line
complete_words() {
  local file=$1 fn=$2; shift 2
  bash -c '. "$1"; shift; fn=$1; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); "$fn"; echo "${COMPREPLY[*]}"' \
    _ "$file" "$fn" "$@"
}
expect() {  # expect WANT GOT WHAT
  [ "$2" = "$1" ] || fail "$3: completed '$2', expected '$1'"
}
c=$SRC/cmd/completions
expect "12 16 32" "$(complete_words "$c/mkfat" _fsio_mkfat mkfat -F '')" "mkfat -F"
expect "--mbr=y --mbr=n --mbr=a" "$(complete_words "$c/mkfat" _fsio_mkfat mkfat --mbr=)" "mkfat --mbr="
expect "--variant=atari" "$(complete_words "$c/mkfat" _fsio_mkfat mkfat --variant=a)" "mkfat --variant=a"
expect "--codepage=437" "$(complete_words "$c/mkfat" _fsio_mkfat mkfs.fat --codepage=43)" "--codepage=43"
expect "512 1024 2048 4096 8192 16384 32768" "$(complete_words "$c/mkfat" _fsio_mkfat mkfat -S '')" "mkfat -S"
expect "--dry-run --discard" "$(complete_words "$c/mkfat" _fsio_mkfat mkfat --d)" "mkfat --d"
got=$(cd "$T" && touch list.txt && complete_words "$c/mkfat" _fsio_mkfat mkfat -l li)
expect "list.txt" "$got" "mkfat -l FILE"
expect "randread randwrite" "$(complete_words "$c/ddbench" _fsio_ddbench ddbench --rw rand)" "ddbench --rw"
expect "uring" "$(complete_words "$c/ddbench" _fsio_ddbench ddbench --engine u)" "ddbench --engine"
expect "put" "$(complete_words "$c/extwb" _fsio_extwb extwb pu)" "extwb subcommands"
expect "--parents" "$(complete_words "$c/extwb" _fsio_extwb extwb put --par)" "extwb put --par"
bash -c ". '$c/mkfat'; complete -p mkfs.vfat" | grep -q _fsio_mkfat || fail "mkfs.vfat is not completed by mkfat's"
pass "mkfat, mkfs.fat, ddbench and extwb complete options and values"
