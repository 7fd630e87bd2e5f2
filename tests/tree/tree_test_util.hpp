// Helpers for the tree-source tests: a sink that collects every content's
// bytes (and checks the contract: each once, in order, one at a time), and a
// compact view of a Tree to compare with what a test expects.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "libfsio/tree_source.hpp"

namespace treetest {

// A file with these bytes, its directories made as needed.
inline void put(const std::string& path, const std::string& bytes) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

class CollectSink : public fsio::ContentSink {
 public:
  explicit CollectSink(std::size_t max_span = 1u << 20) : max_span_(max_span) {}
  fsio::Result<std::span<std::byte>> reserve(std::uint32_t c, std::uint64_t offset, std::uint64_t want) override {
    EXPECT_GT(want, 0u);
    if (current_ != c) {
      EXPECT_EQ(offset, 0u) << "content " << c << " did not start at byte 0";
      EXPECT_EQ(data_.count(c), 0u) << "content " << c << " delivered twice";
      if (current_ != fsio::kNoContent) {
        EXPECT_EQ(data_[current_].size(), expected_size(current_));
      }
      current_ = c;
    }
    EXPECT_EQ(offset, data_[c].size()) << "content " << c << " out of order";
    room_.assign(std::size_t(std::min<std::uint64_t>(want, max_span_)), std::byte{0x5A});
    return std::span<std::byte>(room_);
  }
  fsio::Status commit(std::uint32_t c, std::uint64_t offset, std::size_t n) override {
    EXPECT_EQ(c, current_);
    EXPECT_EQ(offset, data_[c].size());
    EXPECT_LE(n, room_.size());
    data_[c].append(reinterpret_cast<const char*>(room_.data()), n);
    ++commits_;
    return {};
  }
  std::map<std::uint32_t, std::string>& data() { return data_; }
  std::size_t commits() const { return commits_; }
  void expect_sizes(const fsio::Tree& t) {
    sizes_.clear();
    for (const auto& c : t.contents) sizes_.push_back(c.size);
  }

 private:
  std::uint64_t expected_size(std::uint32_t c) const { return c < sizes_.size() ? sizes_[c] : data_.at(c).size(); }
  std::size_t max_span_;
  std::vector<std::byte> room_;
  std::uint32_t current_ = fsio::kNoContent;
  std::map<std::uint32_t, std::string> data_;
  std::vector<std::uint64_t> sizes_;
  std::size_t commits_ = 0;
};

// "path kind size" per node, in list order: what a test compares.
inline std::vector<std::string> outline(const fsio::Tree& t) {
  std::vector<std::string> out;
  for (std::uint32_t i = 0; i < t.nodes.size(); ++i) {
    const auto& n = t.nodes[i];
    std::string line = t.path(i) + " " + fsio::node_kind_name(n.kind);
    if (n.kind == fsio::NodeKind::file) line += " " + std::to_string(n.size);
    if (n.kind == fsio::NodeKind::symlink) line += " -> " + n.link_target;
    out.push_back(line);
  }
  return out;
}

// The bytes each file node holds, by path (after read_contents into `sink`).
inline std::map<std::string, std::string> file_bytes(const fsio::Tree& t, CollectSink& sink) {
  std::map<std::string, std::string> out;
  for (std::uint32_t i = 0; i < t.nodes.size(); ++i) {
    const auto& n = t.nodes[i];
    if (n.kind != fsio::NodeKind::file) continue;
    out[t.path(i)] = n.size == 0 ? std::string() : sink.data()[n.content];
  }
  return out;
}

}  // namespace treetest
