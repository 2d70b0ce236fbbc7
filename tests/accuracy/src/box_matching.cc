#include "openbpu/accuracy/box_matching.h"

#include <algorithm>
#include <tuple>

namespace openbpu::accuracy {

double intersection_over_union(const Box& a, const Box& b) {
  const double w = std::min(a.x1, b.x1) - std::max(a.x0, b.x0);
  const double h = std::min(a.y1, b.y1) - std::max(a.y0, b.y0);
  if (w <= 0 || h <= 0) return 0;
  const double inter = w * h;
  const double uni = a.area() + b.area() - inter;
  return uni > 0 ? inter / uni : 0;
}

double MatchCount::recall() const {
  return reference == 0 ? 1.0 : static_cast<double>(matched) / static_cast<double>(reference);
}

double MatchCount::precision() const {
  return predicted == 0 ? 1.0 : static_cast<double>(matched) / static_cast<double>(predicted);
}

MatchCount& MatchCount::operator+=(const MatchCount& other) {
  matched += other.matched;
  reference += other.reference;
  predicted += other.predicted;
  return *this;
}

MatchCount match_boxes(const std::vector<Box>& reference, const std::vector<Box>& predicted,
                       double min_iou) {
  std::vector<std::tuple<double, size_t, size_t>> pairs;
  for (size_t r = 0; r < reference.size(); ++r) {
    for (size_t p = 0; p < predicted.size(); ++p) {
      const double iou = intersection_over_union(reference[r], predicted[p]);
      if (iou >= min_iou && iou > 0) pairs.emplace_back(iou, r, p);
    }
  }
  // Decreasing IoU; index order breaks ties so that the result does not depend on the sort.
  std::sort(pairs.begin(), pairs.end(), [](const auto& a, const auto& b) {
    if (std::get<0>(a) != std::get<0>(b)) return std::get<0>(a) > std::get<0>(b);
    return std::tie(std::get<1>(a), std::get<2>(a)) < std::tie(std::get<1>(b), std::get<2>(b));
  });
  std::vector<bool> reference_used(reference.size()), predicted_used(predicted.size());
  MatchCount count;
  count.reference = static_cast<int64_t>(reference.size());
  count.predicted = static_cast<int64_t>(predicted.size());
  for (const auto& [iou, r, p] : pairs) {
    if (reference_used[r] || predicted_used[p]) continue;
    reference_used[r] = predicted_used[p] = true;
    ++count.matched;
  }
  return count;
}

}  // namespace openbpu::accuracy
