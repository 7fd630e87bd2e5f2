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
got=$(cd "$T" && mkdir -p esp && complete_words "$c/mkfat" _fsio_mkfat mkfat -C -d es)
expect "esp" "$got" "mkfat -d SRC"
expect "--stats --skip-special --slack=" "$(complete_words "$c/mkfat" _fsio_mkfat mkfat --s)" "mkfat --s"
expect "--tz=Europe/Berlin" "$(complete_words "$c/mkfat" _fsio_mkfat mkfat --tz=Europe/Berl)" "mkfat --tz="
expect "auto" "$(complete_words "$c/mkfat" _fsio_mkfat mkfat -C -d esp x.img a)" "mkfat -d SRC TARGET auto"
expect "randread randwrite" "$(complete_words "$c/ddbench" _fsio_ddbench ddbench --rw rand)" "ddbench --rw"
expect "uring" "$(complete_words "$c/ddbench" _fsio_ddbench ddbench --engine u)" "ddbench --engine"
expect "put" "$(complete_words "$c/extwb" _fsio_extwb extwb pu)" "extwb subcommands"
expect "--parents" "$(complete_words "$c/extwb" _fsio_extwb extwb put --par)" "extwb put --par"
bash -c ". '$c/mkfat'; complete -p mkfs.vfat" | grep -q _fsio_mkfat || fail "mkfs.vfat is not completed by mkfat's"
pass "mkfat, mkfs.fat, ddbench and extwb complete options and values"

# fatck, fatfill, fsimg: what "-" completes to is, as a set, what the tool's
# own --help lists (CLI11: an option line starts "  -x,--long").
FATCK=$BUILD/cmd/fatck FATFILL=$BUILD/cmd/fatfill FSIMG=$BUILD/cmd/fsimg
for b in "$FATCK" "$FATFILL" "$FSIMG"; do [ -x "$b" ] || fail "$b is not built"; done
help_opts() {  # help_opts TOOL [SUBCOMMAND]: the options --help lists, sorted
  "$@" --help | grep -oE '^ +-[-a-zA-Z0-9,]+' | tr -d ' ' | tr ',' '\n' | sort -u | paste -sd' '
}
help_line() {  # help_line OPTION TOOL [SUBCOMMAND]: --help's text for OPTION
  local o=$1; shift  # CLI11 puts a long description on the next, deeper line
  "$@" --help | awk -v o="$o" '$1 == o || $1 ~ "^-[a-zA-Z]," o "$" {p = 1; print; next}
    p && /^      +[^ -]/ {print; next} {p = 0}'
}
# one line, sorted; not xargs, whose echo would take -n or --help as its own
sorted() { tr ' ' '\n' | grep -v '^$' | sort -u | paste -sd' '; }
same_options() {  # same_options FILE FUNCTION WHAT HELP-OPTIONS WORD...
  local file=$1 fn=$2 what=$3 want=$4; shift 4
  [ -n "$want" ] || fail "$what: no options found in --help"
  expect "$want" "$(complete_words "$file" "$fn" "$@" - | tr ' ' '\n' | grep -vx -- - | sorted)" "$what -"
}
# fatck -r is in --help but refused ("not supported"): not offered.
help_line -r "$FATCK" | grep -q 'not supported' || fail "fatck --help no longer says -r is not supported"
same_options "$c/fatck" _fsio_fatck "fatck" "$(help_opts "$FATCK" | tr ' ' '\n' | grep -vx -- -r | paste -sd' ')" fatck
expect "--verbose --version" "$(complete_words "$c/fatck" _fsio_fatck fatck --v)" "fatck --v"
expect "0 1 2" "$(complete_words "$c/fatck" _fsio_fatck fatck -n --fat-copy '')" "fatck --fat-copy"
got=$(cd "$T" && touch disk.img && complete_words "$c/fatck" _fsio_fatck fatck -a dis)
expect "disk.img" "$got" "fatck TARGET"

same_options "$c/fatfill" _fsio_fatfill "fatfill" "$(help_opts "$FATFILL")" fatfill
help=$(help_line --mirror "$FATFILL")
for v in $(complete_words "$c/fatfill" _fsio_fatfill fatfill --mirror ''); do
  [[ $help == *"$v"* ]] || fail "fatfill --mirror completes '$v', which --help does not name: $help"
