// Device::open: one place that turns "a path and what we mean to do with it"
// into a file descriptor with the right flags, a known size and topology, and
// the safety checks a tool that writes raw devices needs.
#include "libfsio/device.hpp"

#include <fcntl.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <limits>
#include <utility>

#include "libfsio/created_file.hpp"
#include "libfsio/mount.hpp"
#include "libfsio/size.hpp"

namespace fsio {
namespace {

// Name the filesystem that refused O_DIRECT, for direct_fallback().
std::string filesystem_name(int fd) {
  struct statfs sf {};
  if (fstatfs(fd, &sf) != 0) return "the filesystem";
  switch (static_cast<unsigned long>(sf.f_type)) {
    case TMPFS_MAGIC: return "tmpfs";
    case RAMFS_MAGIC: return "ramfs";
    case PROC_SUPER_MAGIC: return "procfs";
    case SYSFS_MAGIC: return "sysfs";
    case FUSE_SUPER_MAGIC: return "fuse";
    case OVERLAYFS_SUPER_MAGIC: return "overlayfs";
    default: return "the filesystem (type " + format_hex(static_cast<unsigned long>(sf.f_type)) + ")";
  }
}

int open_flags(const OpenOptions& o, bool is_block, bool creating) {
  int flags = O_CLOEXEC | (o.write ? O_RDWR : O_RDONLY);
  if (o.sync == SyncMode::dsync) flags |= O_DSYNC;
  if (o.sync == SyncMode::sync) flags |= O_SYNC;
  // On a block device O_EXCL means "claim it exclusively" (fails with EBUSY
  // while mounted or claimed by md/dm/another opener), read-only too, which
  // is how check_write sees the claim; on a regular file it means "must not
  // exist", so there it is only used to create a new file.
  if (is_block && (o.write || o.check_write) && o.exclusive) flags |= O_EXCL;
  if (creating) flags |= O_CREAT | (o.create_new ? O_EXCL : 0);
  return flags;
}

std::uint64_t window_end(const OpenOptions& o) {
  if (!o.length) return kToEnd;
  return *o.length > kToEnd - o.offset ? kToEnd : o.offset + *o.length;
}

// Read-only, as a write would find out only after the work began (a write
// to a read-only loop device fails with EPERM, not at open).
Status check_not_read_only(const std::string& path, const struct stat& st) {
  const std::string refuse = "; refusing to write to it";
  if (S_ISBLK(st.st_mode)) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno_error("open to read its read-only flag").at(path);
    int ro = 0;
    const int rc = ioctl(fd, BLKROGET, &ro);
    const int err = errno;
    ::close(fd);
    if (rc != 0) return errno_error(err, "BLKROGET").at(path);
    if (ro)
      return make_error(Errc::io, "the device is read-only (BLKROGET: losetup -r, a write-protect switch)" + refuse)
          .at(path);
    return {};
  }
  if ((st.st_mode & 0222) == 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", unsigned(st.st_mode & 07777));
    return Error{Errc::io, EACCES,
                 "read-only file (mode " + std::string(mode) + ")" + refuse + " (chmod u+w to allow it)", path};
  }
  if (::faccessat(AT_FDCWD, path.c_str(), W_OK, AT_EACCESS) != 0)
    return Error{Errc::io, errno,
                 "not writable (a read-only filesystem, an immutable file, or no permission)" + refuse +
                     ", it is read-only for us",
                 path};
  return {};
}

// What a write open refuses, checked before anything is opened or created.
Status check_writable(const std::string& path, const struct stat& st, const OpenOptions& o) {
  if (!o.allow_mounted) {
    if (auto use = FSIO_TRY(find_use(path, o.offset, window_end(o))))
      return make_error(Errc::busy, describe_use(*use) + "; refusing to write to it").at(path);
  }
  return check_not_read_only(path, st);
}

// Removes a file this open created unless disarmed: a failed open leaves
// nothing behind.
struct CreatedGuard {
  const std::string& path;
  bool armed = false;
  ~CreatedGuard() {
    if (armed) ::unlink(path.c_str());
  }
};

}  // namespace

