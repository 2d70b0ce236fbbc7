#include "openbpu/verifier/model_runs.h"

#include <cstring>
#include <limits>

#include "dnn/hb_sys.h"
#include "openbpu/common/error.h"
#include "openbpu/tensor_io/ucp_infer.h"

namespace openbpu::verifier {
namespace {

using kernels::DataType;
using kernels::Tensor;

void check(int32_t rc, const std::string& what, const std::string& file) {
  if (rc != 0) raise(file, ": ", what, " failed: ", hbDNNGetErrorDesc(rc));
}

// BPU memory of one inference, freed on every path.
struct Memory {
  std::vector<hbSysMem> blocks;
  ~Memory() {
    for (hbSysMem& m : blocks) (void)hbSysFreeMem(&m);
  }
  hbSysMem& allocate(size_t bytes, const std::string& file) {
    if (bytes == 0 || bytes > std::numeric_limits<uint32_t>::max()) raise(file, ": cannot allocate ", bytes, " bytes");
    hbSysMem m{};
    check(hbSysAllocCachedMem(&m, static_cast<uint32_t>(bytes)), "hbSysAllocCachedMem", file);
    blocks.push_back(m);
    return blocks.back();
  }
};

bool is_image(int32_t type) { return type >= HB_DNN_IMG_TYPE_Y && type <= HB_DNN_IMG_TYPE_BGR; }

// An image input's dense bytes as `channels` planes of height x width values 0..255.
std::vector<uint8_t> image_planes(const std::vector<uint8_t>& bytes, const hbDNNTensorProperties& p, int* channels,
                                  int* height, int* width) {
  const auto [h, w] = tensor_io::image_size(p);
  *height = h, *width = w;
  const size_t plane = static_cast<size_t>(h) * static_cast<size_t>(w);
  if (p.tensorType == HB_DNN_IMG_TYPE_Y) {
    *channels = 1;
    if (bytes.size() < plane) raise("input holds ", bytes.size(), " bytes, a ", h, "x", w, " Y image needs ", plane);
    return {bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(plane)};
  }
  *channels = 3;
  std::vector<uint8_t> planes(3 * plane);
  if (p.tensorType == HB_DNN_IMG_TYPE_NV12 || p.tensorType == HB_DNN_IMG_TYPE_NV12_SEPARATE) {
    const size_t need = plane + plane / 2;
    if (bytes.size() < need) raise("input holds ", bytes.size(), " bytes, a ", h, "x", w, " NV12 image needs ", need);
    std::memcpy(planes.data(), bytes.data(), plane);
    const uint8_t* uv = bytes.data() + plane;
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        const size_t at = static_cast<size_t>(y) * static_cast<size_t>(w) + static_cast<size_t>(x);
        const size_t c = (static_cast<size_t>(y / 2) * static_cast<size_t>(w / 2) + static_cast<size_t>(x / 2)) * 2;
        planes[plane + at] = uv[c];
        planes[2 * plane + at] = uv[c + 1];
      }
    }
    return planes;
  }
  if (bytes.size() < 3 * plane) raise("input holds ", bytes.size(), " bytes, a ", h, "x", w, " image needs ", 3 * plane);
  const bool nhwc = p.tensorLayout != HB_DNN_LAYOUT_NCHW;
  for (size_t c = 0; c < 3; ++c) {
    for (size_t i = 0; i < plane; ++i) planes[c * plane + i] = nhwc ? bytes[i * 3 + c] : bytes[c * plane + i];
  }
  return planes;
}

template <typename T>
void store_all(Tensor& out, const std::vector<int64_t>& values) {
  T* o = out.data<T>();
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] < std::numeric_limits<T>::lowest() || values[i] > std::numeric_limits<T>::max()) {
      raise("image value ", values[i], " does not fit the quantized model's input type ", kernels::dtype_name(out.dtype()));
    }
    o[i] = static_cast<T>(values[i]);
  }
}

}  // namespace

