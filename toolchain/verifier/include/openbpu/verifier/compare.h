// hb_model_verifier's comparison of two runs of one tensor, element by element ("lines", as the
// original tool compares its one-value-per-line dumps). Two values agree when they differ by
// less than one unit of the last compared decimal: |a - b| < 10^-digits.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace openbpu::verifier {

struct Comparison {
  int64_t total = 0;      // total line num: the longer of the two
  int64_t miss = 0;       // line_miss: present on one side only (element counts differ)
  int64_t diff = 0;       // line_diff: |a - b| >= 10^-digits
  int64_t nan = 0;        // line_nan: NaN on either side
  double max_abs_diff = 0;  // over the lines present on both sides and not NaN
  int64_t first_mismatch = -1;
  int64_t mismatches() const { return miss + diff + nan; }
  bool passed() const { return mismatches() == 0; }
  double rate() const { return total == 0 ? 0.0 : static_cast<double>(mismatches()) / static_cast<double>(total); }
};

Comparison compare_values(const std::vector<double>& a, const std::vector<double>& b, int digits);

// The original's mismatch report: "mismatch line num", the line_miss / line_diff / line_nan
// counts between rules of asterisks, "total line num" and "mismatch rate" (one line each).
std::vector<std::string> mismatch_report(const Comparison& c);

}  // namespace openbpu::verifier
