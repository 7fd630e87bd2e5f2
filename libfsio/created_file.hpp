// CreatedFile: the image file a run created is removed again when the run
// fails, so a half-made image never blocks the retry (mkfat -C, fsimg
// restore --create; mkfs.fat -C leaves its half-made file behind).
//
//   auto dev = FSIO_TRY(fsio::Device::open(path, options));  // create_size: may create
//   fsio::CreatedFile made(dev, "-C");                         // armed when this open created it
//   if (auto st = work(dev); !st) return made.fail(std::move(st).error());
//   made.keep();
//
// Only the file the Device created is removed: the path must still name the
// same file (device and inode, without following a symbolic link), so a file
// someone put there since is left alone. An armed CreatedFile that is
// destroyed removes the file too, silently: a return that forgot fail() or
// keep() leaves nothing half-made behind. Movable, not copyable; it does not
// refer to the Device after construction.
#pragma once

#include <sys/types.h>

#include <string>

#include "libfsio/device.hpp"
#include "libfsio/result.hpp"

namespace fsio {

class CreatedFile {
 public:
  CreatedFile() = default;  // nothing to remove
  // `option` names what made the file in messages: "-C", "--create".
  CreatedFile(const Device& device, std::string option);
  CreatedFile(CreatedFile&& other) noexcept;
  CreatedFile& operator=(CreatedFile&& other) noexcept;
  CreatedFile(const CreatedFile&) = delete;
  CreatedFile& operator=(const CreatedFile&) = delete;
  ~CreatedFile();

  bool armed() const { return armed_; }
  // The work succeeded: the file stays.
  void keep() { armed_ = false; }
  // Removes the file now (once: the CreatedFile is disarmed either way);
  // true when it did. False when not armed or when the path names another
  // file (or none) by now.
  Result<bool> remove();
  // The run failed with `e`: removes the file and says so after e's message,
  //   "...: No space left on device; removed card.img, which -C had made",
  //   "...; could not remove card.img, which -C had made: Permission denied",
  //   "...; left card.img alone: it is no longer the file -C had made".
  // Not armed: e as it is.
  Error fail(Error e);

 private:
  std::string path_;
  std::string option_;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
  bool armed_ = false;
};

}  // namespace fsio
