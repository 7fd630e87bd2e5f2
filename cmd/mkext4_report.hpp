// What mkext4 prints: the filesystem it makes (or would make), the result,
// --stats and the --json document, all from the plan and the report.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cmd/mkext4_args.hpp"
#include "ext/mkfs.hpp"
#include "libfsio/io_queue.hpp"
#include "libfsio/signatures.hpp"

namespace fsio::cli {

// "TARGET: ext4, 262144 blocks of 4 KiB (1 GiB), 65536 inodes in 8 groups"
// and its details (UUID, features, backups, journal, reserve, inode tables).
void print_plan(const Mkext4Args& a, const ext::MkfsPlan& plan, bool dry_run);

// `stats`: the queue's at the end (the format's, and -d's fill through the
// same queue); `engine` and `direct` say how it wrote.
void print_result(const Mkext4Args& a, const ext::MkfsReport& rep, const IoStats& stats, const std::string& engine,
                  bool direct);

nlohmann::json plan_json(const Mkext4Args& a, const ext::MkfsPlan& plan, const std::vector<Signature>& sigs);

void add_result_json(nlohmann::json& out, const ext::MkfsReport& rep, const IoStats& stats);

}  // namespace fsio::cli
