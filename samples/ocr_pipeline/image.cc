#include "image.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace ocr {

namespace {

constexpr long kMaxSide = 32768;
constexpr long kMaxPixels = 1L << 28;

uint8_t to_byte(double v) {
  const double r = std::floor(v + 0.5);
  return static_cast<uint8_t>(r < 0 ? 0 : r > 255 ? 255 : r);
}

// The next number of a PNM header from `at` on (whitespace and # comments skipped); -1 when
// there is none.
long header_number(const std::string& file, size_t& at) {
  for (;;) {
    while (at < file.size() && std::isspace(static_cast<unsigned char>(file[at]))) ++at;
    if (at >= file.size() || file[at] != '#') break;
    while (at < file.size() && file[at] != '\n') ++at;
  }
  long v = -1;
  while (at < file.size() && std::isdigit(static_cast<unsigned char>(file[at])) && v < 1000000) {
    v = (v < 0 ? 0 : v * 10) + (file[at++] - '0');
  }
  return v;
}

// Solves the 8x8 system a x = b (Gaussian elimination, partial pivoting); false if singular.
bool solve8(std::array<std::array<double, 9>, 8>& m, std::array<double, 8>& x) {
  for (int col = 0; col < 8; ++col) {
    int pivot = col;
    for (int r = col + 1; r < 8; ++r) {
      if (std::fabs(m[r][col]) > std::fabs(m[pivot][col])) pivot = r;
    }
    if (std::fabs(m[pivot][col]) < 1e-12) return false;
    std::swap(m[col], m[pivot]);
    for (int r = 0; r < 8; ++r) {
      if (r == col) continue;
      const double f = m[r][col] / m[col][col];
      for (int c = col; c < 9; ++c) m[r][c] -= f * m[col][c];
    }
  }
  for (int i = 0; i < 8; ++i) x[i] = m[i][8] / m[i][i];
  return true;
}

// The homography taking the rectangle (0,0) (w,0) (w,h) (0,h) onto `box` (cv2's
// getPerspectiveTransform with the corners swapped: the inverse map warpPerspective uses).
bool rectangle_to_quad(double w, double h, const Quad& box, std::array<double, 8>& hom) {
  const Point from[4] = {{0, 0}, {w, 0}, {w, h}, {0, h}};
  std::array<std::array<double, 9>, 8> m{};
  for (int i = 0; i < 4; ++i) {
    const double u = from[i].x, v = from[i].y, x = box[i].x, y = box[i].y;
    m[2 * i] = {u, v, 1, 0, 0, 0, -u * x, -v * x, x};
    m[2 * i + 1] = {0, 0, 0, u, v, 1, -u * y, -v * y, y};
  }
  return solve8(m, hom);
}

// cv2's bicubic weights (a = -0.75) for a fractional position t in [0, 1).
std::array<double, 4> cubic_weights(double t) {
  constexpr double a = -0.75;
  std::array<double, 4> w;
  const double t1 = t + 1, t2 = 1 - t;
  w[0] = ((a * t1 - 5 * a) * t1 + 8 * a) * t1 - 4 * a;
  w[1] = ((a + 2) * t - (a + 3)) * t * t + 1;
  w[2] = ((a + 2) * t2 - (a + 3)) * t2 * t2 + 1;
  w[3] = 1 - w[0] - w[1] - w[2];
  return w;
}

double distance(const Point& a, const Point& b) {
  return std::sqrt((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y));
}

}  // namespace

Image read_image(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open '" + path + "'");
  const std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw std::runtime_error("cannot read '" + path + "'");
  const bool ppm = file.compare(0, 2, "P6") == 0, pgm = file.compare(0, 2, "P5") == 0;
  size_t at = 2;
  long width = -1, height = -1, maxval = -1;
  if (ppm || pgm) {
    width = header_number(file, at);
    height = header_number(file, at);
    maxval = header_number(file, at);
  }
  if (width <= 0 || height <= 0 || maxval != 255 || at >= file.size() ||
      !std::isspace(static_cast<unsigned char>(file[at]))) {
    throw std::runtime_error("'" + path +
                             "' is not a binary 8-bit PPM (P6) or PGM (P5) image, maxval 255");
  }
  if (width > kMaxSide || height > kMaxSide || width * height > kMaxPixels) {
    throw std::runtime_error("'" + path + "': " + std::to_string(width) + "x" +
                             std::to_string(height) + " is larger than this program reads");
  }
  const size_t pixels = static_cast<size_t>(width) * static_cast<size_t>(height);
  const size_t channels = ppm ? 3 : 1;
  if (file.size() - at - 1 < pixels * channels) {
    throw std::runtime_error("'" + path + "': truncated image (" + std::to_string(width) + "x" +
                             std::to_string(height) + " needs " +
                             std::to_string(pixels * channels) + " bytes of pixels)");
  }
  Image image{static_cast<int>(width), static_cast<int>(height), std::vector<uint8_t>(pixels * 3)};
  const auto* data = reinterpret_cast<const uint8_t*>(file.data() + at + 1);
  for (size_t i = 0; i < pixels * 3; ++i) image.rgb[i] = data[ppm ? i : i / 3];
  return image;
}

