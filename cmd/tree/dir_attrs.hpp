// Extended attributes and inode flags of a host directory's files, for the
// directory source (dir_source.cpp) when SourceOptions::attrs asks.
#pragma once

#include <string>

#include "libfsio/result.hpp"
#include "libfsio/tree_source.hpp"

namespace fsio::tree {

// `fd` open on a regular file or directory: its xattrs, sorted by name
// (flistxattr/fgetxattr), and its FS_IOC_GETFLAGS flags (0 where the
// filesystem has none) into `node`. Errors name `path`.
Status attrs_of_fd(int fd, const std::string& path, TreeNode& node);
// Anything else (a symbolic link's own xattrs, a device's): by path, with
// llistxattr/lgetxattr, or listxattr/getxattr when `follow`; no flags.
Status attrs_of_path(const std::string& path, bool follow, TreeNode& node);

}  // namespace fsio::tree