Result<Device> Device::open(const std::string& path, const OpenOptions& o) {
  if (o.create_size && !o.write)
    return make_error(Errc::invalid_argument, "creating an image needs write access").at(path);
  if (o.create_new && !o.create_size)
    return make_error(Errc::invalid_argument, "create_new needs create_size").at(path);

  // lstat for a new file: a symbolic link, even a dangling one, is in the way.
  struct stat st {};
  const bool exists = (o.create_new ? ::lstat(path.c_str(), &st) : ::stat(path.c_str(), &st)) == 0;
  if (exists && o.create_new)
    return make_error(Errc::busy,
                      "already exists (a symbolic link counts, even a dangling one); "
                      "refusing to replace it with a new image")
        .at(path);
  if (!exists && !(errno == ENOENT && o.create_size)) return errno_error("stat").at(path);
  const bool is_block = exists && S_ISBLK(st.st_mode);
  if (exists && !is_block && !S_ISREG(st.st_mode))
    return make_error(Errc::unsupported, "not a block device or a regular file").at(path);
  if (is_block && o.create_size)
    return make_error(Errc::invalid_argument, "a size to create applies to image files, not block devices").at(path);
  if (o.create_size && *o.create_size > std::uint64_t(std::numeric_limits<off_t>::max()))
    return make_error(Errc::invalid_argument,
                      "size " + std::to_string(*o.create_size) + " is more than a file can hold (2^63-1 bytes)")
        .at(path);

  // Writing under a mounted filesystem corrupts it; check before opening so
  // the message can name the mount point (O_EXCL below would only say EBUSY).
  if ((o.write || o.check_write) && exists) FSIO_TRY(check_writable(path, st, o));

  const int flags = open_flags(o, is_block, !exists);
  Device d;
  d.path_ = path;
  d.is_block_ = is_block;
  d.writable_ = o.write;
  d.sync_ = o.sync;
  d.fd_ = ::open(path.c_str(), flags | (o.direct ? O_DIRECT : 0), 0644);
  if (d.fd_ < 0 && o.direct && errno == EINVAL) {
    // The filesystem has no direct I/O (ramfs, some FUSE, tmpfs before 6.6):
    // the work is still correct buffered, only slower; say so. A new file
    // was created by the first attempt, so this one must not insist on O_EXCL.
    const bool made = (flags & O_CREAT) && ::access(path.c_str(), F_OK) == 0;
    d.fd_ = ::open(path.c_str(), made ? flags & ~(O_CREAT | O_EXCL) : flags, 0644);
    if (d.fd_ >= 0) d.direct_fallback_ = filesystem_name(d.fd_) + " refuses O_DIRECT; using buffered I/O";
  }
  d.direct_ = o.direct && d.direct_fallback_.empty();
  if (d.fd_ < 0) {
    const char* what = o.write ? "open for writing" : "open for reading";
    if (errno == EEXIST && o.create_new) return Error{Errc::busy, EEXIST, what, path};
    if (errno == EBUSY && (flags & O_EXCL))
      return errno_error(std::string(what) + " (exclusive): in use by a mount, md/dm or another program").at(path);
    return errno_error(what).at(path);
  }
  CreatedGuard guard{path, !exists};
  d.created_ = !exists;
  FSIO_TRY(d.finish_open(o));
  guard.armed = false;
  return d;
}

// Size, creation size, topology and the window of a freshly opened device.
Status Device::finish_open(const OpenOptions& o) {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) return errno_error("fstat").at(path_);
  std::uint64_t real_size = 0;
  if (is_block_) {
    if (ioctl(fd_, BLKGETSIZE64, &real_size) != 0) return errno_error("BLKGETSIZE64").at(path_);
  } else {
    real_size = std::uint64_t(st.st_size);
    // Extend only: creating an image never throws away existing data.
    if (o.create_size && *o.create_size > real_size) {
      if (::ftruncate(fd_, off_t(*o.create_size)) != 0)
        return errno_error("extend to " + std::to_string(*o.create_size) + " bytes").at(path_);
      real_size = *o.create_size;
    }
  }

  topo_ = FSIO_TRY(query_topology(fd_, path_, is_block_, o.sector_size));

  // The window: a partition always starts on a sector boundary, and O_DIRECT
  // needs it to, so an unaligned start is refused rather than half-working.
  if (o.offset % topo_.logical_sector != 0)
    return make_error(Errc::invalid_argument, "window offset " + format_hex(o.offset) + " is not a multiple of the " +
                                                  std::to_string(topo_.logical_sector) + "-byte sector")
        .at(path_);
  if (o.offset > real_size)
    return make_error(Errc::invalid_argument, "window offset " + format_hex(o.offset) + " is beyond the end (size " +
                                                  format_hex(real_size) + ")")
        .at(path_);
  std::uint64_t avail = real_size - o.offset;
  if (o.length && *o.length > avail)
    return make_error(Errc::invalid_argument, "window " + format_hex(o.offset) + "+" + format_hex(*o.length) +
                                                  " ends beyond the end (size " + format_hex(real_size) + ")")
        .at(path_);
  offset_ = o.offset;
  size_ = o.length ? *o.length : avail;
  return {};
}

