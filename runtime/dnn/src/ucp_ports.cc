// The UCP generation's view of a model (ucp_ports.h).
#include "ucp_ports.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "error.h"
#include "model.h"
#include "tensor_port.h"

namespace openbpu::dnn {

namespace {

bool nv12(int32_t classic_type) { return classic_type == HB_DNN_IMG_TYPE_NV12 || classic_type == HB_DNN_IMG_TYPE_NV12_SEPARATE; }
bool image(int32_t classic_type) { return classic_type >= HB_DNN_IMG_TYPE_Y && classic_type <= HB_DNN_IMG_TYPE_BGR; }

void dense_strides(const ucp::TensorShape& s, int64_t element, int64_t* stride) {
  int64_t step = element;
  for (int i = s.numDimensions - 1; i >= 0; --i) {
    stride[i] = step;
    step *= s.dimensionSize[i];
  }
}

// The UCP properties of a classic port that is not a pyramid image.
UcpPort whole_port(const TensorPort& p, size_t index) {
  UcpPort u;
  u.name = p.name;
  u.port = index;
  const hbDNNTensorProperties& c = p.properties;
  ucp::TensorProperties& v = u.properties;
  v.validShape.numDimensions = c.validShape.numDimensions;
  std::copy_n(c.validShape.dimensionSize, ucp::kMaxDimensions, v.validShape.dimensionSize);
  v.tensorType = image(c.tensorType) ? ucp::kU8 : c.tensorType - ucp::kClassicTypeOffset;
  v.quantizeAxis = c.quantizeAxis;
  v.alignedByteSize = c.alignedByteSize;
  bool zero = true;
  for (int i = 0; i < c.validShape.numDimensions; ++i) zero = zero && c.stride[i] == 0;
  if (zero) {
    dense_strides(v.validShape, static_cast<int64_t>(kernels::dtype_size(p.dtype)), v.stride);
  } else {
    for (int i = 0; i < ucp::kMaxDimensions; ++i) v.stride[i] = c.stride[i];
  }
  if (c.quantiType == SCALE) {
    v.quantiType = ucp::kScale;
    u.scale = p.scale;
    u.zero_point.assign(p.zero_point.begin(), p.zero_point.end());
  } else if (c.quantiType == SHIFT) {
    v.quantiType = ucp::kScale;  // float = int / 2^shift
    for (uint8_t s : p.shift) u.scale.push_back(std::ldexp(1.0f, -static_cast<int>(s)));
  }
  return u;
}

// One plane of a pyramid image input (NV12's Y or UV, or a Y image): (1, h, w, c) U8 with the
// row and batch strides the caller sets.
// A resizer input's planes have the source image's size: -1 here, the caller sets it.
UcpPort plane_port(const TensorPort& p, size_t index, UcpPort::Plane plane, const std::string& name) {
  const int h_axis = height_axis(p);
  const bool resizer = p.source == HB_DNN_INPUT_FROM_RESIZER;
  const int32_t h = p.properties.validShape.dimensionSize[h_axis], w = p.properties.validShape.dimensionSize[h_axis + 1];
  const bool uv = plane == UcpPort::Plane::kUv;
  UcpPort u;
  u.name = name;
  u.port = index;
  u.plane = plane;
  ucp::TensorProperties& v = u.properties;
  v.validShape.numDimensions = 4;
  const int32_t dims[4] = {1, resizer ? -1 : uv ? h / 2 : h, resizer ? -1 : uv ? w / 2 : w, uv ? 2 : 1};
  std::copy_n(dims, 4, v.validShape.dimensionSize);
  v.tensorType = ucp::kU8;
  v.quantizeAxis = -1;
  v.alignedByteSize = -1;
  const int64_t strides[4] = {-1, -1, uv ? 2 : 1, 1};
  std::copy_n(strides, 4, v.stride);
  return u;
}

void link(UcpPort& u) {
  u.properties.scale = {static_cast<int32_t>(u.scale.size()), u.scale.empty() ? nullptr : u.scale.data(),
                        static_cast<int32_t>(u.zero_point.size()), u.zero_point.empty() ? nullptr : u.zero_point.data()};
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      static const char* hex = "0123456789abcdef";
      out += "\\u00";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

std::string json_object(const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string out = "{";
  for (const auto& [key, value] : fields) out += (out.size() > 1 ? ", " : "") + json_string(key) + ": " + json_string(value);
  return out + "}";
}

using Fields = std::vector<std::pair<std::string, std::string>>;

// The recorded parameters: "<section>.<key>" → value, and per input "<key>" → value.
struct Recorded {
  std::map<std::string, std::string> global;
  std::vector<std::string> input_names;
  std::map<std::string, std::map<std::string, std::string>> per_input;  // input → key → value
};

Recorded recorded(const format::Model& model) {
  Recorded r;
  if (model.compile_parameters() != nullptr) {
    for (const format::KeyValue* kv : *model.compile_parameters()) {
      const std::string key = kv->key() ? kv->key()->str() : "", value = kv->value() ? kv->value()->str() : "";
      const std::string prefix = "input_parameters.";
      if (key.rfind(prefix, 0) == 0) {
        const size_t dot = key.rfind('.');
        const std::string input = key.substr(prefix.size(), dot - prefix.size());
        if (r.per_input.count(input) == 0) r.input_names.push_back(input);
        r.per_input[input][key.substr(dot + 1)] = value;
      } else {
        r.global[key] = value;
      }
    }
  }
  if (model.deps_info() != nullptr) {
    for (const format::KeyValue* kv : *model.deps_info()) r.global[kv->key() ? kv->key()->str() : ""] = kv->value() ? kv->value()->str() : "";
  }
  return r;
}

// The build description's per-input keys: (JSON key, recorded key).
const std::pair<const char*, const char*> kInputKeys[] = {
    {"INPUT_TYPE_RT", "input_type_rt"},         {"INPUT_TYPE_TRAIN", "input_type_train"},
    {"INPUT_LAYOUT_RT", "input_layout_rt"},     {"INPUT_LAYOUT_TRAIN", "input_layout_train"},
    {"INPUT_SPACE_AND_RANGE", "input_space&range"}, {"NORM_TYPE", "norm_type"},
    {"MEAN_VALUE", "mean_value"},               {"SCALE_VALUE", "scale_value"},
    {"INPUT_SHAPE", "input_shape"},             {"CAL_DATA_DIR", "cal_data_dir"}};

std::string get(const std::map<std::string, std::string>& m, const std::string& key) {
  auto it = m.find(key);
  return it == m.end() ? "" : it->second;
}

// The input's entry in compiler_parameters.input-source ("{'x': 'ddr', ...}").
std::string input_source(const std::string& sources, const std::string& input) {
  const std::string key = "'" + input + "': '";
  const size_t at = sources.find(key);
  if (at == std::string::npos) return "ddr";
  const size_t start = at + key.size();
  return sources.substr(start, sources.find('\'', start) - start);
}

std::string model_description(const Recorded& r, const std::string& march) {
  auto g = [&](const char* key) { return get(r.global, key); };
  auto builder = g("hb_compile version");
  if (builder.empty()) builder = g("hb_mapper version");
  Fields f = {{"BUILDER_VERSION", builder},
              {"HBDK_VERSION", g("hbdk version")},
              {"HMCT_VERSION", g("horizon_nn version")},
              {"MARCH", march},
              {"ONNX_MODEL", g("model_parameters.onnx_model")}};
  if (!g("model_parameters.caffe_model").empty()) {
    f.emplace_back("CAFFE_MODEL", g("model_parameters.caffe_model"));
    f.emplace_back("PROTOTXT", g("model_parameters.prototxt"));
  }
  auto joined = [&](auto value_of) {
    std::string out;
    for (size_t i = 0; i < r.input_names.size(); ++i) out += (i ? ";" : "") + value_of(r.input_names[i]);
    return out;
  };
  f.emplace_back("INPUT_NAMES", joined([](const std::string& n) { return n; }));
  for (const auto& [json, key] : kInputKeys) {
    f.emplace_back(json, joined([&, k = key](const std::string& n) { return get(r.per_input.at(n), k); }));
  }
  const std::string sources = g("compiler_parameters.input-source");
  f.emplace_back("INPUT_SOURCE", joined([&](const std::string& n) { return input_source(sources, n); }));
  f.emplace_back("CALI_TYPE", g("calibration_parameters.calibration_type"));
  f.emplace_back("PER_CHANNEL", g("calibration_parameters.per_channel"));
  f.emplace_back("OPTIMIZE_LEVEL", g("compiler_parameters.optimize_level"));
  f.emplace_back("COMPILE_MODE", g("compiler_parameters.compile_mode"));
  f.emplace_back("CORE_NUM", g("compiler_parameters.core_num"));
  f.emplace_back("MAX_TIME_PER_FC", g("compiler_parameters.max_time_per_fc"));
  f.emplace_back("HBDK_PASS_THROUGH_PARAMS", g("compiler_parameters.hbdk_pass_through_params"));
  return json_object(f);
}

std::string input_description(const Recorded& r, const std::string& input) {
  auto it = r.per_input.find(input);
  if (it == r.per_input.end()) return "";
  Fields f = {{"INPUT_NAME", input}};
  for (const auto& [json, key] : kInputKeys) f.emplace_back(json, get(it->second, key));
  f.emplace_back("INPUT_SOURCE", input_source(get(r.global, "compiler_parameters.input-source"), input));
  return json_object(f);
}

}  // namespace

UcpPorts make_ucp_ports(const format::Model& model, const std::vector<TensorPort>& inputs,
                        const std::vector<TensorPort>& outputs) {
  UcpPorts u;
  const Recorded r = recorded(model);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorPort& p = inputs[i];
    const std::string desc = input_description(r, p.name);
    const bool planes = p.source == HB_DNN_INPUT_FROM_PYRAMID || p.source == HB_DNN_INPUT_FROM_RESIZER;
    if (nv12(p.properties.tensorType) && planes) {
      u.inputs.push_back(plane_port(p, i, UcpPort::Plane::kY, p.name + "_y"));
      u.inputs.back().description = desc;
      u.inputs.push_back(plane_port(p, i, UcpPort::Plane::kUv, p.name + "_uv"));
    } else if (p.properties.tensorType == HB_DNN_IMG_TYPE_Y && planes) {
      u.inputs.push_back(plane_port(p, i, UcpPort::Plane::kY, p.name));
    } else {
      u.inputs.push_back(whole_port(p, i));
    }
    u.inputs.back().description = desc;
  }
  for (size_t i = 0; i < outputs.size(); ++i) u.outputs.push_back(whole_port(outputs[i], i));
  for (UcpPort& p : u.inputs) link(p);
  for (UcpPort& p : u.outputs) link(p);
  u.description = model_description(r, model.march() ? model.march()->str() : "");
  const std::string cores = get(r.global, "compiler_parameters.core_num");
  u.core_num = cores.empty() ? 1 : std::max(1, std::atoi(cores.c_str()));
  return u;
}

std::string package_description(const format::Package& package) {
  std::string models;
  if (package.models() != nullptr) {
    for (const format::Model* m : *package.models()) models += (models.empty() ? "" : ";") + (m->name() ? m->name()->str() : "");
  }
  return json_object({{"TOOLCHAIN", package.toolchain_name() ? package.toolchain_name()->str() : ""},
                      {"TOOLCHAIN_VERSION", package.toolchain_version() ? package.toolchain_version()->str() : ""},
                      {"FORMAT_VERSION", format::format_version_string(package.format_version())},
                      {"MODELS", models}});
}

}  // namespace openbpu::dnn

