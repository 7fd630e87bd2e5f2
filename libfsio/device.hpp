// Device: a block device or an image file, opened for fsio's kind of I/O.
//
// A Device is a window [offset, offset + size) onto the underlying file or
// block device; every offset a caller passes is relative to the window start
// (a partition inside an image). It owns the file descriptor. Not copyable;
// movable. Reads and writes go through IoQueue, not through Device.
//
// Topology: logical/physical sector size, optimal I/O size and direct-I/O
// alignment come from BLKSSZGET/BLKPBSZGET/BLKIOOPT, statx(STATX_DIOALIGN) and
// libblkid topology. Image files report 512-byte logical sectors unless told
// otherwise (OpenOptions::sector_size), like mkfs.fat does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "libfsio/result.hpp"

namespace fsio {

enum class SyncMode { none, dsync, sync };

struct OpenOptions {
  bool write = false;
  // With write == false: refuse exactly what a write open would refuse (in
  // use, read-only, claimed by another exclusive opener), with the same
  // errors, but open read-only. What --dry-run needs to report the refusal
  // it would meet.
  bool check_write = false;
  bool direct = true;                        // O_DIRECT; falls back to buffered where refused
  SyncMode sync = SyncMode::none;            // opened with O_DSYNC / O_SYNC
  bool exclusive = true;                     // O_EXCL on block devices when writing
  std::uint64_t offset = 0;                  // window start, bytes into the underlying device
  std::optional<std::uint64_t> length;       // window length; default: to the end
  std::optional<std::uint64_t> create_size;  // create/extend a regular file to this size
  // With create_size: the file must not exist yet (O_CREAT | O_EXCL, as
  // mkfs.fat -C; a symbolic link counts as existing, dangling or not).
  bool create_new = false;
  std::uint32_t sector_size = 0;  // override logical sector size (0 = ask the kernel)
  bool allow_mounted = false;     // tests only: skip the in-use check (O_EXCL still applies)
};

struct Topology {
  std::uint32_t logical_sector = 512;
  std::uint32_t physical_sector = 512;
  std::uint32_t optimal_io = 0;  // 0 when the device does not say
  std::uint32_t minimum_io = 512;
  std::uint32_t dio_mem_align = 512;     // buffer address alignment for O_DIRECT
  std::uint32_t dio_offset_align = 512;  // offset/length alignment for O_DIRECT
  std::uint64_t max_request = 1u << 20;  // largest single request we build
};

// The topology of an open file descriptor (what Device::open records): the
// ioctls and libblkid for block devices, 512-byte sectors for image files,
// statx(STATX_DIOALIGN) for both. A non-zero sector_size_override replaces
// the logical sector size (for a block device only by a larger one).
// Exposed for tools that report topology; `path` is for error messages.
Result<Topology> query_topology(int fd, const std::string& path, bool is_block, std::uint32_t sector_size_override);

class Device {
 public:
  // Every error a Device returns names its path (Error::path, said first in
  // the message: "card.img: fstat: ..."), and the offset and size where a
  // request has them.
  //
  // Opens path. For writing (or check_write), before anything is opened or
  // created, refuses with an error naming the reason:
  //  - a target in use: anything sharing storage with the window is mounted
  //    or active swap (find_use, mount.hpp): Errc::busy, "PATH: mounted on
  //    /mnt through /dev/loop0 (both use /var/tmp/ext.img); refusing to
  //    write to it";
  //  - a read-only target: a block device whose read-only flag is set
  //    (BLKROGET: losetup -r, write-protected cards), a file the caller may
  //    not write (read-only mount, immutable, permissions) or that has no
  //    write permission bits at all (root could, but someone marked it
  //    read-only): Errc::io ("PATH: the device is read-only (BLKROGET...)",
  //    "PATH: read-only file (mode 0444)...", or the errno of access(W_OK));
  //  - a block device claimed by another exclusive opener (O_EXCL: md, dm,
  //    a mount we could not see): Errc::busy.
  // No option overrides these; allow_mounted (tests) skips only the first.
  // A file this call creates is removed again when the call fails; after
  // success, created() says so and remove_created() undoes it.
  static Result<Device> open(const std::string& path, const OpenOptions& options);

  Device(Device&& other) noexcept;
  Device& operator=(Device&& other) noexcept;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  ~Device();

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  std::uint64_t size() const { return size_; }      // window size in bytes
  std::uint64_t offset() const { return offset_; }  // window start in the underlying device
  const Topology& topology() const { return topo_; }
  std::uint32_t logical_sector_size() const { return topo_.logical_sector; }
  bool is_block_device() const { return is_block_; }
  bool writable() const { return writable_; }
  bool created() const { return created_; }  // this open created the file
  // Removes the file this Device created (a tool whose work failed leaves
  // no half-made image behind), if the path still names it; else nothing.
  Status remove_created();
  bool direct() const { return direct_; }  // O_DIRECT actually in effect
  SyncMode sync_mode() const { return sync_; }
  // Non-empty when O_DIRECT was asked for but is not in effect: "tmpfs
  // refuses O_DIRECT; using buffered I/O", or use_buffered()'s reason.
  const std::string& direct_fallback() const { return direct_fallback_; }

  // End-of-device guard for a request of `length` bytes at window offset
  // `offset`: returns the bytes that lie inside the device (0 < result <=
  // length). A request wholly inside is returned whole. One that straddles
  // the end is truncated:
  //  - block devices and O_DIRECT: to whole logical sectors, because the
  //    kernel refuses (EINVAL/EIO) a partial sector there;
  //  - regular files opened buffered: to the real end, so the odd tail of an
  //    image whose size is not a sector multiple stays readable (10000-byte
  //    file: clamp(9728, 4096) == 272).
  // A request wholly beyond the end, starting at the end, or (in the
  // whole-sector case) lying entirely in a partial last sector is
  // Errc::invalid_argument naming the offset in hex. A zero-length request
  // returns 0.
  Result<std::uint64_t> clamp(std::uint64_t offset, std::uint64_t length) const;

  // Turns O_DIRECT off on the open descriptor (fcntl F_SETFL) for requests
  // the device's direct-I/O unit does not divide (a FAT of 2048-byte
  // sectors on a 4 KiB-sector disk); `why` becomes direct_fallback()'s
  // reason. It keeps the descriptor and with it the O_EXCL claim: a second,
  // buffered open while this one is open would be refused by our own claim
  // (EBUSY), and closing first would let another program in between. An
  // IoQueue on the device sees the change from its next batch on. Does
  // nothing when already buffered.
  Status use_buffered(const std::string& why);

  // fdatasync (fsync for SyncMode::sync). One flush, not one per block.
  Status flush() const;
  // BLKDISCARD on block devices, FALLOC_FL_PUNCH_HOLE on files; window-relative.
  Status discard(std::uint64_t offset, std::uint64_t length) const;

  // Names this device on an error that does not name one yet (Error::at):
  // for an engine used without an IoQueue. Device's own errors and
  // IoQueue's already name it.
  Error error(Error e) const { return std::move(e).at(path_); }

 private:
  Device() = default;
  Status finish_open(const OpenOptions& options);
  int fd_ = -1;
  std::string path_;
  std::uint64_t offset_ = 0;
  std::uint64_t size_ = 0;
  Topology topo_;
  bool is_block_ = false;
  bool writable_ = false;
  bool created_ = false;
  bool direct_ = false;
  SyncMode sync_ = SyncMode::none;
  std::string direct_fallback_;
};

}  // namespace fsio
