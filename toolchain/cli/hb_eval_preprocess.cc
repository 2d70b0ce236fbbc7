// hb_eval_preprocess: prepares evaluation (and calibration) images as a named model expects
// them (calibration/image_preprocess.h: the recipe table), writing one raw uint8 file per image
// (<name>.bin, the recipe's colour type and layout) that hrt_model_exec --input_file and
// calibration (cal_data_type uint8) read.
//
//   hb_eval_preprocess -m MODEL_NAME -i IMAGE_DIR -o OUTPUT_DIR [-v VAL_TXT]
#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "openbpu/calibration/image_preprocess.h"
#include "openbpu/common/atomic_file.h"
#include "openbpu/common/error.h"

namespace {

using namespace openbpu;
namespace fs = std::filesystem;

std::string describe(const calibration::NamedRecipe& r) {
  const calibration::ImageRecipe& p = r.recipe;
  const char* mode = p.mode == calibration::ResizeMode::kStretch         ? "resize"
                     : p.mode == calibration::ResizeMode::kShortSideCrop ? "short side, centre crop"
                     : p.mode == calibration::ResizeMode::kLetterbox     ? "letterbox"
                                                                         : "height, pad right";
  std::ostringstream s;
  s << r.name << " (" << r.family << "): " << p.height << "x" << p.width << " " << mode << ", "
    << config::to_string(p.colour) << " " << config::to_string(p.layout);
  return s.str();
}

bool is_image(const fs::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return ext == ".jpg" || ext == ".jpeg" || ext == ".png" || ext == ".bmp";
}

// The images to process: the val list's names (first word of each line) or the folder's images.
std::vector<fs::path> images(const fs::path& dir, const std::string& val_txt) {
  if (!fs::is_directory(dir)) raise("-i ", dir.string(), ": not a folder");
  std::vector<fs::path> files;
  if (!val_txt.empty()) {
    std::istringstream lines(read_file(val_txt));
    std::string line;
    for (int number = 1; std::getline(lines, line); ++number) {
      std::istringstream words(line);
      std::string name;
      if (!(words >> name)) continue;
      if (!fs::is_regular_file(dir / name))
        raise(val_txt, " line ", number, ": ", (dir / name).string(), " does not exist");
      files.push_back(dir / name);
    }
  } else {
    for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
      if (e.is_regular_file() && is_image(e.path())) files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
  }
  if (files.empty())
    raise("-i ", dir.string(), ": no images (.jpg, .jpeg, .png, .bmp)",
          val_txt.empty() ? "" : " listed");
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  std::string names;
  for (const calibration::NamedRecipe& r : calibration::named_recipes())
    names += "\n  " + describe(r);
  CLI::App app{"Preprocess images as a model expects them, into raw uint8 files. Model names:" +
               names};
  std::string model, image_dir, output_dir, val_txt;
  app.add_option("-m,--model_name", model, "the model name (listed above)")->required();
  app.add_option("-i,--image_dir", image_dir, "the folder of images")->required();
  app.add_option("-o,--output_dir", output_dir, "the folder for the preprocessed files")
      ->required();
  app.add_option("-v,--val_txt", val_txt, "process only the images this file lists (one per line)");
  app.set_version_flag("--version",
                       std::string("hb_eval_preprocess version ") + OPENBPU_VERSION_STRING);
  CLI11_PARSE(app, argc, argv);
  try {
    const calibration::NamedRecipe* recipe = calibration::find_recipe(model);
    if (recipe == nullptr)
      raise("-m ", model, ": not a supported model name; the names are:", names);
    const std::vector<fs::path> files = images(image_dir, val_txt);
    std::error_code ec;
    fs::create_directories(output_dir, ec);
    if (ec) raise("-o ", output_dir, ": cannot create the folder: ", ec.message());
    for (const fs::path& file : files) {
      const kernels::Tensor t = calibration::preprocess_image(file, recipe->recipe);
      write_file_atomically(
          fs::path(output_dir) / (file.stem().string() + ".bin"),
          std::string_view(reinterpret_cast<const char*>(t.data<uint8_t>()), t.byte_size()));
    }
    std::cout << "INFO " << files.size() << " images preprocessed for " << describe(*recipe)
              << " into " << output_dir << "\n";
  } catch (const Error& e) {
    std::cerr << "ERROR " << e.what() << "\n";
    return 1;
  }
  return 0;
}
