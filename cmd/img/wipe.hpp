// Wiping the signatures that restore --force overwrites, before the first
// byte of the image is written: a restore stopped before its head (the
// first 1 MiB, written last) leaves no filesystem that blkid still finds.
#pragma once

#include <cstdint>
#include <vector>

#include "libfsio/io_queue.hpp"
#include "libfsio/signatures.hpp"

namespace img {

// Zeroes the magic of every signature given (check_overwrite's, window
// offsets), flushes, probes [0, length) again and repeats until libblkid
// finds nothing, as wipefs -a does (a FAT boot sector has three magics).
// A magic found again where it was zeroed, or one libblkid gives no bytes
// for, is an error.
fsio::Status wipe_signatures(fsio::IoQueue& q, std::vector<fsio::Signature> sigs, std::uint64_t length);

}  // namespace img
