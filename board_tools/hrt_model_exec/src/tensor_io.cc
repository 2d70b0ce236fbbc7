#include "openbpu/hrt/tensor_io.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <numeric>
#include <random>
#include <span>
#include <sstream>
#include <stdexcept>

#include "openbpu/base/float16.h"
#include "openbpu/format/model_file.h"
#include "openbpu/format/tensor_text.h"
#include "stb_image_decode.h"

namespace openbpu::hrt {
namespace {

[[noreturn]] void fail(const std::string& message) { throw std::runtime_error(message); }

std::string lower_extension(const std::string& path) {
  const size_t dot = path.find_last_of('.');
  const size_t slash = path.find_last_of('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string ext = path.substr(dot + 1);
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext;
}

std::string read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("input file '" + path + "' cannot be opened: " + std::strerror(errno));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

template <typename T>
T saturate(double v) {
  const double r = std::nearbyint(v);
  if (std::isnan(r)) return T(0);
  if (r <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
  if (r >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(r);
}

template <typename T>
void store(uint8_t* dst, T v) {
  std::memcpy(dst, &v, sizeof(T));
}

template <typename T>
T load(const uint8_t* src) {
  T v;
  std::memcpy(&v, src, sizeof(T));
  return v;
}

void store_value(uint8_t* dst, int32_t type, double v) {
  switch (type) {
    case HB_DNN_TENSOR_TYPE_S8: store<int8_t>(dst, saturate<int8_t>(v)); break;
    case HB_DNN_TENSOR_TYPE_F16: store<uint16_t>(dst, base::Float16::from_float(static_cast<float>(v))); break;
    case HB_DNN_TENSOR_TYPE_S16: store<int16_t>(dst, saturate<int16_t>(v)); break;
    case HB_DNN_TENSOR_TYPE_U16: store<uint16_t>(dst, saturate<uint16_t>(v)); break;
    case HB_DNN_TENSOR_TYPE_F32: store<float>(dst, static_cast<float>(v)); break;
    case HB_DNN_TENSOR_TYPE_S32: store<int32_t>(dst, saturate<int32_t>(v)); break;
    case HB_DNN_TENSOR_TYPE_U32: store<uint32_t>(dst, saturate<uint32_t>(v)); break;
    case HB_DNN_TENSOR_TYPE_F64: store<double>(dst, v); break;
    case HB_DNN_TENSOR_TYPE_S64: store<int64_t>(dst, saturate<int64_t>(v)); break;
    case HB_DNN_TENSOR_TYPE_U64: store<uint64_t>(dst, saturate<uint64_t>(v)); break;
    default: store<uint8_t>(dst, saturate<uint8_t>(v)); break;  // U8 and the image types
  }
}

double load_value(const uint8_t* src, int32_t type) {
  switch (type) {
    case HB_DNN_TENSOR_TYPE_S8: return load<int8_t>(src);
    case HB_DNN_TENSOR_TYPE_F16: return base::Float16::to_float(load<uint16_t>(src));
    case HB_DNN_TENSOR_TYPE_S16: return load<int16_t>(src);
    case HB_DNN_TENSOR_TYPE_U16: return load<uint16_t>(src);
    case HB_DNN_TENSOR_TYPE_F32: return load<float>(src);
    case HB_DNN_TENSOR_TYPE_S32: return load<int32_t>(src);
    case HB_DNN_TENSOR_TYPE_U32: return load<uint32_t>(src);
    case HB_DNN_TENSOR_TYPE_F64: return load<double>(src);
    case HB_DNN_TENSOR_TYPE_S64: return static_cast<double>(load<int64_t>(src));
    case HB_DNN_TENSOR_TYPE_U64: return static_cast<double>(load<uint64_t>(src));
    default: return load<uint8_t>(src);
  }
}

// The numpy descr ("i1", "f4", ...) of a tensor type, without byte-order character.
std::string numpy_kind(int32_t type) {
  switch (type) {
    case HB_DNN_TENSOR_TYPE_S8: return "i1";
    case HB_DNN_TENSOR_TYPE_F16: return "f2";
    case HB_DNN_TENSOR_TYPE_S16: return "i2";
    case HB_DNN_TENSOR_TYPE_U16: return "u2";
    case HB_DNN_TENSOR_TYPE_F32: return "f4";
    case HB_DNN_TENSOR_TYPE_S32: return "i4";
    case HB_DNN_TENSOR_TYPE_U32: return "u4";
    case HB_DNN_TENSOR_TYPE_F64: return "f8";
    case HB_DNN_TENSOR_TYPE_S64: return "i8";
    case HB_DNN_TENSOR_TYPE_U64: return "u8";
    default: return "u1";
  }
}

void check_supported(const hbDNNTensorProperties& p, const std::string& path) {
  if (element_size(p.tensorType) == 0) {
    fail("input file '" + path + "': tensor type " + tensor_type_name(p.tensorType) + " is not supported");
  }
}

}  // namespace

const char* tensor_type_name(int32_t type) {
  static const char* const names[] = {
      "HB_DNN_IMG_TYPE_Y",          "HB_DNN_IMG_TYPE_NV12",       "HB_DNN_IMG_TYPE_NV12_SEPARATE",
      "HB_DNN_IMG_TYPE_YUV444",     "HB_DNN_IMG_TYPE_RGB",        "HB_DNN_IMG_TYPE_BGR",
      "HB_DNN_TENSOR_TYPE_S4",      "HB_DNN_TENSOR_TYPE_U4",      "HB_DNN_TENSOR_TYPE_S8",
      "HB_DNN_TENSOR_TYPE_U8",      "HB_DNN_TENSOR_TYPE_F16",     "HB_DNN_TENSOR_TYPE_S16",
      "HB_DNN_TENSOR_TYPE_U16",     "HB_DNN_TENSOR_TYPE_F32",     "HB_DNN_TENSOR_TYPE_S32",
      "HB_DNN_TENSOR_TYPE_U32",     "HB_DNN_TENSOR_TYPE_F64",     "HB_DNN_TENSOR_TYPE_S64",
      "HB_DNN_TENSOR_TYPE_U64"};
  if (type < 0 || type >= HB_DNN_TENSOR_TYPE_MAX) return "HB_DNN_TENSOR_TYPE_UNKNOWN";
  return names[type];
}

const char* tensor_layout_name(int32_t layout) {
  switch (layout) {
    case HB_DNN_LAYOUT_NHWC: return "HB_DNN_LAYOUT_NHWC";
    case HB_DNN_LAYOUT_NCHW: return "HB_DNN_LAYOUT_NCHW";
    default: return "HB_DNN_LAYOUT_NONE";
  }
}

const char* quanti_type_name(hbDNNQuantiType type) {
  switch (type) {
    case SHIFT: return "SHIFT";
    case SCALE: return "SCALE";
    default: return "NONE";
  }
}

bool is_image_type(int32_t type) { return type >= HB_DNN_IMG_TYPE_Y && type <= HB_DNN_IMG_TYPE_BGR; }

bool is_float_type(int32_t type) {
  return type == HB_DNN_TENSOR_TYPE_F16 || type == HB_DNN_TENSOR_TYPE_F32 || type == HB_DNN_TENSOR_TYPE_F64;
}

size_t element_size(int32_t type) {
  switch (type) {
    case HB_DNN_TENSOR_TYPE_S4:
    case HB_DNN_TENSOR_TYPE_U4: return 0;
    case HB_DNN_TENSOR_TYPE_F16:
    case HB_DNN_TENSOR_TYPE_S16:
    case HB_DNN_TENSOR_TYPE_U16: return 2;
    case HB_DNN_TENSOR_TYPE_F32:
    case HB_DNN_TENSOR_TYPE_S32:
    case HB_DNN_TENSOR_TYPE_U32: return 4;
    case HB_DNN_TENSOR_TYPE_F64:
    case HB_DNN_TENSOR_TYPE_S64:
    case HB_DNN_TENSOR_TYPE_U64: return 8;
    default: return type >= 0 && type < HB_DNN_TENSOR_TYPE_MAX ? 1 : 0;
  }
}

std::string shape_text(const hbDNNTensorShape& shape) {
  std::string s = "(";
  for (int32_t i = 0; i < shape.numDimensions; ++i) s += std::to_string(shape.dimensionSize[i]) + ",";
  return s + ")";
}

int64_t element_count(const hbDNNTensorShape& shape) {
  int64_t n = 1;
  for (int32_t i = 0; i < shape.numDimensions; ++i) n *= shape.dimensionSize[i];
  return n;
}

size_t dense_byte_size(const hbDNNTensorProperties& p) {
  if (p.tensorType == HB_DNN_IMG_TYPE_NV12 || p.tensorType == HB_DNN_IMG_TYPE_NV12_SEPARATE) {
    return static_cast<size_t>(p.alignedByteSize);
  }
  return static_cast<size_t>(element_count(p.validShape)) * element_size(p.tensorType);
}

InputData read_input_file(const std::string& path, const hbDNNTensorProperties& p) {
  const std::string ext = lower_extension(path);
  if (ext == "bin") return read_bin_input(path, p);
  if (ext == "npy") return read_npy_input(path, p);
  if (ext == "txt") return read_txt_input(path, p);
  if (ext == "jpg" || ext == "jpeg" || ext == "png") return read_image_input(path, p);
  fail("input file '" + path + "': unknown extension (.bin, .npy, .txt, or .jpg/.jpeg/.png for image inputs)");
}

InputData read_bin_input(const std::string& path, const hbDNNTensorProperties& p) {
  check_supported(p, path);
  std::string bytes = read_whole_file(path);
  const size_t dense = dense_byte_size(p);
  const auto aligned = static_cast<size_t>(p.alignedByteSize);
  InputData d;
  if (bytes.size() == dense) {
    d.dense = true;
  } else if (bytes.size() == aligned && !is_image_type(p.tensorType)) {
    d.dense = false;
  } else {
    std::string rule = "holds " + std::to_string(bytes.size()) + " bytes; the input takes " + std::to_string(dense) +
                       " (dense valid shape " + shape_text(p.validShape) + ")";
    if (aligned != dense && !is_image_type(p.tensorType)) {
      rule += " or " + std::to_string(aligned) + " (alignedByteSize, aligned shape " + shape_text(p.alignedShape) + ")";
    }
    fail("input file '" + path + "' " + rule);
  }
  d.bytes.assign(bytes.begin(), bytes.end());
  return d;
}

namespace {

// A .npy file: its dtype without the byte-order mark ("f4", "u1", ...), shape and raw data.
struct NpyArray {
  std::string descr;
  std::vector<int64_t> shape;
  std::string data;
  std::string shape_text() const {
    std::string t = "(";
    for (int64_t d : shape) t += std::to_string(d) + ",";
    return t + ")";
  }
};

NpyArray parse_npy(const std::string& path) {
  const std::string file = read_whole_file(path);
  if (file.size() < 10 || file.compare(0, 6, "\x93NUMPY") != 0) fail("input file '" + path + "' is not a .npy file");
  const auto major = static_cast<uint8_t>(file[6]);
  size_t header_len = 0, header_start = 0;
  if (major == 1) {
    header_len = static_cast<uint8_t>(file[8]) | (static_cast<size_t>(static_cast<uint8_t>(file[9])) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (file.size() < 12) fail("input file '" + path + "' is a truncated .npy file");
    header_len = 0;
    for (int i = 3; i >= 0; --i) header_len = (header_len << 8) | static_cast<uint8_t>(file[8 + i]);
    header_start = 12;
  } else {
    fail("input file '" + path + "': .npy version " + std::to_string(major) + " is not supported (1, 2, 3)");
  }
  if (header_start + header_len > file.size()) fail("input file '" + path + "' is a truncated .npy file");
  const std::string header = file.substr(header_start, header_len);
  auto value_of = [&](const std::string& key) {
    const size_t k = header.find("'" + key + "'");
    if (k == std::string::npos) fail("input file '" + path + "': .npy header has no '" + key + "'");
    size_t v = header.find(':', k);
    if (v == std::string::npos) fail("input file '" + path + "': bad .npy header");
    ++v;
    while (v < header.size() && header[v] == ' ') ++v;
    return v;
  };
  size_t at = value_of("descr");
  const char quote = header[at];
  const size_t end = header.find(quote, at + 1);
  NpyArray a;
  std::string& descr = a.descr;
  descr = header.substr(at + 1, end - at - 1);
  at = value_of("fortran_order");
  if (header.compare(at, 4, "True") == 0) fail("input file '" + path + "': Fortran-order .npy arrays are not supported");
  at = value_of("shape");
  const size_t close = header.find(')', at);
  std::vector<int64_t>& shape = a.shape;
  std::stringstream dims(header.substr(at + 1, close == std::string::npos ? 0 : close - at - 1));
  for (std::string item; std::getline(dims, item, ',');) {
    item.erase(std::remove(item.begin(), item.end(), ' '), item.end());
    if (item.empty()) continue;
    char* rest = nullptr;
    shape.push_back(std::strtoll(item.c_str(), &rest, 10));
    if (*rest != '\0') fail("input file '" + path + "': .npy shape entry '" + item + "' is not an integer");
  }
  if (!descr.empty() && descr[0] == '>' && descr.substr(1) != "i1" && descr.substr(1) != "u1") {
    fail("input file '" + path + "': big-endian .npy data is not supported");
  }
  if (!descr.empty() && (descr[0] == '<' || descr[0] == '|' || descr[0] == '=' || descr[0] == '>')) descr.erase(0, 1);
  a.data = file.substr(header_start + header_len);
  uint64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d > 0 && count > (uint64_t{1} << 40) / static_cast<uint64_t>(d))) {
      fail("input file '" + path + "': .npy shape " + a.shape_text() + " is not a valid array size");
    }
    count *= static_cast<uint64_t>(d);
  }
  const uint64_t item = descr.size() >= 2 ? std::strtoull(descr.c_str() + 1, nullptr, 10) : 0;
  if (item == 0 || count * item != a.data.size()) {
    fail("input file '" + path + "': holds " + std::to_string(a.data.size()) + " data bytes, its shape " + a.shape_text() +
         " of '" + descr + "' needs " + std::to_string(count * item));
  }
  return a;
}

}  // namespace

InputData read_npy_input(const std::string& path, const hbDNNTensorProperties& p) {
  check_supported(p, path);
  const NpyArray a = parse_npy(path);
  const std::string want = numpy_kind(p.tensorType);
  if (a.descr != want) {
    fail("input file '" + path + "': dtype '" + a.descr + "' does not match the input's " + tensor_type_name(p.tensorType) +
         " (numpy '" + want + "')");
  }
  const size_t bytes = a.data.size();
  const size_t dense = dense_byte_size(p);
  const bool nv12 = p.tensorType == HB_DNN_IMG_TYPE_NV12 || p.tensorType == HB_DNN_IMG_TYPE_NV12_SEPARATE;
  bool shape_ok = static_cast<int32_t>(a.shape.size()) == p.validShape.numDimensions;
  for (size_t i = 0; shape_ok && i < a.shape.size(); ++i) shape_ok = a.shape[i] == p.validShape.dimensionSize[i];
  if (nv12) shape_ok = bytes == dense;
  if (!shape_ok) {
    fail("input file '" + path + "': shape " + a.shape_text() + " does not match the input's valid shape " +
         shape_text(p.validShape) + (nv12 ? " (NV12: " + std::to_string(dense) + " bytes)" : std::string()));
  }
  InputData d;
  d.bytes.assign(a.data.begin(), a.data.end());
  d.dense = true;
  return d;
}

InputData read_txt_input(const std::string& path, const hbDNNTensorProperties& p) {
  check_supported(p, path);
  const std::string text = read_whole_file(path);
  std::vector<double> values;
  const char* s = text.c_str();
  while (true) {
    while (*s && std::isspace(static_cast<unsigned char>(*s))) ++s;
    if (!*s) break;
    char* end = nullptr;
    const double v = std::strtod(s, &end);
    if (end == s) {
      fail("input file '" + path + "': '" + std::string(s, std::min<size_t>(std::strlen(s), 20)) +
           "' is not a number (whitespace-separated numbers expected)");
    }
    values.push_back(v);
    s = end;
  }
  const size_t elem = element_size(p.tensorType);
  const size_t dense = dense_byte_size(p);
  const size_t count = dense / elem;
  if (values.size() != count) {
    fail("input file '" + path + "' holds " + std::to_string(values.size()) + " numbers; the input takes " +
         std::to_string(count) + " (valid shape " + shape_text(p.validShape) + ")");
  }
  InputData d;
  d.bytes.resize(dense);
  for (size_t i = 0; i < count; ++i) store_value(d.bytes.data() + i * elem, p.tensorType, values[i]);
  return d;
}

InputData random_input(const hbDNNTensorProperties& p, uint32_t seed) {
  if (element_size(p.tensorType) == 0) fail(std::string("tensor type ") + tensor_type_name(p.tensorType) + " is not supported");
  std::mt19937 rng(seed);
  const size_t elem = element_size(p.tensorType);
  InputData d;
  d.bytes.resize(dense_byte_size(p));
  const bool is_signed = p.tensorType == HB_DNN_TENSOR_TYPE_S8 || p.tensorType == HB_DNN_TENSOR_TYPE_S16 ||
                         p.tensorType == HB_DNN_TENSOR_TYPE_S32 || p.tensorType == HB_DNN_TENSOR_TYPE_S64;
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int> integer(is_signed ? -128 : 0, is_signed ? 127 : 255);
  for (size_t i = 0; i + elem <= d.bytes.size(); i += elem) {
    store_value(d.bytes.data() + i, p.tensorType, is_float_type(p.tensorType) ? real(rng) : integer(rng));
  }
  return d;
}

namespace {

// One definition for inputs and outputs: the API's count / properties / name calls differ only
// in their names.
template <typename Count, typename Properties, typename Name>
std::vector<hbDNNTensorProperties> ports(hbDNNHandle_t h, std::vector<std::string>* names, const char* side,
                                         Count count, Properties properties, Name name) {
  auto check = [&](int32_t rc, const char* call) {
    if (rc != 0) fail(std::string("hbDNNGet") + side + call + " failed: " + hbDNNGetErrorDesc(rc));
  };
  int32_t n = 0;
  check(count(&n, h), "Count");
  std::vector<hbDNNTensorProperties> props(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) {
    check(properties(&props[static_cast<size_t>(i)], h, i), "TensorProperties");
    const char* text = nullptr;
    check(name(&text, h, i), "Name");
    if (names) names->emplace_back(text);
  }
  return props;
}

}  // namespace

std::vector<hbDNNTensorProperties> input_properties(hbDNNHandle_t h, std::vector<std::string>* names) {
  return ports(h, names, "Input", hbDNNGetInputCount, hbDNNGetInputTensorProperties, hbDNNGetInputName);
}

std::vector<hbDNNTensorProperties> output_properties(hbDNNHandle_t h, std::vector<std::string>* names) {
  return ports(h, names, "Output", hbDNNGetOutputCount, hbDNNGetOutputTensorProperties, hbDNNGetOutputName);
}

std::pair<int, int> image_size(const hbDNNTensorProperties& p) {
  const hbDNNTensorShape& s = p.validShape;
  if (s.numDimensions != 4) return {0, 0};
  if (p.tensorLayout == HB_DNN_LAYOUT_NHWC) return {s.dimensionSize[1], s.dimensionSize[2]};
  return {s.dimensionSize[2], s.dimensionSize[3]};
}

std::vector<uint8_t> resize_bilinear(const std::vector<uint8_t>& src, int src_h, int src_w, int channels, int dst_h,
                                     int dst_w) {
  std::vector<uint8_t> dst(static_cast<size_t>(dst_h) * dst_w * channels);
  if (src_h == dst_h && src_w == dst_w) return src;
  const double sy = static_cast<double>(src_h) / dst_h, sx = static_cast<double>(src_w) / dst_w;
  for (int y = 0; y < dst_h; ++y) {
    const double fy = std::clamp((y + 0.5) * sy - 0.5, 0.0, static_cast<double>(src_h - 1));
    const int y0 = static_cast<int>(fy), y1 = std::min(y0 + 1, src_h - 1);
    const double wy = fy - y0;
    for (int x = 0; x < dst_w; ++x) {
      const double fx = std::clamp((x + 0.5) * sx - 0.5, 0.0, static_cast<double>(src_w - 1));
      const int x0 = static_cast<int>(fx), x1 = std::min(x0 + 1, src_w - 1);
      const double wx = fx - x0;
      for (int c = 0; c < channels; ++c) {
        auto at = [&](int yy, int xx) { return static_cast<double>(src[(static_cast<size_t>(yy) * src_w + xx) * channels + c]); };
        const double v = (1 - wy) * ((1 - wx) * at(y0, x0) + wx * at(y0, x1)) + wy * ((1 - wx) * at(y1, x0) + wx * at(y1, x1));
        dst[(static_cast<size_t>(y) * dst_w + x) * channels + c] = static_cast<uint8_t>(std::clamp(std::lround(v), 0L, 255L));
      }
    }
  }
  return dst;
}

std::vector<uint8_t> convert_rgb_image(const std::vector<uint8_t>& rgb, int height, int width,
                                       const hbDNNTensorProperties& p) {
  const size_t plane = static_cast<size_t>(height) * width;
  const bool nhwc = p.tensorLayout == HB_DNN_LAYOUT_NHWC;
  auto byte = [](double v) { return static_cast<uint8_t>(std::clamp(std::lround(v), 0L, 255L)); };
  std::vector<uint8_t> c0(plane), c1(plane), c2(plane);
  const int32_t type = p.tensorType;
  for (size_t i = 0; i < plane; ++i) {
    const double r = rgb[3 * i], g = rgb[3 * i + 1], b = rgb[3 * i + 2];
    if (type == HB_DNN_IMG_TYPE_RGB) {
      c0[i] = rgb[3 * i], c1[i] = rgb[3 * i + 1], c2[i] = rgb[3 * i + 2];
    } else if (type == HB_DNN_IMG_TYPE_BGR) {
      c0[i] = rgb[3 * i + 2], c1[i] = rgb[3 * i + 1], c2[i] = rgb[3 * i];
    } else {
      // BT.601 full range (JPEG) YCbCr, as the toolchain's nv12 / yuv444 conversion.
      c0[i] = byte(0.299 * r + 0.587 * g + 0.114 * b);
      c1[i] = byte(-0.168736 * r - 0.331264 * g + 0.5 * b + 128);
      c2[i] = byte(0.5 * r - 0.418688 * g - 0.081312 * b + 128);
    }
  }
  std::vector<uint8_t> out;
  if (type == HB_DNN_IMG_TYPE_Y) return c0;
  if (type == HB_DNN_IMG_TYPE_NV12 || type == HB_DNN_IMG_TYPE_NV12_SEPARATE) {
    if (height % 2 || width % 2) fail("an NV12 input needs an even height and width, the model has " + std::to_string(height) + "x" + std::to_string(width));
    out = c0;
    out.reserve(plane * 3 / 2);
    for (int y = 0; y < height; y += 2) {
      for (int x = 0; x < width; x += 2) {
        const size_t at = static_cast<size_t>(y) * width + x;
        for (const std::vector<uint8_t>* c : {&c1, &c2}) {
          const int sum = (*c)[at] + (*c)[at + 1] + (*c)[at + width] + (*c)[at + width + 1];
          out.push_back(static_cast<uint8_t>((sum + 2) / 4));
        }
      }
    }
    return out;
  }
  out.resize(plane * 3);
  for (size_t i = 0; i < plane; ++i) {
    const uint8_t v[3] = {c0[i], c1[i], c2[i]};
    for (size_t c = 0; c < 3; ++c) out[nhwc ? i * 3 + c : c * plane + i] = v[c];
  }
  return out;
}

InputData read_image_input(const std::string& path, const hbDNNTensorProperties& p) {
  if (!is_image_type(p.tensorType)) {
    fail("input file '" + path + "': an image file needs an image input, this input is " + tensor_type_name(p.tensorType) +
         " (give .bin, .npy or .txt)");
  }
  const auto [height, width] = image_size(p);
  if (height <= 0 || width <= 0) fail("input file '" + path + "': the input's valid shape " + shape_text(p.validShape) + " is not an image");
  int w = 0, h = 0;
  std::vector<uint8_t> rgb = decode_image_rgb(path, &h, &w);  // throws with stb's reason
  rgb = resize_bilinear(rgb, h, w, 3, height, width);
  InputData d;
  d.bytes = convert_rgb_image(rgb, height, width, p);
  if (d.bytes.size() != dense_byte_size(p)) {
    fail("input file '" + path + "': the converted image has " + std::to_string(d.bytes.size()) + " bytes, the input takes " +
         std::to_string(dense_byte_size(p)));
  }
  return d;
}

InputData read_source_image(const std::string& path, const hbDNNTensorProperties& p) {
  const bool nv12 = p.tensorType == HB_DNN_IMG_TYPE_NV12 || p.tensorType == HB_DNN_IMG_TYPE_NV12_SEPARATE;
  if (!nv12 && p.tensorType != HB_DNN_IMG_TYPE_Y) {
    fail("input file '" + path + "': a resizer input is NV12 or Y, this one is " + tensor_type_name(p.tensorType));
  }
  const std::string ext = lower_extension(path);
  std::vector<uint8_t> rgb;  // interleaved, when the file holds RGB
  int h = 0, w = 0;
  InputData d;
  if (ext == "jpg" || ext == "jpeg" || ext == "png") {
    rgb = decode_image_rgb(path, &h, &w);  // throws with stb's reason
  } else if (ext == "npy") {
    const NpyArray a = parse_npy(path);
    if (a.descr != "u1") fail("input file '" + path + "': a source image .npy holds uint8 ('u1'), not '" + a.descr + "'");
    const std::vector<int64_t>& s = a.shape;
    const auto side = [&](int64_t v) {
      if (v < 1 || v > std::numeric_limits<int>::max() / 4) fail("input file '" + path + "': shape " + a.shape_text() + " is not an image");
      return static_cast<int>(v);
    };
    if (s.size() == 3 && s[2] == 3) {  // (H, W, 3) RGB
      h = side(s[0]), w = side(s[1]);
      rgb.assign(a.data.begin(), a.data.end());
    } else if (s.size() == 4 && s[0] == 1 && s[1] == 3) {  // (1, 3, H, W) RGB
      h = side(s[2]), w = side(s[3]);
      const size_t plane = static_cast<size_t>(h) * w;
      rgb.resize(plane * 3);
      for (size_t i = 0; i < plane; ++i) {
        for (size_t c = 0; c < 3; ++c) rgb[i * 3 + c] = static_cast<uint8_t>(a.data[c * plane + i]);
      }
    } else if (s.size() == 2 && !nv12) {  // (H, W) Y
      h = side(s[0]), w = side(s[1]);
      d.bytes.assign(a.data.begin(), a.data.end());
    } else if (s.size() == 2 && s[0] % 3 == 0 && (s[0] * 2 / 3) % 2 == 0 && s[1] % 2 == 0) {
      h = side(s[0] * 2 / 3), w = side(s[1]);  // (H*3/2, W) NV12: Y rows, then interleaved UV rows
      d.bytes.assign(a.data.begin(), a.data.end());
    } else {
      fail("input file '" + path + "': shape " + a.shape_text() + " is not a source image: (H, W, 3) or (1, 3, H, W) RGB, or " +
           (nv12 ? "(H*3/2, W) NV12 with H and W even" : "(H, W) Y"));
    }
  } else {
    fail("input file '" + path + "': a resizer input's source image is .jpg/.jpeg/.png or .npy (its size is the image's; "
         ".bin and .txt carry no size)");
  }
  if (!rgb.empty() && nv12 && (h % 2 != 0 || w % 2 != 0)) {
    // NV12 has one chroma sample per 2x2 block: an odd side gets its last row / column repeated.
    const int eh = h + h % 2, ew = w + w % 2;
    std::vector<uint8_t> even(static_cast<size_t>(eh) * ew * 3);
    for (int y = 0; y < eh; ++y) {
      for (int x = 0; x < ew; ++x) {
        const size_t from = (static_cast<size_t>(std::min(y, h - 1)) * w + std::min(x, w - 1)) * 3;
        std::memcpy(&even[(static_cast<size_t>(y) * ew + x) * 3], &rgb[from], 3);
      }
    }
    rgb.swap(even), h = eh, w = ew;
  }
  if (!rgb.empty()) d.bytes = convert_rgb_image(rgb, h, w, p);
  d.image_height = h, d.image_width = w;
  return d;
}

std::vector<hbDNNRoi> parse_rois(const std::string& text, const std::string& what) {
  std::vector<hbDNNRoi> rois;
  std::string items = text;
  std::replace(items.begin(), items.end(), ';', '\n');
  std::stringstream lines(items);
  for (std::string item; std::getline(lines, item);) {
    std::string words = item;
    std::replace(words.begin(), words.end(), ',', ' ');
    std::stringstream in(words);
    std::vector<int32_t> v;
    bool bad = false;
    for (std::string word; !bad && in >> word;) {
      char* rest = nullptr;
      errno = 0;
      const long long n = std::strtoll(word.c_str(), &rest, 10);
      bad = *rest != '\0' || errno != 0 || n < std::numeric_limits<int32_t>::min() || n > std::numeric_limits<int32_t>::max();
      v.push_back(static_cast<int32_t>(n));
    }
    if (v.empty()) continue;  // a blank item
    if (bad || v.size() != 4) {
      fail(what + ": ROI " + std::to_string(rois.size()) + " '" + words + "' is not four integers left,top,right,bottom");
    }
    rois.push_back({v[0], v[1], v[2], v[3]});
  }
  return rois;
}

std::vector<hbDNNRoi> read_roi_file(const std::string& path) {
  return parse_rois(read_whole_file(path), "ROI file '" + path + "'");
}

std::vector<uint8_t> gather_valid(const uint8_t* data, const hbDNNTensorProperties& p) {
  const size_t dense = dense_byte_size(p);
  const hbDNNTensorShape& s = p.validShape;
  bool all_zero = true;
  for (int32_t i = 0; i < s.numDimensions; ++i) all_zero = all_zero && p.stride[i] == 0;
  if (all_zero || is_image_type(p.tensorType) || s.numDimensions == 0) return std::vector<uint8_t>(data, data + dense);
  const size_t elem = element_size(p.tensorType);
  std::vector<uint8_t> out(dense);
  const int64_t count = element_count(s);
  std::vector<int64_t> index(static_cast<size_t>(s.numDimensions), 0);
  for (int64_t n = 0; n < count; ++n) {
    int64_t offset = 0;
    for (int32_t d = 0; d < s.numDimensions; ++d) offset += index[static_cast<size_t>(d)] * p.stride[d];
    std::memcpy(out.data() + static_cast<size_t>(n) * elem, data + offset, elem);
    for (int32_t d = s.numDimensions - 1; d >= 0; --d) {
      if (++index[static_cast<size_t>(d)] < s.dimensionSize[d]) break;
      index[static_cast<size_t>(d)] = 0;
    }
  }
  return out;
}

std::vector<double> to_doubles(const std::vector<uint8_t>& dense, const hbDNNTensorProperties& p) {
  const size_t elem = element_size(p.tensorType);
  std::vector<double> v(elem ? dense.size() / elem : 0);
  for (size_t i = 0; i < v.size(); ++i) v[i] = load_value(dense.data() + i * elem, p.tensorType);
  return v;
}

std::vector<double> dequantize(const std::vector<uint8_t>& dense, const hbDNNTensorProperties& p) {
  std::vector<double> v = to_doubles(dense, p);
  if (p.quantiType == NONE) return v;
  const int32_t len = p.quantiType == SCALE ? p.scale.scaleLen : p.shift.shiftLen;
  if (len <= 0) return v;
  const hbDNNTensorShape& s = p.validShape;
  int32_t axis = p.quantizeAxis;
  if (len > 1 && (axis < 0 || axis >= s.numDimensions)) {
    axis = p.tensorLayout == HB_DNN_LAYOUT_NHWC ? s.numDimensions - 1 : 1;  // channels
  }
  int64_t inner = 1, dim = 1;
  if (len > 1 && axis >= 0 && axis < s.numDimensions) {
    dim = s.dimensionSize[axis];
    for (int32_t d = axis + 1; d < s.numDimensions; ++d) inner *= s.dimensionSize[d];
  }
  for (size_t i = 0; i < v.size(); ++i) {
    int64_t c = len > 1 ? (static_cast<int64_t>(i) / inner) % dim : 0;
    if (c >= len) c = len - 1;
    if (p.quantiType == SCALE) {
      const double zp = p.scale.zeroPointLen > 0 ? p.scale.zeroPointData[std::min<int64_t>(c, p.scale.zeroPointLen - 1)] : 0;
      v[i] = (v[i] - zp) * static_cast<double>(p.scale.scaleData[c]);
    } else {
      v[i] = v[i] / static_cast<double>(uint64_t{1} << p.shift.shiftData[c]);
    }
  }
  return v;
}

std::string format_txt(const std::vector<double>& values, const hbDNNTensorShape& shape, int precision, int axis,
                       bool as_float) {
  const int rank = std::clamp(shape.numDimensions, 0, HB_DNN_TENSOR_MAX_DIMENSIONS);
  const std::vector<int64_t> dims(shape.dimensionSize, shape.dimensionSize + rank);
  const format::NumberStyle style{
      as_float ? format::NumberStyle::kFixed : format::NumberStyle::kInteger, precision};
  return format::format_tensor_text(values, dims, axis, style);
}

void write_file_atomically(const std::string& path, const std::string& bytes) {
  const format::Status status = format::write_file_atomically(
      path, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), "dump file");
  if (!status.ok()) fail(status.message);
}

std::vector<size_t> top_k(const std::vector<double>& values, size_t k) {
  std::vector<size_t> idx(values.size());
  std::iota(idx.begin(), idx.end(), size_t{0});
  k = std::min(k, idx.size());
  std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(k), idx.end(), [&](size_t a, size_t b) {
    return values[a] > values[b] || (values[a] == values[b] && a < b);
  });
  idx.resize(k);
  return idx;
}

}  // namespace openbpu::hrt
