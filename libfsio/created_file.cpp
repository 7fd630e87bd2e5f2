// CreatedFile (see created_file.hpp).
#include "libfsio/created_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <utility>

namespace fsio {

CreatedFile::CreatedFile(const Device& device, std::string option) : path_(device.path()), option_(std::move(option)) {
  struct stat st {};
  // Without the file's identity it cannot be told from one put there later:
  // then it is not removed at all.
  if (!device.created() || device.fd() < 0 || ::fstat(device.fd(), &st) != 0) return;
  dev_ = st.st_dev;
  ino_ = st.st_ino;
  armed_ = true;
}

CreatedFile::CreatedFile(CreatedFile&& other) noexcept
    : path_(std::move(other.path_)),
      option_(std::move(other.option_)),
      dev_(other.dev_),
      ino_(other.ino_),
      armed_(std::exchange(other.armed_, false)) {}

CreatedFile& CreatedFile::operator=(CreatedFile&& other) noexcept {
  if (this != &other) {
    (void)remove();
    path_ = std::move(other.path_);
    option_ = std::move(other.option_);
    dev_ = other.dev_;
    ino_ = other.ino_;
    armed_ = std::exchange(other.armed_, false);
  }
  return *this;
}

CreatedFile::~CreatedFile() { (void)remove(); }

Result<bool> CreatedFile::remove() {
  if (!std::exchange(armed_, false)) return false;
  struct stat now {};
  if (::lstat(path_.c_str(), &now) != 0 || now.st_dev != dev_ || now.st_ino != ino_) return false;
  if (::unlink(path_.c_str()) != 0) return errno_error("remove the image this run created").at(path_);
  return true;
}

Error CreatedFile::fail(Error e) {
  if (!armed_) return e;
  const std::string made = option_ + " had made";
  auto removed = remove();
  if (!removed)
    return std::move(e).with_note("; could not remove " + path_ + ", which " + made + ": " +
                                  std::strerror(removed.error().sys_errno));
  if (!*removed) return std::move(e).with_note("; left " + path_ + " alone: it is no longer the file " + made);
  return std::move(e).with_note("; removed " + path_ + ", which " + made);
}

}  // namespace fsio
