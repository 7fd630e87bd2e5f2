// fatck on an image: the whole check (fat::check_volume: boot area, every
// directory and chain, every FAT copy, the label), then the repair its plan
// asks for, carried out on the in-memory image, then a second check of the
// repaired image, as `fatck -a` followed by `fatck -n` would run. First the
// image is checked reading its second FAT copy (`fatck -n -F 2`), where it has
// one.
#include <cstddef>
#include <cstdint>
#include <span>

#include "fat/check.hpp"
#include "fat/check_target.hpp"
#include "fat/repair.hpp"
#include "tests/fuzz/mem_image.hpp"

namespace {

// One check (and with `repair` the repair), as cmd/fatck.cpp runs them,
// reading FAT copy `fat_copy` as -F counts (0: the one fatck chooses).
bool check(const std::string& path, bool repair, std::uint32_t fat_copy = 0) {
  fat::CheckTargetOptions o;
  o.repair = repair;
  auto target = fat::open_check_target(path, o);
  if (!target) return false;
  if (!fat::open_check_volume(**target)) return false;
  if (!fat::choose_fat_copy(**target, fat_copy)) return false;
  fat::Volume& vol = *(*target)->volume;
  (void)fat::check_work(vol);
  auto result = fat::check_volume(vol, {16, nullptr});
  if (!result) return false;
  (void)result->count(fat::Severity::error);
  (void)result->unfixable_errors();
  if (!repair || result->plan.empty()) return false;
  fat::RepairReport report;
  return bool(fat::repair_volume(vol, result->plan, report));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> in(data, size);
  auto& image = fsio::fuzz::MemImage::load(in, fsio::fuzz::padded_size(size, fsio::fuzz::fat_declared_size(in)));
  (void)check(image.path(), false, 2);
  if (check(image.path(), true)) check(image.path(), false);
  return 0;
}
