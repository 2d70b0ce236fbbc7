#include "openbpu/tensor_io/image_decode.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <memory>
#include <stdexcept>

// STB_IMAGE_STATIC: this decoder stays private to this file (no stbi_* symbols exported), so a
// program that also links Debian's libstb keeps that one.
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#define STBI_ONLY_JPEG
#define STBI_ONLY_PNG
#define STBI_ONLY_BMP
#define STBI_NO_STDIO
#include <stb/stb_image.h>

namespace openbpu::tensor_io {

namespace {

// "" when a scan of a JPEG uses the Huffman table (DC or AC, 0-3) `table` of `defined`, or
// stb_image refuses the selector itself; otherwise the rule broken.
std::string undefined_table(const bool (&defined)[2][4], int kind, int table) {
  if (table > 3 || defined[kind][table]) return "";
  return std::string("a JPEG scan uses ") + (kind == 0 ? "DC" : "AC") + " Huffman table " + std::to_string(table) +
         ", which no DHT before it defines";
}

// "" when the Huffman tables a JPEG scan (SOS segment `seg`) decodes with are defined; a
// progressive DC scan uses DC tables (its refinements none), an AC scan AC tables, a sequential
// scan both. stb_image 2.27 decodes with an undefined table's uninitialised memory (found by
// tests/fuzz image_decode: an index of -2^31 into a 256-entry table).
std::string scan_problem(std::span<const uint8_t> seg, bool progressive, const bool (&defined)[2][4]) {
  if (seg.empty()) return "";
  const size_t n = seg[0];
  if (seg.size() < 1 + 2 * n + 3) return "";  // stb_image refuses a short SOS itself
  const uint8_t ss = seg[1 + 2 * n], ah = seg[3 + 2 * n] >> 4;
  for (size_t c = 0; c < n; ++c) {
    const uint8_t tables = seg[2 + 2 * c];
    const bool dc = !progressive || (ss == 0 && ah == 0), ac = !progressive || ss > 0;
    for (const std::string& p : {dc ? undefined_table(defined, 0, tables >> 4) : std::string(),
                                 ac ? undefined_table(defined, 1, tables & 15) : std::string()}) {
      if (!p.empty()) return p;
    }
  }
  return "";
}

// "" when every Huffman table of a JPEG holds at most 256 codes and every scan's tables are
// defined before it (or the bytes are no JPEG); otherwise the rule broken. Walks the markers as
// stb_image does, through the entropy-coded data between scans (a progressive JPEG defines
// tables there too), and reads each DHT segment table by table as stb_image's loop does (a
// table may run past its segment's length, and past the end of the data).
std::string jpeg_huffman_problem(std::span<const uint8_t> b) {
  bool defined[2][4] = {}, progressive = false;
  size_t at = 0;
  while (at < b.size() && b[at] == 0xFF) ++at;  // stb_image skips fill bytes before SOI too
  if (at == 0 || at == b.size() || b[at] != 0xD8) return "";
  ++at;
  while (at + 4 <= b.size()) {
    const uint8_t marker = b[at + 1];
    if (b[at] != 0xFF || marker == 0xFF) {  // entropy-coded data, or a fill byte
      ++at;
      continue;
    }
    if (marker == 0x00 || marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) {  // no length
      at += 2;
      continue;
    }
    if (marker == 0xD9) break;  // end of image
    const size_t length = (size_t{b[at + 2]} << 8) | b[at + 3];
    if (marker == 0xC4) {
      int64_t left = static_cast<int64_t>(length) - 2;
      for (size_t t = at + 4; left > 0 && t < b.size();) {
        size_t codes = 0;  // stb_image reads zeros past the end of the data
        for (size_t i = t + 1; i <= t + 16 && i < b.size(); ++i) codes += b[i];
        if (codes > 256) {
          return "a JPEG Huffman table (DHT) defines " + std::to_string(codes) + " codes; at most 256 exist";
        }
        if ((b[t] >> 4) < 2 && (b[t] & 15) < 4) defined[b[t] >> 4][b[t] & 15] = true;
        left -= static_cast<int64_t>(17 + codes);
        t += 17 + codes;
      }
    }
    if (marker == 0xC2) progressive = true;  // the only progressive SOF stb_image reads
    if (marker == 0xDA) {
      const size_t first = std::min(b.size(), at + 4), end = std::max(first, std::min(b.size(), at + 2 + length));
      const std::string p = scan_problem(b.subspan(first, end - first), progressive, defined);
      if (!p.empty()) return p;
    }
    at += 2 + length;
  }
  return "";
}

uint32_t le(std::span<const uint8_t> b, size_t at, size_t bytes) {
  uint32_t v = 0;
  for (size_t i = 0; i < bytes; ++i) v |= uint32_t{b[at + i]} << (8 * i);
  return v;
}

// "" unless the bytes are a BMP of w x h pixels (h < 0: top-down) whose rows end past the end of
// the file: then the rule broken. stb_image reads every BMP but RLE (which it refuses) as
// uncompressed rows, whatever the compression field says.
std::string bmp_problem(std::span<const uint8_t> b, int64_t w, int64_t h) {
  if (b.size() < 30 || b[0] != 'B' || b[1] != 'M') return "";
  const uint64_t bits = le(b, le(b, 14, 4) == 12 ? 24 : 28, 2);  // OS/2 1.x headers: 16-bit sizes
  const uint64_t row = (static_cast<uint64_t>(std::llabs(w)) * bits + 31) / 32 * 4;
  const uint64_t end = uint64_t{le(b, 10, 4)} + row * static_cast<uint64_t>(std::llabs(h));
  if (end <= b.size()) return "";
  return "the BMP's pixel rows end at byte " + std::to_string(end) + ", the file has " + std::to_string(b.size()) +
         " (truncated)";
}

// "" unless the bytes are a PNG with a chunk whose declared length runs past the end of the
// file: then the rule broken (stb_image 2.27 allocates an IDAT chunk's declared size first).
std::string png_problem(std::span<const uint8_t> b) {
  static constexpr uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  if (b.size() < 8 || !std::equal(kSignature, kSignature + 8, b.begin())) return "";
  for (size_t at = 8; at + 8 <= b.size();) {
    const uint64_t length = (uint64_t{b[at]} << 24) | (uint64_t{b[at + 1]} << 16) | (uint64_t{b[at + 2]} << 8) | b[at + 3];
    const std::string type(reinterpret_cast<const char*>(&b[at + 4]), 4);
    if (length > b.size() - at - 8) {
      return "PNG chunk '" + type + "' at byte " + std::to_string(at) + " declares " + std::to_string(length) +
             " bytes, the file has " + std::to_string(b.size() - at - 8) + " after it (truncated)";
    }
    if (type == "IEND") break;
    at += 12 + length;
  }
  return "";
}

struct StbFree {
  void operator()(unsigned char* p) const { stbi_image_free(p); }
};

[[noreturn]] void refuse(const std::string& origin, const std::string& reason) {
  throw std::runtime_error(origin + ": cannot decode the image (" + reason + ")");
}

}  // namespace

bool image_header_size(std::span<const uint8_t> bytes, int* height, int* width) {
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max())) return false;
  // stb_image reads the headers with the code the checks above guard (a JPEG's DHT tables).
  if (!jpeg_huffman_problem(bytes).empty() || !png_problem(bytes).empty()) return false;
  int channels = 0;
  return stbi_info_from_memory(bytes.data(), static_cast<int>(bytes.size()), width, height, &channels) != 0;
}

