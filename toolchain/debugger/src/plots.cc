#include "openbpu/debugger/plots.h"

#include <plplot/plstream.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "openbpu/common/atomic_file.h"
#include "openbpu/common/error.h"

namespace openbpu::debugger {

namespace fs = std::filesystem;

namespace {

constexpr int kWidth = 1200, kHeight = 700;
// cmap0: 0 background, 1 text and frame, 2 grid, 3.. series (matplotlib's tab10).
constexpr int kText = 1, kGrid = 2, kFirstSeries = 3;
constexpr unsigned char kPalette[][3] = {
    {31, 119, 180}, {255, 127, 14},  {44, 160, 44},   {214, 39, 40},  {148, 103, 189},
    {140, 86, 75},  {227, 119, 194}, {127, 127, 127}, {188, 189, 34}, {23, 190, 207}};
constexpr int kSeriesColours = sizeof(kPalette) / sizeof(kPalette[0]);

// The viewport fraction that `longest` characters of rotated or left-side labels need.
double label_margin(const std::vector<std::string>& names, double per_char) {
  size_t longest = 0;
  for (const std::string& n : names) longest = std::max(longest, n.size());
  return std::clamp(0.04 + per_char * static_cast<double>(longest), 0.12, 0.62);
}

// Long names shortened to their last `keep` characters.
std::string shortened(const std::string& name, size_t keep = 30) {
  return name.size() <= keep ? name : "..." + name.substr(name.size() - keep);
}

int series_colour(size_t i) {
  return kFirstSeries + static_cast<int>(i % kSeriesColours);
}

// Draws one figure with PLplot into a temporary file per format, then writes `<stem>.png` and
// `<stem>.svg` atomically (a failed figure leaves nothing under the final names).
void render(const fs::path& stem, const std::function<void(plstream&)>& draw) {
  for (const char* format : {"png", "svg"}) {
    const fs::path final_path = fs::path(stem.string() + "." + format);
    const fs::path temp =
        fs::temp_directory_path() / ("openbpu-plot-" + std::to_string(::getpid()) + "." + format);
    {
      plstream pls;
      pls.sdev(std::string(format) == "png" ? "pngcairo" : "svgcairo");
      pls.sfnam(temp.c_str());
      pls.spage(0, 0, kWidth, kHeight, 0, 0);
      pls.scolbg(255, 255, 255);
      pls.init();
      pls.scol0(kText, 0, 0, 0);
      pls.scol0(kGrid, 215, 215, 215);
      for (int i = 0; i < kSeriesColours; ++i) {
        pls.scol0(kFirstSeries + i, kPalette[i][0], kPalette[i][1], kPalette[i][2]);
      }
      pls.adv(0);
      pls.schr(0, 0.85);
      draw(pls);
    }  // the stream's destructor finishes the file
    std::string bytes;
    try {
      bytes = read_file(temp);
    } catch (...) {
      fs::remove(temp);
      throw;
    }
    fs::remove(temp);
    if (bytes.empty()) raise("plot ", final_path.string(), ": PLplot wrote nothing");
    write_file_atomically(final_path, bytes);
  }
}

// A range that PLplot can draw (min < max), with a margin.
std::pair<double, double> padded(double lo, double hi) {
  if (!(lo <= hi)) return {0, 1};
  if (lo == hi) {
    const double d = lo == 0 ? 1 : std::fabs(lo) * 0.05;
    return {lo - d, hi + d};
  }
  const double m = (hi - lo) * 0.05;
  return {lo - m, hi + m};
}

// The frame: light grid, then black axes with ticks and numbers.
void frame(plstream& pls, const char* x_opts, const char* y_opts) {
  pls.col0(kGrid);
  pls.width(1);
  pls.box("g", 0, 0, "g", 0, 0);
  pls.col0(kText);
  pls.box(x_opts, 0, 0, y_opts, 0, 0);
}

void legend(plstream& pls, const std::vector<std::string>& labels) {
  if (labels.empty()) return;
  const PLINT n = static_cast<PLINT>(labels.size());
  std::vector<PLINT> opts(n, PL_LEGEND_LINE), text_colours(n, kText), colours(n), styles(n, 1);
  std::vector<PLFLT> widths(n, 2.0);
  std::vector<const char*> text;
  for (PLINT i = 0; i < n; ++i) {
    colours[i] = series_colour(static_cast<size_t>(i));
    text.push_back(labels[static_cast<size_t>(i)].c_str());
  }
  PLFLT w = 0, h = 0;
  pls.legend(&w, &h, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX,
             PL_POSITION_OUTSIDE | PL_POSITION_RIGHT | PL_POSITION_TOP, 0.02, 0.0, 0.04, 0, kText,
             1, 0, 0, n, opts.data(), 1.0, 0.9, 2.0, 0.0, text_colours.data(), text.data(), nullptr,
             nullptr, nullptr, nullptr, colours.data(), styles.data(), widths.data(), nullptr,
             nullptr, nullptr, nullptr);
}

}  // namespace

void write_line_chart(const LineChart& chart, const fs::path& stem) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  size_t points = 0;
  for (const LineChart::Series& s : chart.series) {
    points = std::max(points, s.y.size());
    for (double v : s.y) {
      if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
    }
  }
  if (points == 0) raise("plot ", stem.string(), ": no values");
  const bool names = !chart.x_names.empty();
  render(stem, [&](plstream& pls) {
    // A legend for several series, right of the plot.
    const double right = chart.series.size() > 1 ? 0.74 : 0.97;
    std::vector<std::string> x_names;
    for (const std::string& n : chart.x_names) x_names.push_back(shortened(n));
    pls.vpor(0.09, right, names ? label_margin(x_names, 0.016) : 0.12, 0.92);
    const auto [y0, y1] = padded(lo, hi);
    pls.wind(-0.5, static_cast<double>(points) - 0.5, y0, y1);
    frame(pls, names ? "bct" : "bcnst", "bcnstv");
    if (names) {
      // At most ~60 names fit; label every n-th.
      const size_t step = std::max<size_t>(1, (chart.x_names.size() + 59) / 60);
      for (size_t i = 0; i < chart.x_names.size(); i += step) {
        const double pos = (static_cast<double>(i) + 0.5) / static_cast<double>(points);
        pls.mtex("bv", 0.6, pos, 1.0, x_names[i].c_str());
      }
    }
    pls.lab(names ? "" : chart.x_label.c_str(), chart.y_label.c_str(), chart.title.c_str());
    std::vector<std::string> labels;
    for (size_t k = 0; k < chart.series.size(); ++k) {
      const LineChart::Series& s = chart.series[k];
      std::vector<PLFLT> x, y;
      pls.col0(series_colour(k));
      pls.width(2);
      auto flush = [&] {
        if (x.size() == 1) pls.poin(1, x.data(), y.data(), 17);
        if (x.size() > 1) pls.line(static_cast<PLINT>(x.size()), x.data(), y.data());
        x.clear(), y.clear();
      };
      for (size_t i = 0; i < s.y.size(); ++i) {
        if (!std::isfinite(s.y[i])) {
          flush();
          continue;
        }
        x.push_back(static_cast<double>(i));
        y.push_back(s.y[i]);
      }
      flush();
      labels.push_back(s.label);
    }
    pls.width(1);
    if (labels.size() > 1) legend(pls, labels);
  });
}

