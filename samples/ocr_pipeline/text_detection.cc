#include "text_detection.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ocr {

namespace {

// The pixels of each 8-connected component of `mask` as the extreme pixels of each of its rows
// (their convex hull is the component's), components in raster order of their first pixel.
std::vector<std::vector<Point>> components(const std::vector<uint8_t>& mask, int height, int width,
                                           int max_components) {
  std::vector<uint8_t> seen(mask.size(), 0);
  std::vector<size_t> stack;
  std::vector<std::vector<Point>> out;
  for (size_t start = 0; start < mask.size(); ++start) {
    if (!mask[start] || seen[start]) continue;
    if (static_cast<int>(out.size()) >= max_components) break;
    const int first_row = static_cast<int>(start / static_cast<size_t>(width));
    std::vector<std::pair<int, int>> rows;  // per row from first_row: x_min, x_max
    seen[start] = 1;
    stack.assign(1, start);
    while (!stack.empty()) {
      const size_t at = stack.back();
      stack.pop_back();
      const int y = static_cast<int>(at / static_cast<size_t>(width));
      const int x = static_cast<int>(at % static_cast<size_t>(width));
      const auto r = static_cast<size_t>(y - first_row);
      if (rows.size() <= r) rows.resize(r + 1, {std::numeric_limits<int>::max(), -1});
      rows[r] = {std::min(rows[r].first, x), std::max(rows[r].second, x)};
      for (int ny = std::max(y - 1, 0); ny <= std::min(y + 1, height - 1); ++ny) {
        for (int nx = std::max(x - 1, 0); nx <= std::min(x + 1, width - 1); ++nx) {
          const size_t n =
              static_cast<size_t>(ny) * static_cast<size_t>(width) + static_cast<size_t>(nx);
          if (mask[n] && !seen[n]) {
            seen[n] = 1;
            stack.push_back(n);
          }
        }
      }
    }
    std::vector<Point> points;
    for (size_t r = 0; r < rows.size(); ++r) {
      if (rows[r].second < 0) continue;
      const double y = first_row + static_cast<double>(r);
      points.push_back({static_cast<double>(rows[r].first), y});
      if (rows[r].second != rows[r].first)
        points.push_back({static_cast<double>(rows[r].second), y});
    }
    out.push_back(std::move(points));
  }
  return out;
}

double cross(const Point& o, const Point& a, const Point& b) {
  return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
}

// Andrew's monotone chain; counter-clockwise, no collinear points.
std::vector<Point> convex_hull(std::vector<Point> points) {
  std::sort(points.begin(), points.end(),
            [](const Point& a, const Point& b) { return a.x != b.x ? a.x < b.x : a.y < b.y; });
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

// The points a * u + b * v, v = (-u.y, u.x), for a in [a0, a1] and b in [b0, b1].
struct Rectangle {
  Point u{1, 0};
  double a0 = 0, a1 = 0, b0 = 0, b1 = 0;
  double length() const { return a1 - a0; }
  double thickness() const { return b1 - b0; }
  Point corner(double a, double b) const { return {a * u.x - b * u.y, a * u.y + b * u.x}; }
};

// cv2.minAreaRect: one side of the minimum-area rectangle lies on a hull edge.
Rectangle min_area_rectangle(const std::vector<Point>& hull) {
  std::vector<Point> directions;
  for (size_t i = 0; hull.size() >= 3 && i < hull.size(); ++i) {
    const Point& p = hull[i];
    const Point& q = hull[(i + 1) % hull.size()];
    const double n = std::sqrt((q.x - p.x) * (q.x - p.x) + (q.y - p.y) * (q.y - p.y));
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
      const double a = p.x * u.x + p.y * u.y, b = -p.x * u.y + p.y * u.x;
      r.a0 = std::min(r.a0, a), r.a1 = std::max(r.a1, a);
      r.b0 = std::min(r.b0, b), r.b1 = std::max(r.b1, b);
    }
    const double area = r.length() * r.thickness();
    if (area < best_area - 1e-9) best_area = area, best = r;
  }
  return best;
}

// get_mini_boxes' corner order: sorted by x, then the upper of the two left ones first, the
// upper of the two right ones second, then the lower right, the lower left.
Quad mini_box(const Rectangle& r) {
  std::array<Point, 4> p = {r.corner(r.a0, r.b0), r.corner(r.a1, r.b0), r.corner(r.a1, r.b1),
                            r.corner(r.a0, r.b1)};
  std::stable_sort(p.begin(), p.end(), [](const Point& a, const Point& b) { return a.x < b.x; });
  const bool left_down = p[1].y > p[0].y, right_down = p[3].y > p[2].y;
  return {left_down ? p[0] : p[1], right_down ? p[2] : p[3], right_down ? p[3] : p[2],
          left_down ? p[1] : p[0]};
}

// box_score_fast: the mean of the map over the pixels of the box's bounding rectangle that lie
// inside or on the polygon of its corners truncated to whole pixels.
double box_score(const std::vector<float>& map, int width, int height, const Quad& box) {
  double x_lo = box[0].x, x_hi = box[0].x, y_lo = box[0].y, y_hi = box[0].y;
  for (const Point& p : box) {
    x_lo = std::min(x_lo, p.x), x_hi = std::max(x_hi, p.x);
    y_lo = std::min(y_lo, p.y), y_hi = std::max(y_hi, p.y);
  }
  const auto clip = [](double v, int hi) {
    return static_cast<int>(std::min(std::max(v, 0.0), hi * 1.0));
  };
  const int x_min = clip(std::floor(x_lo), width - 1), x_max = clip(std::ceil(x_hi), width - 1);
  const int y_min = clip(std::floor(y_lo), height - 1), y_max = clip(std::ceil(y_hi), height - 1);
  Quad poly;
  for (size_t i = 0; i < 4; ++i) {
    poly[i] = {std::trunc(box[i].x - x_min), std::trunc(box[i].y - y_min)};
  }
  double sum = 0;
  long count = 0;
  for (int y = y_min; y <= y_max; ++y) {
    for (int x = x_min; x <= x_max; ++x) {
      const Point p{static_cast<double>(x - x_min), static_cast<double>(y - y_min)};
      bool any_negative = false, any_positive = false;
      for (size_t i = 0; i < 4; ++i) {
        const double c = cross(poly[i], poly[(i + 1) % 4], p);
        any_negative = any_negative || c < 0;
        any_positive = any_positive || c > 0;
      }
      if (any_negative && any_positive) continue;
      sum += map[static_cast<size_t>(y) * static_cast<size_t>(width) + static_cast<size_t>(x)];
      ++count;
    }
  }
  return count ? sum / static_cast<double>(count) : 0.0;
}

// order_points_clockwise: the smallest x + y first, the largest third; of the other two the
// smaller y - x second.
Quad order_clockwise(const Quad& q) {
  size_t lo = 0, hi = 0;
  for (size_t i = 1; i < 4; ++i) {
    if (q[i].x + q[i].y < q[lo].x + q[lo].y) lo = i;
    if (q[i].x + q[i].y > q[hi].x + q[hi].y) hi = i;
  }
  if (lo == hi) hi = lo == 0 ? 1 : 0;
  std::vector<size_t> rest;
  for (size_t i = 0; i < 4; ++i) {
    if (i != lo && i != hi) rest.push_back(i);
  }
  const bool first = q[rest[0]].y - q[rest[0]].x <= q[rest[1]].y - q[rest[1]].x;
  return {q[lo], q[first ? rest[0] : rest[1]], q[hi], q[first ? rest[1] : rest[0]]};
}

double side(const Point& a, const Point& b) {
  return std::sqrt((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y));
}

// Scaled to the image, rounded, clipped, ordered and checked (step 5 of the header); false if
// the box is dropped.
bool to_image_box(const Quad& map_box, int map_width, int map_height, int image_width,
                  int image_height, Quad& out) {
  Quad q;
  for (size_t i = 0; i < 4; ++i) {
    q[i].x = std::min(std::max(std::nearbyint(map_box[i].x / map_width * image_width), 0.0),
                      image_width * 1.0);
    q[i].y = std::min(std::max(std::nearbyint(map_box[i].y / map_height * image_height), 0.0),
                      image_height * 1.0);
  }
  out = order_clockwise(q);
  for (Point& p : out) {
    p.x = std::min(std::max(p.x, 0.0), image_width - 1.0);
    p.y = std::min(std::max(p.y, 0.0), image_height - 1.0);
  }
  return static_cast<int>(side(out[0], out[1])) > 3 && static_cast<int>(side(out[0], out[3])) > 3;
}

// sorted_boxes: by the first corner's (y, x), then neighbours less than 10 pixels apart in y
// swapped into x order.
void sort_boxes(std::vector<TextBox>& boxes) {
  std::stable_sort(boxes.begin(), boxes.end(), [](const TextBox& a, const TextBox& b) {
    const Point &p = a.corners[0], &q = b.corners[0];
    return p.y != q.y ? p.y < q.y : p.x < q.x;
  });
  for (size_t i = 0; i + 1 < boxes.size(); ++i) {
    for (size_t j = i + 1; j-- > 0;) {
      const Point &p = boxes[j].corners[0], &q = boxes[j + 1].corners[0];
      if (!(std::fabs(q.y - p.y) < 10 && q.x < p.x)) break;
      std::swap(boxes[j], boxes[j + 1]);
    }
  }
}

}  // namespace

std::vector<TextBox> detect_text_boxes(const std::vector<float>& map, int map_width, int map_height,
                                       int image_width, int image_height,
                                       const DbOptions& options) {
  std::vector<uint8_t> mask(map.size());
  for (size_t i = 0; i < map.size(); ++i) mask[i] = map[i] > options.threshold;
  std::vector<TextBox> boxes;
  for (const auto& points : components(mask, map_height, map_width, options.max_candidates)) {
    Rectangle r = min_area_rectangle(convex_hull(points));
    if (std::min(r.length(), r.thickness()) < options.min_size) continue;
    const double score = box_score(map, map_width, map_height, mini_box(r));
    if (score < options.box_threshold) continue;
    const double d =
        r.length() * r.thickness() * options.unclip_ratio / (2 * (r.length() + r.thickness()));
    r.a0 -= d, r.a1 += d, r.b0 -= d, r.b1 += d;
    if (std::min(r.length(), r.thickness()) < options.min_size + 2) continue;
    TextBox box;
    box.score = score;
    if (to_image_box(mini_box(r), map_width, map_height, image_width, image_height, box.corners)) {
      boxes.push_back(box);
    }
  }
  sort_boxes(boxes);
  return boxes;
}

}  // namespace ocr
