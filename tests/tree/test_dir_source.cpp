// The directory source against trees made here: the order (worked out by
// hand from the names' bytes, whatever order the files were made in), what
// each node holds (stat's numbers), symbolic links followed and kept,
// dangling links and loops refused naming the link, hard links read once,
// and every file's bytes delivered once, in order, to the sink.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "cmd/tree/source.hpp"
#include "tests/support/support.hpp"
#include "tests/tree/tree_test_util.hpp"

namespace {

using fsio::NodeKind;
using fsio::test::TempDir;
using treetest::CollectSink;
using treetest::outline;
using treetest::put;

std::string pattern(std::size_t n, unsigned seed) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = char((i * 131 + seed * 7 + (i >> 9)) & 0xFF);
  return s;
}

fsio::Tree list(const std::string& dir, fsio::tree::SourceOptions o = {}) {
  auto src = fsio::tree::open_directory(dir, o);
  EXPECT_TRUE(src) << src.error().message();
  auto tree = (*src)->list();
  EXPECT_TRUE(tree) << tree.error().message();
  return tree ? std::move(*tree) : fsio::Tree{};
}

TEST(DirSource, ListsDepthFirstWithSiblingsSortedBytewise) {
  TempDir t;
  // Made in an order that is not the answer; 'B' (0x42) sorts before 'a'
  // (0x61), "a-b" after a's subtree ('-' is 0x2D but siblings are compared,
  // not paths), and the UTF-8 "é" (0xC3 0xA9) after every ASCII name.
  put(t / "src/é", "e");
  put(t / "src/b", "bb");
  put(t / "src/a-b", "");
  put(t / "src/a/y", "yyy");
  put(t / "src/a/x", "x");
  put(t / "src/B", "B");
  std::filesystem::create_directory(t / "src/a/empty");
  const fsio::Tree tree = list(t / "src");
  const std::vector<std::string> want = {" directory", "B file 1",   "a directory", "a/empty directory", "a/x file 1",
                                         "a/y file 3", "a-b file 0", "b file 2",    "é file 1"};
  EXPECT_EQ(outline(tree), want);
  EXPECT_EQ(tree.where(4), t / "src/a/x");
  EXPECT_EQ(tree.nodes[4].parent, 2u);
  EXPECT_EQ(tree.nodes[3].parent, 2u);
  EXPECT_EQ(tree.nodes[6].parent, 0u);
}

TEST(DirSource, NodesCarryWhatStatSays) {
  TempDir t;
  put(t / "src/f", "hello");
  ASSERT_EQ(::chmod((t / "src/f").c_str(), 0640), 0);
  const timespec times[2] = {{1600000000, 123456789}, {1500000001, 987654321}};  // atime, mtime
  ASSERT_EQ(::utimensat(AT_FDCWD, (t / "src/f").c_str(), times, 0), 0);
  ASSERT_EQ(::mkfifo((t / "src/p").c_str(), 0600), 0);
  const fsio::Tree tree = list(t / "src");
  ASSERT_EQ(tree.nodes.size(), 3u);
  const fsio::TreeNode& f = tree.nodes[1];
  EXPECT_EQ(f.kind, NodeKind::file);
  EXPECT_EQ(f.size, 5u);
  EXPECT_EQ(f.mode, 0640u);
  EXPECT_EQ(f.mtime.sec, 1500000001);
  EXPECT_EQ(f.mtime.nsec, 987654321u);
  EXPECT_EQ(f.atime.sec, 1600000000);
  EXPECT_EQ(f.uid, ::getuid());
  EXPECT_EQ(tree.nodes[2].kind, NodeKind::fifo);
  EXPECT_EQ(tree.nodes[2].content, fsio::kNoContent);
  ASSERT_EQ(tree.contents.size(), 1u);
  EXPECT_EQ(tree.contents[0].size, 5u);
  EXPECT_EQ(tree.contents[0].node, 1u);
}

TEST(DirSource, FollowsLinksToFilesAndDirectoriesAndSharesHardLinks) {
  TempDir t;
  put(t / "src/d/data", "0123456789");
  put(t / "outside/o", "out");
  std::filesystem::create_symlink("d/data", t / "src/ln");
  std::filesystem::create_directory_symlink("d", t / "src/dl");
  std::filesystem::create_directory_symlink(t / "outside", t / "src/ext");
  std::filesystem::create_hard_link(t / "src/d/data", t / "src/hard");
  const fsio::Tree tree = list(t / "src");
  const std::vector<std::string> want = {" directory",   "d directory",     "d/data file 10",
                                         "dl directory", "dl/data file 10", "ext directory",
                                         "ext/o file 3", "hard file 10",    "ln file 10"};
  EXPECT_EQ(outline(tree), want);
  // One inode, one content: the file, the link to it, the hard link, and the copy under dl.
  EXPECT_EQ(tree.contents.size(), 2u);
  for (std::uint32_t i : {2u, 4u, 7u, 8u}) EXPECT_EQ(tree.nodes[i].content, tree.nodes[2].content) << i;
  auto src = fsio::tree::open_directory(t / "src", {});
  ASSERT_TRUE((*src)->list());
  CollectSink sink;
  ASSERT_TRUE((*src)->read_contents(sink));
  EXPECT_EQ(sink.data().size(), 2u);
  EXPECT_EQ(treetest::file_bytes(tree, sink)["ln"], "0123456789");
  EXPECT_EQ(treetest::file_bytes(tree, sink)["ext/o"], "out");
}

