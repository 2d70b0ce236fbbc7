// hbDNNRoiInfer on a converted model with a resizer input (conversion case cls_resizer):
//   dnn_roi_check MODEL.bin IMAGES_DIR COUNT
// IMAGES_DIR holds uint8 [1,3,H,W] RGB .npy images of the model's input size. For each of the
// first COUNT images, converted to NV12 and pasted into a larger NV12 canvas:
//  1. a ROI of exactly the input's size around the pasted image, through hbDNNRoiInfer, gives
//     the same output bytes as hbDNNInfer on the image itself (a resize to the same size is a
//     copy; hbDNNInfer is held bit-exact to the quantized model by dnn_bit_exact_*);
//  2. one hbDNNRoiInfer of three batches (the exact ROI from an NV12 tensor, a 2x downscale and
//     a 2x upscale from NV12_SEPARATE tensors) writes batch b's outputs at b · alignedByteSize,
//     each equal to hbDNNInfer on the same ROI resized by kernels::resize_image_roi;
// and the documented errors: ROI parity, ROI outside the image, ROI scale out of range,
// roiCount not a positive multiple of the resizer inputs, outputs too small for the batches.
// Exits 0 when everything holds, 1 with a message otherwise.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "dnn/hb_dnn.h"
#include "openbpu/accuracy/candidate_input.h"
#include "openbpu/common/error.h"
#include "openbpu/common/npy.h"
#include "openbpu/kernels/image_resize.h"
#include "segment_check.h"

namespace fs = std::filesystem;
using namespace openbpu;

namespace {

void check(int32_t status, const std::string& what) {
  if (status != 0) raise(what, " failed: ", hbDNNGetErrorDesc(status));
}

// A block of BPU memory holding `bytes`, freed with the object.
struct Mem {
  hbSysMem mem{};
  explicit Mem(size_t bytes) { check(hbSysAllocMem(&mem, static_cast<uint32_t>(bytes)), "hbSysAllocMem"); }
  Mem(const Mem&) = delete;
  ~Mem() { (void)hbSysFreeMem(&mem); }
  uint8_t* data() const { return static_cast<uint8_t*>(mem.virAddr); }
};

// The canvas the images are pasted into: NV12 of kWidth x kHeight in rows of kStride bytes.
constexpr int64_t kWidth = 800, kHeight = 160, kStride = 816;

struct Model {
  hbPackedDNNHandle_t packed = nullptr;
  hbDNNHandle_t dnn = nullptr;
  hbDNNTensorProperties input{};
  std::vector<hbDNNTensorProperties> outputs;
  int64_t in_h = 0, in_w = 0;
};

// Runs `dnn` with hbDNNRoiInfer (`rois` non-empty) or hbDNNInfer and returns each output's
// bytes (all batches).
std::vector<std::vector<uint8_t>> run(const Model& m, std::vector<hbDNNTensor> inputs, const std::vector<hbDNNRoi>& rois,
                                      int32_t* status = nullptr, int64_t output_batches = -1) {
  const int64_t batches = rois.empty() ? 1 : static_cast<int64_t>(rois.size());
  const int64_t room = output_batches < 0 ? batches : output_batches;
  std::vector<std::unique_ptr<Mem>> mems;
  std::vector<hbDNNTensor> outs;
  for (const hbDNNTensorProperties& p : m.outputs) {
    mems.push_back(std::make_unique<Mem>(static_cast<size_t>(p.alignedByteSize * room)));
    hbDNNTensor t{};
    t.properties = p;
    t.sysMem[0] = mems.back()->mem;
    outs.push_back(t);
  }
  hbDNNTaskHandle_t task = nullptr;
  hbDNNInferCtrlParam ctrl;
  HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&ctrl);
  hbDNNTensor* out = outs.data();
  std::vector<hbDNNRoi> roi_copy = rois;
  const int32_t rc = rois.empty() ? hbDNNInfer(&task, &out, inputs.data(), m.dnn, &ctrl)
                                  : hbDNNRoiInfer(&task, &out, inputs.data(), roi_copy.data(), static_cast<int32_t>(roi_copy.size()),
                                                  m.dnn, &ctrl);
  if (status != nullptr) {
    *status = rc;
    if (rc != 0) return {};
  }
  check(rc, rois.empty() ? "hbDNNInfer" : "hbDNNRoiInfer");
  check(hbDNNWaitTaskDone(task, 0), "hbDNNWaitTaskDone");
  check(hbDNNReleaseTask(task), "hbDNNReleaseTask");
  std::vector<std::vector<uint8_t>> result;
  for (size_t i = 0; i < outs.size(); ++i) {
    result.emplace_back(mems[i]->data(), mems[i]->data() + m.outputs[i].alignedByteSize * batches);
  }
  return result;
}

