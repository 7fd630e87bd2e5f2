// The archive source against archives made by the peers: GNU tar (plain,
// gzip, zstd, xz; its own member order and --sort=name) must list the same
// tree as the directory it was made of and deliver the same bytes; Python's
// tarfile makes the members tar would not (.., duplicates, links in and out
// of the archive, a member under a file). Standard input through a pipe is
// kept for the second pass.
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "cmd/tree/source.hpp"
#include "tests/support/support.hpp"
#include "tests/tree/tree_test_util.hpp"

namespace {

using fsio::test::TempDir;
using treetest::CollectSink;
using treetest::outline;
using treetest::put;

void sh(const std::string& cmd) {
  const auto r = fsio::test::run(cmd);
  ASSERT_EQ(r.exit_code, 0) << cmd << "\n" << r.output;
}

struct Listed {
  fsio::Tree tree;
  std::map<std::string, std::string> bytes;
};

Listed read_all(std::unique_ptr<fsio::TreeSource> src) {
  Listed out;
  auto tree = src->list();
  EXPECT_TRUE(tree) << tree.error().message();
  if (!tree) return out;
  out.tree = std::move(*tree);
  CollectSink sink(4096);
  auto st = src->read_contents(sink);
  EXPECT_TRUE(st) << st.error().message();
  out.bytes = treetest::file_bytes(out.tree, sink);
  return out;
}

Listed read_archive(const std::string& path) {
  auto src = fsio::tree::open_source(path, {});
  EXPECT_TRUE(src) << src.error().message();
  return src ? read_all(std::move(*src)) : Listed{};
}

std::string pattern(std::size_t n) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = char((i * 7 + i / 251) & 0xFF);
  return s;
}

// A small tree with what a tar carries: nesting, empty files and
// directories, a non-ASCII name, a hard link, links to a file and a directory.
void make_tree(const std::string& dir) {
  put(dir + "/zeta/deep/er/est", pattern(70000));
  put(dir + "/alpha", "a");
  put(dir + "/Ärger.txt", "umlaut");
  put(dir + "/empty", "");
  std::filesystem::create_directories(dir + "/hollow");
  std::filesystem::create_hard_link(dir + "/alpha", dir + "/zz-hard");
  std::filesystem::create_symlink("zeta/deep/er/est", dir + "/link");
  std::filesystem::create_directory_symlink("zeta/deep", dir + "/dlink");
}

TEST(TarSource, ListsWhatTheDirectoryListsForEveryCompression) {
  TempDir t;
  make_tree(t / "src");
  auto dir_src = fsio::tree::open_directory(t / "src", {});
  const Listed dir = read_all(std::move(*dir_src));
  ASSERT_FALSE(dir.tree.nodes.empty());
  for (const char* flags : {"", "-z", "--zstd", "-J", "--sort=name"}) {
    const std::string archive = t / (std::string("x") + flags + ".tar");
    sh(std::string("tar -C ") + (t / "src") + " " + flags + " -cf " + archive + " .");
    const Listed tar = read_archive(archive);
    EXPECT_EQ(outline(tar.tree), outline(dir.tree)) << flags;
    EXPECT_EQ(tar.bytes, dir.bytes) << flags;
    for (std::uint32_t i = 0; i < tar.tree.nodes.size() && i < dir.tree.nodes.size(); ++i)
      EXPECT_EQ(tar.tree.nodes[i].mtime.sec, dir.tree.nodes[i].mtime.sec) << flags << " " << tar.tree.path(i);
  }
}