done
expect "batched serial" "$(complete_words "$c/fatfill" _fsio_fatfill fatfill --mirror '')" "fatfill --mirror"
expect "serial" "$(complete_words "$c/fatfill" _fsio_fatfill fatfill --size 1M --mirror s)" "fatfill --mirror s"
expect "--no-zero" "$(complete_words "$c/fatfill" _fsio_fatfill fatfill --no)" "fatfill --no"

# fsimg: the subcommands from "fsimg --help" (CLI11's Subcommands: section),
# then each subcommand's options from "fsimg SUB --help".
subs=$("$FSIMG" --help | sed -n '/^Subcommands:/,$p' | awk 'NR > 1 && /^  [a-z]/ {print $1}' | sorted)
expect "info restore save verify" "$subs" "fsimg --help's subcommands"
expect "$subs" "$(complete_words "$c/fsimg" _fsio_fsimg fsimg '' | tr ' ' '\n' | grep -v '^-' | sorted)" "fsimg SUBCOMMAND"
for s in $subs; do
  same_options "$c/fsimg" _fsio_fsimg "fsimg $s" "$(help_opts "$FSIMG" "$s")" fsimg "$s"
done
help=$(help_line --fs "$FSIMG" save)
for v in $(complete_words "$c/fsimg" _fsio_fsimg fsimg save --fs ''); do
  [[ $help == *"$v"* ]] || fail "fsimg save --fs completes '$v', which --help does not name: $help"
done
expect "ext4" "$(complete_words "$c/fsimg" _fsio_fsimg fsimg save --fs e)" "fsimg save --fs e"
# -l's values lie in the range --help gives ("-7..22").
range=$(help_line --level "$FSIMG" save | grep -oE -- '-?[0-9]+\.\.-?[0-9]+')
[ -n "$range" ] || fail "fsimg save --help gives no range for --level"
for v in $(complete_words "$c/fsimg" _fsio_fsimg fsimg save -l ''); do
  [ "$v" -ge "${range%..*}" ] && [ "$v" -le "${range#*..}" ] || fail "fsimg -l completes $v, outside $range"
done
expect "--keep-unused" "$(complete_words "$c/fsimg" _fsio_fsimg fsimg restore --k)" "fsimg restore --k"
got=$(cd "$T" && touch vol.fsimg && complete_words "$c/fsimg" _fsio_fsimg fsimg restore -f vol)
expect "vol.fsimg" "$got" "fsimg restore IN"
complete_words "$c/fsimg" _fsio_fsimg fsimg info - | tr ' ' '\n' | grep -qx -- - || fail "fsimg info: - (stdin) not offered"
for t in fatck fatfill fsimg; do
  bash -c ". '$c/$t'; complete -p $t" | grep -q "_fsio_$t" || fail "$t is not completed by _fsio_$t"
done
pass "fatck, fatfill and fsimg (save, restore, verify, info) complete the options their --help lists, and values"

# mkext4: "-" completes to what its --help lists; -O completes a feature
# after a comma, with its ^; -E the keys after a comma; -T the usage types.
MKEXT4=$BUILD/cmd/mkext4
[ -x "$MKEXT4" ] || fail "$MKEXT4 is not built"
got=$(complete_words "$c/mkext4" _fsio_mkext4 mkext4 - | tr ' ' '\n' | sed 's/=$//' | sort -u | paste -sd' ')
expect "$(help_opts "$MKEXT4")" "$got" "mkext4 - (against mkext4 --help)"
expect "^metadata_csum_seed ^metadata_csum" "$(complete_words "$c/mkext4" _fsio_mkext4 mkext4 -O ^metadata)" "mkext4 -O ^metadata"
expect "has_journal,^64bit" "$(complete_words "$c/mkext4" _fsio_mkext4 mkext4 -O has_journal,^64)" "mkext4 -O a,^b"
expect "nodiscard,root_owner=" "$(complete_words "$c/mkext4" _fsio_mkext4 mkext4 -E nodiscard,root)" "mkext4 -E a,b"
expect "small" "$(complete_words "$c/mkext4" _fsio_mkext4 mkext4 -T sm)" "mkext4 -T"
bash -c ". '$c/mkext4'; complete -p mkext4" | grep -q _fsio_mkext4 || fail "mkext4 is not completed by _fsio_mkext4"
pass "mkext4 completes the options its --help lists, features, extended options and usage types"
