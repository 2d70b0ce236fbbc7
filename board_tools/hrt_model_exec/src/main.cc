// hrt_model_exec: the board tool of the original toolchain (model_info | infer | perf) over the
// hbDNN C API. See docs/hrt_model_exec.md.
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "dnn/hb_dnn.h"
#include "dnn/hb_sys.h"
#include "dnn/openbpu_profiler.h"
#include "openbpu/base/file_name.h"
#include "openbpu/dnn/simulated_perf.h"
#include "openbpu/hrt/flags.h"
#include "openbpu/tensor_io/tensor_io.h"
#include "openbpu/tensor_io/ucp_infer.h"

namespace openbpu::hrt {
using namespace tensor_io;  // NOLINT(google-build-using-namespace): the tool is built on it
namespace {

using Clock = std::chrono::steady_clock;
const char* const kRule = "---------------------------------------------------------------------";

// A failed hbDNN / hbSys call: the message carries hbDNNGetErrorDesc(code).
struct DnnError : std::runtime_error {
  DnnError(const std::string& what, int32_t code)
      : std::runtime_error(what + " failed: " + hbDNNGetErrorDesc(code)), code(code) {}
  int32_t code;
};

void check(int32_t rc, const std::string& what) {
  if (rc != 0) throw DnnError(what, rc);
}

[[noreturn]] void fail(const std::string& message) { throw std::runtime_error(message); }

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// The packed handle and every block of BPU memory of a run; freed on every path.
class Session {
 public:
  ~Session() {
    for (hbSysMem& m : memory_) (void)hbSysFreeMem(&m);
    if (packed_ != nullptr) (void)hbDNNRelease(packed_);  // every task was released before
  }

  void load(const std::vector<std::string>& files) {
    std::vector<const char*> names;
    for (const std::string& f : files) names.push_back(f.c_str());
    const auto t0 = Clock::now();
    check(hbDNNInitializeFromFiles(&packed_, names.data(), static_cast<int32_t>(names.size())), "hbDNNInitializeFromFiles");
    std::printf("Load model to DDR cost %.3fms.\n", ms_since(t0));
    const char** list = nullptr;
    int32_t count = 0;
    check(hbDNNGetModelNameList(&list, &count, packed_), "hbDNNGetModelNameList");
    for (int32_t i = 0; i < count; ++i) model_names_.emplace_back(list[i]);
    ucp_ = true;
    for (const std::string& f : files) ucp_ = ucp_ && f.size() > 4 && f.compare(f.size() - 4, 4, ".hbm") == 0;
  }

  const std::vector<std::string>& model_names() const { return model_names_; }
  // .hbm files (the nash marches' S100 / J6 generation): inferences go through the UCP API
  // (openbpu/tensor_io/ucp_infer.h), as that generation's tool does; --roi_infer keeps the classic calls.
  bool ucp() const { return ucp_; }

  // --model_name, or the only model of the files.
  std::string pick_model(const std::string& requested) const {
    if (!requested.empty()) {
      if (std::find(model_names_.begin(), model_names_.end(), requested) == model_names_.end()) {
        fail("flag '--model_name': no model '" + requested + "' in the model files (they hold: " + joined_names() + ")");
      }
      return requested;
    }
    if (model_names_.size() != 1) fail("flag '--model_name' is required: the model files hold " + joined_names());
    return model_names_.front();
  }

  hbDNNHandle_t handle(const std::string& name) {
    hbDNNHandle_t h = nullptr;
    check(hbDNNGetModelHandle(&h, packed_, name.c_str()), "hbDNNGetModelHandle");
    return h;
  }

  hbSysMem allocate(size_t bytes) {
    if (bytes == 0 || bytes > std::numeric_limits<uint32_t>::max()) fail("cannot allocate " + std::to_string(bytes) + " bytes of BPU memory");
    hbSysMem m{};
    memory_.reserve(memory_.size() + 1);
    check(hbSysAllocCachedMem(&m, static_cast<uint32_t>(bytes)), "hbSysAllocCachedMem");
    memory_.push_back(m);
    return m;
  }