std::vector<uint8_t> decode_image_rgb(std::span<const uint8_t> bytes, const std::string& origin, int* height,
                                      int* width) {
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max())) refuse(origin, "file larger than 2 GiB");
  const int size = static_cast<int>(bytes.size());
  for (const std::string& problem : {jpeg_huffman_problem(bytes), png_problem(bytes)}) {
    if (!problem.empty()) refuse(origin, problem);
  }
  int w = 0, h = 0, channels = 0;
  if (image_header_size(bytes, &h, &w) && std::llabs(int64_t{w}) * std::llabs(int64_t{h}) > kMaxImagePixels) {
    refuse(origin, std::to_string(w) + " x " + std::to_string(h) + " pixels; at most " +
                       std::to_string(kMaxImagePixels) + " (8192 x 8192) are read, scale it down first");
  }
  if (const std::string problem = bmp_problem(bytes, w, h); !problem.empty()) refuse(origin, problem);
  const std::unique_ptr<unsigned char, StbFree> pixels(stbi_load_from_memory(bytes.data(), size, &w, &h, &channels, 3));
  if (!pixels) refuse(origin, stbi_failure_reason());
  // stb_image 2.27 returns a BMP whose header says height 0 as an image without pixels.
  if (w <= 0 || h <= 0) refuse(origin, std::to_string(w) + " x " + std::to_string(h) + " pixels; an image has at least one");
  *height = h;
  *width = w;
  return std::vector<uint8_t>(pixels.get(), pixels.get() + static_cast<size_t>(w) * h * 3);
}

}  // namespace openbpu::tensor_io