TEST(TarSource, ReadsStandardInputFromAPipeTwice) {
  TempDir t;
  make_tree(t / "src");
  sh("tar -C " + (t / "src") + " --zstd -cf " + (t / "x.tar.zst") + " .");
  const std::string archive = fsio::test::read_all(t / "x.tar.zst");
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  const int saved = ::dup(STDIN_FILENO);
  ASSERT_EQ(::dup2(p[0], STDIN_FILENO), STDIN_FILENO);
  ::close(p[0]);
  std::thread writer([&] {
    for (std::size_t off = 0; off < archive.size();) {
      const ssize_t n = ::write(p[1], archive.data() + off, std::min<std::size_t>(archive.size() - off, 1000));
      if (n <= 0) break;
      off += std::size_t(n);
    }
    ::close(p[1]);
  });
  fsio::tree::SourceOptions o;
  o.spool_dir = t.path();
  auto src = fsio::tree::open_source("-", o);
  ASSERT_TRUE(src) << src.error().message();
  const Listed piped = read_all(std::move(*src));
  writer.join();
  ::dup2(saved, STDIN_FILENO);
  ::close(saved);
  const Listed file = read_archive(t / "x.tar.zst");
  EXPECT_EQ(outline(piped.tree), outline(file.tree));
  EXPECT_EQ(piped.bytes, file.bytes);
  EXPECT_EQ(piped.tree.label, "standard input");
  EXPECT_TRUE(std::filesystem::is_empty(t.path() + "/src/hollow"));
}

// Python's tarfile writes members in the order given, with names tar would not.
void python_tar(const std::string& archive, const std::string& body) {
  const std::string script =
      "import tarfile, io\n"
      "t = tarfile.open('" +
      archive +
      "', 'w', format=tarfile.PAX_FORMAT)\n"
      "def f(name, data=b'', **kw):\n"
      "    i = tarfile.TarInfo(name); i.size = len(data); i.mtime = 1700000000\n"
      "    for k, v in kw.items(): setattr(i, k, v)\n"
      "    t.addfile(i, io.BytesIO(data))\n"
      "def d(name): f(name, type=tarfile.DIRTYPE, mode=0o755)\n"
      "def l(name, to): f(name, type=tarfile.SYMTYPE, linkname=to)\n"
      "def h(name, to): f(name, type=tarfile.LNKTYPE, linkname=to)\n" +
      body + "t.close()\n";
  std::ofstream(archive + ".py") << script;
  sh("python3 " + archive + ".py");
}

fsio::Error archive_list_error(const std::string& archive) {
  auto src = fsio::tree::open_source(archive, {});
  EXPECT_TRUE(src);
  auto tree = (*src)->list();
  EXPECT_FALSE(tree);
  return tree ? fsio::Error{} : tree.error();
}

TEST(TarSource, BuildsTheTreeTarWouldExtract) {
  TempDir t;
  const std::string a = t / "a.tar";
  // Members out of order, parents never given, a later member replacing an
  // earlier one, absolute and relative links resolved inside the archive.
  python_tar(a,
             "f('/b/two', b'old')\nf('./b/one', b'1')\nf('b/two', b'22')\nd('c')\n"
             "l('c/abs', '/b/one')\nl('c/rel', '../b/two')\nl('c/dir', '../b')\nh('hard', 'b/one')\n");
  const Listed l = read_archive(a);
  const std::vector<std::string> want = {" directory",       "b directory",  "b/one file 1",    "b/two file 2",
                                         "c directory",      "c/abs file 1", "c/dir directory", "c/dir/one file 1",
                                         "c/dir/two file 2", "c/rel file 2", "hard file 1"};
  EXPECT_EQ(outline(l.tree), want);
  EXPECT_EQ(l.bytes.at("c/rel"), "22");
  EXPECT_EQ(l.bytes.at("c/dir/two"), "22");
  EXPECT_EQ(l.bytes.at("hard"), "1");
  EXPECT_EQ(l.tree.contents.size(), 2u);    // "old" is replaced and never delivered
  EXPECT_EQ(l.tree.nodes[1].mtime.sec, 0);  // a parent with no member of its own
  EXPECT_EQ(l.tree.nodes[2].mtime.sec, 1700000000);
}