// An NV12 tensor of the canvas (one buffer, or Y and UV in two when `separate`).
struct Canvas {
  std::unique_ptr<Mem> y, uv;
  hbDNNTensor tensor{};
  Canvas(const Model& m, const std::vector<uint8_t>& y_plane, const std::vector<uint8_t>& uv_plane, bool separate) {
    tensor.properties = m.input;
    tensor.properties.validShape.dimensionSize[2] = static_cast<int32_t>(kHeight);
    tensor.properties.validShape.dimensionSize[3] = static_cast<int32_t>(kWidth);
    tensor.properties.alignedShape = tensor.properties.validShape;
    tensor.properties.alignedShape.dimensionSize[3] = static_cast<int32_t>(kStride);
    if (separate) {
      tensor.properties.tensorType = HB_DNN_IMG_TYPE_NV12_SEPARATE;
      y = std::make_unique<Mem>(y_plane.size());
      uv = std::make_unique<Mem>(uv_plane.size());
      std::memcpy(y->data(), y_plane.data(), y_plane.size());
      std::memcpy(uv->data(), uv_plane.data(), uv_plane.size());
      tensor.sysMem[0] = y->mem;
      tensor.sysMem[1] = uv->mem;
    } else {
      y = std::make_unique<Mem>(y_plane.size() + uv_plane.size());
      std::memcpy(y->data(), y_plane.data(), y_plane.size());
      std::memcpy(y->data() + y_plane.size(), uv_plane.data(), uv_plane.size());
      tensor.sysMem[0] = y->mem;
    }
  }
};

// hbDNNInfer on model-size NV12 bytes.
std::vector<std::vector<uint8_t>> infer_image(const Model& m, const std::vector<uint8_t>& nv12) {
  Mem mem(nv12.size());
  std::memcpy(mem.data(), nv12.data(), nv12.size());
  hbDNNTensor t{};
  t.properties = m.input;
  t.sysMem[0] = mem.mem;
  return run(m, {t}, {});
}

void expect_same(const std::vector<std::vector<uint8_t>>& got, size_t batch, const std::vector<std::vector<uint8_t>>& want,
                 const Model& m, const std::string& what) {
  for (size_t i = 0; i < want.size(); ++i) {
    const size_t n = static_cast<size_t>(m.outputs[i].alignedByteSize);
    if (std::memcmp(got[i].data() + batch * n, want[i].data(), n) != 0) {
      raise(what, ": output ", i, " of batch ", batch, " differs from hbDNNInfer on the same image");
    }
  }
}

void expect_error(int32_t status, const std::string& what) {
  if (status != HB_DNN_INVALID_ARGUMENT) {
    raise(what, ": hbDNNRoiInfer returned ", status, ", HB_DNN_INVALID_ARGUMENT (", HB_DNN_INVALID_ARGUMENT, ") expected");
  }
}

