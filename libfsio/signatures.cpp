// Signature probing with libblkid's low-level API, the way wipefs(8) does it:
// one probe over the window, superblocks and partition tables enabled, and
// blkid_do_probe() called until it runs out, so every signature is listed
// (not only the one blkid_do_safeprobe() would pick), each with the offset
// and length of its magic so a formatter can wipe it.
#include "libfsio/signatures.hpp"

#include <blkid/blkid.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <optional>

#include "libfsio/device.hpp"

namespace fsio {
namespace {

using Probe = std::unique_ptr<blkid_struct_probe, decltype(&blkid_free_probe)>;

std::optional<std::string> lookup(blkid_probe pr, const char* name, std::size_t* len = nullptr) {
  const char* data = nullptr;
  std::size_t size = 0;
  if (blkid_probe_lookup_value(pr, name, &data, &size) != 0 || data == nullptr) return std::nullopt;
  if (len != nullptr) *len = size;
  return std::string(data);
}

// Closes a descriptor we opened only for probing.
struct FdCloser {
  int fd = -1;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

Result<std::vector<Signature>> probe_signatures(const Device& device) {
  std::vector<Signature> found;
  if (device.size() == 0) return found;

  // libblkid reads into its own unaligned buffers, which an O_DIRECT
  // descriptor refuses (EINVAL). Reopen the same file buffered through
  // /proc/self/fd, which names this very file even if the path moved; never
  // toggle O_DIRECT on the shared descriptor under someone else's I/O.
  FdCloser own;
  int fd = device.fd();
  if ((::fcntl(fd, F_GETFL) & O_DIRECT) != 0) {
    std::string proc = "/proc/self/fd/" + std::to_string(fd);
    own.fd = ::open(proc.c_str(), O_RDONLY | O_CLOEXEC);
    if (own.fd < 0) return errno_error("reopen for probing").at(device.path());
    fd = own.fd;
  }

  Probe pr(blkid_new_probe(), blkid_free_probe);
  if (!pr) return make_error(Errc::io, "blkid_new_probe failed").at(device.path());
  if (blkid_probe_set_device(pr.get(), fd, blkid_loff_t(device.offset()), blkid_loff_t(device.size())) != 0)
    return errno_error("blkid_probe_set_device").at(device.path());
  blkid_probe_enable_superblocks(pr.get(), 1);
  blkid_probe_set_superblocks_flags(pr.get(), BLKID_SUBLKS_MAGIC | BLKID_SUBLKS_TYPE | BLKID_SUBLKS_LABEL |
                                                  BLKID_SUBLKS_USAGE | BLKID_SUBLKS_BADCSUM);
  blkid_probe_enable_partitions(pr.get(), 1);
  blkid_probe_set_partitions_flags(pr.get(), BLKID_PARTS_MAGIC | BLKID_PARTS_FORCE_GPT);

  // 0: one more signature found, 1: no more, -1: error.
  int rc = 0;
  while ((rc = blkid_do_probe(pr.get())) == 0) {
    Signature sig{};
    std::size_t magic_len = 0;
    std::optional<std::string> offset;
    if (auto type = lookup(pr.get(), "TYPE")) {
      sig.type = *type;
      sig.usage = lookup(pr.get(), "USAGE").value_or("filesystem");
      sig.label = lookup(pr.get(), "LABEL").value_or("");
      offset = lookup(pr.get(), "SBMAGIC_OFFSET");
      lookup(pr.get(), "SBMAGIC", &magic_len);
    } else if (auto pttype = lookup(pr.get(), "PTTYPE")) {
      sig.type = *pttype;
      sig.usage = "partition_table";
      offset = lookup(pr.get(), "PTMAGIC_OFFSET");
      lookup(pr.get(), "PTMAGIC", &magic_len);
    } else {
      continue;
    }
    // Offsets are relative to the probing area, which is our window.
    sig.offset = offset ? std::strtoull(offset->c_str(), nullptr, 10) : 0;
    sig.length = magic_len;
    found.push_back(std::move(sig));
  }
  if (rc < 0) return errno_error("probing for signatures").at(device.path());
  return found;
}

std::string describe(const Signature& sig) {
  std::string text = sig.type;
  if (sig.usage == "partition_table") text += " partition table";
  else if (!sig.usage.empty()) text += " " + sig.usage;
  if (!sig.label.empty()) text += " (label '" + sig.label + "')";
  return text;
}

Result<std::vector<Signature>> check_overwrite(const std::string& path, std::uint64_t offset,
                                               std::optional<std::uint64_t> length, bool force,
                                               const std::string& action) {
  OpenOptions ro;
  ro.direct = false;
  ro.offset = offset;
  ro.length = length;
  auto range = Device::open(path, ro);
  if (!range) {
    if (range.error().code == Errc::not_found) return std::vector<Signature>{};
    return std::move(range).error();
  }
  auto found = FSIO_TRY(probe_signatures(*range));
  if (!found.empty() && !force)
    return make_error(Errc::busy, "holds " + describe(found.front()) + "; " + action +
                                      " would destroy it (use --force to overwrite it)")
        .at(path);
  return found;
}

}  // namespace fsio
