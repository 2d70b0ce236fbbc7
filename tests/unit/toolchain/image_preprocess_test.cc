// Image preprocessing (calibration/image_preprocess.h): hb_eval_preprocess's recipes place the
// one bilinear resize as their mode says, and the stretch recipes give exactly what calibration
// reads from the same image with preprocess_on.
#include "openbpu/calibration/image_preprocess.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "openbpu/calibration/calibration_dataset.h"

namespace openbpu::calibration {
namespace {

namespace fs = std::filesystem;

// A 24-bit BMP of w x h with distinct, smooth-ish values per pixel and channel.
fs::path write_bmp(const fs::path& dir, int w, int h) {
  fs::create_directories(dir);
  const fs::path path = dir / ("image_" + std::to_string(w) + "x" + std::to_string(h) + ".bmp");
  const int row = (3 * w + 3) / 4 * 4;
  const uint32_t size = 54 + static_cast<uint32_t>(row * h);
  std::vector<uint8_t> b(size, 0);
  auto put = [&](size_t at, uint32_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) b[at + size_t(i)] = static_cast<uint8_t>(v >> (8 * i));
  };
  b[0] = 'B', b[1] = 'M';
  put(2, size, 4), put(10, 54, 4), put(14, 40, 4), put(18, uint32_t(w), 4), put(22, uint32_t(h), 4);
  put(26, 1, 2), put(28, 24, 2);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      uint8_t* p = &b[54 + size_t((h - 1 - y) * row + 3 * x)];  // bottom-up rows, BGR
      p[2] = uint8_t(7 * x + 3 * y), p[1] = uint8_t(11 * y + x * x),
      p[0] = uint8_t(200 - 5 * x + 13 * y);
    }
  }
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
  return path;
}

uint8_t at(const kernels::Tensor& t, const ImageRecipe& r, int64_t c, int64_t y, int64_t x) {
  const int64_t C = t.shape()[r.layout == config::Layout::kNchw ? 1 : 3];
  return t.data<uint8_t>()[r.layout == config::Layout::kNchw ? (c * r.height + y) * r.width + x
                                                             : (y * r.width + x) * C + c];
}

ImageRecipe stretch(int64_t h, int64_t w) {
  ImageRecipe r;
  r.height = h, r.width = w;
  return r;
}

const fs::path kDir = fs::temp_directory_path() / "openbpu_image_preprocess_test";

TEST(ImagePreprocess, StretchRecipesAreWhatCalibrationReads) {
  const fs::path image = write_bmp(kDir / "cal", 37, 23);
  int stretch_recipes = 0;
  for (const NamedRecipe& named : named_recipes()) {
    const ImageRecipe& r = named.recipe;
    if (r.mode != ResizeMode::kStretch) continue;
    ++stretch_recipes;
    CalibrationSource source;
    source.input_name = "x";
    source.dir = kDir / "cal";
    source.preprocess_on = true;
    source.type_train = r.colour;
    source.type_rt = r.colour;
    source.layout_train = r.layout;
    source.shape = r.layout == config::Layout::kNchw
                       ? std::vector<int64_t>{1, 3, r.height, r.width}
                       : std::vector<int64_t>{1, r.height, r.width, 3};
    const kernels::Tensor calibration = CalibrationDataset({source}).read_sample(0, 0);
    const kernels::Tensor tool = preprocess_image(image, r);
    ASSERT_EQ(calibration.shape(), tool.shape()) << named.name;
    EXPECT_EQ(std::memcmp(calibration.data<uint8_t>(), tool.data<uint8_t>(), tool.byte_size()), 0)
        << named.name;
  }
  EXPECT_GE(stretch_recipes, 2);
}

TEST(ImagePreprocess, EachModePlacesTheResizedImage) {
  const fs::path wide = write_bmp(kDir / "wide", 40, 20), tall = write_bmp(kDir / "tall", 12, 30);
  // Letterbox 40x20 into 16x16: 16x8 of content, rows 4..11, grey around.
  ImageRecipe letterbox = stretch(16, 16);
  letterbox.mode = ResizeMode::kLetterbox;
  letterbox.pad = 114;
  const kernels::Tensor lb = preprocess_image(wide, letterbox),
                        lb_content = preprocess_image(wide, stretch(8, 16));
  // Short side 20 -> 10 (40 -> 20), centre 8x8: columns 6..13, rows 1..8 of the 10x20 resize.
  ImageRecipe crop = stretch(8, 8);
  crop.mode = ResizeMode::kShortSideCrop;
  crop.short_side = 10;
  const kernels::Tensor cr = preprocess_image(wide, crop),
                        cr_content = preprocess_image(wide, stretch(10, 20));
  // Height 10 for 12x30: width ceil(10 * 12 / 30) = 4 of 9, the rest 0.
  ImageRecipe pad_right = stretch(10, 9);
  pad_right.mode = ResizeMode::kHeightPadRight;
  const kernels::Tensor pr = preprocess_image(tall, pad_right),
                        pr_content = preprocess_image(tall, stretch(10, 4));
  for (int64_t c = 0; c < 3; ++c) {
    for (int64_t y = 0; y < 16; ++y) {
      for (int64_t x = 0; x < 16; ++x) {
        const uint8_t want = y >= 4 && y < 12 ? at(lb_content, stretch(8, 16), c, y - 4, x) : 114;
        ASSERT_EQ(at(lb, letterbox, c, y, x), want) << "letterbox " << c << " " << y << " " << x;
      }
    }
    for (int64_t y = 0; y < 8; ++y) {
      for (int64_t x = 0; x < 8; ++x) {
        ASSERT_EQ(at(cr, crop, c, y, x), at(cr_content, stretch(10, 20), c, y + 1, x + 6))
            << "crop " << y << " " << x;
      }
    }
    for (int64_t y = 0; y < 10; ++y) {
      for (int64_t x = 0; x < 9; ++x) {
        const uint8_t want = x < 4 ? at(pr_content, stretch(10, 4), c, y, x) : 0;
        ASSERT_EQ(at(pr, pad_right, c, y, x), want) << "pad right " << y << " " << x;
      }
    }
  }
}

TEST(ImagePreprocess, ColourAndLayout) {
  const fs::path image = write_bmp(kDir / "colour", 9, 7);
  const kernels::Tensor rgb = preprocess_image(image, stretch(5, 6));
  ImageRecipe bgr_nhwc = stretch(5, 6);
  bgr_nhwc.colour = config::InputType::kBgr;
  bgr_nhwc.layout = config::Layout::kNhwc;
  const kernels::Tensor bgr = preprocess_image(image, bgr_nhwc);
  EXPECT_EQ(bgr.shape(), (std::vector<int64_t>{1, 5, 6, 3}));
  for (int64_t c = 0; c < 3; ++c) {
    for (int64_t y = 0; y < 5; ++y) {
      for (int64_t x = 0; x < 6; ++x)
        EXPECT_EQ(at(bgr, bgr_nhwc, 2 - c, y, x), at(rgb, stretch(5, 6), c, y, x));
    }
  }
  EXPECT_EQ(find_recipe("resnet18")->recipe.height, 224);
  EXPECT_EQ(find_recipe("resnet19"), nullptr);
}

}  // namespace
}  // namespace openbpu::calibration