namespace openbpu::dnn {

namespace {

std::string strides_text(const int64_t* s, int rank) {
  std::string out = "(";
  for (int i = 0; i < rank; ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + ")";
}

std::string shape_text(const ucp::TensorShape& s) {
  std::string out = "(";
  for (int i = 0; i < s.numDimensions && i < ucp::kMaxDimensions; ++i) out += (i ? "," : "") + std::to_string(s.dimensionSize[i]);
  return out + ")";
}

bool same_shape(const ucp::TensorShape& a, const ucp::TensorShape& b) {
  if (a.numDimensions != b.numDimensions || a.numDimensions < 0 || a.numDimensions > ucp::kMaxDimensions) return false;
  return std::equal(a.dimensionSize, a.dimensionSize + a.numDimensions, b.dimensionSize);
}

hbSysMem classic_mem(const ucp::SysMem& m) {
  return {m.phyAddr, m.virAddr, static_cast<uint32_t>(std::min<uint64_t>(m.memSize, std::numeric_limits<uint32_t>::max()))};
}

// Names a tensor in errors: "input 1 ('x_uv')".
struct Label {
  const char* what;
  size_t index;
  const std::string& name;
};
std::ostream& operator<<(std::ostream& out, const Label& l) { return out << l.what << ' ' << l.index << " ('" << l.name << "')"; }

// A whole tensor: the classic tensor with the alignedShape its strides stand for.
void whole_tensor(const UcpPort& port, const TensorPort& cp, const ucp::Tensor& t, const Label& label, hbDNNTensor* c) {
  const ucp::TensorProperties& v = port.properties;
  const int rank = v.validShape.numDimensions;
  c->properties = cp.properties;
  c->sysMem[0] = classic_mem(t.sysMem);
  int64_t dense[ucp::kMaxDimensions] = {};
  dense_strides(v.validShape, static_cast<int64_t>(kernels::dtype_size(cp.dtype)), dense);
  if (std::equal(v.stride, v.stride + rank, t.properties.stride)) return;  // the model's layout
  if (std::equal(dense, dense + rank, t.properties.stride)) {
    c->properties.alignedShape = c->properties.validShape;  // dense data: the runtime pads
    return;
  }
  fail(HB_DNN_INVALID_ARGUMENT, label, ": stride ", strides_text(t.properties.stride, rank), " is neither the model's ",
       strides_text(v.stride, rank), " nor the dense strides ", strides_text(dense, rank), " of validShape ",
       shape_text(v.validShape));
}

// One plane of a pyramid image: checks its strides and returns its row stride.
int64_t plane_rows(const UcpPort& port, const ucp::Tensor& t, const Label& label) {
  const ucp::TensorProperties& v = port.properties;
  const int64_t* s = t.properties.stride;
  const int64_t row = v.validShape.dimensionSize[2] * v.validShape.dimensionSize[3];
  if (s[3] != v.stride[3] || s[2] != v.stride[2]) {
    fail(HB_DNN_INVALID_ARGUMENT, label, ": stride[2], stride[3] must be ", v.stride[2], ", ", v.stride[3], " (",
         v.validShape.dimensionSize[3], " interleaved byte(s) per pixel); the tensor has ", s[2], ", ", s[3]);
  }
  if (s[1] < row || s[1] % 32 != 0) {
    fail(HB_DNN_INVALID_ARGUMENT, label, ": stride[1] ", s[1], " (bytes between rows) must be at least the row's ", row,
         " bytes and a multiple of 32 (set the strides the properties report as -1)");
  }
  if (s[0] < s[1] * v.validShape.dimensionSize[1]) {
    fail(HB_DNN_INVALID_ARGUMENT, label, ": stride[0] ", s[0], " is less than stride[1] x height = ",
         s[1] * v.validShape.dimensionSize[1]);
  }
  return s[1];
}

void same_row_stride(int64_t row, int64_t y_row, const Label& label) {
  if (row != y_row) {
    fail(HB_DNN_INVALID_ARGUMENT, label, ": stride[1] ", row, " differs from the Y plane's ", y_row,
         "; both planes have the same row stride");
  }
}

// One plane of a resizer input's source image (hbDNNRoiInferV2): any size the caller gives,
// (1,h,w,1) and (1,h/2,w/2,2); the classic tensor is the image hbDNNRoiInfer takes.
void source_plane(const UcpPort& port, const TensorPort& cp, const ucp::Tensor& t, const Label& label, hbDNNTensor* c) {
  const ucp::TensorShape& s = t.properties.validShape;
  const bool uv = port.plane == UcpPort::Plane::kUv;
  if (s.numDimensions != 4 || s.dimensionSize[0] != 1 || s.dimensionSize[1] < 1 || s.dimensionSize[2] < 1 ||
      s.dimensionSize[3] != (uv ? 2 : 1)) {
    fail(HB_DNN_INVALID_ARGUMENT, label, ": validShape ", shape_text(s), " is not (1,height,width,", uv ? 2 : 1,
         ") of the source image (set the -1 dimensions)");
  }
  ucp::TensorProperties sized = port.properties;
  sized.validShape = s;
  UcpPort shaped = port;
  shaped.properties = sized;
  const int64_t row = plane_rows(shaped, t, label);
  const int h_axis = height_axis(cp);
  if (!uv) {
    c->properties = cp.properties;
    c->properties.tensorType = cp.properties.tensorType == HB_DNN_IMG_TYPE_Y ? HB_DNN_IMG_TYPE_Y : HB_DNN_IMG_TYPE_NV12_SEPARATE;
    c->properties.validShape.dimensionSize[h_axis] = s.dimensionSize[1];
    c->properties.validShape.dimensionSize[h_axis + 1] = s.dimensionSize[2];
    c->properties.alignedShape = c->properties.validShape;
    c->properties.alignedShape.dimensionSize[h_axis + 1] = static_cast<int32_t>(row);
    c->sysMem[0] = classic_mem(t.sysMem);
    return;
  }
  const int32_t* y = c->properties.validShape.dimensionSize;
  if (s.dimensionSize[1] != y[h_axis] / 2 || s.dimensionSize[2] != y[h_axis + 1] / 2) {
    fail(HB_DNN_INVALID_ARGUMENT, label, ": validShape ", shape_text(s), " is not half the Y plane's ", y[h_axis], "x",
         y[h_axis + 1]);
  }
  same_row_stride(row, c->properties.alignedShape.dimensionSize[h_axis + 1], label);
  c->sysMem[1] = classic_mem(t.sysMem);
}

}  // namespace

void classic_inputs(const Model& model, const ucp::Tensor* inputs, bool roi, std::vector<hbDNNTensor>* out) {
  const std::vector<UcpPort>& ports = model.ucp().inputs;
  const size_t first = out->size();
  out->resize(first + model.inputs().size(), hbDNNTensor{});
  for (size_t k = 0; k < ports.size(); ++k) {
    const UcpPort& port = ports[k];
    const ucp::Tensor& t = inputs[k];
    const TensorPort& cp = model.inputs()[port.port];
    hbDNNTensor& c = (*out)[first + port.port];
    const Label label{"input", k, port.name};
    const bool resizer = cp.source == HB_DNN_INPUT_FROM_RESIZER;
    if (t.properties.tensorType != port.properties.tensorType) {
      fail(HB_DNN_INVALID_ARGUMENT, label, ": tensorType ", t.properties.tensorType, " differs from the model's ",
           port.properties.tensorType);
    }
    if (resizer && !roi) {
      fail(HB_DNN_INVALID_ARGUMENT, label, ": the resizer feeds this input (input_source: resizer); run the model with hbDNNRoiInferV2");
    }
    if (resizer) {
      source_plane(port, cp, t, label, &c);
      continue;
    }
    if (!same_shape(t.properties.validShape, port.properties.validShape)) {
      fail(HB_DNN_INVALID_ARGUMENT, label, ": validShape ", shape_text(t.properties.validShape), " differs from the model's ",
           shape_text(port.properties.validShape));
    }
    if (port.plane == UcpPort::Plane::kWhole) {
      whole_tensor(port, cp, t, label, &c);
      continue;
    }
    const int64_t row = plane_rows(port, t, label);
    const int w_axis = height_axis(cp) + 1;
    if (port.plane == UcpPort::Plane::kY) {
      c.properties = cp.properties;
      c.properties.tensorType = cp.properties.tensorType == HB_DNN_IMG_TYPE_Y ? HB_DNN_IMG_TYPE_Y : HB_DNN_IMG_TYPE_NV12_SEPARATE;
      c.properties.alignedShape = cp.properties.validShape;
      c.properties.alignedShape.dimensionSize[w_axis] = static_cast<int32_t>(row);
      c.sysMem[0] = classic_mem(t.sysMem);
    } else {
      same_row_stride(row, c.properties.alignedShape.dimensionSize[w_axis], label);
      c.sysMem[1] = classic_mem(t.sysMem);
    }
  }
}

void classic_outputs(const Model& model, const ucp::Tensor* outputs, std::vector<hbDNNTensor>* out) {
  const std::vector<UcpPort>& ports = model.ucp().outputs;
  out->assign(ports.size(), hbDNNTensor{});
  for (size_t k = 0; k < ports.size(); ++k) {
    const UcpPort& port = ports[k];
    const ucp::Tensor& t = outputs[k];
    const Label label{"output", k, port.name};
    if (t.properties.tensorType != port.properties.tensorType) {
      fail(HB_DNN_INVALID_ARGUMENT, label, ": tensorType ", t.properties.tensorType, " differs from the model's ",
           port.properties.tensorType);
    }
    whole_tensor(port, model.outputs()[port.port], t, label, &(*out)[k]);
  }
}

}  // namespace openbpu::dnn