TEST(DirSource, KeepsLinksWhenAsked) {
  TempDir t;
  put(t / "src/f", "x");
  std::filesystem::create_symlink("f", t / "src/ln");
  std::filesystem::create_symlink("nowhere", t / "src/dangling");
  fsio::tree::SourceOptions o;
  o.symlinks = fsio::SymlinkPolicy::keep;
  const std::vector<std::string> want = {" directory", "dangling symbolic link -> nowhere", "f file 1",
                                         "ln symbolic link -> f"};
  EXPECT_EQ(outline(list(t / "src", o)), want);
}

fsio::Error list_error(const std::string& dir) {
  auto src = fsio::tree::open_directory(dir, {});
  EXPECT_TRUE(src);
  auto tree = (*src)->list();
  EXPECT_FALSE(tree);
  return tree ? fsio::Error{} : tree.error();
}

TEST(DirSource, RefusesDanglingAndLoopingLinksNamingThem) {
  TempDir t;
  put(t / "a/ok", "");
  std::filesystem::create_symlink("missing", t / "a/z");
  auto e = list_error(t / "a");
  EXPECT_EQ(e.code, fsio::Errc::not_found);
  EXPECT_EQ(e.message(), t / "a/z" + ": a dangling symbolic link (to 'missing'); it is copied as what it points to");

  std::filesystem::create_directories(t / "b/sub");
  std::filesystem::create_directory_symlink("..", t / "b/sub/up");
  e = list_error(t / "b");
  EXPECT_EQ(e.code, fsio::Errc::unsupported);
  EXPECT_EQ(e.message(), t / "b/sub/up" + ": a symbolic link loop (to '..', a directory that contains it)");

  std::filesystem::create_directory(t / "c");
  std::filesystem::create_symlink("self", t / "c/self");
  e = list_error(t / "c");
  EXPECT_EQ(e.message(), t / "c/self" + ": a symbolic link loop (to 'self')");
}

TEST(DirSource, RefusesAFileTheCallerCannotRead) {
  TempDir t("/var/tmp");
  put(t / "src/secret", "s");
  ASSERT_EQ(::chmod((t / "src/secret").c_str(), 0600), 0);
  ASSERT_EQ(::chmod(t.path().c_str(), 0755), 0);
  if (!fsio::test::is_root()) GTEST_SKIP() << "needs root to become another user";
  // As nobody (root reads everything): the refusal must come from list().
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (::setresgid(65534, 65534, 65534) || ::setresuid(65534, 65534, 65534)) _exit(3);
    auto src = fsio::tree::open_directory(t / "src", {});
    if (!src) _exit(4);
    auto tree = (*src)->list();
    if (tree) _exit(5);
    const bool named = tree.error().message() == t / "src/secret" + ": cannot be read: Permission denied";
    _exit(named ? 0 : 6);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "3/4: setup, 5: listed, 6: another message";
}

// A read-ahead budget smaller than one file (the next file is always
// admitted), files longer than the sink's spans: every byte arrives once,
// in order.
TEST(DirSource, DeliversEveryFileOnceInOrder) {
  TempDir t;
  std::map<std::string, std::string> want;
  for (int i = 0; i < 60; ++i) {
    const std::string name = "f" + std::to_string(i);
    want[name] = pattern(std::size_t(i * 37 % 200 + (i % 7 == 0 ? 5000 : 0)), unsigned(i));
    put(t / ("src/" + std::string(name)), want[name]);
  }
  want["empty"] = "";
  put(t / "src/empty", "");
  fsio::tree::SourceOptions o;
  o.read_ahead_files = 3;
  o.read_ahead_bytes = 100;
  auto src = fsio::tree::open_directory(t / "src", o);
  const fsio::Tree tree = *(*src)->list();
  CollectSink sink(777);
  sink.expect_sizes(tree);
  ASSERT_TRUE((*src)->read_contents(sink));
  EXPECT_EQ(treetest::file_bytes(tree, sink), want);
  EXPECT_EQ(sink.data().size(), 60u);  // the empty file has no content to deliver
}

