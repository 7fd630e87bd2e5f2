// --plot: what fio needs separate scripts for (fio_generate_plots, gnuplot),
// as one self-contained SVG a browser shows: bandwidth and IOPS over time
// (each job's windows, one line per job and direction) and the completion
// latency percentile curve from each job's histogram, on a "nines" scale
// (90, 99, 99.9, ...) where the tail is visible, latency by decades.
//
// The file is plain SVG 1.1 with no scripts or external references. Each
// chart is a <g class="chart"> whose data-x-min/-max and data-y-min/-max
// attributes give the value at the edges of its plot area (data-y-scale
// "log": the edges of a logarithmic axis), so the numbers behind every
// <polyline class="series"> can be read back (the tests do).
#pragma once

#include <string>
#include <vector>

#include "cmd/bench/run.hpp"

namespace bench {

struct PlotJob {
  std::string name;  // the legend's label
  const BenchResult* result = nullptr;
};

std::string plot_svg(const std::vector<PlotJob>& jobs, const std::string& title);

}  // namespace bench
