// Input files: .bin / .npy / .txt / images read into a model input's bytes, random inputs, ROI files (tensor_io.h).
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

#include "element_access.h"
#include "openbpu/base/float16.h"
#include "openbpu/format/model_file.h"
#include "openbpu/format/tensor_text.h"
#include "openbpu/tensor_io/image_decode.h"

namespace openbpu::tensor_io {

using namespace detail;  // NOLINT(google-build-using-namespace): this library's own helpers

namespace {

std::vector<uint8_t> decode_image_file(const std::string& path, int* height, int* width) {
  const std::string bytes = read_whole_file(path);
  return decode_image_rgb({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, "input file '" + path + "'",
                          height, width);
}

}  // namespace

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

// "(1,3,48,192,)", as shape_text prints a tensor shape.
std::string dims_text(const std::vector<int64_t>& shape) {
  std::string t = "(";
  for (int64_t d : shape) t += std::to_string(d) + ",";
  return t + ")";
}

// A .npy file: its dtype without the byte-order mark ("f4", "u1", ...), shape and raw data.
struct NpyArray {
  std::string descr;
  std::vector<int64_t> shape;
  std::string data;
  std::string shape_text() const { return dims_text(shape); }
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
  // The offset of the value of `key`; fails unless the header has "'key': " and a value.
  auto value_of = [&](const std::string& key) {
    const size_t k = header.find("'" + key + "'");
    if (k == std::string::npos) fail("input file '" + path + "': .npy header has no '" + key + "'");
    size_t v = header.find(':', k);
    if (v == std::string::npos) fail("input file '" + path + "': bad .npy header ('" + key + "' without ':')");
    ++v;
    while (v < header.size() && header[v] == ' ') ++v;
    if (v == header.size()) fail("input file '" + path + "': bad .npy header ('" + key + "' without a value)");
    return v;
  };
  // The text between header[at] (which must be `open`) and the next `close`.
  auto enclosed = [&](size_t at, char open, char close, const char* key) {
    const size_t end = header[at] == open ? header.find(close, at + 1) : std::string::npos;
    if (end == std::string::npos) {
      fail("input file '" + path + "': bad .npy header ('" + key + "' is not " + open + "..." + close + ")");
    }
    return header.substr(at + 1, end - at - 1);
  };
  size_t at = value_of("descr");
  NpyArray a;
  std::string& descr = a.descr;
  descr = enclosed(at, header[at] == '"' ? '"' : '\'', header[at] == '"' ? '"' : '\'', "descr");
  at = value_of("fortran_order");
  if (header.compare(at, 4, "True") == 0) fail("input file '" + path + "': Fortran-order .npy arrays are not supported");
  at = value_of("shape");
  std::vector<int64_t>& shape = a.shape;
  std::stringstream dims(enclosed(at, '(', ')', "shape"));
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
  return array_input(a.descr, a.shape, a.data.data(), a.data.size(), p, "input file '" + path + "'");
}

std::string numpy_descr(int32_t tensor_type) { return numpy_kind(tensor_type); }

InputData array_input(const std::string& descr, const std::vector<int64_t>& shape, const void* data, size_t bytes,
                      const hbDNNTensorProperties& p, const std::string& what) {
  if (element_size(p.tensorType) == 0) {
    fail(what + ": tensor type " + tensor_type_name(p.tensorType) + " is not supported");
  }
  const std::string want = numpy_kind(p.tensorType);
  // A bool mask is U8 in the classic tensor types: numpy's bool ('b1') has its bytes (0 / 1).
  const bool bool_as_u8 = descr == "b1" && want == "u1";
  if (descr != want && !bool_as_u8) {
    fail(what + ": dtype '" + descr + "' does not match the input's " + tensor_type_name(p.tensorType) +
         " (numpy '" + want + "')");
  }
  const size_t dense = dense_byte_size(p);
  const bool nv12 = p.tensorType == HB_DNN_IMG_TYPE_NV12 || p.tensorType == HB_DNN_IMG_TYPE_NV12_SEPARATE;
  bool shape_ok = static_cast<int32_t>(shape.size()) == p.validShape.numDimensions;
  for (size_t i = 0; shape_ok && i < shape.size(); ++i) shape_ok = shape[i] == p.validShape.dimensionSize[i];
  if (nv12) shape_ok = bytes == dense;
  if (!shape_ok) {
    fail(what + ": shape " + dims_text(shape) + " does not match the input's valid shape " + shape_text(p.validShape) +
         (nv12 ? " (NV12: " + std::to_string(dense) + " bytes)" : std::string()));
  }
  InputData d;
  const auto* first = static_cast<const uint8_t*>(data);
  d.bytes.assign(first, first + bytes);
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
  std::vector<uint8_t> rgb = decode_image_file(path, &h, &w);
  rgb = resize_bilinear(rgb, h, w, 3, height, width);
  InputData d;
  d.bytes = convert_rgb_image(rgb, height, width, p);
  if (d.bytes.size() != dense_byte_size(p)) {
    fail("input file '" + path + "': the converted image has " + std::to_string(d.bytes.size()) + " bytes, the input takes " +
         std::to_string(dense_byte_size(p)));
  }
  return d;
}

namespace {

// A decoded or given RGB picture (interleaved) or the input's own planes (`planes`), as the
// source image of a resizer input: RGB converted (an odd side of an NV12 input repeated).
InputData finish_source_image(std::vector<uint8_t> rgb, std::vector<uint8_t> planes, int h, int w,
                              const hbDNNTensorProperties& p) {
  const bool nv12 = p.tensorType == HB_DNN_IMG_TYPE_NV12 || p.tensorType == HB_DNN_IMG_TYPE_NV12_SEPARATE;
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
  InputData d;
  d.bytes = rgb.empty() ? std::move(planes) : convert_rgb_image(rgb, h, w, p);
  d.image_height = h, d.image_width = w;
  return d;
}

void check_source_type(const hbDNNTensorProperties& p, const std::string& what) {
  const bool nv12 = p.tensorType == HB_DNN_IMG_TYPE_NV12 || p.tensorType == HB_DNN_IMG_TYPE_NV12_SEPARATE;
  if (!nv12 && p.tensorType != HB_DNN_IMG_TYPE_Y) {
    fail(what + ": a resizer input is NV12 or Y, this one is " + tensor_type_name(p.tensorType));
  }
}

}  // namespace

InputData source_image_array(const std::string& descr, const std::vector<int64_t>& s, const void* data, size_t bytes,
                             const hbDNNTensorProperties& p, const std::string& what) {
  check_source_type(p, what);
  const bool nv12 = p.tensorType == HB_DNN_IMG_TYPE_NV12 || p.tensorType == HB_DNN_IMG_TYPE_NV12_SEPARATE;
  if (descr != "u1") fail(what + ": a source image holds uint8 ('u1'), not '" + descr + "'");
  const auto side = [&](int64_t v) {
    if (v < 1 || v > std::numeric_limits<int>::max() / 4) fail(what + ": shape " + dims_text(s) + " is not an image");
    return static_cast<int>(v);
  };
  const auto* first = static_cast<const uint8_t*>(data);
  const std::vector<uint8_t> all(first, first + bytes);
  std::vector<uint8_t> rgb, planes;
  int h = 0, w = 0;
  if (s.size() == 3 && s[2] == 3) {  // (H, W, 3) RGB
    h = side(s[0]), w = side(s[1]);
    rgb = all;
  } else if (s.size() == 4 && s[0] == 1 && s[1] == 3) {  // (1, 3, H, W) RGB
    h = side(s[2]), w = side(s[3]);
    const size_t plane = static_cast<size_t>(h) * w;
    rgb.resize(plane * 3);
    for (size_t i = 0; i < plane; ++i) {
      for (size_t c = 0; c < 3; ++c) rgb[i * 3 + c] = all[c * plane + i];
    }
  } else if (s.size() == 2 && !nv12) {  // (H, W) Y
    h = side(s[0]), w = side(s[1]);
    planes = all;
  } else if (s.size() == 2 && s[0] % 3 == 0 && (s[0] * 2 / 3) % 2 == 0 && s[1] % 2 == 0) {
    h = side(s[0] * 2 / 3), w = side(s[1]);  // (H*3/2, W) NV12: Y rows, then interleaved UV rows
    planes = all;
  } else {
    fail(what + ": shape " + dims_text(s) + " is not a source image: (H, W, 3) or (1, 3, H, W) RGB, or " +
         (nv12 ? "(H*3/2, W) NV12 with H and W even" : "(H, W) Y"));
  }
  return finish_source_image(std::move(rgb), std::move(planes), h, w, p);
}

InputData read_source_image(const std::string& path, const hbDNNTensorProperties& p) {
  const std::string what = "input file '" + path + "'";
  check_source_type(p, what);
  const std::string ext = lower_extension(path);
  if (ext == "jpg" || ext == "jpeg" || ext == "png") {
    int h = 0, w = 0;
    std::vector<uint8_t> rgb = decode_image_file(path, &h, &w);
    return finish_source_image(std::move(rgb), {}, h, w, p);
  }
  if (ext == "npy") {
    const NpyArray a = parse_npy(path);
    return source_image_array(a.descr, a.shape, a.data.data(), a.data.size(), p, what);
  }
  fail(what + ": a resizer input's source image is .jpg/.jpeg/.png or .npy (its size is the image's; "
       ".bin and .txt carry no size)");
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

}  // namespace openbpu::tensor_io
