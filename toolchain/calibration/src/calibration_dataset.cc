#include "openbpu/calibration/calibration_dataset.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <system_error>

#include "colour_conversion.h"
#include "image_sample.h"
#include "openbpu/base/file_name.h"
#include "openbpu/common/atomic_file.h"
#include "openbpu/common/error.h"
#include "openbpu/common/npy.h"

namespace openbpu::calibration {

namespace fs = std::filesystem;
using config::InputType;
using kernels::DataType;

namespace {

bool is_image_type(InputType t) {
  return t != InputType::kFeaturemap;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string describe_shape(const std::vector<int64_t>& shape) {
  return kernels::shape_to_string(shape);
}

// Index of the channel dimension of an input_layout_train tensor.
size_t channel_axis(const CalibrationSource& source) {
  return source.layout_train == config::Layout::kNchw ? 1 : source.shape.size() - 1;
}

// Values of a stored sample as doubles (uint8 or float32).
double value_at(const Tensor& t, int64_t i) {
  return t.dtype() == DataType::kUint8 ? static_cast<double>(t.data<uint8_t>()[i])
                                       : static_cast<double>(t.data<float>()[i]);
}

Tensor read_raw_sample(const fs::path& file, const CalibrationSource& source) {
  const std::string bytes = read_file(file);
  const DataType dtype =
      source.raw_type == config::CalDataType::kFloat32 ? DataType::kFloat32 : DataType::kUint8;
  const int64_t count = kernels::shape_element_count(source.shape);
  const size_t expected = static_cast<size_t>(count) * kernels::dtype_size(dtype);
  if (bytes.size() != expected) {
    const bool is_float = dtype == DataType::kFloat32;
    std::string hint;
    const size_t other = static_cast<size_t>(count) * (is_float ? 1 : 4);
    if (bytes.size() == other) {
      hint = str_cat(" (the size of ", is_float ? "uint8" : "float32",
                     " data: check cal_data_type or the directory's _f32 suffix)");
    }
    raise(file.string(), ": raw calibration file of input '", source.input_name, "' has ",
          bytes.size(), " bytes; expected ", describe_shape(source.shape), " ",
          config::to_string(source.raw_type), " = ", expected, " bytes", hint);
  }
  Tensor t(dtype, source.shape);
  std::memcpy(t.raw_data(), bytes.data(), bytes.size());
  return t;
}

bool is_integer(DataType t) {
  return !kernels::dtype_is_float(t) && t != DataType::kBool && t != DataType::kString && t != DataType::kUndefined;
}

// An integer sample as the integer input's own element type (values checked to fit).
Tensor as_integer_input(const Tensor& t, const fs::path& file, const CalibrationSource& source) {
  if (!is_integer(t.dtype())) {
    raise(file.string(), ": calibration sample of input '", source.input_name, "' is ", kernels::dtype_name(t.dtype()),
          "; the input is ", kernels::dtype_name(source.element_type), ", so its samples are integers");
  }
  if (t.dtype() == source.element_type) return t;
  Tensor out(source.element_type, t.shape());
  for (int64_t i = 0; i < t.element_count(); ++i) {
    const double v = t.float_at(i);
    if (source.element_type == DataType::kInt32 && (v < INT32_MIN || v > INT32_MAX)) {
      raise(file.string(), ": calibration sample of input '", source.input_name, "' holds ", v, ", outside int32");
    }
    if (source.element_type == DataType::kInt32) {
      out.data<int32_t>()[i] = static_cast<int32_t>(v);
    } else {
      out.data<int64_t>()[i] = static_cast<int64_t>(v);
    }
  }
  return out;
}

Tensor read_npy_sample(const fs::path& file, const CalibrationSource& source) {
  Tensor t = read_npy(file);
  if (t.shape() != source.shape) {
    raise(file.string(), ": calibration sample of input '", source.input_name, "' has shape ",
          describe_shape(t.shape()), "; expected input_shape ", describe_shape(source.shape));
  }
  if (source.element_type == DataType::kInt32 || source.element_type == DataType::kInt64) {
    return as_integer_input(t, file, source);
  }
  if (source.element_type == DataType::kBool) {  // a mask: bool, or uint8 0/1
    if (t.dtype() == DataType::kBool) return t;
    if (t.dtype() != DataType::kUint8) {
      raise(file.string(), ": calibration sample of input '", source.input_name, "' is ", kernels::dtype_name(t.dtype()),
            "; the input is bool, so its samples are bool (or uint8 0/1)");
    }
    Tensor b(DataType::kBool, t.shape());
    for (int64_t i = 0; i < t.element_count(); ++i) b.data<bool>()[i] = t.data<uint8_t>()[i] != 0;
    return b;
  }
  switch (t.dtype()) {
    case DataType::kUint8:
    case DataType::kFloat32: return t;
    case DataType::kFloat64: {
      Tensor f(DataType::kFloat32, t.shape());
      for (int64_t i = 0; i < t.element_count(); ++i) {
        f.data<float>()[i] = static_cast<float>(t.data<double>()[i]);
      }
      return f;
    }
    default:
      raise(file.string(), ": calibration sample of input '", source.input_name, "' is ",
            kernels::dtype_name(t.dtype()), "; expected uint8, float32 or float64");
  }
}

}  // namespace

std::vector<CalibrationSource> calibration_sources(const config::CompileConfig& config) {
  const auto& inputs = config.input.inputs;
  const auto& cal = config.calibration;
  if (cal.cal_data_dir.size() != inputs.size()) {
    raise("calibration_parameters.cal_data_dir has ", cal.cal_data_dir.size(), " directories for ",
          inputs.size(), " model inputs; give one per input");
  }
  std::vector<CalibrationSource> sources;
  for (size_t i = 0; i < inputs.size(); ++i) {
    CalibrationSource s;
    s.input_name = inputs[i].name;
    s.dir = cal.cal_data_dir[i];
    if (i < cal.cal_data_type.size()) s.raw_type = cal.cal_data_type[i];
    s.preprocess_on = cal.preprocess_on;
    s.type_train = inputs[i].type_train;
    s.type_rt = inputs[i].type_rt;
    s.layout_train = inputs[i].layout_train;
    s.space_and_range = inputs[i].space_and_range;
    s.shape = inputs[i].shape;
    sources.push_back(std::move(s));
  }
  return sources;
}

SampleFileKind sample_file_kind(const fs::path& file) {
  const std::string ext = lower(file.extension().string());
  if (ext == ".npy") return SampleFileKind::kNpy;
  if (ext == ".jpg" || ext == ".jpeg" || ext == ".png" || ext == ".bmp") {
    return SampleFileKind::kImage;
  }
  return SampleFileKind::kRaw;
}

CalibrationDataset::CalibrationDataset(std::vector<CalibrationSource> sources)
    : sources_(std::move(sources)) {
  if (sources_.empty()) raise("calibration: the model has no inputs to calibrate");
  for (const CalibrationSource& s : sources_) {
    std::error_code ec;
    if (!fs::exists(s.dir, ec)) {
      raise("cal_data_dir '", s.dir.string(), "' of input '", s.input_name, "' does not exist");
    }
    if (!fs::is_directory(s.dir, ec)) {
      raise("cal_data_dir '", s.dir.string(), "' of input '", s.input_name, "' is not a directory");
    }
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(s.dir)) {
      if (!entry.is_regular_file()) continue;
      if (entry.path().filename().string().starts_with(".")) continue;
      if (files.size() == kMaxCalibrationSamples) {
        raise("cal_data_dir '", s.dir.string(), "' of input '", s.input_name, "' holds more than ",
              kMaxCalibrationSamples, " files; calibration reads at most ", kMaxCalibrationSamples,
              " samples (20 to 500 are typical): give it a folder with a subset of the data");
      }
      files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end(),
              [](const fs::path& a, const fs::path& b) { return a.filename() < b.filename(); });
    if (files.empty()) {
      raise("cal_data_dir '", s.dir.string(), "' of input '", s.input_name,
            "' has no calibration files");
    }
    if (s.shape.empty()) {
      raise("calibration input '", s.input_name, "' has no input_shape");
    }
    files_.push_back(std::move(files));
  }
  size_ = files_[0].size();
  for (size_t i = 1; i < files_.size(); ++i) {
    if (files_[i].size() != size_) {
      raise("cal_data_dir '", sources_[i].dir.string(), "' of input '", sources_[i].input_name,
            "' has ", files_[i].size(), " files but '", sources_[0].dir.string(), "' of input '",
            sources_[0].input_name, "' has ", size_,
            "; every input needs the same number of samples");
    }
  }
}

const fs::path& CalibrationDataset::file(size_t input, size_t index) const {
  return files_.at(input).at(index);
}

Tensor CalibrationDataset::read_sample(size_t input, size_t index) const {
  const CalibrationSource& source = sources_.at(input);
  const fs::path& path = file(input, index);
  switch (sample_file_kind(path)) {
    case SampleFileKind::kNpy: return read_npy_sample(path, source);
    case SampleFileKind::kImage:
      if (!source.preprocess_on) {
        raise(path.string(), ": an image file in cal_data_dir of input '", source.input_name,
              "'; images are read only with calibration_parameters.preprocess_on: True");
      }
      if (!is_image_type(source.type_train)) {
        raise(path.string(), ": preprocess_on reads images for image inputs only; input '",
              source.input_name, "' is featuremap");
      }
      return read_image_sample(path, source);
    case SampleFileKind::kRaw: return read_raw_sample(path, source);
  }
  raise("unreachable");
}

std::map<std::string, Tensor> CalibrationDataset::model_feeds(size_t index) const {
  std::map<std::string, Tensor> feeds;
  for (size_t i = 0; i < sources_.size(); ++i) {
    feeds[sources_[i].input_name] = to_model_input(read_sample(i, index), sources_[i]);
  }
  return feeds;
}

Tensor to_model_input(const Tensor& sample, const CalibrationSource& source) {
  if (sample.dtype() == source.element_type && (is_integer(sample.dtype()) || sample.dtype() == DataType::kBool) &&
      sample.dtype() != DataType::kUint8) {
    return sample;  // token ids, masks and other integer inputs, as they are
  }
  if (sample.dtype() != DataType::kUint8 && sample.dtype() != DataType::kFloat32) {
    raise("calibration sample of input '", source.input_name, "' is ",
          kernels::dtype_name(sample.dtype()), "; expected uint8 or float32");
  }
  const int64_t n = sample.element_count();
  if (!is_image_type(source.type_train)) {
    if (sample.dtype() == DataType::kFloat32) return sample;
    Tensor f(DataType::kFloat32, sample.shape());
    for (int64_t i = 0; i < n; ++i) f.data<float>()[i] = static_cast<float>(value_at(sample, i));
    return f;
  }

  // The intermediate colour format of input_type_rt.
  InputType target = source.type_rt;
  if (target == InputType::kNv12) target = InputType::kYuv444;
  const InputType from = source.type_train;
  const bool video = source.space_and_range == config::InputSpaceAndRange::kBt601Video;
  const bool rgb_like = from == InputType::kRgb || from == InputType::kBgr;
  const bool supported =
      from == target || (rgb_like && (target == InputType::kRgb || target == InputType::kBgr ||
                                      target == InputType::kYuv444));
  if (!supported) {
    raise("calibration input '", source.input_name, "': no conversion from input_type_train ",
          config::to_string(from), " to input_type_rt ", config::to_string(source.type_rt));
  }

  const auto& shape = sample.shape();
  const size_t caxis = channel_axis(source);
  if (shape.size() < 2 || caxis >= shape.size()) {
    raise("calibration input '", source.input_name, "': image sample shape ", describe_shape(shape),
          " has no channel dimension");
  }
  const int64_t channels = shape[caxis];
  int64_t inner = 1;  // elements between two channels of one pixel
  for (size_t d = caxis + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t outer = n / (channels * inner);
  const bool swap = rgb_like && target != from && target != InputType::kYuv444;
  const bool to_yuv = rgb_like && target == InputType::kYuv444;
  const bool from_yuv = from == InputType::kYuv444;
  if ((to_yuv || swap || from_yuv) && channels != 3) {
    raise("calibration input '", source.input_name, "': ", config::to_string(from),
          " samples need 3 channels; input_shape ", describe_shape(shape), " has ", channels);
  }

  Tensor out(DataType::kInt8, shape);
  int8_t* dst = out.data<int8_t>();
  auto store = [](double v) {
    const double r = std::nearbyint(std::clamp(v, 0.0, 255.0));
    return static_cast<int8_t>(static_cast<int>(r) - 128);
  };
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t p = 0; p < inner; ++p) {
      const int64_t base = o * channels * inner + p;
      if (to_yuv || swap || (from_yuv && video)) {
        const double c0 = value_at(sample, base);
        const double c1 = value_at(sample, base + inner);
        const double c2 = value_at(sample, base + 2 * inner);
        Yuv yuv{c0, c1, c2};
        if (to_yuv) {
          const bool rgb = from == InputType::kRgb;
          yuv = rgb_to_yuv_bt601_full(rgb ? c0 : c2, c1, rgb ? c2 : c0);
        }
        if (swap) yuv = {c2, c1, c0};
        if (video && (to_yuv || from_yuv)) yuv = yuv_full_to_video(yuv);
        dst[base] = store(yuv.y);
        dst[base + inner] = store(yuv.u);
        dst[base + 2 * inner] = store(yuv.v);
      } else {
        for (int64_t c = 0; c < channels; ++c) {
          dst[base + c * inner] = store(value_at(sample, base + c * inner));
        }
      }
    }
  }
  return out;
}

void dump_calibration_data(const CalibrationDataset& dataset, const fs::path& working_dir) {
  const fs::path root = working_dir / "calibration_data";
  for (const CalibrationSource& s : dataset.sources()) {
    std::error_code ec;
    fs::create_directories(root / base::safe_file_name(s.input_name), ec);
    if (ec) {
      raise("cannot create '", (root / base::safe_file_name(s.input_name)).string(), "': ", ec.message());
    }
  }
  for (size_t i = 0; i < dataset.size(); ++i) {
    for (const auto& [name, tensor] : dataset.model_feeds(i)) {
      write_npy(root / base::safe_file_name(name) / (std::to_string(i) + ".npy"), tensor);
    }
  }
}

}  // namespace openbpu::calibration
