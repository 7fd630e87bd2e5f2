#include "cmd/bench/plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace bench {
namespace {

constexpr double plot_w = 800, plot_h = 230, left = 90, chart_gap = 330, top0 = 70;
const char* const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                               "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '&') o += "&amp;";
    else if (c == '<') o += "&lt;";
    else if (c == '>') o += "&gt;";
    else if (c == '"') o += "&quot;";
    else o += c;
  }
  return o;
}

std::string num(double v, int prec = 2) {
  char b[48];
  std::snprintf(b, sizeof b, "%.*f", prec, v);
  return b;
}

// A step of 1, 2 or 5 times a power of ten giving about five ticks.
double nice_step(double span) {
  if (span <= 0) return 1;
  const double raw = span / 5;
  const double p = std::pow(10, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * p) return m * p;
  return 10 * p;
}

struct Series {
  std::string label;
  std::vector<std::pair<double, double>> pts;  // (x, y) in the chart's units
};

struct Chart {
  std::string id, title, x_label, y_label, unit;
  bool nines = false;  // x is a percentile on the nines scale, y logarithmic
  std::vector<Series> series;
};

// Where a value lands on the y axis: linear from 0, or (latency) by decades.
struct YScale {
  bool log = false;
  double min = 0, max = 1;
  double frac(double v) const {
    if (!log) return v / max;
    v = std::max(v, min);
    return (std::log10(v) - std::log10(min)) / (std::log10(max) - std::log10(min));
  }
};

// The percentile on the nines scale: 0 -> 0, 90 -> 1, 99 -> 2, 99.9 -> 3.
double nines(double pct) { return -std::log10(1 - pct / 100); }

std::string axes(const Chart& c, double x_max, const YScale& ys_) {
  const double y_max = ys_.max;
  std::string s;
  s += "<rect class=\"frame\" x=\"0\" y=\"0\" width=\"" + num(plot_w, 0) + "\" height=\"" + num(plot_h, 0) +
       "\" fill=\"none\" stroke=\"#999\"/>\n";
  s += "<g class=\"axis\" data-axis=\"y\">\n";
  const double ys = nice_step(y_max);
  for (double v = ys_.log ? ys_.min : 0; v <= y_max * (1 + 1e-9); v = ys_.log ? v * 10 : v + ys) {
    const double y = plot_h - ys_.frac(v) * plot_h;
    s += "<line x1=\"0\" x2=\"" + num(plot_w, 0) + "\" y1=\"" + num(y) + "\" y2=\"" + num(y) + "\" stroke=\"#eee\"/>";
    s += "<text x=\"-6\" y=\"" + num(y + 4) + "\" text-anchor=\"end\">" +
         num(v, v < 10 && (ys_.log || ys < 1) ? 2 : 0) + "</text>\n";
  }
  s += "<text transform=\"translate(-62," + num(plot_h / 2) + ") rotate(-90)\" text-anchor=\"middle\">" +
       esc(c.y_label) + "</text>\n</g>\n<g class=\"axis\" data-axis=\"x\">\n";
  if (c.nines) {
    const char* labels[] = {"0", "90", "99", "99.9", "99.99", "99.999", "99.9999"};
    for (int k = 0; k <= int(x_max) && k < 7; ++k) {
      const double x = k / x_max * plot_w;
      s += "<line x1=\"" + num(x) + "\" x2=\"" + num(x) + "\" y1=\"0\" y2=\"" + num(plot_h, 0) + "\" stroke=\"#eee\"/>";
      s +=
          "<text x=\"" + num(x) + "\" y=\"" + num(plot_h + 16) + "\" text-anchor=\"middle\">" + labels[k] + "</text>\n";
    }
  } else {
    const double xs = nice_step(x_max);
    for (double v = 0; v <= x_max + xs * 1e-9; v += xs) {
      const double x = v / x_max * plot_w;
      s += "<line x1=\"" + num(x) + "\" x2=\"" + num(x) + "\" y1=\"0\" y2=\"" + num(plot_h, 0) + "\" stroke=\"#eee\"/>";
      s += "<text x=\"" + num(x) + "\" y=\"" + num(plot_h + 16) + "\" text-anchor=\"middle\">" +
           num(v, xs < 1 ? 1 : 0) + "</text>\n";
    }
  }
  s += "<text x=\"" + num(plot_w / 2) + "\" y=\"" + num(plot_h + 34) + "\" text-anchor=\"middle\">" + esc(c.x_label) +
       "</text>\n</g>\n";
  return s;
}

