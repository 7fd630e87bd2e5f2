// What mkext4 prints (see mkext4_report.hpp).
#include "cmd/mkext4_report.hpp"

#include <cinttypes>
#include <cstdio>

#include "cmd/common.hpp"
#include "ext/mkfs_options.hpp"
#include "libfsio/size.hpp"

namespace fsio::cli {

namespace {

std::vector<std::uint64_t> backups(const ext::Layout& l) {
  std::vector<std::uint64_t> out;
  for (std::uint32_t g = 1; g < l.group_count; ++g)
    if (l.group_has_super(g)) out.push_back(l.group_first_block(g));
  return out;
}

const char* itable_words(const ext::MkfsPlan& p) {
  if (p.init.zeroed) return "left as the discard zeroed them (marked zeroed)";
  if (!p.init.lazy) return "zeroed";
  return "zeroed where inodes are in use; the kernel zeroes the rest (lazy_itable_init)";
}

}  // namespace

void print_plan(const Mkext4Args& a, const ext::MkfsPlan& p, bool dry_run) {
  if (a.quiet || a.json) return;
  const ext::Layout& l = p.layout.l;
  for (const auto& w : p.params.warnings) std::fprintf(stderr, "mkext4: warning: %s\n", w.c_str());
  std::printf("%s%s: ext4, %" PRIu64 " blocks of %s (%s), %u inodes in %u group%s\n", dry_run ? "would make " : "",
              a.target.c_str(), l.blocks_count, format_size(l.block_size).c_str(), format_size(p.fs_bytes()).c_str(),
              l.inodes_count, l.group_count, l.group_count == 1 ? "" : "s");
  std::printf("UUID %s, features %s\n", ext::format_uuid(p.params.uuid).c_str(),
              ext::feature_names(l.compat, l.incompat, l.ro_compat).c_str());
  std::string list;
  for (auto b : backups(l)) list += (list.empty() ? "" : ", ") + std::to_string(b);
  if (!list.empty()) std::printf("superblock backups at blocks %s\n", list.c_str());
  if (p.files.journal_blocks) std::printf("journal of %u blocks; ", p.files.journal_blocks + p.files.fc_blocks);
  std::printf("%" PRIu64 " blocks reserved for root; inode tables %s\n", l.r_blocks_count, itable_words(p));
  if (p.discard)
    std::printf("%s the target first (%s)\n", dry_run ? "would discard" : "discarding",
                p.discard_zeroes ? "punch holes" : "BLKDISCARD");
}

void print_result(const Mkext4Args& a, const ext::MkfsReport& rep, const IoStats& st, const std::string& engine,
                  bool direct) {
  if (!rep.discard_error.empty() && !a.quiet)
    std::fprintf(stderr, "mkext4: note: the discard failed (%s); the inode tables are initialised instead\n",
                 rep.discard_error.c_str());
  if (a.quiet || a.json || !a.stats) return;
  std::printf("stats: %" PRIu64 " requests queued, %" PRIu64 " submitted after merging, %" PRIu64
              " syscalls, %s written, %s zeroed by fallocate, %s read, %" PRIu64 " flushes, %.3f s (%s engine, %s)\n",
              st.requests_queued, st.requests_submitted, st.syscalls, format_size(st.bytes_written).c_str(),
              format_size(rep.bytes_zeroed).c_str(), format_size(st.bytes_read).c_str(), st.flushes, st.elapsed_seconds,
              engine.c_str(), direct ? "direct" : "buffered");
}

nlohmann::json plan_json(const Mkext4Args& a, const ext::MkfsPlan& p, const std::vector<Signature>& sigs) {
  const ext::Layout& l = p.layout.l;
  nlohmann::json found = nlohmann::json::array();
  for (const auto& s : sigs) found.push_back({{"type", s.type}, {"usage", s.usage}, {"offset", s.offset}});
  return {
      {"target", a.target},
      {"dry_run", a.dry_run},
      {"offset", p.params.offset},
      {"fs_types", p.params.fs_types},
      {"block_size", l.block_size},
      {"blocks", l.blocks_count},
      {"bytes", p.fs_bytes()},
      {"inodes", l.inodes_count},
      {"inode_size", l.inode_size},
      {"groups", l.group_count},
      {"blocks_per_group", l.blocks_per_group},
      {"inodes_per_group", l.inodes_per_group},
      {"reserved_blocks", l.r_blocks_count},
      {"reserved_gdt_blocks", l.reserved_gdt_blocks},
      {"features", ext::feature_names(l.compat, l.incompat, l.ro_compat)},
      {"uuid", ext::format_uuid(p.params.uuid)},
      {"label", p.params.label},
      {"superblock_backups", backups(l)},
      {"journal_blocks", p.files.journal_blocks + p.files.fc_blocks},
      {"overhead_clusters", p.files.overhead},
      {"kbytes_written", p.kbytes},
      {"discard", p.discard},
      {"itable_zeroed", p.init.zeroed},
      {"lazy_itable_init", p.init.lazy},
      {"warnings", p.params.warnings},
      {a.dry_run ? "would_overwrite" : "overwritten", found},
  };
}

void add_result_json(nlohmann::json& out, const ext::MkfsReport& rep, const IoStats& stats) {
  out["discarded"] = rep.discarded;
  out["discard_error"] = rep.discard_error;
  out["bytes_zeroed"] = rep.bytes_zeroed;
  out["zero_bytes_written"] = rep.zero_writes;
  out["plugs"] = rep.plugs;
  out["flushes"] = rep.flushes;
  out["stats"] = to_json(stats);
}

}  // namespace fsio::cli
