// NumPy .npy files (format versions 1.0, 2.0, 3.0; little-endian, C order) as kernels::Tensor.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "openbpu/kernels/tensor.h"

namespace openbpu {

// Parses .npy bytes; `origin` names the source in errors. Supports bool, int8..int64,
// uint8..uint64, float16, float32, float64. Fortran-ordered arrays are reordered to C order.
kernels::Tensor parse_npy(std::string_view bytes, std::string_view origin);
kernels::Tensor read_npy(const std::filesystem::path& path);

// Serialises a tensor as .npy version 1.0 (2.0 if the header needs it).
std::string to_npy(const kernels::Tensor& tensor);
// Writes atomically.
void write_npy(const std::filesystem::path& path, const kernels::Tensor& tensor);

}  // namespace openbpu
