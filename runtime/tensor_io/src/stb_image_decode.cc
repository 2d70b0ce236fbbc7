#include "stb_image_decode.h"

#include <stdexcept>

// STB_IMAGE_STATIC: this jpg/png-only decoder stays private to this file, so a program that also
// links Debian's full libstb (the toolchain's calibration reads bmp and more) keeps that one.
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#define STBI_ONLY_JPEG
#define STBI_ONLY_PNG
#define STBI_NO_STDIO_WARNINGS
#include <stb/stb_image.h>

namespace openbpu::tensor_io {

std::vector<uint8_t> decode_image_rgb(const std::string& path, int* height, int* width) {
  int w = 0, h = 0, channels = 0;
  unsigned char* pixels = stbi_load(path.c_str(), &w, &h, &channels, 3);
  if (pixels == nullptr) {
    throw std::runtime_error("input file '" + path + "' cannot be decoded as an image: " + stbi_failure_reason());
  }
  std::vector<uint8_t> rgb(pixels, pixels + static_cast<size_t>(w) * h * 3);
  stbi_image_free(pixels);
  *height = h;
  *width = w;
  return rgb;
}

}  // namespace openbpu::tensor_io