Image resize_bilinear(const Image& image, int width, int height) {
  if (width == image.width && height == image.height) return image;
  Image out{width, height, std::vector<uint8_t>(static_cast<size_t>(width) * height * 3)};
  const double sy = static_cast<double>(image.height) / height;
  const double sx = static_cast<double>(image.width) / width;
  for (int y = 0; y < height; ++y) {
    const double fy = std::min(std::max((y + 0.5) * sy - 0.5, 0.0), image.height - 1.0);
    const int y0 = static_cast<int>(fy), y1 = std::min(y0 + 1, image.height - 1);
    const double wy = fy - y0;
    for (int x = 0; x < width; ++x) {
      const double fx = std::min(std::max((x + 0.5) * sx - 0.5, 0.0), image.width - 1.0);
      const int x0 = static_cast<int>(fx), x1 = std::min(x0 + 1, image.width - 1);
      const double wx = fx - x0;
      for (int c = 0; c < 3; ++c) {
        const double top = (1 - wx) * image.at(x0, y0, c) + wx * image.at(x1, y0, c);
        const double bottom = (1 - wx) * image.at(x0, y1, c) + wx * image.at(x1, y1, c);
        out.rgb[(static_cast<size_t>(y) * width + x) * 3 + c] =
            to_byte((1 - wy) * top + wy * bottom);
      }
    }
  }
  return out;
}

Image rotate_180(const Image& image) {
  Image out = image;
  const size_t pixels = static_cast<size_t>(image.width) * image.height;
  for (size_t i = 0; i < pixels; ++i) {
    std::copy_n(&image.rgb[(pixels - 1 - i) * 3], 3, &out.rgb[i * 3]);
  }
  return out;
}

Image rotate_90_counter_clockwise(const Image& image) {
  Image out{image.height, image.width, std::vector<uint8_t>(image.rgb.size())};
  for (int y = 0; y < out.height; ++y) {
    for (int x = 0; x < out.width; ++x) {
      for (int c = 0; c < 3; ++c) {
        out.rgb[(static_cast<size_t>(y) * out.width + x) * 3 + c] =
            image.at(image.width - 1 - y, x, c);
      }
    }
  }
  return out;
}

Image crop_text_box(const Image& image, const Quad& box) {
  const int width = static_cast<int>(std::max(distance(box[0], box[1]), distance(box[3], box[2])));
  const int height = static_cast<int>(std::max(distance(box[0], box[3]), distance(box[1], box[2])));
  std::array<double, 8> h{};
  if (width <= 0 || height <= 0 || !rectangle_to_quad(width, height, box, h)) return {};
  Image out{width, height, std::vector<uint8_t>(static_cast<size_t>(width) * height * 3)};
  const auto clamp_x = [&](int x) { return std::min(std::max(x, 0), image.width - 1); };
  const auto clamp_y = [&](int y) { return std::min(std::max(y, 0), image.height - 1); };
  for (int v = 0; v < height; ++v) {
    for (int u = 0; u < width; ++u) {
      const double d = h[6] * u + h[7] * v + 1;
      double sx = (h[0] * u + h[1] * v + h[2]) / d, sy = (h[3] * u + h[4] * v + h[5]) / d;
      if (!std::isfinite(sx) || !std::isfinite(sy)) sx = sy = 0;  // on the horizon line
      const double fx = std::floor(sx), fy = std::floor(sy);
      const std::array<double, 4> wx = cubic_weights(sx - fx), wy = cubic_weights(sy - fy);
      // Far outside the image every tap is an edge pixel; keep the index arithmetic in range.
      const int x0 = static_cast<int>(std::min(std::max(fx, -4.0), image.width + 4.0)) - 1;
      const int y0 = static_cast<int>(std::min(std::max(fy, -4.0), image.height + 4.0)) - 1;
      for (int c = 0; c < 3; ++c) {
        double sum = 0;
        for (int j = 0; j < 4; ++j) {
          double row = 0;
          for (int i = 0; i < 4; ++i) row += wx[i] * image.at(clamp_x(x0 + i), clamp_y(y0 + j), c);
          sum += wy[j] * row;
        }
        out.rgb[(static_cast<size_t>(v) * width + u) * 3 + c] = to_byte(sum);
      }
    }
  }
  return 2 * out.height >= 3 * out.width ? rotate_90_counter_clockwise(out) : out;
}

}  // namespace ocr
