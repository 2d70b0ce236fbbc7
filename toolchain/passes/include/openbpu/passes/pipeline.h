// Running passes in order: the stage-2 optimizer.
//
// run_passes checks every pass name and option first, then runs the passes one by one; after
// each it drops values nothing uses, refreshes types if a refresher is given, runs the IR
// verifier (an invalid graph is an Error naming the pass) and logs the change of node and
// parameter counts in the original toolchain's words:
//   After constant_folding, the number of nodes has changed from 330 to 301.
//   After constant_folding, the number of parameters has changed from 4701923 to 4701980.
// (lines only for counts that changed). Parameters are the elements of all initializers.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "openbpu/ir/graph.h"
#include "openbpu/passes/pass.h"

namespace openbpu::passes {

struct PassInvocation {
  std::string name;
  std::map<std::string, std::string> options;  // option name → value; absent → default
};

// The stage-2 pipeline, in order (why this order: docs/passes.md):
//   dropout_identity_removal, constant_folding, activation_canonicalization,
//   operator_replacement, fuse_conv_affine, fuse_batchnorm, gemm_to_conv, matmul_to_conv,
//   reshape_transpose_cancellation, fuse_conv_affine, constant_folding, dead_code_elimination
std::vector<PassInvocation> default_pipeline();

// "name,name{key=value;key=value},..." → invocations (spaces around items ignored). Error on
// a malformed list; names and options are checked by run_passes.
std::vector<PassInvocation> parse_pipeline(std::string_view text);

struct PipelineOptions {
  Logger log;                   // count lines and pass details; may be empty
  TypeRefresher refresh_types;  // called after every pass that changed the graph; may be empty
};

struct PassReport {
  std::string name;
  int rewrites = 0;
  size_t nodes_before = 0, nodes_after = 0;
  int64_t parameters_before = 0, parameters_after = 0;
};

std::vector<PassReport> run_passes(ir::Model& model, const std::vector<PassInvocation>& passes,
                                   const PipelineOptions& options = {});

// Nodes of the main graph, and elements of all its initializers.
size_t count_nodes(const ir::Graph& graph);
int64_t count_parameters(const ir::Graph& graph);

}  // namespace openbpu::passes
