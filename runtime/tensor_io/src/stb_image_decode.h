// Image decoding through stb_image (Debian libstb-dev; header only, compiled in
// stb_image_decode.cc so its warnings stay out of our code).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace openbpu::tensor_io {

// Interleaved RGB bytes (H*W*3) of a .jpg/.jpeg/.png file; throws std::runtime_error with the
// decoder's reason.
std::vector<uint8_t> decode_image_rgb(const std::string& path, int* height, int* width);

}  // namespace openbpu::tensor_io