void write_bar_chart(const BarChart& chart, const fs::path& stem) {
  if (chart.names.empty() || chart.names.size() != chart.values.size()) {
    raise("plot ", stem.string(), ": ", chart.names.size(), " names for ", chart.values.size(),
          " values");
  }
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (double v : chart.values) {
    if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  }
  const double n = static_cast<double>(chart.names.size());
  render(stem, [&](plstream& pls) {
    std::vector<std::string> names;
    for (const std::string& name : chart.names) names.push_back(shortened(name));
    pls.vpor(label_margin(names, 0.0085), 0.95, 0.10, 0.92);
    auto [x0, x1] = padded(std::isfinite(lo) ? lo : 0, std::isfinite(hi) ? hi : 1);
    pls.wind(x0, x1, 0, n);
    frame(pls, "bcnst", "bc");
    pls.lab(chart.value_label.c_str(), "", chart.title.c_str());
    const double base = x0;
    for (size_t i = 0; i < chart.names.size(); ++i) {
      const double top = n - static_cast<double>(i) - 0.15, bottom = top - 0.7;
      const double pos = (top + bottom) / 2 / n;
      pls.col0(kText);
      pls.mtex("lv", 0.5, pos, 1.0, names[i].c_str());
      const double v = chart.values[i];
      if (!std::isfinite(v)) continue;
      PLFLT xs[4] = {base, v, v, base}, ys[4] = {bottom, bottom, top, top};
      pls.col0(series_colour(0));
      pls.fill(4, xs, ys);
    }
  });
}