 private:
  std::string joined_names() const {
    std::string s;
    for (const std::string& n : model_names_) s += (s.empty() ? "" : ", ") + n;
    return s;
  }
  hbPackedDNNHandle_t packed_ = nullptr;
  bool ucp_ = false;
  std::vector<std::string> model_names_;
  std::vector<hbSysMem> memory_;
};

void print_properties(const hbDNNTensorProperties& p) {
  std::printf("valid shape: %s\n", shape_text(p.validShape).c_str());
  std::printf("aligned shape: %s\n", shape_text(p.alignedShape).c_str());
  std::printf("aligned byte size: %d\n", p.alignedByteSize);
  std::printf("tensor type: %s\n", tensor_type_name(p.tensorType));
  std::printf("tensor layout: %s\n", tensor_layout_name(p.tensorLayout));
  std::printf("quanti type: %s\n", quanti_type_name(p.quantiType));
  std::string stride = "(";
  for (int32_t i = 0; i < p.validShape.numDimensions; ++i) stride += std::to_string(p.stride[i]) + ",";
  std::printf("stride: %s)\n", stride.c_str());
  if (p.quantiType == SCALE) {
    std::string scales;
    char buf[64];
    for (int32_t i = 0; i < p.scale.scaleLen; ++i) {
      std::snprintf(buf, sizeof buf, "%g,", static_cast<double>(p.scale.scaleData[i]));
      scales += buf;
    }
    std::printf("scale data: %s\n", scales.c_str());
    std::printf("quantizeAxis: %d\n", p.quantizeAxis);
  }
}

int run_model_info(const Options& o, Session& s) {
  std::vector<std::string> models = s.model_names();
  if (!o.model_name.empty()) models = {s.pick_model(o.model_name)};
  std::printf("This model file has %zu model:\n", s.model_names().size());
  std::string list;
  for (const std::string& n : s.model_names()) list += "[" + n + "]  ";
  std::printf("%s\n", list.c_str());
  std::printf("%s\n", kRule);
  for (const std::string& name : models) {
    hbDNNHandle_t h = s.handle(name);
    std::printf("[model name]: %s\n\n", name.c_str());
    if (s.ucp()) std::printf("model description: %s\n\n", ucp_model_description(h).c_str());
    std::vector<std::string> in_names, out_names;
    const auto ins = input_properties(h, &in_names);
    for (size_t i = 0; i < ins.size(); ++i) {
      std::printf("input[%zu]: \nname: %s\n", i, in_names[i].c_str());
      int32_t source = HB_DNN_INPUT_FROM_DDR;
      if (const int32_t rc = hbDNNGetInputSource(&source, h, static_cast<int32_t>(i)); rc != 0) throw DnnError("hbDNNGetInputSource", rc);
      std::printf("input source: %s\n", source == HB_DNN_INPUT_FROM_RESIZER  ? "HB_DNN_INPUT_FROM_RESIZER"
                                         : source == HB_DNN_INPUT_FROM_PYRAMID ? "HB_DNN_INPUT_FROM_PYRAMID"
                                                                               : "HB_DNN_INPUT_FROM_DDR");
      print_properties(ins[i]);
      std::printf("\n");
    }
    const auto outs = output_properties(h, &out_names);
    for (size_t i = 0; i < outs.size(); ++i) {
      std::printf("output[%zu]: \nname: %s\n", i, out_names[i].c_str());
      print_properties(outs[i]);
      std::printf("\n");
    }
    std::printf("%s\n", kRule);
  }
  return 0;
}

int32_t core_mask(int core_id) {
  return core_id == 0 ? HB_BPU_CORE_ANY : (core_id == 1 ? HB_BPU_CORE_0 : HB_BPU_CORE_1);
}

// Input and output tensors of one model in BPU memory. With --roi_infer: `rois` (one per resizer
// input per batch) and `batches` copies of the inputs, outputs with room for every batch.
struct Tensors {
  std::vector<hbDNNTensor> inputs, outputs;
  std::vector<hbDNNRoi> rois;
  size_t batches = 1;
  bool ucp = false;  // through the UCP API (Session::ucp)
};

// The model's inputs as read from --input_file (or random) and, with --roi_infer, the ROIs.
struct Inputs {
  std::vector<InputData> data;
  std::vector<hbDNNRoi> rois;
};

Tensors prepare_tensors(Session& s, const std::vector<hbDNNTensorProperties>& in_props, const Inputs& in,
                        const std::vector<hbDNNTensorProperties>& out_props) {
  Tensors t;
  t.rois = in.rois;
  size_t resizer = 0;
  for (const InputData& d : in.data) resizer += d.image_width > 0 ? 1 : 0;
  if (resizer > 0) t.batches = in.rois.size() / resizer;
  for (size_t i = 0; i < in_props.size(); ++i) {
    const InputData& d = in.data[i];
    hbDNNTensor tensor{};
    tensor.properties = in_props[i];
    if (d.dense) tensor.properties.alignedShape = tensor.properties.validShape;
    if (d.image_width > 0) {  // a source image: its own height and width, rows of W bytes
      const int h_axis = tensor.properties.tensorLayout == HB_DNN_LAYOUT_NHWC ? 1 : 2;
      tensor.properties.validShape.dimensionSize[h_axis] = d.image_height;
      tensor.properties.validShape.dimensionSize[h_axis + 1] = d.image_width;
      tensor.properties.alignedShape = tensor.properties.validShape;
    }
    tensor.sysMem[0] = s.allocate(d.bytes.size());
    t.ucp = s.ucp();
    std::memcpy(tensor.sysMem[0].virAddr, d.bytes.data(), d.bytes.size());
    check(hbSysFlushMem(&tensor.sysMem[0], HB_SYS_MEM_CACHE_CLEAN), "hbSysFlushMem");
    t.inputs.push_back(tensor);
  }
  // Every batch reads the same images (its own ROIs): batch b's inputs are copies of batch 0's.
  for (size_t b = 1; b < t.batches; ++b) {
    for (size_t i = 0; i < in_props.size(); ++i) t.inputs.push_back(t.inputs[i]);
  }
  for (const hbDNNTensorProperties& p : out_props) {
    hbDNNTensor tensor{};
    tensor.properties = p;
    tensor.sysMem[0] = s.allocate(static_cast<size_t>(p.alignedByteSize) * t.batches);
    t.outputs.push_back(tensor);
  }
  return t;
}

// --input_file (one file per model input; with --roi_infer a resizer input's file is its source
// image, and a last extra .txt file holds the ROIs), or random data when allowed and absent.
Inputs read_inputs(const Options& o, const std::string& model, hbDNNHandle_t h, const std::vector<std::string>& names,
                   const std::vector<hbDNNTensorProperties>& props, bool random_if_missing) {
  std::vector<std::string> files = split_list(o.input_file);
  std::vector<bool> resizer(props.size(), false);
  size_t resizer_count = 0;
  std::vector<hbDNNRoi> rois;
  std::string roi_what = "flag '--roi'";
  if (o.roi_infer) {
    for (size_t i = 0; i < props.size(); ++i) {
      int32_t source = HB_DNN_INPUT_FROM_DDR;
      check(hbDNNGetInputSource(&source, h, static_cast<int32_t>(i)), "hbDNNGetInputSource");
      resizer[i] = source == HB_DNN_INPUT_FROM_RESIZER;
      resizer_count += resizer[i] ? 1 : 0;
    }
    if (resizer_count == 0) {
      fail("flag '--roi_infer': model '" + model + "' has no resizer input (convert it with input_source: resizer; " +
           "hrt_model_exec model_info prints each input's source)");
    }
    if (files.size() == props.size() + 1) {
      const std::string& last = files.back();
      if (last.size() < 4 || last.compare(last.size() - 4, 4, ".txt") != 0) {
        fail("flag '--input_file': with --roi_infer, the file after the model's " + std::to_string(props.size()) +
             " input(s) is the ROI file (.txt with 'left top right bottom' lines); '" + last + "' is not one");
      }
      if (!o.roi.empty()) fail("flag '--roi' and the ROI file '" + last + "' both give ROIs: give one of them");
      rois = read_roi_file(last);
      roi_what = "ROI file '" + last + "'";
      files.pop_back();
    } else {
      rois = parse_rois(o.roi, roi_what);
    }
  }
  Inputs in;
  if (files.empty() && random_if_missing) {
    for (size_t i = 0; i < props.size(); ++i) {
      in.data.push_back(random_input(props[i], static_cast<uint32_t>(1234 + i)));
      if (resizer[i]) std::tie(in.data.back().image_height, in.data.back().image_width) = image_size(props[i]);
    }
    std::printf("input data: random (no --input_file)\n");
  } else {
    if (files.size() != props.size()) {
      std::string list;
      for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
      fail("flag '--input_file' gives " + std::to_string(files.size()) + " file(s); model '" + model + "' has " +
           std::to_string(props.size()) + " input(s) (" + list + "), one file each, comma separated" +
           (o.roi_infer ? ", then optionally the ROI file" : ""));
    }
    for (size_t i = 0; i < files.size(); ++i) {
      in.data.push_back(resizer[i] ? read_source_image(files[i], props[i]) : read_input_file(files[i], props[i]));
    }
  }
  if (o.roi_infer) {
    in.rois = std::move(rois);
    if (in.rois.empty()) {
      fail("flag '--roi_infer' needs ROIs: '--roi' (left,top,right,bottom; ROIs separated by ';') or a ROI file after the "
           "input files");
    }
    if (in.rois.size() % resizer_count != 0) {
      fail(roi_what + " gives " + std::to_string(in.rois.size()) + " ROI(s); model '" + model + "' has " +
           std::to_string(resizer_count) + " resizer input(s): one ROI per resizer input per batch");
    }
  }
  return in;
}

// One inference, waited for; returns its latency in ms.
double infer_once(hbDNNHandle_t h, Tensors& t, int core_id) {
  if (t.ucp && t.rois.empty()) {
    std::vector<UcpBlock> in, out;
    for (const hbDNNTensor& x : t.inputs) {
      const hbDNNTensorShape& a = x.properties.alignedShape;
      const hbDNNTensorShape& v = x.properties.validShape;
      const bool dense = a.numDimensions == v.numDimensions &&
                         std::equal(a.dimensionSize, a.dimensionSize + a.numDimensions, v.dimensionSize);
      in.push_back(UcpBlock{x.sysMem[0].virAddr, x.sysMem[0].phyAddr, x.sysMem[0].memSize, dense});
    }
    for (const hbDNNTensor& y : t.outputs) out.push_back(UcpBlock{y.sysMem[0].virAddr, y.sysMem[0].phyAddr, y.sysMem[0].memSize});
    return ucp_infer_once(h, in, out, core_id);
  }
  hbDNNInferCtrlParam param;
  HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&param);
  param.bpuCoreId = core_mask(core_id);
  hbDNNTaskHandle_t task = nullptr;
  hbDNNTensor* outs = t.outputs.data();
  const auto t0 = Clock::now();
  int32_t rc = t.rois.empty() ? hbDNNInfer(&task, &outs, t.inputs.data(), h, &param)
                              : hbDNNRoiInfer(&task, &outs, t.inputs.data(), t.rois.data(),
                                              static_cast<int32_t>(t.rois.size()), h, &param);
  if (rc != 0) {
    if (task != nullptr) (void)hbDNNReleaseTask(task);
    throw DnnError(t.rois.empty() ? "hbDNNInfer" : "hbDNNRoiInfer (--roi_infer)", rc);
  }
  rc = hbDNNWaitTaskDone(task, 0);
  const double ms = ms_since(t0);
  const int32_t release = hbDNNReleaseTask(task);
  if (rc != 0) throw DnnError("hbDNNWaitTaskDone", rc);
  check(release, "hbDNNReleaseTask");
  return ms;
}

void make_directories(const std::string& dir) {
  std::string path;
  for (const std::string& part : split_list(dir, '/')) {
    path += (path.empty() && dir[0] != '/' ? "" : "/") + part;
    if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) fail("flag '--dump_path': cannot create '" + path + "': " + std::strerror(errno));
  }
}

