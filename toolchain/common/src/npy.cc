#include "openbpu/common/npy.h"

#include <cstring>
#include <vector>

#include "openbpu/common/atomic_file.h"
#include "openbpu/common/error.h"
#include "openbpu/kernels/axes.h"

namespace openbpu {

using kernels::DataType;
using kernels::Tensor;

namespace {

struct NpyType {
  const char* descr;
  DataType dtype;
};

constexpr NpyType kTypes[] = {
    {"|b1", DataType::kBool},     {"|i1", DataType::kInt8},     {"|u1", DataType::kUint8},
    {"<i2", DataType::kInt16},    {"<u2", DataType::kUint16},   {"<i4", DataType::kInt32},
    {"<u4", DataType::kUint32},   {"<i8", DataType::kInt64},    {"<u8", DataType::kUint64},
    {"<f2", DataType::kFloat16},  {"<f4", DataType::kFloat32},  {"<f8", DataType::kFloat64},
};

// Finds `'key': ` in the header dict and returns the text after it.
std::string_view dict_value(std::string_view header, std::string_view key,
                            std::string_view origin) {
  const std::string quoted1 = "'" + std::string(key) + "'";
  const std::string quoted2 = "\"" + std::string(key) + "\"";
  size_t pos = header.find(quoted1);
  size_t len = quoted1.size();
  if (pos == std::string_view::npos) {
    pos = header.find(quoted2);
    len = quoted2.size();
  }
  if (pos == std::string_view::npos) raise(origin, ": .npy header has no '", key, "' entry");
  std::string_view rest = header.substr(pos + len);
  const size_t colon = rest.find(':');
  if (colon == std::string_view::npos) raise(origin, ": malformed .npy header");
  rest = rest.substr(colon + 1);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  return rest;
}

}  // namespace

Tensor parse_npy(std::string_view bytes, std::string_view origin) {
  if (bytes.size() < 10 || bytes.substr(0, 6) != "\x93NUMPY") {
    raise(origin, ": not a .npy file (missing the \\x93NUMPY magic)");
  }
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len = 0;
  size_t header_start = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) |
                 (static_cast<size_t>(static_cast<unsigned char>(bytes[9])) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) raise(origin, ": truncated .npy header");
    for (int i = 3; i >= 0; --i) {
      header_len = (header_len << 8) | static_cast<unsigned char>(bytes[8 + size_t(i)]);
    }
    header_start = 12;
  } else {
    raise(origin, ": unsupported .npy format version ", major);
  }
  if (header_start + header_len > bytes.size()) raise(origin, ": truncated .npy header");
  const std::string_view header = bytes.substr(header_start, header_len);

  std::string_view descr = dict_value(header, "descr", origin);
  if (descr.empty() || (descr.front() != '\'' && descr.front() != '"')) {
    raise(origin, ": malformed 'descr' in .npy header");
  }
  const char quote = descr.front();
  descr.remove_prefix(1);
  descr = descr.substr(0, descr.find(quote));
  std::string normalized(descr);
  if (normalized.size() == 3 && normalized[0] == '=') normalized[0] = '<';
  if (normalized == "<b1" || normalized == "=b1") normalized = "|b1";
  if (normalized == "<i1") normalized = "|i1";
  if (normalized == "<u1") normalized = "|u1";
  DataType dtype = DataType::kUndefined;
  for (const NpyType& t : kTypes) {
    if (normalized == t.descr) dtype = t.dtype;
  }
  if (dtype == DataType::kUndefined) {
    raise(origin, ": unsupported .npy element type '", descr,
          "' (supported: bool, int8-64, uint8-64, float16/32/64, little-endian)");
  }
  const std::string_view fortran = dict_value(header, "fortran_order", origin);
  const bool fortran_order = fortran.substr(0, 4) == "True";

  std::string_view shape_text = dict_value(header, "shape", origin);
  if (shape_text.empty() || shape_text.front() != '(') raise(origin, ": malformed 'shape' in .npy header");
  shape_text = shape_text.substr(1, shape_text.find(')') - 1);
  kernels::Shape shape;
  size_t i = 0;
  while (i < shape_text.size()) {
    while (i < shape_text.size() && (shape_text[i] == ' ' || shape_text[i] == ',')) ++i;
    if (i >= shape_text.size()) break;
    int64_t d = 0;
    bool digits = false;
    while (i < shape_text.size() && shape_text[i] >= '0' && shape_text[i] <= '9') {
      if (d > (int64_t{1} << 50)) raise(origin, ": .npy dimension too large");
      d = d * 10 + (shape_text[i] - '0');
      digits = true;
      ++i;
    }
    if (!digits) raise(origin, ": malformed 'shape' in .npy header");
    while (i < shape_text.size() && shape_text[i] == 'L') ++i;
    shape.push_back(d);
  }

  const size_t data_start = header_start + header_len;
  int64_t count = 0;
  try {
    count = kernels::shape_element_count(shape);
  } catch (const kernels::KernelError& e) {
    raise(origin, ": ", e.what());
  }
  const size_t need = static_cast<size_t>(count) * kernels::dtype_size(dtype);
  if (bytes.size() - data_start < need) {
    raise(origin, ": .npy data is truncated (", bytes.size() - data_start, " bytes for shape ",
          kernels::shape_to_string(shape), " of ", kernels::dtype_name(dtype), ", need ", need, ")");
  }
  Tensor t(dtype, shape);
  const char* src = bytes.data() + data_start;
  if (!fortran_order || shape.size() < 2) {
    std::memcpy(t.raw_data(), src, need);
  } else {
    // Column-major on disk: element (i0..in) sits at sum(i_k * fstride_k).
    const size_t elem = kernels::dtype_size(dtype);
    std::vector<int64_t> fstride(shape.size(), 1);
    for (size_t k = 1; k < shape.size(); ++k) fstride[k] = fstride[k - 1] * shape[k - 1];
    std::vector<int64_t> index(shape.size(), 0);
    char* dst = static_cast<char*>(t.raw_data());
    for (int64_t n = 0; n < count; ++n) {
      int64_t off = 0;
      for (size_t k = 0; k < shape.size(); ++k) off += index[k] * fstride[k];
      std::memcpy(dst + static_cast<size_t>(n) * elem, src + static_cast<size_t>(off) * elem, elem);
      for (size_t k = shape.size(); k-- > 0;) {
        if (++index[k] < shape[k]) break;
        index[k] = 0;
      }
    }
  }
  return t;
}

