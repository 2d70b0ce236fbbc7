// ocr_pipeline: PP-OCR text detection → direction classification → recognition on an image,
// with three converted .bin models run through the hbDNN C API (README.md).
//
//   ocr_pipeline --det DET.bin [--cls CLS.bin] --rec REC.bin --keys ppocr_keys_v1.txt IMAGE...
//
// Prints, per image, "image PATH: WxH, N lines" and one line per text line (pipeline.h's
// format_text_line). Exit status 0 on success; 1 with one message line naming the file, flag or
// call on any error (a bad image is reported and the other images still run).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "hbdnn_model.h"
#include "pipeline.h"

namespace {

const char kUsage[] =
    "usage: ocr_pipeline --det DET.bin [--cls CLS.bin] --rec REC.bin --keys KEYS.txt [options] "
    "IMAGE...\n"
    "PP-OCR on each IMAGE (binary PPM P6 or PGM P5, 8-bit) with converted models through hbDNN:\n"
    "  --det FILE            text detection model (DB), .bin or .hbm\n"
    "  --cls FILE            text direction classifier (0 / 180 degrees); without it no line "
    "turns\n"
    "  --rec FILE            text recognition model (CTC)\n"
    "  --keys FILE           the recogniser's character dictionary (ppocr_keys_v1.txt)\n"
    "  --db-threshold X      binarisation of det's probability map (default 0.3)\n"
    "  --box-threshold X     minimum mean probability inside a box (default 0.6)\n"
    "  --unclip-ratio X      box growth (default 1.5)\n"
    "  --cls-threshold X     probability of 180 needed to turn a line (default 0.9)\n"
    "  --drop-score X        lines recognised with a lower score are dropped (default 0.5)\n"
    "  --verbose             the models' tensors and each image's time on stderr\n"
    "  -h, --help            this text\n"
    "Output: per image \"image PATH: WxH, N lines\", then per line\n"
    "  \"box I: x0,y0 x1,y1 x2,y2 x3,y3 angle A score S text TEXT\" (corners clockwise from "
    "top-left).\n";

struct Arguments {
  std::string det, cls, rec, keys;
  std::vector<std::string> images;
  ocr::PipelineOptions options;
  bool verbose = false;
};

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "ocr_pipeline: error: %s\n%s", message.c_str(), kUsage);
  std::exit(1);
}

double parse_number(const std::string& flag, const char* text, double lo, double hi) {
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(v >= lo && v <= hi)) {
    char range[64];
    std::snprintf(range, sizeof range, "[%g, %g]", lo, hi);
    usage_error(flag + " takes a number in " + range + ", got '" + text + "'");
  }
  return v;
}

Arguments parse_arguments(int argc, char** argv) {
  Arguments a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    if (arg == "--verbose") {
      a.verbose = true;
      continue;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      a.images.push_back(arg);
      continue;
    }
    static const char* const kValueOptions[] = {
        "--det",           "--cls",          "--rec",           "--keys",      "--db-threshold",
        "--box-threshold", "--unclip-ratio", "--cls-threshold", "--drop-score"};
    if (std::find(std::begin(kValueOptions), std::end(kValueOptions), arg) ==
        std::end(kValueOptions)) {
      usage_error("unknown option '" + arg + "'");
    }
    if (i + 1 >= argc) usage_error(arg + " needs a value");
    const char* value = argv[++i];
    if (arg == "--det")
      a.det = value;
    else if (arg == "--cls")
      a.cls = value;
    else if (arg == "--rec")
      a.rec = value;
    else if (arg == "--keys")
      a.keys = value;
    else if (arg == "--db-threshold")
      a.options.db.threshold = static_cast<float>(parse_number(arg, value, 0, 1));
    else if (arg == "--box-threshold")
      a.options.db.box_threshold = parse_number(arg, value, 0, 1);
    else if (arg == "--unclip-ratio")
      a.options.db.unclip_ratio = parse_number(arg, value, 0, 10);
    else if (arg == "--cls-threshold")
      a.options.cls_threshold = parse_number(arg, value, 0, 1);
    else  // --drop-score
      a.options.drop_score = parse_number(arg, value, 0, 1);
  }
  if (a.det.empty()) usage_error("--det is required");
  if (a.rec.empty()) usage_error("--rec is required");
  if (a.keys.empty()) usage_error("--keys is required");
  if (a.images.empty()) usage_error("no IMAGE given");
  return a;
}

// Runs the pipeline on one image and prints its lines; false (after a message) if the image
// cannot be read.
bool run_image(const std::string& path, const Arguments& a, ocr::TextModel& det,
               ocr::TextModel* cls, ocr::TextModel& rec, const ocr::CharacterDictionary& keys) {
  ocr::Image page;
  try {
    page = ocr::read_image(path);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ocr_pipeline: error: %s\n", e.what());
    return false;
  }
  const auto start = std::chrono::steady_clock::now();
  const std::vector<ocr::TextLine> lines =
      ocr::recognize_page(page, det, cls, rec, keys, a.options);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("image %s: %dx%d, %zu lines\n", path.c_str(), page.width, page.height, lines.size());
  for (size_t i = 0; i < lines.size(); ++i)
    std::printf("%s\n", ocr::format_text_line(i, lines[i]).c_str());
  std::fflush(stdout);
  if (a.verbose) std::fprintf(stderr, "%s: %.1f ms\n", path.c_str(), ms);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const Arguments a = parse_arguments(argc, argv);
  try {
    const ocr::CharacterDictionary keys = ocr::CharacterDictionary::load(a.keys);
    ocr::HbdnnModel det(a.det, "det");
    std::unique_ptr<ocr::HbdnnModel> cls;
    if (!a.cls.empty()) cls = std::make_unique<ocr::HbdnnModel>(a.cls, "cls");
    ocr::HbdnnModel rec(a.rec, "rec");
    if (a.verbose) {
      std::fprintf(stderr, "hbDNN %s\n%s\n", hbDNNGetVersion(), det.describe().c_str());
      if (cls) std::fprintf(stderr, "%s\n", cls->describe().c_str());
      std::fprintf(stderr, "%s\n", rec.describe().c_str());
    }
    bool all_read = true;
    for (const std::string& image : a.images) {
      all_read = run_image(image, a, det, cls.get(), rec, keys) && all_read;
    }
    return all_read ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ocr_pipeline: error: %s\n", e.what());
    return 1;
  }
}
