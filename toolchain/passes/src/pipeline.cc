#include "openbpu/passes/pipeline.h"

#include <cctype>
#include <memory>

#include "openbpu/common/error.h"
#include "openbpu/ir/verifier.h"

namespace openbpu::passes {

std::vector<PassInvocation> default_pipeline() {
  // A float16 export computes in float32 first (calibration measures float32), a dynamically
  // quantized one in float with its dequantized weights. Cleanup next so that the fusions see
  // plain Conv→BN chains; recurrent layers unroll into steps whose MatMuls become Convs below;
  // activations are recognised before operator_replacement merges their
  // constant factors with neighbouring ones; affine fusion before BN fusion
  // (ConvTranspose→Add(bias)→BN) and again after BN fusion and after Gemm/MatMul became Conv
  // (Conv→BN→Mul→Add; LayerNorm's gamma/beta into the next linear layer); 1-D convolutions
  // and 3-D ones become 2-D after BN fusion; cancellation removes the Reshapes and Transposes the conversions
  // add; a last folding and DCE clean up.
  return {{"float16_to_float32", {}},
          {"dynamic_quantization_removal", {}},
          {"dropout_identity_removal", {}},
          {"constant_folding", {}},
          {"if_inlining", {}},
          {"control_flow_flattening", {}},
          {"dropout_identity_removal", {}},
          {"constant_folding", {}},
          {"softmax_axis_canonicalization", {}},
          {"prelu_decomposition", {}},
          {"recurrent_unrolling", {}},
          {"activation_canonicalization", {}},
          {"operator_replacement", {}},
          {"fuse_conv_affine", {}},
          {"fuse_batchnorm", {}},
          {"conv1d_as_conv2d", {}},
          {"conv3d_as_conv2d", {}},
          {"gemm_to_conv", {}},
          {"matmul_to_conv", {}},
          {"reshape_transpose_cancellation", {}},
          {"fuse_conv_affine", {}},
          {"constant_folding", {}},
          {"dead_code_elimination", {}}};
}

namespace {

std::string trimmed(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

}  // namespace

std::vector<PassInvocation> parse_pipeline(std::string_view text) {
  std::vector<PassInvocation> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = pos;
    while (end < text.size() && text[end] != ',' && text[end] != '{') ++end;
    PassInvocation inv;
    inv.name = trimmed(text.substr(pos, end - pos));
    if (inv.name.empty()) raise("pass list '", text, "': empty pass name at offset ", pos);
    if (end < text.size() && text[end] == '{') {
      const size_t close = text.find('}', end);
      if (close == std::string_view::npos) raise("pass list '", text, "': missing '}'");
      std::string_view body = text.substr(end + 1, close - end - 1);
      size_t p = 0;
      while (p <= body.size()) {
        size_t semi = body.find(';', p);
        if (semi == std::string_view::npos) semi = body.size();
        const std::string item = trimmed(body.substr(p, semi - p));
        if (!item.empty()) {
          const size_t eq = item.find('=');
          if (eq == std::string::npos) {
            raise("pass list '", text, "': option '", item, "' of pass '", inv.name,
                  "' must be key=value");
          }
          inv.options[trimmed(item.substr(0, eq))] = trimmed(item.substr(eq + 1));
        }
        p = semi + 1;
      }
      end = close + 1;
      while (end < text.size() && std::isspace(static_cast<unsigned char>(text[end]))) ++end;
      if (end < text.size() && text[end] != ',') {
        raise("pass list '", text, "': expected ',' after the options of pass '", inv.name, "'");
      }
    }
    out.push_back(std::move(inv));
    pos = end + 1;
  }
  return out;
}

size_t count_nodes(const ir::Graph& graph) {
  return graph.nodes().size();
}

int64_t count_parameters(const ir::Graph& graph) {
  int64_t total = 0;
  for (const ir::Value* c : graph.constants()) total += c->constant()->element_count();
  return total;
}

std::vector<PassReport> run_passes(ir::Model& model, const std::vector<PassInvocation>& passes,
                                   const PipelineOptions& options) {
  struct Prepared {
    const PassDef* def;
    std::unique_ptr<PassOptions> options;
  };
  std::vector<Prepared> prepared;
  for (const PassInvocation& inv : passes) {
    const PassDef* def = find_pass(inv.name);
    if (def == nullptr) {
      std::string known;
      for (const PassDef& d : all_passes()) known += str_cat(known.empty() ? "" : ", ", d.name);
      raise("unknown pass '", inv.name, "' (passes: ", known, ")");
    }
    prepared.push_back({def, std::make_unique<PassOptions>(def->name, def->options, inv.options)});
  }

  const Logger log = options.log ? options.log : Logger([](const std::string&) {});
  std::vector<PassReport> reports;
  ir::Graph& graph = *model.graph;
  for (const Prepared& p : prepared) {
    PassReport report;
    report.name = std::string(p.def->name);
    report.nodes_before = count_nodes(graph);
    report.parameters_before = count_parameters(graph);
    PassContext ctx{model, *p.options, log, options.refresh_types};
    try {
      report.rewrites = p.def->run(ctx);
    } catch (const Error& e) {
      raise("pass ", p.def->name, ": ", e.what());
    }
    if (report.rewrites > 0) {
      graph.remove_unused_values();
      if (options.refresh_types) options.refresh_types(model);
    }
    ir::verify_or_throw(graph, str_cat("after pass ", p.def->name));
    report.nodes_after = count_nodes(graph);
    report.parameters_after = count_parameters(graph);
    if (report.nodes_after != report.nodes_before) {
      log(str_cat("After ", p.def->name, ", the number of nodes has changed from ",
                  report.nodes_before, " to ", report.nodes_after, "."));
    }
    if (report.parameters_after != report.parameters_before) {
      log(str_cat("After ", p.def->name, ", the number of parameters has changed from ",
                  report.parameters_before, " to ", report.parameters_after, "."));
    }
    reports.push_back(std::move(report));
  }
  return reports;
}

}  // namespace openbpu::passes
