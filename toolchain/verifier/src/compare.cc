#include "openbpu/verifier/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace openbpu::verifier {

Comparison compare_values(const std::vector<double>& a, const std::vector<double>& b, int digits) {
  Comparison c;
  const size_t common = std::min(a.size(), b.size());
  c.total = static_cast<int64_t>(std::max(a.size(), b.size()));
  c.miss = c.total - static_cast<int64_t>(common);
  const double tolerance = std::pow(10.0, -digits);
  for (size_t i = 0; i < common; ++i) {
    bool bad = false;
    if (std::isnan(a[i]) || std::isnan(b[i])) {
      ++c.nan;
      bad = true;
    } else {
      const double d = std::fabs(a[i] - b[i]);  // inf - inf is NaN: unequal infinities count as a diff
      if (!(d < tolerance) && a[i] != b[i]) {
        ++c.diff;
        bad = true;
      }
      if (std::isfinite(d)) c.max_abs_diff = std::max(c.max_abs_diff, d);
    }
    if (bad && c.first_mismatch < 0) c.first_mismatch = static_cast<int64_t>(i);
  }
  if (c.miss > 0 && c.first_mismatch < 0) c.first_mismatch = static_cast<int64_t>(common);
  return c;
}

std::vector<std::string> mismatch_report(const Comparison& c) {
  const std::string rule(44, '*');
  char rate[64];
  std::snprintf(rate, sizeof rate, "%.6f", c.rate());
  return {"mismatch line num: " + std::to_string(c.mismatches()),
          rule,
          "mismatch.line_miss num: " + std::to_string(c.miss),
          "mismatch.line_diff num: " + std::to_string(c.diff),
          "mismatch.line_nan num: " + std::to_string(c.nan),
          rule,
          "total line num: " + std::to_string(c.total),
          std::string("mismatch rate: ") + rate};
}

}  // namespace openbpu::verifier
