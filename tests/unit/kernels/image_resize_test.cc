// The resizer of hbDNNRoiInfer (kernels/image_resize.h): ROI crop and corner-aligned bilinear
// resize of NV12 / Y images.
#include "openbpu/kernels/image_resize.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace openbpu::kernels {
namespace {

// An NV12 image of w × h in rows of `stride` bytes: Y = f(x, y), U = g(x, y), V = 255 - g(x, y).
struct Nv12 {
  int64_t w, h, stride;
  std::vector<uint8_t> y, uv;
  template <typename F, typename G>
  Nv12(int64_t w_, int64_t h_, int64_t stride_, F f, G g) : w(w_), h(h_), stride(stride_), y(size_t(stride_ * h_), 0xEE), uv(size_t(stride_ * h_ / 2), 0xEE) {
    for (int64_t r = 0; r < h; ++r)
      for (int64_t c = 0; c < w; ++c) y[size_t(r * stride + c)] = static_cast<uint8_t>(f(c, r));
    for (int64_t r = 0; r < h / 2; ++r)
      for (int64_t c = 0; c < w / 2; ++c) {
        uv[size_t(r * stride + 2 * c)] = static_cast<uint8_t>(g(c, r));
        uv[size_t(r * stride + 2 * c + 1)] = static_cast<uint8_t>(255 - g(c, r));
      }
  }
  ImagePlane y_plane() const { return {y.data(), stride}; }
  ImagePlane uv_plane() const { return {uv.data(), stride}; }
};

TEST(ImageResize, RoiOfTheOutputSizeIsCopiedExactly) {
  const Nv12 img(40, 30, 48, [](int64_t x, int64_t y) { return x * 5 + y * 3; }, [](int64_t x, int64_t y) { return x * 7 + y; });
  const ImageRoi roi{6, 4, 6 + 16 - 1, 4 + 12 - 1};
  std::vector<uint8_t> out(16 * 12 * 3 / 2);
  resize_image_roi(img.y_plane(), img.uv_plane(), roi, 16, 12, out.data());
  for (int64_t r = 0; r < 12; ++r)
    for (int64_t c = 0; c < 16; ++c) ASSERT_EQ(out[size_t(r * 16 + c)], img.y[size_t((r + 4) * 48 + c + 6)]) << r << "," << c;
  const uint8_t* uv = out.data() + 16 * 12;
  for (int64_t r = 0; r < 6; ++r)
    for (int64_t c = 0; c < 16; ++c) ASSERT_EQ(uv[r * 16 + c], img.uv[size_t((r + 2) * 48 + c + 6)]) << r << "," << c;
}

TEST(ImageResize, CornersMapToCornersWithRoundedBilinearBlending) {
  // One row pair: [0, 100] to 3 columns samples 0, 0.5, 1; [0, 1] rounds half up.
  const std::vector<uint8_t> a{0, 100, 0, 100};
  std::vector<uint8_t> out(3 * 2);
  resize_image_roi({a.data(), 2}, {}, {0, 0, 1, 1}, 3, 2, out.data());
  EXPECT_EQ(out, (std::vector<uint8_t>{0, 50, 100, 0, 50, 100}));
  const std::vector<uint8_t> b{0, 1, 0, 1};
  resize_image_roi({b.data(), 2}, {}, {0, 0, 1, 1}, 3, 2, out.data());
  EXPECT_EQ(out, (std::vector<uint8_t>{0, 1, 1, 0, 1, 1}));
  // Downscaling 4 → 2 keeps the end columns; 2 rows → 3 rows blends them.
  const std::vector<uint8_t> c{10, 20, 30, 40, 50, 60, 70, 80};
  std::vector<uint8_t> down(2 * 3);
  resize_image_roi({c.data(), 4}, {}, {0, 0, 3, 1}, 2, 3, down.data());
  EXPECT_EQ(down, (std::vector<uint8_t>{10, 40, 30, 60, 50, 80}));
}

TEST(ImageResize, ChromaComesFromTheRoisChromaRectangle) {
  // U = 10 · chroma column + chroma row, V = 255 − U; ROI at luma (4, 2) is chroma (2, 1).
  const Nv12 img(16, 8, 16, [](int64_t, int64_t) { return 0; }, [](int64_t x, int64_t y) { return 10 * x + y; });
  std::vector<uint8_t> out(4 * 4 * 3 / 2);
  resize_image_roi(img.y_plane(), img.uv_plane(), {4, 2, 7, 5}, 4, 4, out.data());
  const uint8_t* uv = out.data() + 16;
  EXPECT_EQ(uv[0], 21);  // U at chroma (2, 1)
  EXPECT_EQ(uv[1], 255 - 21);
  EXPECT_EQ(uv[2], 31);  // U at chroma (3, 1)
  EXPECT_EQ(uv[4], 22);  // next row: chroma (2, 2)
  EXPECT_EQ(uv[7], 255 - 32);
}

TEST(ImageResize, ConstantImagesStayConstantAtAnyScale) {
  const Nv12 img(64, 64, 64, [](int64_t, int64_t) { return 77; }, [](int64_t, int64_t) { return 140; });
  for (const auto& [w, h] : std::vector<std::pair<int64_t, int64_t>>{{2, 2}, {18, 10}, {64, 32}, {128, 96}}) {
    std::vector<uint8_t> out(size_t(w * h * 3 / 2));
    resize_image_roi(img.y_plane(), img.uv_plane(), {2, 6, 61, 41}, w, h, out.data());
    for (int64_t i = 0; i < w * h; ++i) ASSERT_EQ(out[size_t(i)], 77) << w << "x" << h << " at " << i;
    for (int64_t i = 0; i < w * h / 2; ++i) ASSERT_EQ(out[size_t(w * h + i)], i % 2 ? 115 : 140) << w << "x" << h << " at " << i;
  }
}

}  // namespace
}  // namespace openbpu::kernels
