#include "openbpu/accuracy/accuracy_bars.h"

#include <algorithm>

#include "openbpu/common/error.h"

namespace openbpu::accuracy {

namespace {

double metric(const nlohmann::json& report, const char* pointer) {
  const nlohmann::json::json_pointer p(pointer);
  if (!report.contains(p)) raise("accuracy report has no ", pointer);
  return report.at(p).get<double>();
}

void require_kind(const std::string& actual, const char* option, const char* kind) {
  if (actual != kind) raise(option, " applies to --kind ", kind, ", not ", actual);
}

}  // namespace

void require_bars_apply(const std::string& kind, const AccuracyBars& bars) {
  if (bars.min_text_equal) require_kind(kind, "--min-text-equal", "rec");
  if (bars.max_cer_delta) require_kind(kind, "--max-cer-delta", "rec");
  if (bars.min_top1_agree) require_kind(kind, "--min-top1-agree", "cls");
  if (bars.max_box_delta) require_kind(kind, "--max-box-delta", "det");
}

std::vector<BarCheck> check_bars(const nlohmann::json& report, const AccuracyBars& bars) {
  require_bars_apply(report.value("kind", ""), bars);
  std::vector<BarCheck> checks;
  const auto at_least = [&](const char* option, double value, double limit) {
    checks.push_back({option, value, limit, value >= limit});
  };
  const auto at_most = [&](const char* option, double value, double limit) {
    checks.push_back({option, value, limit, value <= limit});
  };
  if (bars.min_cosine)
    at_least("--min-cosine", metric(report, "/output_cosine/mean"), *bars.min_cosine);
  if (bars.min_text_equal) {
    at_least("--min-text-equal", metric(report, "/agreement/text_equal"), *bars.min_text_equal);
  }
  if (bars.max_cer_delta) {
    at_most("--max-cer-delta", metric(report, "/candidate/cer") - metric(report, "/float/cer"),
            *bars.max_cer_delta);
  }
  if (bars.min_top1_agree) {
    at_least("--min-top1-agree", metric(report, "/agreement/top1_equal"), *bars.min_top1_agree);
  }
  if (bars.max_box_delta) {
    const double recall_loss =
        metric(report, "/float/recall") - metric(report, "/candidate/recall");
    const double precision_loss =
        metric(report, "/float/precision") - metric(report, "/candidate/precision");
    at_most("--max-box-delta", std::max(recall_loss, precision_loss), *bars.max_box_delta);
  }
  return checks;
}

}  // namespace openbpu::accuracy