int check_model(const std::string& bin, const fs::path& images, size_t count) {
  Model m;
  const char* file = bin.c_str();
  check(hbDNNInitializeFromFiles(&m.packed, &file, 1), "hbDNNInitializeFromFiles");
  const char** names = nullptr;
  int32_t n = 0;
  check(hbDNNGetModelNameList(&names, &n, m.packed), "hbDNNGetModelNameList");
  check(hbDNNGetModelHandle(&m.dnn, m.packed, names[0]), "hbDNNGetModelHandle");
  int32_t source = -1, outputs = 0;
  check(hbDNNGetInputSource(&source, m.dnn, 0), "hbDNNGetInputSource");
  if (source != HB_DNN_INPUT_FROM_RESIZER) raise(bin, ": input 0's source is ", source, ", not HB_DNN_INPUT_FROM_RESIZER");
  check(hbDNNGetInputTensorProperties(&m.input, m.dnn, 0), "hbDNNGetInputTensorProperties");
  if (m.input.tensorType != HB_DNN_IMG_TYPE_NV12) raise(bin, ": input 0 is not NV12");
  m.in_h = m.input.validShape.dimensionSize[2];
  m.in_w = m.input.validShape.dimensionSize[3];
  check(hbDNNGetOutputCount(&outputs, m.dnn), "hbDNNGetOutputCount");
  m.outputs.resize(static_cast<size_t>(outputs));
  for (int32_t i = 0; i < outputs; ++i) check(hbDNNGetOutputTensorProperties(&m.outputs[size_t(i)], m.dnn, i), "properties");

  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(images)) {
    if (e.path().extension() == ".npy") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  if (files.size() < count) raise(images.string(), ": ", files.size(), " images, ", count, " asked for");
  for (size_t s = 0; s < count; ++s) {
    accuracy::CandidateInputOptions options;
    options.source = accuracy::CandidateSource::kNv12;
    options.offset = 128;
    options.dtype = kernels::DataType::kInt8;
    const std::vector<uint8_t> image =
        testing::nv12_of(accuracy::candidate_input_from_rgb(read_npy(files[s]), options), "x");
    // The canvas: a pattern, the image pasted at an even position that moves with s.
    std::vector<uint8_t> y(size_t(kStride * kHeight)), uv(size_t(kStride * kHeight / 2));
    for (int64_t r = 0; r < kHeight; ++r)
      for (int64_t c = 0; c < kStride; ++c) y[size_t(r * kStride + c)] = static_cast<uint8_t>((c * 3 + r * 7 + s) & 255);
    for (int64_t r = 0; r < kHeight / 2; ++r)
      for (int64_t c = 0; c < kStride; ++c) uv[size_t(r * kStride + c)] = static_cast<uint8_t>((c * 5 + r * 11) & 255);
    const int64_t left = 40 + 2 * int64_t(s % 16), top = 20 + 2 * int64_t(s % 8);
    for (int64_t r = 0; r < m.in_h; ++r) std::memcpy(&y[size_t((top + r) * kStride + left)], &image[size_t(r * m.in_w)], size_t(m.in_w));
    const uint8_t* image_uv = image.data() + m.in_h * m.in_w;
    for (int64_t r = 0; r < m.in_h / 2; ++r) {
      std::memcpy(&uv[size_t((top / 2 + r) * kStride + left)], &image_uv[size_t(r * m.in_w)], size_t(m.in_w));
    }
    const Canvas whole(m, y, uv, false), split(m, y, uv, true);
    const hbDNNRoi exact{int32_t(left), int32_t(top), int32_t(left + m.in_w - 1), int32_t(top + m.in_h - 1)};

    // 1. The exact ROI equals the image itself.
    const auto want = infer_image(m, image);
    expect_same(run(m, {whole.tensor}, {exact}), 0, want, m, files[s].string() + " exact ROI");

    // 2. Three batches in one call.
    const hbDNNRoi down{0, int32_t(2 * (s % 8)), int32_t(2 * m.in_w - 1), int32_t(2 * (s % 8) + 2 * m.in_h - 1)};
    const hbDNNRoi up{int32_t(300 + 2 * s), 60, int32_t(300 + 2 * s + m.in_w / 2 - 1), int32_t(60 + m.in_h / 2 - 1)};
    const std::vector<hbDNNRoi> rois{exact, down, up};
    const auto got = run(m, {whole.tensor, split.tensor, split.tensor}, rois);
    for (size_t b = 0; b < rois.size(); ++b) {
      std::vector<uint8_t> resized(image.size());
      kernels::resize_image_roi({y.data(), kStride}, {uv.data(), kStride}, {rois[b].left, rois[b].top, rois[b].right, rois[b].bottom},
                                m.in_w, m.in_h, resized.data());
      expect_same(got, b, infer_image(m, resized), m, files[s].string() + " batch of three");
    }

    if (s == 0) {
      int32_t status = 0;
      hbDNNRoi odd = exact;
      odd.left += 1;
      run(m, {whole.tensor}, {odd}, &status);
      expect_error(status, "odd left");
      const hbDNNRoi outside{int32_t(kWidth - 100), 0, int32_t(kWidth + 99), 47};
      run(m, {whole.tensor}, {outside}, &status);
      expect_error(status, "ROI outside the image");
      const hbDNNRoi wide{0, 0, int32_t(kWidth - 1), int32_t(m.in_h - 1)};  // 800 / 192 > 4
      run(m, {whole.tensor}, {wide}, &status);
      expect_error(status, "ROI wider than 4x the input");
      run(m, {whole.tensor, whole.tensor}, {exact, exact}, &status, 1);
      expect_error(status, "outputs with room for one of two batches");
      hbDNNTaskHandle_t task = nullptr;
      hbDNNInferCtrlParam ctrl;
      HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&ctrl);
      std::vector<hbDNNTensor> outs(m.outputs.size());
      hbDNNTensor* out = outs.data();
      hbDNNRoi r = exact;
      expect_error(hbDNNRoiInfer(&task, &out, &whole.tensor, &r, 0, m.dnn, &ctrl), "roiCount 0");
    }
  }
  check(hbDNNRelease(m.packed), "hbDNNRelease");
  std::cout << "dnn_roi_check: " << count << " images: exact ROI == hbDNNInfer of the image, three-batch ROI inference == "
            << "hbDNNInfer of each resized ROI, 5 error paths refused\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: dnn_roi_check MODEL.bin IMAGES_DIR COUNT\n";
    return 2;
  }
  try {
    return check_model(argv[1], argv[2], static_cast<size_t>(std::stoul(argv[3])));
  } catch (const std::exception& e) {
    std::cerr << "dnn_roi_check: " << e.what() << "\n";
    return 1;
  }
}
