#include "openbpu/pipeline/report.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "openbpu/calibration/fake_quant_evaluation.h"
#include "openbpu/executor/float_executor.h"

namespace openbpu::pipeline {

using kernels::Tensor;

TensorComparison compare_tensors(const Tensor& reference, const Tensor& candidate) {
  TensorComparison c;
  const int64_t n = std::min(reference.element_count(), candidate.element_count());
  if (n == 0) return c;
  const calibration::PairSums sums = calibration::pair_sums(reference, candidate);
  c.cosine = reference.element_count() == candidate.element_count() ? sums.cosine() : 0.0;
  c.l1 = sums.abs_diff / static_cast<double>(n);
  c.l2 = std::sqrt(sums.sq_diff) / static_cast<double>(n);
  c.chebyshev = sums.max_diff;
  return c;
}

namespace {

// Dequantizes an integer tensor with per-tensor or per-channel scales.
Tensor dequantized(const Tensor& q, const quantization::QuantizedTensor& info) {
  Tensor f(kernels::DataType::kFloat32, q.shape());
  const int64_t channels = info.scales.size() > 1 && info.axis < q.rank() ? q.dim(info.axis) : 1;
  const int64_t inner = kernels::shape_element_count(
      std::span<const int64_t>(q.shape()).subspan(static_cast<size_t>(std::min<int64_t>(info.axis + 1, q.rank()))));
  float* out = f.data<float>();
  auto convert = [&](auto value_at) {
    const int64_t run = channels > 1 ? std::max<int64_t>(inner, 1) : q.element_count();
    for (int64_t start = 0; start < q.element_count(); start += run) {
      const float scale =
          info.scales[static_cast<size_t>(channels > 1 ? (start / run) % channels : 0)];
      const int64_t end = std::min(q.element_count(), start + run);
      for (int64_t i = start; i < end; ++i) out[i] = static_cast<float>(value_at(i)) * scale;
    }
  };
  switch (q.dtype()) {  // the quantized model's types read directly; others element by element
    case kernels::DataType::kInt8: convert([p = q.data<int8_t>()](int64_t i) { return p[i]; }); break;
    case kernels::DataType::kInt16: convert([p = q.data<int16_t>()](int64_t i) { return p[i]; }); break;
    case kernels::DataType::kInt32: convert([p = q.data<int32_t>()](int64_t i) { return p[i]; }); break;
    default: convert([&q](int64_t i) { return q.int_at(i); }); break;
  }
  return f;
}

}  // namespace

ModelComparison compare_models(const ir::Model& float_model, const quantization::QuantizeResult& quantized,
                               const std::map<std::string, Tensor>& float_feeds,
                               const std::map<std::string, Tensor>& quantized_feeds, int threads) {
  ModelComparison result;
  // Float model: keep every tensor that has an integer version, and the outputs.
  std::map<std::string, Tensor> reference;
  executor::FloatExecutor fexec(float_model, {threads});
  executor::RunOptions fopts;
  fopts.observer = [&](const ir::Node&, const ir::Value& v, const Tensor& t) {
    if (quantized.tensors.count(v.name()) && kernels::dtype_is_float(t.dtype())) reference[v.name()] = t.clone();
  };
  const auto fout = fexec.run(float_feeds, fopts);
  // Quantized model.
  std::map<std::string, std::string> wanted;  // integer name → float-model name
  for (const auto& [name, info] : quantized.tensors) wanted[info.name] = name;
  executor::FloatExecutor qexec(quantized.model, {threads});
  executor::RunOptions qopts;
  qopts.observer = [&](const ir::Node&, const ir::Value& v, const Tensor& t) {
    // Compared as it is produced: no dequantized copy of every tensor is kept.
    auto it = wanted.find(v.name());
    if (it == wanted.end()) return;
    auto ref = reference.find(it->second);
    if (ref == reference.end() || ref->second.element_count() != t.element_count()) return;
    result.tensors[it->second] =
        compare_tensors(ref->second, dequantized(t, quantized.tensors.at(it->second)));
    reference.erase(ref);
  };
  const auto qout = qexec.run(quantized_feeds, qopts);
  for (size_t i = 0; i < fout.names.size() && i < qout.tensors.size(); ++i) {
    result.outputs.emplace_back(fout.names[i], compare_tensors(fout.tensors[i], qout.tensors[i]));
    result.tensors[fout.names[i]] = result.outputs.back().second;
  }
  return result;
}

namespace {

std::string fit(const std::string& s, size_t width) {
  if (s.size() <= width) return s;
  return "..." + s.substr(s.size() - (width - 3));
}

std::string number(double v) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(6) << v;
  return out.str();
}

}  // namespace

std::string node_table(const std::vector<quantization::NodeReport>& nodes, const ModelComparison* comparison) {
  // Without a comparison (checker: random calibration data) the table has no similarity and
  // threshold columns, like the original checker's.
  const bool full = comparison != nullptr;
  size_t name_width = 4, type_width = 4;
  for (const auto& n : nodes) {
    name_width = std::max(name_width, std::min<size_t>(n.node.size(), 48));
    type_width = std::max(type_width, n.bpu_type.size());
  }
  std::ostringstream out;
  auto row = [&](const std::string& a, const std::string& b, const std::string& c, const std::string& d,
                 const std::string& e, const std::string& f, const std::string& g) {
    out << std::left << std::setw(int(name_width) + 2) << fit(a, name_width) << std::setw(5) << b
        << std::setw(10) << c << std::setw(int(type_width) + 2) << d;
    if (full) out << std::setw(19) << e << std::setw(11) << f;
    out << g << "\n";
  };
  const size_t width = name_width + 2 + 5 + 10 + type_width + 2 + (full ? 19 + 11 : 0) + 15;
  out << std::string(width, '=') << "\n";
  row("Node", "ON", "Subgraph", "Type", "Cosine Similarity", "Threshold", "In/Out DataType");
  out << std::string(width, '-') << "\n";
  for (const auto& n : nodes) {
    const bool bpu = n.unit == bpu_support::Unit::kBpu;
    std::string cosine = "--";
    if (full) {
      auto it = comparison->tensors.find(n.output_tensor);
      if (it != comparison->tensors.end()) cosine = number(it->second.cosine);
    }
    std::ostringstream th;
    if (n.input_threshold >= 0) th << std::setprecision(6) << n.input_threshold;
    row(n.node.empty() ? n.op_type : n.node, bpu ? "BPU" : "CPU", bpu ? "id(" + std::to_string(n.subgraph) + ")" : "--",
        n.bpu_type, cosine, n.input_threshold >= 0 ? th.str() : "--", n.in_type + "/" + n.out_type);
  }
  return out.str();
}

std::string output_table(const ModelComparison& comparison) {
  size_t name_width = 6;
  for (const auto& [name, c] : comparison.outputs) name_width = std::max(name_width, name.size());
  std::ostringstream out;
  out << std::left << std::setw(int(name_width) + 2) << "Output" << std::setw(19) << "Cosine Similarity"
      << std::setw(13) << "L1 Distance" << std::setw(13) << "L2 Distance" << "Chebyshev Distance\n";
  for (const auto& [name, c] : comparison.outputs) {
    out << std::left << std::setw(int(name_width) + 2) << name << std::setw(19) << number(c.cosine)
        << std::setw(13) << number(c.l1) << std::setw(13) << number(c.l2) << number(c.chebyshev) << "\n";
  }
  return out.str();
}

}  // namespace openbpu::pipeline