std::string draw(const Chart& c, double top) {
  double x_max = 0, y_max = 0;
  for (const auto& s : c.series)
    for (const auto& [x, y] : s.pts) {
      x_max = std::max(x_max, x);
      y_max = std::max(y_max, y);
    }
  if (c.nines) x_max = std::max(1.0, std::ceil(x_max));
  if (x_max <= 0) x_max = 1;
  YScale ys;
  ys.log = c.nines;
  if (ys.log) {
    double lo = 0;
    for (const auto& s : c.series)
      for (const auto& p : s.pts)
        if (p.second > 0 && (lo == 0 || p.second < lo)) lo = p.second;
    ys.min = lo > 0 ? std::pow(10, std::floor(std::log10(lo))) : 0.1;
    ys.max = y_max > ys.min ? std::pow(10, std::ceil(std::log10(y_max))) : ys.min * 10;
    if (ys.max <= ys.min) ys.max = ys.min * 10;
  } else {
    ys.max = y_max > 0 ? std::ceil(y_max * 1.05 / nice_step(y_max * 1.05)) * nice_step(y_max * 1.05) : 1;
  }
  std::string o = "<g class=\"chart\" id=\"" + c.id + "\" data-unit=\"" + esc(c.unit) + "\" data-x-scale=\"" +
                  (c.nines ? "nines" : "linear") + "\" data-y-scale=\"" + (ys.log ? "log" : "linear") +
                  "\" data-x-min=\"0\" data-x-max=\"" + num(x_max, 6) + "\" data-y-min=\"" + num(ys.min, 6) +
                  "\" data-y-max=\"" + num(ys.max, 6) + "\" transform=\"translate(" + num(left, 0) + "," + num(top, 0) +
                  ")\">\n";
  o += "<text class=\"title\" x=\"0\" y=\"-12\" font-size=\"15\" font-weight=\"bold\">" + esc(c.title) + "</text>\n";
  o += axes(c, x_max, ys);
  for (std::size_t k = 0; k < c.series.size(); ++k) {
    const auto& s = c.series[k];
    std::string pts;
    for (const auto& [x, y] : s.pts) {
      if (!pts.empty()) pts += ' ';
      pts += num(x / x_max * plot_w) + "," + num(plot_h - ys.frac(y) * plot_h);
    }
    const char* colour = palette[k % std::size(palette)];
    o += "<polyline class=\"series\" data-label=\"" + esc(s.label) + "\" fill=\"none\" stroke=\"" + colour +
         "\" stroke-width=\"1.5\" points=\"" + pts + "\"/>\n";
    const double ly = 14 + 16 * double(k);
    o += "<g class=\"legend\"><line x1=\"" + num(plot_w + 8) + "\" x2=\"" + num(plot_w + 26) + "\" y1=\"" +
         num(ly - 4) + "\" y2=\"" + num(ly - 4) + "\" stroke=\"" + colour + "\" stroke-width=\"3\"/><text x=\"" +
         num(plot_w + 30) + "\" y=\"" + num(ly) + "\">" + esc(s.label) + "</text></g>\n";
    if (s.pts.empty())
      o += "<text class=\"empty\" x=\"10\" y=\"" + num(20 + 16 * double(k)) + "\">" + esc(s.label) +
           ": no complete window (the run was shorter than one)</text>\n";
  }
  return o + "</g>\n";
}

// The percentiles drawn: dense enough for a smooth curve, up to the last
// one the sample count can tell apart from the maximum.
std::vector<double> curve_points(std::uint64_t n) {
  std::vector<double> p;
  for (double v = 0; v < 90; v += 1) p.push_back(v);
  for (double base = 90, step = 0.1; base < 99.9999 && step > 1e-6; base += 9 * step * 10, step /= 10)
    for (int k = 0; k < 90; ++k) p.push_back(base + k * step);
  std::vector<double> keep;
  for (double v : p)
    if (n > 0 && 1 / (1 - v / 100) <= double(n)) keep.push_back(v);
  return keep;
}

}  // namespace

std::string plot_svg(const std::vector<PlotJob>& jobs, const std::string& title) {
  Chart bw{"bandwidth", "Bandwidth", "time (s)", "MiB/s", "MiB/s", false, {}};
  Chart iops{"iops", "IOPS", "time (s)", "IOPS", "IOPS", false, {}};
  Chart lat{"latency", "Completion latency by percentile", "percentile", "latency (us, log scale)", "us", true, {}};
  for (const auto& j : jobs) {
    const BenchResult& r = *j.result;
    const unsigned w = r.log_window_ms;
    for (unsigned d = 0; d < bench_dirs; ++d) {
      if (!r.dir_active(BenchDir(d))) continue;
      const bool several = bench_mixed(r.rw) || bench_trims(r.rw) || r.verify_reads_only();
      const std::string label = j.name + (several ? std::string(" ") + bench_dir_name(BenchDir(d)) : "");
      Series b{label, {}}, i{label, {}}, l{label, {}};
      for (const auto& s : r.log_samples)
        if (s.dir == d) {
          b.pts.emplace_back(double(s.t_ms) / 1000, s.bw_kib(w) / 1024);
          i.pts.emplace_back(double(s.t_ms) / 1000, s.iops(w));
        }
      const auto& h = r.dir[d].clat;
      for (double p : curve_points(h.count())) l.pts.emplace_back(nines(p), double(h.percentile(p)) / 1000);
      bw.series.push_back(std::move(b));
      iops.series.push_back(std::move(i));
      lat.series.push_back(std::move(l));
    }
  }
  std::string o =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"1060\" height=\"1070\" "
      "viewBox=\"0 0 1060 1070\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<title>" +
      esc(title) +
      "</title>\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"" +
      num(left, 0) + "\" y=\"28\" font-size=\"17\">" + esc(title) + "</text>\n";
  o += draw(bw, top0 + 0 * chart_gap);
  o += draw(iops, top0 + 1 * chart_gap);
  o += draw(lat, top0 + 2 * chart_gap);
  return o + "</svg>\n";
}

}  // namespace bench
