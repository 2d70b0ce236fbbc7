// Image decoding for every tool that reads pictures: the board tools' image inputs
// (tensor_io) and the toolchain's calibration samples and hb_eval_preprocess (calibration).
// One decoder, stb_image (Debian libstb-dev's header, compiled into tensor_io for jpg, png and
// bmp), behind checks of the bytes that stb_image 2.27 (Debian 12's) does not make itself:
//   - every JPEG Huffman table (DHT) holds at most 256 codes: 2.27 writes past its code-size
//     list otherwise (found by tests/fuzz image_decode; upstream fixed it in 2.28);
//   - every PNG chunk fits in the file (2.27 allocates an IDAT chunk's declared size, up to
//     4 GiB, before reading it);
//   - an uncompressed BMP holds all its rows (2.27 reads a truncated one to its end as zeros);
//   - the image has at most kMaxImagePixels pixels, so that a small file claiming a huge
//     picture is refused before its pixels are allocated, and at least one (2.27 returns a
//     BMP of height 0 as a picture without pixels; found by the same fuzz target).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace openbpu::tensor_io {

// 8192 x 8192 pixels (a 48-megapixel camera's 8000 x 6000 photo fits; 192 MiB of RGB bytes): a
// larger picture is refused, not decoded (scale it down first). stb_image decodes a truncated
// JPEG to its end with zeros, so this also bounds the time a small hostile file can take.
inline constexpr int64_t kMaxImagePixels = int64_t{8192} * 8192;

// The picture size a jpg / png / bmp file's header claims, without decoding its pixels: false
// when the header is not one stb_image reads or fails the checks above. Height is negative for
// a top-down BMP.
bool image_header_size(std::span<const uint8_t> bytes, int* height, int* width);

// The interleaved RGB bytes (H*W*3) of a jpg / png / bmp file's contents. Throws
// std::runtime_error "<origin>: cannot decode the image (<reason>)".
std::vector<uint8_t> decode_image_rgb(std::span<const uint8_t> bytes, const std::string& origin, int* height,
                                      int* width);

}  // namespace openbpu::tensor_io
