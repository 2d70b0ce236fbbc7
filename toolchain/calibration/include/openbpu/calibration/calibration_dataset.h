// Calibration samples: the files of cal_data_dir, one directory per model input, read one
// sample at a time (the dataset never holds more than the sample being read).
//
// File kinds, by extension: `.npy`; images (`.jpg`, `.jpeg`, `.png`, `.bmp`, only with
// preprocess_on); anything else is raw binary of cal_data_type. A sample is in
// input_type_train's colour format and input_layout_train, shaped input_shape: uint8 (or float32)
// 0..255 for image inputs, float32 for featuremap inputs. to_model_input() turns it into what the
// original float model (stage 1, with HzPreprocess) takes. docs/calibration.md states the rules.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "openbpu/config/compile_config.h"
#include "openbpu/kernels/tensor.h"

namespace openbpu::calibration {

using kernels::Tensor;

// Where one model input's samples come from and what they are.
struct CalibrationSource {
  std::string input_name;
  std::filesystem::path dir;
  config::CalDataType raw_type = config::CalDataType::kFloat32;  // element type of raw files
  bool preprocess_on = false;                                    // images may be read
  config::InputType type_train = config::InputType::kFeaturemap;
  config::InputType type_rt = config::InputType::kFeaturemap;
  config::Layout layout_train = config::Layout::kNchw;
  config::InputSpaceAndRange space_and_range = config::InputSpaceAndRange::kRegular;
  std::vector<int64_t> shape;  // input_shape, in input_layout_train
  // The model input's element type. An integer input (token ids into an embedding Gather) takes
  // integer .npy samples, fed as its own type; every other input takes uint8 or float samples.
  kernels::DataType element_type = kernels::DataType::kFloat32;
};

// One source per config input (after config::resolve_against_model), in input order.
std::vector<CalibrationSource> calibration_sources(const config::CompileConfig& config);

// The most files a cal_data_dir may hold: calibration reads every sample two or more times, so
// a folder of a whole data set (100,000 images) would run for hours; 20 to 500 samples are
// typical. The listing stops at the first file past the limit (memory and time stay bounded).
inline constexpr size_t kMaxCalibrationSamples = 10000;

enum class SampleFileKind { kNpy, kImage, kRaw };
SampleFileKind sample_file_kind(const std::filesystem::path& file);

class CalibrationDataset {
 public:
  // Lists each source's directory (regular files not starting with '.', sorted by name) and
  // checks that it exists, is a directory, is not empty, holds at most kMaxCalibrationSamples
  // files, and that every source has the same number of files. Throws Error naming the input,
  // the directory and the rule.
  explicit CalibrationDataset(std::vector<CalibrationSource> sources);

  // Number of samples (files per input).
  size_t size() const { return size_; }
  const std::vector<CalibrationSource>& sources() const { return sources_; }
  const std::filesystem::path& file(size_t input, size_t index) const;

  // Reads sample `index` of input `input` as stored (see the file comment). Throws Error naming
  // the file, the expected and the actual size/shape/type.
  Tensor read_sample(size_t input, size_t index) const;
  // The model feeds of sample `index`: every input's sample through to_model_input().
  std::map<std::string, Tensor> model_feeds(size_t index) const;

 private:
  std::vector<CalibrationSource> sources_;
  std::vector<std::vector<std::filesystem::path>> files_;
  size_t size_ = 0;
};

// The one conversion from a calibration sample to the original float model's input:
// - featuremap: float32, values unchanged;
// - image inputs: colour conversion from input_type_train to input_type_rt's intermediate type
//   (nv12/yuv444 -> yuv444, BT.601 full range from rgb/bgr, then video range if
//   input_space_and_range is bt601_video; rgb <-> bgr channel swap; same type unchanged), then
//   int8 = clamp(nearbyint(v), 0, 255) - 128.
// The layout stays input_layout_train. Throws Error for a combination config rejects.
Tensor to_model_input(const Tensor& sample, const CalibrationSource& source);

// debug_mode dump_calibration_data: writes every sample's model feeds to
// working_dir/calibration_data/<input name>/<i>.npy (characters outside [A-Za-z0-9._-] of the
// input name become '_'), one sample at a time.
void dump_calibration_data(const CalibrationDataset& dataset,
                           const std::filesystem::path& working_dir);

}  // namespace openbpu::calibration