TEST(TarSource, RefusesWhatTarWouldNotExtractNamingTheMember) {
  TempDir t;
  python_tar(t / "up.tar", "f('a/../../x', b'1')\n");
  EXPECT_EQ(archive_list_error(t / "up.tar").message(),
            t / "up.tar" + ": a/../../x: 'a/../../x' climbs out of the archive with '..'");
  python_tar(t / "dangling.tar", "d('d')\nl('d/l', '../nowhere')\n");
  EXPECT_EQ(
      archive_list_error(t / "dangling.tar").message(),
      t / "dangling.tar" + ": d/l: a dangling symbolic link (to '../nowhere'); it is copied as what it points to");
  python_tar(t / "loop.tar", "l('x', 'y')\nl('y', 'x')\n");
  EXPECT_EQ(archive_list_error(t / "loop.tar").code, fsio::Errc::unsupported);
  python_tar(t / "up-loop.tar", "d('d')\nl('d/up', '..')\n");
  EXPECT_EQ(archive_list_error(t / "up-loop.tar").message(),
            t / "up-loop.tar" + ": d/up: a symbolic link loop (to '..', a directory that contains it)");
  python_tar(t / "under.tar", "f('f', b'x')\nf('f/g', b'y')\n");
  EXPECT_EQ(archive_list_error(t / "under.tar").message(),
            t / "under.tar" + ": 'f/g': 'f' on its way is not a directory in the archive");
  python_tar(t / "both.tar", "f('f', b'x')\nd('f')\n");
  EXPECT_EQ(archive_list_error(t / "both.tar").message(),
            t / "both.tar" + ": f/: appears both as a directory and as a file");
  put(t / "not.tar", "this is text, not an archive\n");
  EXPECT_EQ(archive_list_error(t / "not.tar").code, fsio::Errc::corrupt);
}

TEST(TarSource, ListsSpecialFilesAsTheyAre) {
  TempDir t;
  python_tar(t / "s.tar", "f('fifo', type=tarfile.FIFOTYPE)\nf('tty', type=tarfile.CHRTYPE, devmajor=4, devminor=1)\n");
  const Listed l = read_archive(t / "s.tar");
  const std::vector<std::string> want = {" directory", "fifo FIFO", "tty character device"};
  EXPECT_EQ(outline(l.tree), want);
  EXPECT_EQ(l.tree.nodes[2].rdev, makedev(4, 1));
}

}  // namespace

namespace {

fsio::Tree list_attrs(const std::string& path) {
  fsio::tree::SourceOptions o;
  o.symlinks = fsio::SymlinkPolicy::keep;
  o.attrs = true;
  auto src = fsio::tree::open_source(path, o);
  EXPECT_TRUE(src) << src.error().message();
  if (!src) return {};
  auto tree = (*src)->list();
  EXPECT_TRUE(tree) << tree.error().message();
  return tree ? std::move(*tree) : fsio::Tree{};
}

std::string bytes(std::initializer_list<unsigned> b) {
  std::string out;
  for (unsigned v : b) out += char(v);
  return out;
}

}  // namespace

// pax records as GNU tar, star and bsdtar write them: SCHILY.xattr.*,
// LIBARCHIVE.xattr.* (URL-encoded name, base64 value), SCHILY.acl.access with
// numeric ids, SCHILY.fflags. The ACL comes back in getxattr's version 2
// format, worked out by hand: user::rw- user:1000:r-- group::r--
// mask::r-- other::---, sorted by tag.
TEST(TarSource, ListsXattrsAclsAndFlagsFromPaxRecords) {
  TempDir t;
  python_tar(t / "x.tar",
             "f('f', b'x', mode=0o640, pax_headers={'SCHILY.xattr.user.b': 'two', 'SCHILY.xattr.user.a': 'one',"
             " 'LIBARCHIVE.xattr.trusted.test': 'AQI', 'SCHILY.fflags': 'schg,nodump',"
             " 'SCHILY.acl.access': 'user::rw-\\nuser:u1000:r--:1000\\ngroup::r--\\nmask::r--\\nother::---\\n'})\n"
             "d('d')\n");
  const fsio::Tree tree = list_attrs(t / "x.tar");
  ASSERT_EQ(tree.nodes.size(), 3u);
  const fsio::TreeNode& f = tree.nodes[2];
  ASSERT_EQ(f.name, "f");
  const std::vector<fsio::Xattr> want = {
      {"system.posix_acl_access", bytes({2,    0,    0,    0,    0x01, 0, 6, 0, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 4, 0,
                                         0xe8, 3,    0,    0,    0x04, 0, 4, 0, 0xff, 0xff, 0xff, 0xff, 0x10, 0, 4, 0,
                                         0xff, 0xff, 0xff, 0xff, 0x20, 0, 0, 0, 0xff, 0xff, 0xff, 0xff})},
      {"trusted.test", bytes({1, 2})},
      {"user.a", "one"},
      {"user.b", "two"}};
  EXPECT_EQ(f.xattrs, want);
  EXPECT_EQ(f.flags, 0x10u | 0x40u);  // FS_IMMUTABLE_FL | FS_NODUMP_FL
  EXPECT_TRUE(tree.nodes[1].xattrs.empty());
  // Without SourceOptions::attrs nothing is listed.
  auto plain = read_archive(t / "x.tar");
  EXPECT_TRUE(plain.tree.nodes.at(2).xattrs.empty());
  EXPECT_EQ(plain.tree.nodes.at(2).flags, 0u);
}