BinModel::BinModel(const std::string& path)
    : ucp_(path.size() > 4 && path.compare(path.size() - 4, 4, ".hbm") == 0) {
  const char* files[] = {path.c_str()};
  check(hbDNNInitializeFromFiles(&packed_, files, 1), "hbDNNInitializeFromFiles", path);
  try {  // a throwing constructor runs no destructor: release the models here
    const char** names = nullptr;
    int32_t count = 0;
    check(hbDNNGetModelNameList(&names, &count, packed_), "hbDNNGetModelNameList", path);
    if (count != 1) raise(path, ": pack model is not supported (the file holds ", count, " models)");
    name_ = names[0];
    check(hbDNNGetModelHandle(&handle_, packed_, names[0]), "hbDNNGetModelHandle", path);
    std::vector<std::string> in_names, out_names;
    std::vector<hbDNNTensorProperties> in_props, out_props;
    try {
      in_props = tensor_io::input_properties(handle_, &in_names);
      out_props = tensor_io::output_properties(handle_, &out_names);
    } catch (const std::runtime_error& e) {
      raise(path, ": ", e.what());
    }
    for (size_t i = 0; i < in_props.size(); ++i) inputs_.push_back({in_names[i], in_props[i]});
    for (size_t i = 0; i < out_props.size(); ++i) outputs_.push_back({out_names[i], out_props[i]});
  } catch (...) {
    (void)hbDNNRelease(packed_);
    throw;
  }
}

BinModel::~BinModel() {
  if (packed_ != nullptr) (void)hbDNNRelease(packed_);
}

std::vector<std::vector<uint8_t>> BinModel::infer(const std::vector<tensor_io::InputData>& data) {
  if (data.size() != inputs_.size()) raise(name_, ": ", data.size(), " inputs given, the model has ", inputs_.size());
  Memory memory;
  memory.blocks.reserve(inputs_.size() + outputs_.size());
  std::vector<hbDNNTensor> ins, outs;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    hbDNNTensor t{};
    t.properties = inputs_[i].properties;
    if (data[i].dense) t.properties.alignedShape = t.properties.validShape;
    t.sysMem[0] = memory.allocate(data[i].bytes.size(), name_);
    std::memcpy(t.sysMem[0].virAddr, data[i].bytes.data(), data[i].bytes.size());
    check(hbSysFlushMem(&t.sysMem[0], HB_SYS_MEM_CACHE_CLEAN), "hbSysFlushMem", name_);
    ins.push_back(t);
  }
  for (const TensorInfo& o : outputs_) {
    hbDNNTensor t{};
    t.properties = o.properties;
    t.sysMem[0] = memory.allocate(static_cast<size_t>(o.properties.alignedByteSize), name_);
    outs.push_back(t);
  }
  if (ucp_) {  // a .hbm file: the UCP generation's API, as its board tools use
    std::vector<tensor_io::UcpBlock> in_blocks, out_blocks;
    for (size_t i = 0; i < ins.size(); ++i) {
      const hbSysMem& m = ins[i].sysMem[0];
      in_blocks.push_back({m.virAddr, m.phyAddr, m.memSize, data[i].dense});
    }
    for (const hbDNNTensor& t : outs) out_blocks.push_back({t.sysMem[0].virAddr, t.sysMem[0].phyAddr, t.sysMem[0].memSize});
    try {
      tensor_io::ucp_infer_once(handle_, in_blocks, out_blocks, 0);
    } catch (const std::runtime_error& e) {
      raise(name_, ": ", e.what());
    }
  } else {
    hbDNNInferCtrlParam param;
    HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&param);
    hbDNNTaskHandle_t task = nullptr;
    hbDNNTensor* out_ptr = outs.data();
    check(hbDNNInfer(&task, &out_ptr, ins.data(), handle_, &param), "hbDNNInfer", name_);
    const int32_t rc = hbDNNWaitTaskDone(task, 0);
    (void)hbDNNReleaseTask(task);
    check(rc, "hbDNNWaitTaskDone", name_);
  }
  std::vector<std::vector<uint8_t>> result;
  for (hbDNNTensor& t : outs) {
    check(hbSysFlushMem(&t.sysMem[0], HB_SYS_MEM_CACHE_INVALIDATE), "hbSysFlushMem", name_);
    result.push_back(tensor_io::gather_valid(static_cast<const uint8_t*>(t.sysMem[0].virAddr), t.properties));
  }
  return result;
}