int run_infer(const Options& o, Session& s) {
  const std::string model = s.pick_model(o.model_name);
  hbDNNHandle_t h = s.handle(model);
  std::vector<std::string> in_names, out_names;
  const auto in_props = input_properties(h, &in_names);
  const auto out_props = output_properties(h, &out_names);
  if (o.input_file.empty()) fail("flag '--input_file' is required for infer (one file per model input, comma separated)");
  const Inputs data = read_inputs(o, model, h, in_names, in_props, false);
  if (o.enable_cls_post_process && out_props.size() != 1) {
    fail("flag '--enable_cls_post_process' needs a model with one output; '" + model + "' has " + std::to_string(out_props.size()));
  }
  Tensors t = prepare_tensors(s, in_props, data, out_props);
  const int frames = o.frame_count_set ? o.frame_count : 1;
  double total = 0, lo = std::numeric_limits<double>::max(), hi = 0;
  for (int f = 0; f < frames; ++f) {
    const double ms = infer_once(h, t, o.core_id);
    total += ms, lo = std::min(lo, ms), hi = std::max(hi, ms);
  }
  std::printf("infer success\n");
  std::printf("frame count: %d, infer latency: %.3f ms (average; min %.3f ms, max %.3f ms)\n", frames, total / frames, lo, hi);
  std::string dir = o.dump_path.empty() ? "." : o.dump_path;
  if (o.enable_dump) make_directories(dir);
  for (size_t i = 0; i < out_props.size(); ++i) {
    check(hbSysFlushMem(&t.outputs[i].sysMem[0], HB_SYS_MEM_CACHE_INVALIDATE), "hbSysFlushMem");
  }
  // With --roi_infer, batch b's outputs are at b * alignedByteSize; with more than one batch the
  // lines and dump names carry the batch ("roi b", "_roi<b>").
  for (size_t b = 0; b < t.batches; ++b) {
    const std::string roi_label = t.batches > 1 ? " roi " + std::to_string(b) + "," : "";
    const std::string roi_suffix = t.batches > 1 ? "_roi" + std::to_string(b) : "";
    for (size_t i = 0; i < out_props.size(); ++i) {
      const hbDNNTensorProperties& p = out_props[i];
      const auto* base = static_cast<const uint8_t*>(t.outputs[i].sysMem[0].virAddr) + b * static_cast<size_t>(p.alignedByteSize);
      const std::vector<uint8_t> valid = gather_valid(base, p);
      std::printf("output[%zu]:%s name: %s, tensor type: %s, valid shape: %s, quanti type: %s", i, roi_label.c_str(),
                  out_names[i].c_str(), tensor_type_name(p.tensorType), shape_text(p.validShape).c_str(),
                  quanti_type_name(p.quantiType));
      if (is_float_type(p.tensorType)) {
        const std::vector<double> v = to_doubles(valid, p);
        double mn = std::numeric_limits<double>::infinity(), mx = -mn, sum = 0;
        for (double x : v) mn = std::min(mn, x), mx = std::max(mx, x), sum += x;
        std::printf(", min: %.6f, max: %.6f, mean: %.6f", mn, mx, v.empty() ? 0.0 : sum / static_cast<double>(v.size()));
      }
      std::printf("\n");
      if (o.enable_dump) {
        const std::string safe = base::file_name_part(out_names[i]);
        const bool txt = o.dump_format == "txt" || o.hybrid_dequantize_process;
        const std::string path =
            dir + "/model_infer_output_" + std::to_string(i) + "_" + safe + roi_suffix + (txt ? ".txt" : ".bin");
        if (!txt) {
          write_file_atomically(path, std::string(valid.begin(), valid.end()));
        } else if (o.hybrid_dequantize_process) {
          write_file_atomically(path, format_txt(dequantize(valid, p), p.validShape, o.dump_precision, o.dump_txt_axis, true));
        } else {
          write_file_atomically(path, format_txt(to_doubles(valid, p), p.validShape, o.dump_precision, o.dump_txt_axis,
                                                 is_float_type(p.tensorType)));
        }
        std::printf("dump output[%zu] to %s\n", i, path.c_str());
      }
    }
    if (o.enable_cls_post_process) {
      const hbDNNTensorProperties& p = out_props[0];
      const auto* base = static_cast<const uint8_t*>(t.outputs[0].sysMem[0].virAddr) + b * static_cast<size_t>(p.alignedByteSize);
      const std::vector<double> v = dequantize(gather_valid(base, p), p);
      std::printf("cls post process,%s top 5 of output '%s':\n", roi_label.c_str(), out_names[0].c_str());
      const std::vector<size_t> top = top_k(v, 5);
      for (size_t k = 0; k < top.size(); ++k) std::printf("  top %zu: id %zu, score %.6f\n", k, top[k], v[top[k]]);
    }
  }
  return 0;
}