Tensor read_npy(const std::filesystem::path& path) {
  return parse_npy(read_file(path), path.string());
}

std::string to_npy(const Tensor& tensor) {
  const char* descr = nullptr;
  for (const NpyType& t : kTypes) {
    if (t.dtype == tensor.dtype()) descr = t.descr;
  }
  if (descr == nullptr) raise("cannot write ", tensor.describe(), " as .npy");
  std::string shape = "(";
  for (size_t i = 0; i < tensor.shape().size(); ++i) {
    shape += std::to_string(tensor.shape()[i]);
    shape += (tensor.shape().size() == 1 || i + 1 < tensor.shape().size()) ? "," : "";
    if (i + 1 < tensor.shape().size()) shape += ' ';
  }
  shape += ")";
  std::string header = str_cat("{'descr': '", descr, "', 'fortran_order': False, 'shape': ", shape, ", }");
  // Pad with spaces so that the data starts on a 64-byte boundary; end with a newline.
  const bool v2 = header.size() + 11 > 65535;
  const size_t prefix = v2 ? 12 : 10;
  const size_t total = (prefix + header.size() + 1 + 63) / 64 * 64;
  header.append(total - prefix - header.size() - 1, ' ');
  header.push_back('\n');
  std::string out("\x93NUMPY", 6);
  out.push_back(static_cast<char>(v2 ? 2 : 1));
  out.push_back(0);
  const size_t len = header.size();
  out.push_back(static_cast<char>(len & 0xff));
  out.push_back(static_cast<char>((len >> 8) & 0xff));
  if (v2) {
    out.push_back(static_cast<char>((len >> 16) & 0xff));
    out.push_back(static_cast<char>((len >> 24) & 0xff));
  }
  out += header;
  out.append(static_cast<const char*>(tensor.raw_data()), tensor.byte_size());
  return out;
}

void write_npy(const std::filesystem::path& path, const Tensor& tensor) {
  write_file_atomically(path, to_npy(tensor));
}

}  // namespace openbpu
