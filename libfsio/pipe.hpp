// Reads and writes on a descriptor that may wait on another process, a
// pipe or a socket, that never block for longer than 100 ms without asking
// whether to stop: the other end of `fsimg save - | ssh host fsimg restore
// -` can stall for good, and Ctrl-C (InterruptGuard) or a cancelled reader
// must still end the wait. Files and devices go straight to read(2) and
// write(2).
//
// Reads wait in poll() and then take what is there. Writes to a pipe go in
// pieces that fit its free room, so write(2) never blocks; writes to a
// socket use MSG_DONTWAIT. EINTR and EAGAIN are retried.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "libfsio/result.hpp"

namespace fsio {

enum class FdKind { other, pipe, socket };
FdKind fd_kind(int fd);

// Asks for a pipe of 1 MiB when fd is a pipe (Linux's default is 64 KiB):
// a sixteenth of the wake-ups and writes for a stream of hundreds of
// megabytes. A refusal (over /proc/sys/fs/pipe-max-size, or the user's
// pipe quota) leaves the pipe as it was; nothing depends on it.
void widen_pipe(int fd);

// Called every 100 ms while a read or write waits; true ends the wait with
// Errc::interrupted ("NAME: interrupted while waiting to read").
using StopFn = std::function<bool()>;
bool interrupt_requested();  // the default: InterruptGuard::requested()

// One read(2) of at most out.size() bytes; 0 at the end of the stream;
// `kind` from fd_kind(fd).
// A failure is errno_error("NAME: read at byte OFFSET").
Result<std::size_t> read_some(int fd, FdKind kind, std::span<std::byte> out, const std::string& name,
                              std::uint64_t offset, const StopFn& stop = interrupt_requested);

// Writes all of data (at stream byte `offset`, for messages); `kind` from
// fd_kind(fd), asked once per descriptor. A failure is errno_error("NAME:
// write at byte N"); EPIPE when the reader went away (with SIGPIPE
// ignored), ENOSPC on a full disk.
Status write_all(int fd, FdKind kind, std::span<const std::byte> data, const std::string& name, std::uint64_t offset,
                 const StopFn& stop = interrupt_requested);

}  // namespace fsio