struct PerfStats {
  std::mutex mutex;
  int64_t frames = 0;
  double total_ms = 0, max_ms = 0, min_ms = std::numeric_limits<double>::max();
  int64_t printed = 0;
};

void print_frame_line(const PerfStats& st, double elapsed_ms) {
  std::printf("Frame count: %lld,  Thread Average: %.6f ms,  thread max latency: %.6f ms,  thread min latency: %.6f ms,  FPS: %.6f\n",
              static_cast<long long>(st.frames), st.total_ms / static_cast<double>(st.frames), st.max_ms, st.min_ms,
              static_cast<double>(st.frames) * 1000.0 / elapsed_ms);
  std::fflush(stdout);
}

int run_perf(const Options& o, Session& s) {
  const std::string model = s.pick_model(o.model_name);
  hbDNNHandle_t h = s.handle(model);
  std::printf("get model handle success\n");
  std::vector<std::string> in_names, out_names;
  const auto in_props = input_properties(h, &in_names);
  std::printf("get model input count success\n");
  const Inputs data = read_inputs(o, model, h, in_names, in_props, true);
  const auto out_props = output_properties(h, &out_names);
  std::vector<Tensors> per_thread;
  for (int i = 0; i < o.thread_num; ++i) per_thread.push_back(prepare_tensors(s, in_props, data, out_props));
  std::printf("prepare input tensor success!\n");
  std::printf("get model output count success\n");
  if (o.thread_num_clamped) std::printf("thread_num is clamped to 8\n");

  const bool timed = o.perf_time > 0;
  const int64_t frame_target = o.frame_count_set ? o.frame_count : 200;
  const auto deadline = Clock::now() + std::chrono::minutes(o.perf_time);
  std::atomic<int64_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex error_mutex;
  std::string error;
  PerfStats st;
  const auto t0 = Clock::now();
  std::vector<std::thread> threads;
  for (int i = 0; i < o.thread_num; ++i) {
    threads.emplace_back([&, i] {
      while (!stop.load()) {
        if (timed ? Clock::now() >= deadline : next.fetch_add(1) >= frame_target) break;
        double ms = 0;
        try {
          ms = infer_once(h, per_thread[static_cast<size_t>(i)], o.core_id);
        } catch (const std::exception& e) {
          std::lock_guard<std::mutex> lock(error_mutex);
          if (error.empty()) error = e.what();
          stop = true;
          break;
        }
        std::lock_guard<std::mutex> lock(st.mutex);
        ++st.frames;
        st.total_ms += ms, st.max_ms = std::max(st.max_ms, ms), st.min_ms = std::min(st.min_ms, ms);
        if (st.frames % 200 == 0) {
          print_frame_line(st, ms_since(t0));
          st.printed = st.frames;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  const double run_ms = ms_since(t0);
  if (!error.empty()) fail(error);
  if (st.frames == 0) fail("perf ran no frame");
  if (st.printed != st.frames) print_frame_line(st, run_ms);
  std::printf("Running condition:\n");
  std::printf("  Thread number is: %d\n", o.thread_num);
  std::printf("  Frame count   is: %lld\n", static_cast<long long>(st.frames));
  std::printf("  Program run time: %.6f ms\n", run_ms);
  std::printf("Perf result:\n");
  std::printf("  Frame totally latency is: %.6f ms\n", st.total_ms);
  std::printf("  Average    latency    is: %.6f ms\n", st.total_ms / static_cast<double>(st.frames));
  std::printf("  Frame      rate       is: %.6f FPS\n", static_cast<double>(st.frames) * 1000.0 / run_ms);
  std::printf("(wall-clock figures of this machine: the runtime runs the BPU segments on the virtual BPU simulator)\n");
  // profiler.log's first object and profiler.csv's first blocks: the figures printed above (no
  // effect when the profiler is off).
  check(openbpuDNNProfilerSetRunningCondition(model.c_str(), o.core_id, st.frames, run_ms, o.thread_num,
                                              st.total_ms / static_cast<double>(st.frames),
                                              static_cast<double>(st.frames) * 1000.0 / run_ms),
        "openbpuDNNProfilerSetRunningCondition");

  dnn::SimulatedLatency sim;
  for (const std::string& file : split_list(o.model_file)) {
    sim = dnn::simulated_bpu_latency(file, model);
    if (sim.ok) break;
  }
  if (sim.ok) {
    std::printf("Simulated BPU latency (virtual BPU timing model, %s): %.1f us per frame (%d BPU segment(s))\n",
                sim.march.c_str(), sim.latency_us, sim.segments);
  } else {
    std::printf("Simulated BPU latency (virtual BPU timing model): not available: %s\n", sim.error.c_str());
  }
  // The same frames kept in flight by thread_num clients on the virtual BPU's per-core queues
  // (BPU segments only: CPU segments take no time in it).
  dnn::SimulatedThroughput flow;
  for (const std::string& file : split_list(o.model_file)) {
    flow = dnn::simulated_bpu_throughput(file, model, o.thread_num, o.core_id);
    if (flow.ok) break;
  }
  if (flow.ok) {
    const std::string cores = flow.core_num == 1 ? std::to_string(flow.cores) + (flow.cores == 1 ? " core" : " cores")
                                                 : std::to_string(flow.cores) + " group(s) of " +
                                                       std::to_string(flow.core_num) + " cores (core_num)";
    std::printf("Simulated BPU throughput (virtual BPU timing model, %s, %d thread%s on %s): %.1f FPS, average queue "
                "wait %.1f us per frame\n",
                flow.march.c_str(), flow.threads, flow.threads == 1 ? "" : "s", cores.c_str(), flow.fps,
                flow.average_wait_us);
  } else {
    std::printf("Simulated BPU throughput (virtual BPU timing model): not available: %s\n", flow.error.c_str());
  }
  return 0;
}

int run(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::fputs(usage_text().c_str(), stdout);
    return 0;
  }
  const ParseResult parsed = parse_command_line(args);
  if (!parsed.ok) {
    std::fprintf(stderr, "hrt_model_exec: error: %s\n", parsed.error.c_str());
    return 1;
  }
  const Options& o = parsed.options;
  if (o.help) {
    std::fputs(usage_text().c_str(), stdout);
    return 0;
  }
  if (o.version) {
    std::printf("%s\n", hbDNNGetVersion());
    return 0;
  }
  try {
    if (o.command == Command::kNone) fail("missing subcommand: model_info, infer or perf (hrt_model_exec --help)");
    if (o.model_file.empty()) fail("flag '--model_file' is required (model file paths, comma separated)");
    if (!o.profile_path.empty()) {
      // The runtime's profiler (HB_DNN_PROFILER_LOG_PATH, read at the first model load): it writes
      // profiler.log and profiler.csv there when the model is released and at exit.
      struct stat info {};
      if (::stat(o.profile_path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
        std::printf("profile_path: %s exsit!\n", o.profile_path.c_str());  // sic, the reference's line
      }
      if (::setenv("HB_DNN_PROFILER_LOG_PATH", o.profile_path.c_str(), 1) != 0) {
        fail("cannot set HB_DNN_PROFILER_LOG_PATH: " + std::string(std::strerror(errno)));
      }
    }
    if (o.dump_intermediate > 0) {
      // The runtime's per-layer dump (HB_DNN_DUMP_PATH and HB_DNN_DUMP_FORMAT, read when the
      // model is loaded): 1 .bin files, 2 and 3 a .txt beside each .bin. 2 and 3 are the same
      // here: BPU outputs are dumped with their valid shape (docs/hrt_model_exec.md).
      const std::string dir = o.dump_path.empty() ? "." : o.dump_path;
      const char* format = o.dump_intermediate == 1 ? "bin" : "bin,txt";
      if (::setenv("HB_DNN_DUMP_PATH", dir.c_str(), 1) != 0) fail("cannot set HB_DNN_DUMP_PATH: " + std::string(std::strerror(errno)));
      if (::setenv("HB_DNN_DUMP_FORMAT", format, 1) != 0)
        fail("cannot set HB_DNN_DUMP_FORMAT: " + std::string(std::strerror(errno)));
    }
    if (o.command == Command::kPerf) {
      // On the simulator (x86), a BPU job may use as many host threads as perf runs threads
      // (OPENBPU_SIM_THREADS, unless the user set it); a board ignores it.
      ::setenv("OPENBPU_SIM_THREADS", std::to_string(o.thread_num).c_str(), 0);
    }
    Session s;
    s.load(split_list(o.model_file));
    switch (o.command) {
      case Command::kModelInfo: return run_model_info(o, s);
      case Command::kInfer: return run_infer(o, s);
      case Command::kPerf: return run_perf(o, s);
      case Command::kNone: break;
    }
    return 1;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "hrt_model_exec: error: %s\n", e.what());
    return 1;
  }
}

}  // namespace
}  // namespace openbpu::hrt

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return openbpu::hrt::run(args);
}
