// A job made from fio option lines ("key=value", as in a job file), each
// applied in order to fio's defaults; a refused line fails the test. Shared
// by the bench tests that set options the way a job file does.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <vector>

#include "cmd/bench/fio_options.hpp"

namespace bench {

inline FioJob fio_applied(std::initializer_list<const char*> lines) {
  FioJob j = fio_defaults();
  std::vector<FioLine> v;
  for (const char* l : lines) v.push_back(split_fio_option(l, "job.fio:1"));
  auto st = apply_fio_lines(j, v);
  EXPECT_TRUE(st.has_value()) << st.error().message();
  return j;
}

}  // namespace bench