TEST(DirSource, TwoThreadsReadThePickedFilesEach) {
  TempDir t;
  std::map<std::string, std::string> want;
  for (int i = 0; i < 50; ++i) {
    const std::string name = "f" + std::to_string(i);
    want[name] = pattern(std::size_t(i * 53 % 300 + 1), unsigned(i));
    put(t / ("src/" + name), want[name]);
  }
  fsio::tree::SourceOptions o;
  o.read_ahead_files = 4;
  auto src = fsio::tree::open_directory(t / "src", o);
  const fsio::Tree tree = *(*src)->list();
  ASSERT_GE((*src)->max_readers(), 2u);
  // Runs of three files each, alternately.
  std::vector<bool> first(tree.contents.size());
  for (std::size_t c = 0; c < first.size(); ++c) first[c] = c / 3 % 2 == 0;
  std::vector<bool> second(first.size());
  for (std::size_t c = 0; c < first.size(); ++c) second[c] = !first[c];
  CollectSink a(100), b(100);
  a.expect_sizes(tree);
  b.expect_sizes(tree);
  fsio::Status sa, sb;
  std::thread other([&] { sb = (*src)->read_picked(b, second); });
  sa = (*src)->read_picked(a, first);
  other.join();
  ASSERT_TRUE(sa) << sa.error().message();
  ASSERT_TRUE(sb) << sb.error().message();
  // Each file came once, to the sink that picked it, with the bytes written above.
  for (const auto& [c, bytes] : a.data()) EXPECT_TRUE(first[c]) << c;
  for (const auto& [c, bytes] : b.data()) {
    EXPECT_TRUE(second[c]) << c;
    EXPECT_TRUE(a.data().emplace(c, bytes).second) << "content " << c << " read twice";
  }
  EXPECT_EQ(treetest::file_bytes(tree, a), want);
}

TEST(DirSource, AFileThatChangedSinceTheListingIsAnError) {
  TempDir t;
  put(t / "src/a", "12345");
  put(t / "src/b", pattern(3000, 1));
  for (const char* name : {"a", "b"}) {
    auto src = fsio::tree::open_directory(t / "src", {});
    ASSERT_TRUE((*src)->list());
    put(t / ("src/" + std::string(name)), "123");
    CollectSink sink;
    auto st = (*src)->read_contents(sink);
    ASSERT_FALSE(st) << name;
    EXPECT_EQ(st.error().code, fsio::Errc::corrupt);
    const std::string want = t / ("src/" + std::string(name)) + ": changed while it was read";
    EXPECT_NE(st.error().message().find(want), std::string::npos) << st.error().message();
    put(t / "src/a", "12345");
    put(t / "src/b", pattern(3000, 1));
  }
}

TEST(DirSource, NotADirectoryIsRefused) {
  TempDir t;
  put(t / "f", "x");
  auto src = fsio::tree::open_directory(t / "f", {});
  ASSERT_FALSE(src);
  EXPECT_EQ(src.error().message(), t / "f" + ": not a directory");
  auto missing = fsio::tree::open_source(t / "none", {});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, fsio::Errc::not_found);
}

}  // namespace

namespace {

// A file's and a symlink's own xattrs (lsetxattr), sorted by name, and a
// file's and a directory's chattr flags; none listed without
// SourceOptions::attrs. Skipped where the filesystem refuses them.
TEST(DirSource, ListsXattrsAndFlagsWhenAsked) {
  TempDir t;
  put(t / "src/f", "x");
  std::filesystem::create_directory(t / "src/d");
  std::filesystem::create_symlink("f", t / "src/l");
  const auto r = fsio::test::run("setfattr -n user.z -v 1 " + (t / "src/f") + " && setfattr -n user.a -v 0x0002 " +
                                 (t / "src/f") + " && setfattr -h -n trusted.own -v mine " + (t / "src/l"));
  if (r.exit_code != 0) GTEST_SKIP() << "setfattr missing or refused: " << r.output;
  const bool flags = fsio::test::run("chattr +d " + (t / "src/f") + " && chattr +A " + (t / "src/d")).exit_code == 0;
  fsio::tree::SourceOptions o;
  o.symlinks = fsio::SymlinkPolicy::keep;
  o.attrs = true;
  const fsio::Tree tree = list(t / "src", o);
  ASSERT_EQ(outline(tree).size(), 4u);
  const std::vector<fsio::Xattr> f_want = {{"user.a", std::string("\0\2", 2)}, {"user.z", "1"}};
  const std::vector<fsio::Xattr> l_want = {{"trusted.own", "mine"}};
  EXPECT_EQ(tree.nodes[2].name, "f");
  EXPECT_EQ(tree.nodes[2].xattrs, f_want);
  EXPECT_EQ(tree.nodes[3].name, "l");
  EXPECT_EQ(tree.nodes[3].xattrs, l_want);  // the link's own, not f's
  EXPECT_EQ(tree.nodes[3].flags, 0u);
  if (flags) {
    EXPECT_EQ(tree.nodes[2].flags & 0x40u, 0x40u);  // FS_NODUMP_FL (chattr +d)
    EXPECT_EQ(tree.nodes[1].flags & 0x80u, 0x80u);  // FS_NOATIME_FL (chattr +A)
  }
  o.attrs = false;
  const fsio::Tree bare = list(t / "src", o);
  EXPECT_TRUE(bare.nodes[2].xattrs.empty());
  EXPECT_EQ(bare.nodes[2].flags, 0u);
}

}  // namespace
