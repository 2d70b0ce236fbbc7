// The accuracy debugger's figures, drawn by PLplot (Debian libplplot, cairo driver) as
// `<stem>.png` and `<stem>.svg`, each written atomically. Non-finite values are left out.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace openbpu::debugger {

// Lines over a shared x axis; with `x_names` (one per integer x from 0), the axis is labelled
// with them (every n-th when there are many).
struct LineChart {
  std::string title, x_label, y_label;
  struct Series {
    std::string label;
    std::vector<double> y;  // at x = 0, 1, ...
  };
  std::vector<Series> series;
  std::vector<std::string> x_names;
};
void write_line_chart(const LineChart& chart, const std::filesystem::path& stem);

// Horizontal bars, the first at the top, each labelled with its name and value.
struct BarChart {
  std::string title, value_label;
  std::vector<std::string> names;
  std::vector<double> values;
};
void write_bar_chart(const BarChart& chart, const std::filesystem::path& stem);

// A histogram with a logarithmic count axis and vertical markers (e.g. ± threshold).
struct HistogramChart {
  std::string title, x_label;
  std::vector<double> edges;     // bins + 1, increasing
  std::vector<uint64_t> counts;  // bins
  std::vector<double> markers;
  std::string marker_label;
};
void write_histogram(const HistogramChart& chart, const std::filesystem::path& stem);

// One box (quartiles, median line, whiskers to min and max) per channel, with an optional
// ± marker per channel (e.g. its threshold).
struct BoxChart {
  std::string title, x_label, y_label;
  struct Box {
    double min = 0, q1 = 0, median = 0, q3 = 0, max = 0;
  };
  std::vector<Box> boxes;
  std::vector<double> markers;  // empty, one for all, or one per box
  std::string marker_label;
};
void write_box_chart(const BoxChart& chart, const std::filesystem::path& stem);

}  // namespace openbpu::debugger
