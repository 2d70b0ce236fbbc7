// The classic API's results for dnn_ucp_test (dnn_ucp_reference.h).
#include "dnn_ucp_reference.h"

#include <gtest/gtest.h>

#include <cstring>

#include "dnn/hb_dnn.h"

namespace openbpu::ucp_reference {

namespace {

// The first model of model file `path`.
hbDNNHandle_t first_model(const std::string& path, hbPackedDNNHandle_t* packed) {
  const char* file = path.c_str();
  EXPECT_EQ(hbDNNInitializeFromFiles(packed, &file, 1), 0) << path;
  const char** names = nullptr;
  int32_t count = 0;
  EXPECT_EQ(hbDNNGetModelNameList(&names, &count, *packed), 0);
  hbDNNHandle_t dnn = nullptr;
  EXPECT_EQ(hbDNNGetModelHandle(&dnn, *packed, names[0]), 0);
  return dnn;
}

}  // namespace

std::vector<std::vector<uint8_t>> classic_run(const std::string& path, const std::vector<std::vector<uint8_t>>& inputs) {
  std::vector<std::vector<uint8_t>> result;
  hbPackedDNNHandle_t packed = nullptr;
  const hbDNNHandle_t dnn = first_model(path, &packed);
  int32_t in_count = 0, out_count = 0;
  EXPECT_EQ(hbDNNGetInputCount(&in_count, dnn), 0);
  EXPECT_EQ(hbDNNGetOutputCount(&out_count, dnn), 0);
  EXPECT_EQ(static_cast<size_t>(in_count), inputs.size());
  // Plain arrays, as a C caller writes them.
  constexpr int32_t kMax = 8;
  EXPECT_LE(in_count, kMax);
  EXPECT_LE(out_count, kMax);
  hbDNNTensor in[kMax] = {}, out[kMax] = {};
  for (int32_t i = 0; i < in_count; ++i) {
    hbDNNTensor& t = in[i];
    EXPECT_EQ(hbDNNGetInputTensorProperties(&t.properties, dnn, i), 0);
    t.properties.alignedShape = t.properties.validShape;  // dense
    EXPECT_EQ(hbSysAllocCachedMem(&t.sysMem[0], static_cast<uint32_t>(inputs[static_cast<size_t>(i)].size())), 0);
    std::memcpy(t.sysMem[0].virAddr, inputs[static_cast<size_t>(i)].data(), inputs[static_cast<size_t>(i)].size());
  }
  for (int32_t o = 0; o < out_count; ++o) {
    hbDNNTensor& t = out[o];
    EXPECT_EQ(hbDNNGetOutputTensorProperties(&t.properties, dnn, o), 0);
    EXPECT_EQ(hbSysAllocCachedMem(&t.sysMem[0], static_cast<uint32_t>(t.properties.alignedByteSize)), 0);
  }
  hbDNNInferCtrlParam param;
  HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&param);
  hbDNNTaskHandle_t task = nullptr;
  hbDNNTensor* outputs = out;
  EXPECT_EQ(hbDNNInfer(&task, &outputs, in, dnn, &param), 0) << hbDNNGetErrorDesc(HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(hbDNNWaitTaskDone(task, 0), 0);
  EXPECT_EQ(hbDNNReleaseTask(task), 0);
  for (int32_t o = 0; o < out_count; ++o) {
    hbDNNTensor& t = out[o];
    const auto* p = static_cast<const uint8_t*>(t.sysMem[0].virAddr);
    result.emplace_back(p, p + t.properties.alignedByteSize);
    EXPECT_EQ(hbSysFreeMem(&t.sysMem[0]), 0);
  }
  for (int32_t i = 0; i < in_count; ++i) EXPECT_EQ(hbSysFreeMem(&in[i].sysMem[0]), 0);
  EXPECT_EQ(hbDNNRelease(packed), 0);
  return result;
}

std::vector<uint8_t> classic_roi_run(const std::string& path, const std::vector<uint8_t>& nv12, int32_t width, int32_t height,
                                     const std::vector<int32_t>& rois) {
  hbPackedDNNHandle_t packed = nullptr;
  const hbDNNHandle_t dnn = first_model(path, &packed);
  const int32_t batches = static_cast<int32_t>(rois.size() / 4);
  hbDNNTensor image{}, out{};
  EXPECT_EQ(hbDNNGetInputTensorProperties(&image.properties, dnn, 0), 0);
  const int h_axis = image.properties.tensorLayout == HB_DNN_LAYOUT_NHWC ? 1 : 2;
  image.properties.validShape.dimensionSize[h_axis] = height;
  image.properties.validShape.dimensionSize[h_axis + 1] = width;
  image.properties.alignedShape = image.properties.validShape;
  EXPECT_EQ(hbSysAllocCachedMem(&image.sysMem[0], static_cast<uint32_t>(nv12.size())), 0);
  std::memcpy(image.sysMem[0].virAddr, nv12.data(), nv12.size());
  EXPECT_EQ(hbDNNGetOutputTensorProperties(&out.properties, dnn, 0), 0);
  const uint32_t item = static_cast<uint32_t>(out.properties.alignedByteSize);
  EXPECT_EQ(hbSysAllocCachedMem(&out.sysMem[0], item * static_cast<uint32_t>(batches)), 0);
  constexpr int kMaxBatches = 8;
  EXPECT_LE(batches, kMaxBatches);
  hbDNNTensor inputs[kMaxBatches];
  hbDNNRoi boxes[kMaxBatches];
  for (int32_t b = 0; b < batches; ++b) {
    inputs[b] = image;
    boxes[b] = {rois[4 * b], rois[4 * b + 1], rois[4 * b + 2], rois[4 * b + 3]};
  }
  hbDNNInferCtrlParam param;
  HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&param);
  hbDNNTaskHandle_t task = nullptr;
  hbDNNTensor* outputs = &out;
  EXPECT_EQ(hbDNNRoiInfer(&task, &outputs, inputs, boxes, batches, dnn, &param), 0) << hbDNNGetErrorDesc(HB_DNN_INVALID_ARGUMENT);
  EXPECT_EQ(hbDNNWaitTaskDone(task, 0), 0);
  EXPECT_EQ(hbDNNReleaseTask(task), 0);
  const auto* p = static_cast<const uint8_t*>(out.sysMem[0].virAddr);
  std::vector<uint8_t> result(p, p + item * static_cast<uint32_t>(batches));
  EXPECT_EQ(hbSysFreeMem(&out.sysMem[0]), 0);
  EXPECT_EQ(hbSysFreeMem(&image.sysMem[0]), 0);
  EXPECT_EQ(hbDNNRelease(packed), 0);
  return result;
}

}  // namespace openbpu::ucp_reference