Tensor quantized_model_feed(const tensor_io::InputData& data, const hbDNNTensorProperties& p, DataType dtype,
                            const kernels::Shape& shape) {
  if (!is_image(p.tensorType)) {
    const std::vector<uint8_t> dense = data.dense ? data.bytes : tensor_io::gather_valid(data.bytes.data(), p);
    Tensor t(dtype, shape);
    if (t.byte_size() != dense.size()) {
      raise("the .bin model's input holds ", dense.size(), " bytes, the quantized model's input ", t.describe(),
            " needs ", t.byte_size(), " (do the two models belong together?)");
    }
    if (!dense.empty()) std::memcpy(t.raw_data(), dense.data(), dense.size());
    return t;
  }
  if (!data.dense) raise("an image input must be given dense (validShape), not in the aligned layout");
  int channels = 0, height = 0, width = 0;
  const std::vector<uint8_t> planes = image_planes(data.bytes, p, &channels, &height, &width);
  bool nhwc = false;
  if (shape.size() == 4 && shape[0] == 1 && shape[1] == channels && shape[2] == height && shape[3] == width) {
    nhwc = false;
  } else if (shape.size() == 4 && shape[0] == 1 && shape[1] == height && shape[2] == width && shape[3] == channels) {
    nhwc = true;
  } else {
    std::string dims;
    for (int64_t d : shape) dims += (dims.empty() ? "" : "x") + std::to_string(d);
    raise("the quantized model's input shape ", dims, " does not hold the .bin model's ", height, "x", width,
          " image with ", channels, " channel(s)");
  }
  const int offset = dtype == DataType::kInt8 ? 128 : 0;
  const size_t plane = static_cast<size_t>(height) * static_cast<size_t>(width);
  std::vector<int64_t> values(planes.size());
  for (size_t c = 0; c < static_cast<size_t>(channels); ++c) {
    for (size_t i = 0; i < plane; ++i) {
      values[nhwc ? i * static_cast<size_t>(channels) + c : c * plane + i] = planes[c * plane + i] - offset;
    }
  }
  Tensor t(dtype, shape);
  switch (dtype) {
    case DataType::kInt8: store_all<int8_t>(t, values); break;
    case DataType::kUint8: store_all<uint8_t>(t, values); break;
    case DataType::kInt16: store_all<int16_t>(t, values); break;
    case DataType::kFloat32:
      for (size_t i = 0; i < values.size(); ++i) t.data<float>()[i] = static_cast<float>(values[i]);
      break;
    default: raise("the quantized model's image input has type ", kernels::dtype_name(dtype), " (int8, uint8, int16 or float32 expected)");
  }
  return t;
}

std::vector<double> tensor_values(const Tensor& t, const hbDNNTensorProperties& bin_output) {
  const bool same_integer =
      (t.dtype() == DataType::kInt8 && bin_output.tensorType == HB_DNN_TENSOR_TYPE_S8) ||
      (t.dtype() == DataType::kUint8 && bin_output.tensorType == HB_DNN_TENSOR_TYPE_U8) ||
      (t.dtype() == DataType::kInt16 && bin_output.tensorType == HB_DNN_TENSOR_TYPE_S16) ||
      (t.dtype() == DataType::kInt32 && bin_output.tensorType == HB_DNN_TENSOR_TYPE_S32);
  if (same_integer) {
    const auto* raw = static_cast<const uint8_t*>(t.raw_data());
    return tensor_io::dequantize(std::vector<uint8_t>(raw, raw + t.byte_size()), bin_output);
  }
  std::vector<double> v(static_cast<size_t>(t.element_count()));
  for (int64_t i = 0; i < t.element_count(); ++i) v[static_cast<size_t>(i)] = t.float_at(i);
  return v;
}

}  // namespace openbpu::verifier
