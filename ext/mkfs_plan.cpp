// plan_mkfs (see mkfs.hpp): parameters, layout, files and s_kbytes_written,
// with mke2fs's discard and inode-table decisions.
#include "ext/mkfs.hpp"

namespace ext {

namespace {

fsio::Status lay_out_all(MkfsPlan& plan) {
  plan.layout = FSIO_TRY(lay_out(plan.params));
  plan.files = FSIO_TRY(make_files(plan.layout, plan.params, plan.init));
  plan.kbytes = kbytes_written(plan.layout, plan.files, plan.params);
  return {};
}

}  // namespace

fsio::Result<MkfsPlan> plan_mkfs(const MkfsRequest& req, const MkfsTarget& target, const Mke2fsConf& conf,
                                 std::array<std::uint8_t, 16> (*random16)()) {
  MkfsParams params = FSIO_TRY(resolve_params(req, target, conf, random16));
  MkfsPlan plan{std::move(params), MkfsLayout{{}, {}, BlockSet(0, 0), {}}, {}, {}};
  const MkfsParams& p = plan.params;
  plan.init.lazy = p.lazy_itable_init;
  if (p.assume_prezeroed) {
    plan.init = {true, true};
    plan.params.lazy_journal_init = true;
  }
  // mke2fs discards when dev_size, the target's size in 1 KiB (or -b)
  // units, is not 0: never a file it creates, nor an empty one.
  const std::uint64_t unit = req.block_size ? *req.block_size : 1024;
  plan.discard = p.discard && target.exists && target.bytes / unit > 0;
  plan.discard_zeroes = plan.discard && !target.is_block_device;  // BLKDISCARDZEROES is 0 on Linux >= 4.12
  if (plan.discard_zeroes) plan.init = {true, true};
  FSIO_TRY(lay_out_all(plan));
  return plan;
}

fsio::Status replan_not_zeroed(MkfsPlan& plan) {
  if (plan.params.assume_prezeroed || !plan.init.zeroed) return {};
  plan.init = {plan.params.lazy_itable_init, false};
  return lay_out_all(plan);
}

}  // namespace ext
