// The libarchive functions the tree sources and their fuzz target call,
// each forwarding to its namesake in libarchive.so.13, opened on first use
// (libarchive.hpp says why). Adding a call to another archive_* function
// needs its line here: the link fails without one.
#include "cmd/tree/libarchive.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <dlfcn.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace fsio::tree {

namespace {

constexpr const char* kSoname = "libarchive.so.13";

struct Library {
  void* handle = nullptr;
  std::string error;
};

const Library& library() {
  static const Library lib = [] {
    Library l;
    l.handle = ::dlopen(kSoname, RTLD_NOW | RTLD_LOCAL);
    if (l.handle == nullptr) {
      const char* why = ::dlerror();
      l.error = std::string("reading a tar archive needs libarchive (") + kSoname +
                "), which cannot be loaded: " + (why ? why : "no reason given");
    }
    return l;
  }();
  return lib;
}

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "fsio: %s\n", what.c_str());
  std::exit(1);
}

template <class F>
F resolve(const char* name) {
  const Library& l = library();
  if (l.handle == nullptr) die(l.error);
  void* p = ::dlsym(l.handle, name);
  if (p == nullptr) die(std::string(kSoname) + " has no " + name);
  return reinterpret_cast<F>(p);
}

}  // namespace

fsio::Status load_libarchive() {
  const Library& l = library();
  if (l.handle == nullptr) return fsio::make_error(fsio::Errc::unsupported, l.error);
  return {};
}

}  // namespace fsio::tree

// RET NAME PARAMS ARGS: `RET NAME PARAMS` calls the library's NAME with ARGS.
#define FSIO_LA(ret, name, params, args)                                    \
  extern "C" ret name params {                                              \
    static const auto real = fsio::tree::resolve<decltype(&::name)>(#name); \
    return real args;                                                       \
  }

using Ar = struct archive;
using En = struct archive_entry;

FSIO_LA(Ar*, archive_read_new, (void), ())
FSIO_LA(int, archive_read_free, (Ar * a), (a))
FSIO_LA(int, archive_read_support_filter_gzip, (Ar * a), (a))
FSIO_LA(int, archive_read_support_filter_xz, (Ar * a), (a))
FSIO_LA(int, archive_read_support_filter_zstd, (Ar * a), (a))
FSIO_LA(int, archive_read_support_format_tar, (Ar * a), (a))
FSIO_LA(int, archive_read_open,
        (Ar * a, void* data, archive_open_callback* o, archive_read_callback* r, archive_close_callback* c),
        (a, data, o, r, c))
FSIO_LA(int, archive_read_open_fd, (Ar * a, int fd, size_t block), (a, fd, block))
FSIO_LA(int, archive_read_open_memory, (Ar * a, const void* buf, size_t size), (a, buf, size))
FSIO_LA(int, archive_read_next_header, (Ar * a, En** e), (a, e))
FSIO_LA(la_ssize_t, archive_read_data, (Ar * a, void* buf, size_t size), (a, buf, size))
FSIO_LA(int, archive_read_data_block, (Ar * a, const void** buf, size_t* size, la_int64_t* offset),
        (a, buf, size, offset))
FSIO_LA(int, archive_read_data_skip, (Ar * a), (a))
FSIO_LA(int, archive_errno, (Ar * a), (a))
FSIO_LA(const char*, archive_error_string, (Ar * a), (a))

FSIO_LA(const char*, archive_entry_pathname, (En * e), (e))
FSIO_LA(const char*, archive_entry_pathname_utf8, (En * e), (e))
FSIO_LA(const char*, archive_entry_hardlink, (En * e), (e))
FSIO_LA(const char*, archive_entry_hardlink_utf8, (En * e), (e))
FSIO_LA(const char*, archive_entry_symlink, (En * e), (e))
FSIO_LA(const char*, archive_entry_symlink_utf8, (En * e), (e))
FSIO_LA(__LA_MODE_T, archive_entry_filetype, (En * e), (e))
FSIO_LA(__LA_MODE_T, archive_entry_perm, (En * e), (e))
FSIO_LA(la_int64_t, archive_entry_uid, (En * e), (e))
FSIO_LA(la_int64_t, archive_entry_gid, (En * e), (e))
FSIO_LA(dev_t, archive_entry_rdev, (En * e), (e))
FSIO_LA(la_int64_t, archive_entry_size, (En * e), (e))
FSIO_LA(int, archive_entry_size_is_set, (En * e), (e))
FSIO_LA(time_t, archive_entry_mtime, (En * e), (e))
FSIO_LA(long, archive_entry_mtime_nsec, (En * e), (e))
FSIO_LA(time_t, archive_entry_atime, (En * e), (e))
FSIO_LA(long, archive_entry_atime_nsec, (En * e), (e))
FSIO_LA(int, archive_entry_atime_is_set, (En * e), (e))
FSIO_LA(time_t, archive_entry_ctime, (En * e), (e))
FSIO_LA(long, archive_entry_ctime_nsec, (En * e), (e))
FSIO_LA(int, archive_entry_ctime_is_set, (En * e), (e))
FSIO_LA(time_t, archive_entry_birthtime, (En * e), (e))
FSIO_LA(long, archive_entry_birthtime_nsec, (En * e), (e))
FSIO_LA(int, archive_entry_birthtime_is_set, (En * e), (e))
FSIO_LA(int, archive_entry_sparse_reset, (En * e), (e))
FSIO_LA(int, archive_entry_sparse_next, (En * e, la_int64_t* offset, la_int64_t* length), (e, offset, length))

FSIO_LA(int, archive_entry_acl_reset, (En * e, int want), (e, want))
FSIO_LA(int, archive_entry_acl_next,
        (En * e, int want, int* type, int* permset, int* tag, int* qual, const char** name),
        (e, want, type, permset, tag, qual, name))
FSIO_LA(int, archive_entry_acl_types, (En * e), (e))
FSIO_LA(void, archive_entry_fflags, (En * e, unsigned long* set, unsigned long* clear), (e, set, clear))
FSIO_LA(int, archive_entry_xattr_reset, (En * e), (e))
FSIO_LA(int, archive_entry_xattr_next, (En * e, const char** name, const void** value, size_t* size),
        (e, name, value, size))

// Variadic: formatted here, passed on as one string.
extern "C" void archive_set_error(Ar* a, int err, const char* fmt, ...) {
  static const auto real = fsio::tree::resolve<decltype(&::archive_set_error)>("archive_set_error");
  char text[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  real(a, err, "%s", text);
}
