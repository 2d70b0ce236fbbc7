// The calibration data loader: file kinds, conversion to the model input, clear errors, dump.
#include "openbpu/calibration/calibration_dataset.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "openbpu/common/error.h"
#include "openbpu/common/npy.h"

namespace openbpu::calibration {
namespace {

namespace fs = std::filesystem;
using config::InputType;
using config::Layout;
using kernels::DataType;

class CalibrationDatasetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("openbpu_cal_" +
             std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path dir(const std::string& name) {
    fs::create_directories(root_ / name);
    return root_ / name;
  }
  static void write(const fs::path& p, const std::string& bytes) {
    std::ofstream(p, std::ios::binary) << bytes;
  }
  static std::string bytes_of(const std::vector<float>& v) {
    return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
  }
  static CalibrationSource featuremap(const fs::path& d, std::vector<int64_t> shape) {
    CalibrationSource s;
    s.input_name = "x";
    s.dir = d;
    s.shape = std::move(shape);
    return s;
  }
  static std::string error_of(const std::function<void()>& f) {
    try {
      f();
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  }

  fs::path root_;
};

TEST_F(CalibrationDatasetTest, ReadsFilesInNameOrderOneAtATime) {
  const fs::path d = dir("fm_f32");
  write(d / "b.bin", bytes_of({5, 6, 7, 8}));
  write(d / "a.bin", bytes_of({1, 2, 3, 4}));
  write(d / ".hidden", "ignored");
  write_npy(d / "c.npy", Tensor::from_values<float>({1, 4}, std::vector<float>{9, 10, 11, 12}));
  CalibrationDataset ds({featuremap(d, {1, 4})});
  ASSERT_EQ(ds.size(), 3u);
  EXPECT_EQ(ds.file(0, 0).filename(), "a.bin");
  EXPECT_EQ(ds.file(0, 2).filename(), "c.npy");
  const Tensor first = ds.model_feeds(0).at("x");
  EXPECT_EQ(first.dtype(), DataType::kFloat32);
  EXPECT_EQ(first.shape(), (kernels::Shape{1, 4}));
  EXPECT_EQ(first.float_at(3), 4.0);
  EXPECT_EQ(ds.model_feeds(2).at("x").float_at(0), 9.0);
}

TEST_F(CalibrationDatasetTest, AnIntegerInputTakesIntegerSamplesAsTheyAre) {
  // Token ids into an embedding Gather: an int64 input; int32 samples are widened, floats refused.
  const fs::path d = dir("ids");
  write_npy(d / "0.npy", Tensor::from_values<int64_t>({1, 3}, std::vector<int64_t>{1, 523, 999}));
  write_npy(d / "1.npy", Tensor::from_values<int32_t>({1, 3}, std::vector<int32_t>{1, 7, 8}));
  CalibrationSource ids = featuremap(d, {1, 3});
  ids.element_type = DataType::kInt64;
  CalibrationDataset ds({ids});
  const Tensor first = ds.model_feeds(0).at("x");
  EXPECT_EQ(first.dtype(), DataType::kInt64);
  EXPECT_EQ(first.data<int64_t>()[1], 523);
  EXPECT_EQ(ds.model_feeds(1).at("x").dtype(), DataType::kInt64);
  EXPECT_EQ(ds.model_feeds(1).at("x").data<int64_t>()[2], 8);
  write_npy(d / "2.npy", Tensor::from_values<float>({1, 3}, std::vector<float>{1, 2, 3}));
  CalibrationDataset with_float({ids});
  const std::string error = error_of([&] { with_float.model_feeds(2); });
  EXPECT_NE(error.find("2.npy: calibration sample of input 'x' is float32; the input is int64, so its samples are integers"),
            std::string::npos)
      << error;
}

TEST_F(CalibrationDatasetTest, ABoolInputTakesMasks) {
  // An attention or padding mask: bool samples as they are, uint8 0/1 as bool, floats refused.
  const fs::path d = dir("mask");
  Tensor mask(DataType::kBool, {1, 3});
  mask.data<bool>()[0] = true;
  mask.data<bool>()[1] = false;
  mask.data<bool>()[2] = true;
  write_npy(d / "0.npy", mask);
  write_npy(d / "1.npy", Tensor::from_values<uint8_t>({1, 3}, std::vector<uint8_t>{0, 1, 0}));
  CalibrationSource m = featuremap(d, {1, 3});
  m.element_type = DataType::kBool;
  CalibrationDataset ds({m});
  const Tensor first = ds.model_feeds(0).at("x");
  ASSERT_EQ(first.dtype(), DataType::kBool);
  EXPECT_EQ(std::vector<bool>(first.data<bool>(), first.data<bool>() + 3), (std::vector<bool>{true, false, true}));
  const Tensor second = ds.model_feeds(1).at("x");
  ASSERT_EQ(second.dtype(), DataType::kBool);
  EXPECT_EQ(std::vector<bool>(second.data<bool>(), second.data<bool>() + 3), (std::vector<bool>{false, true, false}));
  write_npy(d / "2.npy", Tensor::from_values<float>({1, 3}, std::vector<float>{1, 0, 1}));
  CalibrationDataset with_float({m});
  const std::string error = error_of([&] { with_float.model_feeds(2); });
  EXPECT_NE(error.find("2.npy: calibration sample of input 'x' is float32; the input is bool, so its samples are bool (or uint8 0/1)"),
            std::string::npos)
      << error;
}

TEST_F(CalibrationDatasetTest, ErrorsNameTheInputTheFileAndTheRule) {
  EXPECT_EQ(error_of([&] {
              CalibrationDataset({featuremap(root_ / "nope", {1, 4})});
            }),
            "cal_data_dir '" + (root_ / "nope").string() + "' of input 'x' does not exist");
  const fs::path empty = dir("empty");
  EXPECT_EQ(error_of([&] {
              CalibrationDataset({featuremap(empty, {1, 4})});
            }),
            "cal_data_dir '" + empty.string() + "' of input 'x' has no calibration files");
  write(root_ / "plain_file", "x");
  EXPECT_EQ(
      error_of([&] {
        CalibrationDataset({featuremap(root_ / "plain_file", {1, 4})});
      }),
      "cal_data_dir '" + (root_ / "plain_file").string() + "' of input 'x' is not a directory");

  // Two inputs with different sample counts.
  const fs::path a = dir("a"), b = dir("b");
  write(a / "0.bin", bytes_of({1, 2}));
  write(a / "1.bin", bytes_of({1, 2}));
  write(b / "0.bin", bytes_of({1, 2}));
  CalibrationSource sa = featuremap(a, {2}), sb = featuremap(b, {2});
  sb.input_name = "y";
  EXPECT_EQ(error_of([&] {
              CalibrationDataset({sa, sb});
            }),
            "cal_data_dir '" + b.string() + "' of input 'y' has 1 files but '" + a.string() +
                "' of input 'x' has 2; every input needs the same number of samples");

  // A raw file of the wrong size; the hint names the type whose size it has.
  const fs::path raw = dir("raw");
  write(raw / "s.bin", std::string(4, '\0'));
  CalibrationSource s = featuremap(raw, {1, 4});
  EXPECT_EQ(error_of([&] { CalibrationDataset({s}).read_sample(0, 0); }),
            (raw / "s.bin").string() +
                ": raw calibration file of input 'x' has 4 bytes; expected [1,4] float32 = 16 "
                "bytes (the size of uint8 data: check cal_data_type or the directory's _f32 "
                "suffix)");
  write(raw / "s.bin", std::string(5, '\0'));
  EXPECT_EQ(error_of([&] { CalibrationDataset({s}).read_sample(0, 0); }),
            (raw / "s.bin").string() +
                ": raw calibration file of input 'x' has 5 bytes; expected [1,4] float32 = 16 "
                "bytes");

  // A .npy of the wrong shape or type.
  const fs::path npy = dir("npy");
  write_npy(npy / "s.npy", Tensor(DataType::kFloat32, {1, 3}));
  EXPECT_EQ(error_of([&] {
              CalibrationDataset({featuremap(npy, {1, 4})}).read_sample(0, 0);
            }),
            (npy / "s.npy").string() +
                ": calibration sample of input 'x' has shape [1,3]; expected input_shape [1,4]");
  write_npy(npy / "s.npy", Tensor(DataType::kInt32, {1, 4}));
  EXPECT_EQ(error_of([&] {
              CalibrationDataset({featuremap(npy, {1, 4})}).read_sample(0, 0);
            }),
            (npy / "s.npy").string() +
                ": calibration sample of input 'x' is int32; expected uint8, float32 or float64");

  // An image without preprocess_on.
  const fs::path img = dir("img");
  write(img / "p.jpg", "not really");
  CalibrationSource rgb = featuremap(img, {1, 3, 2, 2});
  rgb.type_train = rgb.type_rt = InputType::kRgb;
  EXPECT_EQ(error_of([&] { CalibrationDataset({rgb}).read_sample(0, 0); }),
            (img / "p.jpg").string() +
                ": an image file in cal_data_dir of input 'x'; images are read only with "
                "calibration_parameters.preprocess_on: True");
  rgb.preprocess_on = true;
  const std::string undecodable = error_of([&] { CalibrationDataset({rgb}).read_sample(0, 0); });
  EXPECT_EQ(undecodable.rfind((img / "p.jpg").string() + ": cannot decode the image (", 0), 0u)
      << undecodable;
}

CalibrationSource image_source(InputType train, InputType rt, Layout layout,
                               std::vector<int64_t> shape) {
  CalibrationSource s;
  s.input_name = "img";
  s.type_train = train;
  s.type_rt = rt;
  s.layout_train = layout;
  s.shape = std::move(shape);
  return s;
}

int8_t as_int8(double v) {
  return static_cast<int8_t>(static_cast<int>(std::nearbyint(std::clamp(v, 0.0, 255.0))) - 128);
}

TEST(ToModelInput, FeaturemapIsUnchangedAndImagesBecomeTheIntermediateType) {
  const Tensor fm = Tensor::from_values<float>({1, 2}, std::vector<float>{-1.5f, 300});
  const Tensor fm_out = to_model_input(
      fm, image_source(InputType::kFeaturemap, InputType::kFeaturemap, Layout::kNchw, {1, 2}));
  EXPECT_EQ(fm_out.float_at(0), -1.5);
  EXPECT_EQ(fm_out.float_at(1), 300.0);

  // One rgb pixel per layout: (R, G, B) = (200, 100, 50).
  const Tensor nchw =
      Tensor::from_values<uint8_t>({1, 3, 1, 1}, std::vector<uint8_t>{200, 100, 50});
  // Same type: v - 128.
  const Tensor same = to_model_input(
      nchw, image_source(InputType::kRgb, InputType::kRgb, Layout::kNchw, {1, 3, 1, 1}));
  EXPECT_EQ(same.dtype(), DataType::kInt8);
  EXPECT_EQ(same.to_int64_vector(), (std::vector<int64_t>{72, -28, -78}));
  // rgb -> bgr: channel swap.
  const Tensor swapped = to_model_input(
      nchw, image_source(InputType::kRgb, InputType::kBgr, Layout::kNchw, {1, 3, 1, 1}));
  EXPECT_EQ(swapped.to_int64_vector(), (std::vector<int64_t>{-78, -28, 72}));
  // rgb -> nv12: yuv444 with BT.601 full range, then -128.
  const double y = 0.299 * 200 + 0.587 * 100 + 0.114 * 50;
  const double u = 128 + (50 - y) / 1.772, v = 128 + (200 - y) / 1.402;
  const Tensor yuv = to_model_input(
      nchw, image_source(InputType::kRgb, InputType::kNv12, Layout::kNchw, {1, 3, 1, 1}));
  EXPECT_EQ(yuv.to_int64_vector(), (std::vector<int64_t>{as_int8(y), as_int8(u), as_int8(v)}));
  // bgr samples in NHWC -> yuv444, video range.
  const Tensor nhwc_bgr =
      Tensor::from_values<uint8_t>({1, 1, 1, 3}, std::vector<uint8_t>{50, 100, 200});
  CalibrationSource video =
      image_source(InputType::kBgr, InputType::kNv12, Layout::kNhwc, {1, 1, 1, 3});
  video.space_and_range = config::InputSpaceAndRange::kBt601Video;
  const Tensor yuv_video = to_model_input(nhwc_bgr, video);
  EXPECT_EQ(yuv_video.to_int64_vector(),
            (std::vector<int64_t>{as_int8(16 + y * 219 / 255), as_int8(128 + (u - 128) * 224 / 255),
                                  as_int8(128 + (v - 128) * 224 / 255)}));
  // A combination the config rejects.
  EXPECT_THROW(to_model_input(nchw, image_source(InputType::kYuv444, InputType::kRgb, Layout::kNchw,
                                                 {1, 3, 1, 1})),
               Error);
}

// A 24-bit BMP (bottom-up rows padded to 4 bytes) of width x height RGB pixels.
std::string bmp(int width, int height, const std::vector<uint8_t>& rgb) {
  const int row = (width * 3 + 3) / 4 * 4;
  const uint32_t size = 54 + static_cast<uint32_t>(row * height);
  std::string b(size, '\0');
  auto put32 = [&](size_t at, uint32_t v) { std::memcpy(&b[at], &v, 4); };
  auto put16 = [&](size_t at, uint16_t v) { std::memcpy(&b[at], &v, 2); };
  b[0] = 'B';
  b[1] = 'M';
  put32(2, size);
  put32(10, 54);
  put32(14, 40);
  put32(18, static_cast<uint32_t>(width));
  put32(22, static_cast<uint32_t>(height));
  put16(26, 1);
  put16(28, 24);
  for (int yy = 0; yy < height; ++yy) {
    for (int xx = 0; xx < width; ++xx) {
      const size_t src = static_cast<size_t>((yy * width + xx) * 3);
      const size_t dst = 54 + static_cast<size_t>((height - 1 - yy) * row + xx * 3);
      b[dst] = static_cast<char>(rgb[src + 2]);
      b[dst + 1] = static_cast<char>(rgb[src + 1]);
      b[dst + 2] = static_cast<char>(rgb[src]);
    }
  }
  return b;
}

TEST_F(CalibrationDatasetTest, DecodesResizesAndConvertsImages) {
  const fs::path d = dir("images");
  // 2x1 image: red-ish left pixel, blue-ish right pixel.
  write(d / "p.bmp", bmp(2, 1, {200, 10, 0, 0, 30, 250}));
  CalibrationSource s = image_source(InputType::kBgr, InputType::kBgr, Layout::kNchw, {1, 3, 1, 4});
  s.dir = d;
  s.preprocess_on = true;
  const Tensor t = CalibrationDataset({s}).read_sample(0, 0);
  ASSERT_EQ(t.dtype(), DataType::kUint8);
  ASSERT_EQ(t.shape(), (kernels::Shape{1, 3, 1, 4}));
  // Width 2 -> 4 with half-pixel centres: source x = (x + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75,
  // 1.25, clamped to [0, 1]: weights of the right pixel 0, 0.25, 0.75, 1.
  const double f[] = {0, 0.25, 0.75, 1};
  const double rgb_left[] = {200, 10, 0}, rgb_right[] = {0, 30, 250};
  for (int c = 0; c < 3; ++c) {
    const int rgb_channel = 2 - c;  // bgr
    for (int x = 0; x < 4; ++x) {
      const double expected = rgb_left[rgb_channel] * (1 - f[x]) + rgb_right[rgb_channel] * f[x];
      EXPECT_EQ(t.int_at(c * 4 + x), std::llround(std::nearbyint(expected)))
          << "channel " << c << " x " << x;
    }
  }
  // NHWC gray at the image's own size: luminance per pixel.
  CalibrationSource g =
      image_source(InputType::kGray, InputType::kGray, Layout::kNhwc, {1, 1, 2, 1});
  g.dir = d;
  g.preprocess_on = true;
  const Tensor gray = CalibrationDataset({g}).read_sample(0, 0);
  EXPECT_EQ(gray.int_at(0), std::llround(std::nearbyint(0.299 * 200 + 0.587 * 10)));
  EXPECT_EQ(gray.int_at(1), std::llround(std::nearbyint(0.587 * 30 + 0.114 * 250)));
  // Images are for image inputs only.
  CalibrationSource fm = featuremap(d, {1, 3, 1, 2});
  fm.preprocess_on = true;
  EXPECT_EQ(error_of([&] { CalibrationDataset({fm}).read_sample(0, 0); }),
            (d / "p.bmp").string() +
                ": preprocess_on reads images for image inputs only; input 'x' is featuremap");
}

TEST_F(CalibrationDatasetTest, DumpWritesTheModelFeedsPerInput) {
  const fs::path d = dir("u8");
  write(d / "0.bin", std::string("\x00\x80\xff", 3));
  write(d / "1.bin", std::string("\x01\x02\x03", 3));
  CalibrationSource s =
      image_source(InputType::kGray, InputType::kGray, Layout::kNchw, {1, 1, 1, 3});
  s.input_name = "in/0";
  s.dir = d;
  s.raw_type = config::CalDataType::kUint8;
  CalibrationDataset ds({s});
  dump_calibration_data(ds, root_ / "work");
  const Tensor first = read_npy(root_ / "work" / "calibration_data" / "in_0" / "0.npy");
  EXPECT_EQ(first.dtype(), DataType::kInt8);
  EXPECT_EQ(first.to_int64_vector(), (std::vector<int64_t>{-128, 0, 127}));
  EXPECT_TRUE(fs::exists(root_ / "work" / "calibration_data" / "in_0" / "1.npy"));
}

}  // namespace
}  // namespace openbpu::calibration