TEST(TarSource, RefusesAnAclUserWithoutANumericIdNamingTheMember) {
  TempDir t;
  python_tar(t / "n.tar",
             "f('f', b'x', pax_headers={'SCHILY.acl.access': "
             "'user::rw-\\nuser:nobody-here:r--\\ngroup::r--\\nmask::r--\\nother::---\\n'})\n");
  fsio::tree::SourceOptions o;
  o.attrs = true;
  auto src = fsio::tree::open_source(t / "n.tar", o);
  ASSERT_TRUE(src);
  auto tree = (*src)->list();
  ASSERT_FALSE(tree);
  EXPECT_EQ(tree.error().code, fsio::Errc::unsupported);
  EXPECT_NE(tree.error().message().find(t / "n.tar" + ": f: an ACL entry naming user 'nobody-here' without"),
            std::string::npos)
      << tree.error().message();
}

// GNU tar --xattrs --xattrs-include='*' --acls of a directory lists what
// the directory lists, ACLs and all (skipped where the filesystem of the
// temporary directory refuses user xattrs or ACLs).
TEST(TarSource, GnuTarOfADirectoryListsItsXattrsAsTheDirectory) {
  TempDir t;
  make_tree(t / "src");
  const std::string f = t / "src/alpha";
  if (fsio::test::run("setfattr -n user.k -v val " + f + " && setfacl -m u:1000:rw,g:100:r " + f +
                      " && setfacl -d -m u:1001:rwx " + (t / "src/hollow"))
          .exit_code != 0)
    GTEST_SKIP() << "setfattr/setfacl missing, or the filesystem refuses user xattrs or ACLs";
  sh("tar --format=posix --xattrs --xattrs-include='*' --acls -C " + (t / "src") + " -cf " + (t / "a.tar") + " .");
  const fsio::Tree dir = list_attrs(t / "src"), tar = list_attrs(t / "a.tar");
  ASSERT_EQ(outline(tar), outline(dir));
  for (std::uint32_t i = 0; i < dir.nodes.size(); ++i)
    EXPECT_EQ(tar.nodes[i].xattrs, dir.nodes[i].xattrs) << dir.path(i);
  bool acl = false;
  for (const fsio::Xattr& x : dir.nodes[1].xattrs) acl |= x.name == "system.posix_acl_access";
  EXPECT_TRUE(acl) << dir.path(1);
}

// bsdtar's two records of one xattr: kept once when alike, refused when not.
TEST(TarSource, KeepsAnXattrStoredTwiceAlikeOnce) {
  TempDir t;
  python_tar(t / "same.tar",
             "f('f', b'x', pax_headers={'SCHILY.xattr.user.a': 'one', 'LIBARCHIVE.xattr.user.a': 'b25l'})\n");
  const fsio::Tree tree = list_attrs(t / "same.tar");
  ASSERT_EQ(tree.nodes.size(), 2u);
  const std::vector<fsio::Xattr> want = {{"user.a", "one"}};
  EXPECT_EQ(tree.nodes[1].xattrs, want);
  python_tar(t / "differ.tar",
             "f('f', b'x', pax_headers={'SCHILY.xattr.user.a': 'one', 'LIBARCHIVE.xattr.user.a': 'dHdv'})\n");
  fsio::tree::SourceOptions o;
  o.attrs = true;
  auto src = fsio::tree::open_source(t / "differ.tar", o);
  ASSERT_TRUE(src);
  auto listed = (*src)->list();
  ASSERT_FALSE(listed);
  EXPECT_EQ(listed.error().message(), t / "differ.tar" + ": f: xattr 'user.a' twice, with different values");
}