Status Device::remove_created() {
  if (!created_ || fd_ < 0) return {};
  FSIO_TRY(CreatedFile(*this, "").remove());
  created_ = false;
  return {};
}

Device::Device(Device&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      path_(std::move(other.path_)),
      offset_(other.offset_),
      size_(other.size_),
      topo_(other.topo_),
      is_block_(other.is_block_),
      writable_(other.writable_),
      created_(other.created_),
      direct_(other.direct_),
      sync_(other.sync_),
      direct_fallback_(std::move(other.direct_fallback_)) {}

Device& Device::operator=(Device&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    offset_ = other.offset_;
    size_ = other.size_;
    topo_ = other.topo_;
    is_block_ = other.is_block_;
    writable_ = other.writable_;
    created_ = other.created_;
    direct_ = other.direct_;
    sync_ = other.sync_;
    direct_fallback_ = std::move(other.direct_fallback_);
  }
  return *this;
}

Device::~Device() {
  if (fd_ >= 0) ::close(fd_);
}

Result<std::uint64_t> Device::clamp(std::uint64_t offset, std::uint64_t length) const {
  if (length == 0) return std::uint64_t{0};
  if (offset >= size_)
    return make_error(Errc::invalid_argument, "request of " + std::to_string(length) + " bytes at " +
                                                  format_hex(offset) + " is beyond the end of the device (size " +
                                                  format_hex(size_) + ")")
        .at(path_);
  std::uint64_t inside = size_ - offset;
  if (length <= inside) return length;
  // Straddles the end (guard_bio_eod). Buffered regular files can transfer
  // any byte count up to EOF; devices and O_DIRECT only whole sectors.
  if (!is_block_ && !direct_) return inside;
  std::uint64_t whole = inside / topo_.logical_sector * topo_.logical_sector;
  if (whole == 0)
    return make_error(Errc::invalid_argument, "request of " + std::to_string(length) + " bytes at " +
                                                  format_hex(offset) + " lies in the partial last sector (size " +
                                                  format_hex(size_) + ", " + std::to_string(topo_.logical_sector) +
                                                  "-byte sectors)")
        .at(path_);
  return whole;
}

Status Device::use_buffered(const std::string& why) {
  if (!direct_) return {};
  const int flags = ::fcntl(fd_, F_GETFL);
  if (flags < 0 || ::fcntl(fd_, F_SETFL, flags & ~O_DIRECT) != 0)
    return errno_error("turn O_DIRECT off (fcntl F_SETFL)").at(path_);
  direct_ = false;
  direct_fallback_ = why + "; using buffered I/O";
  return {};
}

Status Device::flush() const {
  if (sync_ == SyncMode::sync) {
    if (::fsync(fd_) != 0) return errno_error("fsync").at(path_);
  } else if (::fdatasync(fd_) != 0) {
    return errno_error("fdatasync").at(path_);
  }
  return {};
}

Status Device::discard(std::uint64_t offset, std::uint64_t length) const {
  std::string what = "discard " + std::to_string(length) + " bytes at " + format_hex(offset);
  if (!writable_) return make_error(Errc::invalid_argument, what + ": not opened for writing").at(path_);
  if (offset > size_ || length > size_ - offset)
    return make_error(Errc::invalid_argument, what + ": beyond the end of the device (size " + format_hex(size_) + ")")
        .at(path_);
  if (length == 0) return {};
  std::uint64_t abs = offset_ + offset;
  if (is_block_) {
    // The kernel wants logical-sector alignment and answers a bare EINVAL.
    if ((abs | length) % topo_.logical_sector != 0)
      return make_error(Errc::invalid_argument,
                        what + ": not aligned to the " + std::to_string(topo_.logical_sector) + "-byte sector")
          .at(path_);
    std::uint64_t range[2] = {abs, length};
    if (ioctl(fd_, BLKDISCARD, range) != 0) return errno_error(what + ": BLKDISCARD").at(path_);
    return {};
  }
  if (::fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off_t(abs), off_t(length)) != 0)
    return errno_error(what + ": punch hole").at(path_);
  return {};
}

}  // namespace fsio
