// fatck under fsck.fat's names (fsck.fat, fsck.vfat, fsck.msdos, dosfsck):
// what scripts that call fsck.fat 4.2 see, as fatck.8 describes under "Under
// fsck.fat's names": its options parsed as it parses them (getopt_long), its
// exit codes (0 nothing changed, 1 something found (and with -a/-y/-p
// changed), 2 usage, 6 the target cannot be opened), its banner and summary
// line, and lost chains kept as FSCKnnnn.REC files with -a, -y, -p and -f.
#pragma once

namespace fsio::cli::fatck {

// True when argv[0]'s file name is one of fsck.fat's.
bool is_fsck_name(const char* argv0);

// The whole run under one of those names.
int fsck_main(int argc, char** argv);

}  // namespace fsio::cli::fatck
