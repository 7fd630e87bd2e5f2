// libarchive, loaded when a tar is first read rather than at every start.
//
// Linked normally, libarchive.so.13 and what it pulls in (nettle, libxml2,
// ICU, lzma, zstd, lz4, bz2, zlib, acl: 11 libraries) were mapped, relocated
// and initialised by every run of mkfat, mkext4 and extwb, about a
// millisecond each (several CPU-feature probes among them, each a trap to
// the hypervisor on a virtual machine), although only -d with a tar uses
// it. libarchive.cpp defines the libarchive functions the tree sources
// call; each looks up its namesake in the library, opened with dlopen on
// first use, and calls it. Callers include <archive.h> as usual.
#pragma once

#include "libfsio/result.hpp"

namespace fsio::tree {

// Opens libarchive.so.13 if it is not open yet. Errc::unsupported naming
// the library and dlerror's reason when it cannot be (a tool installed
// without it: reading a tar needs Debian's libarchive13). Call it before the
// first archive_* call; a call that finds the library missing exits the
// process with that message.
fsio::Status load_libarchive();

}  // namespace fsio::tree
