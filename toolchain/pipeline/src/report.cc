#include "openbpu/pipeline/report.h"

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
  const bool floats = reference.dtype() == kernels::DataType::kFloat32 &&
                      candidate.dtype() == kernels::DataType::kFloat32;
  const float* fa = floats ? reference.data<float>() : nullptr;
  const float* fb = floats ? candidate.data<float>() : nullptr;
  double l1 = 0, l2 = 0, cheb = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double a = floats ? fa[i] : reference.float_at(i);
    const double b = floats ? fb[i] : candidate.float_at(i);
    if (!std::isfinite(a) || !std::isfinite(b)) continue;  // as cosine_similarity
    const double d = std::fabs(a - b);
    l1 += d;
    l2 += d * d;
    cheb = std::max(cheb, d);
  }
  c.cosine = reference.element_count() == candidate.element_count() ? calibration::cosine_similarity(reference, candidate)
                                                                     : 0.0;
  c.l1 = l1 / static_cast<double>(n);
  c.l2 = std::sqrt(l2) / static_cast<double>(n);
  c.chebyshev = cheb;
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
    for (int64_t i = 0; i < q.element_count(); ++i) {
      const int64_t c = channels > 1 ? (i / inner) % channels : 0;
      out[i] = static_cast<float>(value_at(i)) * info.scales[static_cast<size_t>(c)];
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
  std::map<std::string, Tensor> candidate;
  executor::FloatExecutor qexec(quantized.model, {threads});
  executor::RunOptions qopts;
  qopts.observer = [&](const ir::Node&, const ir::Value& v, const Tensor& t) {
    auto it = wanted.find(v.name());
    if (it != wanted.end()) candidate[it->second] = dequantized(t, quantized.tensors.at(it->second));
  };
  const auto qout = qexec.run(quantized_feeds, qopts);
  for (const auto& [name, ref] : reference) {
    auto it = candidate.find(name);
    if (it != candidate.end() && it->second.element_count() == ref.element_count()) {
      result.tensors[name] = compare_tensors(ref, it->second);
    }
  }
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
