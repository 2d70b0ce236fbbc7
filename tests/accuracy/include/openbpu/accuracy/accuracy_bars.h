// Pass/fail bars on an evaluation report (see ocr_evaluation.h). Rates are in percent; a
// "delta" is the float model's metric minus the candidate's, i.e. the loss (a candidate better
// than the float model has a negative delta and meets any bar).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace openbpu::accuracy {

struct AccuracyBars {
  std::optional<double> min_cosine;      // output cosine, mean over samples
  std::optional<double> min_text_equal;  // rec: % of lines decoded as the float model does
  std::optional<double> max_cer_delta;   // rec: candidate CER - float CER, points
  std::optional<double> min_top1_agree;  // cls: % of samples with the float model's top-1
  std::optional<double> max_box_delta;   // det: float - candidate recall and precision, points
};

struct BarCheck {
  std::string option;  // e.g. "--min-cosine"
  double value = 0;
  double limit = 0;
  bool met = false;
};

// Throws Error for a bar set that does not apply to `kind` ("det", "rec", "cls"), e.g.
// --min-text-equal on det; lets a tool refuse its arguments before running anything.
void require_bars_apply(const std::string& kind, const AccuracyBars& bars);

// Checks the bars that are set. Throws Error for a bar that does not apply to the report's
// kind (e.g. --min-text-equal on det).
std::vector<BarCheck> check_bars(const nlohmann::json& report, const AccuracyBars& bars);

}  // namespace openbpu::accuracy
