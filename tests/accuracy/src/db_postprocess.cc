#include "openbpu/accuracy/db_postprocess.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "openbpu/common/error.h"

namespace openbpu::accuracy {

namespace {

struct Point {
  double x, y;
};

// For each row of a component, its leftmost and rightmost pixel: the convex hull of these
// pixel centres is the hull of the whole component.
struct RowSpan {
  int64_t y, x_min, x_max;
};

// 8-connected components of `mask`, in raster order of their first pixel (iterative flood
// fill), each as the extreme pixels of its rows.
std::vector<std::vector<RowSpan>> connected_components(const std::vector<uint8_t>& mask,
                                                       int64_t height, int64_t width,
                                                       int64_t max_components) {
  std::vector<uint8_t> seen(mask.size(), 0);
  std::vector<int64_t> stack;
  std::vector<std::vector<RowSpan>> out;
  for (int64_t start = 0; start < height * width; ++start) {
    if (!mask[static_cast<size_t>(start)] || seen[static_cast<size_t>(start)]) continue;
    if (static_cast<int64_t>(out.size()) >= max_components) break;
    const int64_t first_row = start / width;
    std::vector<RowSpan> rows;
    seen[static_cast<size_t>(start)] = 1;
    stack.assign(1, start);
    while (!stack.empty()) {
      const int64_t at = stack.back();
      stack.pop_back();
      const int64_t y = at / width, x = at % width;
      // Rows only grow downwards from the first pixel (raster order), so y - first_row >= 0.
      const auto r = static_cast<size_t>(y - first_row);
      if (rows.size() <= r) rows.resize(r + 1, RowSpan{0, std::numeric_limits<int64_t>::max(), -1});
      rows[r].y = y;
      rows[r].x_min = std::min(rows[r].x_min, x);
      rows[r].x_max = std::max(rows[r].x_max, x);
      for (int64_t dy = -1; dy <= 1; ++dy) {
        for (int64_t dx = -1; dx <= 1; ++dx) {
          const int64_t ny = y + dy, nx = x + dx;
          if (ny < 0 || ny >= height || nx < 0 || nx >= width) continue;
          const auto n = static_cast<size_t>(ny * width + nx);
          if (mask[n] && !seen[n]) {
            seen[n] = 1;
            stack.push_back(static_cast<int64_t>(n));
          }
        }
      }
    }
    out.push_back(std::move(rows));
  }
  return out;
}

double cross(const Point& o, const Point& a, const Point& b) {
  return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
}

// Convex hull (Andrew's monotone chain), counter-clockwise, without collinear points.
std::vector<Point> convex_hull(std::vector<Point> points) {
  std::sort(points.begin(), points.end(),
            [](const Point& a, const Point& b) { return a.x != b.x ? a.x < b.x : a.y < b.y; });
  points.erase(std::unique(points.begin(), points.end(),
                           [](const Point& a, const Point& b) { return a.x == b.x && a.y == b.y; }),
               points.end());
  if (points.size() < 3) return points;
  std::vector<Point> hull(2 * points.size());
  size_t k = 0;
  for (const Point& p : points) {
    while (k >= 2 && cross(hull[k - 2], hull[k - 1], p) <= 0) --k;
    hull[k++] = p;
  }
  for (size_t i = points.size() - 1, lower = k + 1; i-- > 0;) {
    while (k >= lower && cross(hull[k - 2], hull[k - 1], points[i]) <= 0) --k;
    hull[k++] = points[i];
  }
  hull.resize(k - 1);
  return hull;
}

// A rectangle with unit axes u and v = (-u.y, u.x): the points c + a*u + b*v with a in
// [a0, a1], b in [b0, b1].
struct Rectangle {
  Point u{1, 0};
  double a0 = 0, a1 = 0, b0 = 0, b1 = 0;
  double length() const { return a1 - a0; }
  double thickness() const { return b1 - b0; }
};

// Minimum-area enclosing rectangle of a convex hull: one side lies on a hull edge (rotating
// calipers, tried edge by edge). Axis-aligned for fewer than three points.
Rectangle min_area_rectangle(const std::vector<Point>& hull) {
  std::vector<Point> directions;
  for (size_t i = 0; hull.size() >= 3 && i < hull.size(); ++i) {
    const Point& p = hull[i];
    const Point& q = hull[(i + 1) % hull.size()];
    const double n = std::hypot(q.x - p.x, q.y - p.y);
    directions.push_back({(q.x - p.x) / n, (q.y - p.y) / n});
  }
  if (directions.empty()) directions.push_back({1, 0});
  Rectangle best;
  double best_area = std::numeric_limits<double>::infinity();
  for (const Point& u : directions) {
    Rectangle r;
    r.u = u;
    r.a0 = r.b0 = std::numeric_limits<double>::infinity();
    r.a1 = r.b1 = -std::numeric_limits<double>::infinity();
    for (const Point& p : hull) {
      const double a = p.x * u.x + p.y * u.y;
      const double b = -p.x * u.y + p.y * u.x;
      r.a0 = std::min(r.a0, a), r.a1 = std::max(r.a1, a);
      r.b0 = std::min(r.b0, b), r.b1 = std::max(r.b1, b);
    }
    const double area = r.length() * r.thickness();
    if (area < best_area - 1e-9) best_area = area, best = r;
  }
  return best;
}

// Axis-aligned bounding box of the rectangle's corners.
Box bounding_box(const Rectangle& r) {
  Box box{std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity(),
          -std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(), 1};
  for (const double a : {r.a0, r.a1}) {
    for (const double b : {r.b0, r.b1}) {
      const double x = a * r.u.x - b * r.u.y, y = a * r.u.y + b * r.u.x;
      box.x0 = std::min(box.x0, x), box.x1 = std::max(box.x1, x);
      box.y0 = std::min(box.y0, y), box.y1 = std::max(box.y1, y);
    }
  }
  return box;
}

// Mean probability of the pixels whose centre lies in the rectangle grown by half a pixel
// (the pixels cv2.fillPoly marks for it).
double mean_inside(std::span<const float> probability, int64_t height, int64_t width,
                   const Rectangle& r) {
  const Box box = bounding_box(r);
  const auto x_first = static_cast<int64_t>(std::max(0.0, std::ceil(box.x0 - 0.5)));
  const auto x_last = static_cast<int64_t>(std::min(width - 1.0, std::floor(box.x1 + 0.5)));
  const auto y_first = static_cast<int64_t>(std::max(0.0, std::ceil(box.y0 - 0.5)));
  const auto y_last = static_cast<int64_t>(std::min(height - 1.0, std::floor(box.y1 + 0.5)));
  constexpr double kTolerance = 0.5 + 1e-9;
  double sum = 0;
  int64_t count = 0;
  for (int64_t y = y_first; y <= y_last; ++y) {
    for (int64_t x = x_first; x <= x_last; ++x) {
      const auto px = static_cast<double>(x), py = static_cast<double>(y);
      const double a = px * r.u.x + py * r.u.y, b = -px * r.u.y + py * r.u.x;
      if (a < r.a0 - kTolerance || a > r.a1 + kTolerance || b < r.b0 - kTolerance ||
          b > r.b1 + kTolerance) {
        continue;
      }
      sum += probability[static_cast<size_t>(y * width + x)];
      ++count;
    }
  }
  return count ? sum / static_cast<double>(count) : 0.0;
}

}  // namespace

std::vector<Box> db_boxes(std::span<const float> probability, int64_t height, int64_t width,
                          const DbOptions& options) {
  if (height <= 0 || width <= 0 || static_cast<int64_t>(probability.size()) != height * width) {
    raise("DB post-process: a ", height, "x", width, " map needs ", height * width, " values, got ",
          probability.size());
  }
  std::vector<uint8_t> mask(probability.size());
  for (size_t i = 0; i < probability.size(); ++i) mask[i] = probability[i] > options.threshold;
  std::vector<Box> boxes;
  for (const auto& rows : connected_components(mask, height, width, options.max_candidates)) {
    std::vector<Point> points;
    for (const RowSpan& row : rows) {
      if (row.x_max < 0) continue;
      points.push_back({static_cast<double>(row.x_min), static_cast<double>(row.y)});
      points.push_back({static_cast<double>(row.x_max), static_cast<double>(row.y)});
    }
    Rectangle r = min_area_rectangle(convex_hull(points));
    if (std::min(r.length(), r.thickness()) < options.min_size) continue;
    const double score = mean_inside(probability, height, width, r);
    if (score < options.box_threshold) continue;
    const double distance =
        r.length() * r.thickness() * options.unclip_ratio / (2 * (r.length() + r.thickness()));
    r.a0 -= distance, r.a1 += distance, r.b0 -= distance, r.b1 += distance;
    if (std::min(r.length(), r.thickness()) < options.min_size + 2) continue;
    Box box = bounding_box(r);
    box.x0 = std::clamp(box.x0, 0.0, static_cast<double>(width));
    box.x1 = std::clamp(box.x1, 0.0, static_cast<double>(width));
    box.y0 = std::clamp(box.y0, 0.0, static_cast<double>(height));
    box.y1 = std::clamp(box.y1, 0.0, static_cast<double>(height));
    box.score = score;
    boxes.push_back(box);
  }
  return boxes;
}

std::vector<Box> db_boxes(const kernels::Tensor& probability, const DbOptions& options) {
  const auto& shape = probability.shape();
  bool leading_ones = shape.size() >= 2;
  for (size_t i = 0; i + 2 < shape.size(); ++i) leading_ones = leading_ones && shape[i] == 1;
  if (!leading_ones || probability.dtype() != kernels::DataType::kFloat32) {
    raise("DB post-process: expected a float32 probability map [1, 1, H, W], got ",
          probability.describe());
  }
  return db_boxes(probability.values<float>(), shape[shape.size() - 2], shape.back(), options);
}

}  // namespace openbpu::accuracy