void write_histogram(const HistogramChart& chart, const fs::path& stem) {
  if (chart.counts.empty() || chart.edges.size() != chart.counts.size() + 1) {
    raise("plot ", stem.string(), ": ", chart.edges.size(), " edges for ", chart.counts.size(),
          " bins");
  }
  uint64_t top = 1;
  for (uint64_t c : chart.counts) top = std::max(top, c);
  double x_lo = chart.edges.front(), x_hi = chart.edges.back();
  for (double m : chart.markers) {
    if (std::isfinite(m)) x_lo = std::min(x_lo, m), x_hi = std::max(x_hi, m);
  }
  render(stem, [&](plstream& pls) {
    pls.vpor(0.09, 0.97, 0.12, 0.92);
    const auto [x0, x1] = padded(x_lo, x_hi);
    pls.wind(x0, x1, 0, std::log10(static_cast<double>(top)) + 0.3);
    frame(pls, "bcnst", "bcnstlv");
    pls.lab(chart.x_label.c_str(), "count", chart.title.c_str());
    pls.col0(series_colour(0));
    for (size_t i = 0; i < chart.counts.size(); ++i) {
      if (chart.counts[i] == 0) continue;
      const double h = std::log10(static_cast<double>(chart.counts[i])) + 0.05;
      PLFLT xs[4] = {chart.edges[i], chart.edges[i + 1], chart.edges[i + 1], chart.edges[i]};
      PLFLT ys[4] = {0, 0, h, h};
      pls.fill(4, xs, ys);
    }
    std::vector<std::string> labels;
    if (!chart.markers.empty()) {
      pls.col0(series_colour(3));
      pls.width(2);
      pls.lsty(2);
      for (double m : chart.markers) {
        if (!std::isfinite(m)) continue;
        PLFLT xs[2] = {m, m}, ys[2] = {0, std::log10(static_cast<double>(top)) + 0.3};
        pls.line(2, xs, ys);
      }
      pls.lsty(1);
      pls.width(1);
      pls.col0(kText);
      pls.mtex("t", 0.8, 1.0, 1.0, ("dashed: " + chart.marker_label).c_str());
    }
  });
}

void write_box_chart(const BoxChart& chart, const fs::path& stem) {
  if (chart.boxes.empty()) raise("plot ", stem.string(), ": no channels");
  if (chart.markers.size() > 1 && chart.markers.size() != chart.boxes.size()) {
    raise("plot ", stem.string(), ": ", chart.markers.size(), " markers for ", chart.boxes.size(),
          " channels");
  }
  double lo = 0, hi = 0;
  for (const BoxChart::Box& b : chart.boxes) lo = std::min(lo, b.min), hi = std::max(hi, b.max);
  for (double m : chart.markers) lo = std::min(lo, -m), hi = std::max(hi, m);
  const double n = static_cast<double>(chart.boxes.size());
  render(stem, [&](plstream& pls) {
    pls.vpor(0.09, 0.97, 0.12, 0.92);
    const auto [y0, y1] = padded(lo, hi);
    pls.wind(-0.5, n - 0.5, y0, y1);
    frame(pls, "bcnst", "bcnstv");
    pls.lab(chart.x_label.c_str(), chart.y_label.c_str(), chart.title.c_str());
    const double half = 0.35;
    for (size_t i = 0; i < chart.boxes.size(); ++i) {
      const BoxChart::Box& b = chart.boxes[i];
      const double x = static_cast<double>(i);
      PLFLT bx[5] = {x - half, x + half, x + half, x - half, x - half};
      PLFLT by[5] = {b.q1, b.q1, b.q3, b.q3, b.q1};
      pls.col0(series_colour(0));
      pls.fill(4, bx, by);
      pls.col0(kText);
      PLFLT wx[2] = {x, x}, lo_y[2] = {b.min, b.q1}, hi_y[2] = {b.q3, b.max};
      pls.line(2, wx, lo_y);
      pls.line(2, wx, hi_y);
      PLFLT mx[2] = {x - half, x + half}, my[2] = {b.median, b.median};
      pls.line(2, mx, my);
      if (!chart.markers.empty()) {
        const double m = chart.markers.size() == 1 ? chart.markers[0] : chart.markers[i];
        pls.col0(series_colour(3));
        PLFLT tx[2] = {x - half, x + half}, up[2] = {m, m}, down[2] = {-m, -m};
        pls.line(2, tx, up);
        pls.line(2, tx, down);
      }
    }
    if (!chart.markers.empty()) {
      pls.col0(kText);
      pls.mtex("t", 0.8, 1.0, 1.0, ("red: " + chart.marker_label).c_str());
    }
  });
}

}  // namespace openbpu::debugger
