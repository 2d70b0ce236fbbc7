// libonnx's shape inference, isolated. libonnx 1.12 (Debian 12's) trusts what it reads: on
// malformed but parseable models its inference functions index dimensions and attributes that
// are not there (Conv, ConvTranspose, ConvInteger with a weight of another rank, GatherND with
// a negative batch_dims, LayerNormalization with an axis beyond the rank, EyeLike without its
// input, Scan without its body, SplitToSequence with a split of 0, STFT...; found by
// tests/fuzz onnx_import and a sweep over its operator schemas). So it runs in a child process:
// the child infers, strips the tensors and sends the model back; the parent copies the types.
// A child that dies leaves every type to our own rules (shape_inference.h), and the model's
// problems to the checks that name them.
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <string>
#include <string_view>

#include "openbpu/frontend/onnx_model.h"

namespace openbpu::frontend {

namespace {

// Renames (to hide) or restores the nodes libonnx must not infer, in a graph and its subgraphs.
// STFT: libonnx 1.12 types a well-formed one wrongly (signal [1,64,1], frame 32, onesided by
// default: [1,3,32,2] instead of [1,3,17,2]) and crashes on a malformed one; our rule types it.
constexpr const char* kHiddenPrefix = "openbpu.hidden_from_libonnx.";
void hide_from_libonnx(onnx::GraphProto* graph, bool hide) {
  for (onnx::NodeProto& node : *graph->mutable_node()) {
    if (hide && node.domain().empty() && node.op_type() == "STFT") {
      node.set_op_type(kHiddenPrefix + node.op_type());
    } else if (!hide && node.op_type().starts_with(kHiddenPrefix)) {
      node.set_op_type(node.op_type().substr(std::string_view(kHiddenPrefix).size()));
    }
    for (onnx::AttributeProto& a : *node.mutable_attribute()) {
      if (a.has_g()) hide_from_libonnx(a.mutable_g(), hide);
      for (onnx::GraphProto& g : *a.mutable_graphs()) hide_from_libonnx(&g, hide);
    }
  }
}

bool infer_in_process(onnx::ModelProto& proto) {
  try {
    onnx::ShapeInferenceOptions si(/*check_type=*/false, /*error_mode=*/0, /*data_propagation=*/true);
    onnx::shape_inference::InferShapes(proto, onnx::OpSchemaRegistry::Instance(), si);
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

// Drops what the parent does not need back (weights), in a graph and its subgraphs.
void strip_tensors(onnx::GraphProto* graph) {
  graph->clear_initializer();
  graph->clear_sparse_initializer();
  for (onnx::NodeProto& node : *graph->mutable_node()) {
    for (onnx::AttributeProto& a : *node.mutable_attribute()) {
      a.clear_t();
      a.clear_tensors();
      a.clear_sparse_tensor();
      a.clear_sparse_tensors();
      if (a.has_g()) strip_tensors(a.mutable_g());
      for (onnx::GraphProto& g : *a.mutable_graphs()) strip_tensors(&g);
    }
  }
}

// Copies what inference adds (value_info, output types) from `from`, the same graph inferred.
bool copy_types(const onnx::GraphProto& from, onnx::GraphProto* to) {
  if (from.node_size() != to->node_size() || from.output_size() != to->output_size()) return false;
  *to->mutable_value_info() = from.value_info();
  for (int i = 0; i < from.output_size(); ++i) *to->mutable_output(i) = from.output(i);
  for (int n = 0; n < from.node_size(); ++n) {
    const onnx::NodeProto& fn = from.node(n);
    onnx::NodeProto* tn = to->mutable_node(n);
    if (fn.attribute_size() != tn->attribute_size()) return false;
    for (int k = 0; k < fn.attribute_size(); ++k) {
      const onnx::AttributeProto& fa = fn.attribute(k);
      onnx::AttributeProto* ta = tn->mutable_attribute(k);
      if (fa.has_g() != ta->has_g() || fa.graphs_size() != ta->graphs_size()) return false;
      if (fa.has_g() && !copy_types(fa.g(), ta->mutable_g())) return false;
      for (int g = 0; g < fa.graphs_size(); ++g) {
        if (!copy_types(fa.graphs(g), ta->mutable_graphs(g))) return false;
      }
    }
  }
  return true;
}

// The child: default actions for the signals a libonnx fault raises (so that a sanitizer or
// fuzzer handler inherited from the parent does not report the contained fault as its own),
// infer, send the stripped model (with the types libonnx set before it refused the model, as
// in process). Exits 0, or 2 when libonnx refused the model, without the parent's exit handlers.
[[noreturn]] void child_infer(onnx::ModelProto& proto, int out) {
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP}) std::signal(sig, SIG_DFL);
  const bool accepted = infer_in_process(proto);
  strip_tensors(proto.mutable_graph());
  std::string bytes;
  if (!proto.SerializeToString(&bytes)) _exit(3);
  for (size_t at = 0; at < bytes.size();) {
    const ssize_t n = write(out, bytes.data() + at, bytes.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(4);
    at += static_cast<size_t>(n);
  }
  _exit(accepted ? 0 : 2);
}

// Reads all of `fd` into `bytes`; false on a read error.
bool read_all(int fd, std::string& bytes) {
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    bytes.append(buffer, static_cast<size_t>(n));
  }
}

// -1: the child could not be started (the caller infers in process); 0: libonnx died, or
// refused the model (the types it set before are copied); 1: the types are copied.
int infer_in_child(onnx::ModelProto& proto) {
  (void)onnx::OpSchemaRegistry::Instance();  // initialised before the fork, not in the child
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return -1;
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  if (pid == 0) {
    close(fds[0]);
    child_infer(proto, fds[1]);
  }
  close(fds[1]);
  std::string bytes;
  const bool read_ok = read_all(fds[0], bytes);
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!read_ok || !WIFEXITED(status) || (WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 2)) return 0;
  onnx::ModelProto inferred;
  if (!inferred.ParseFromString(bytes)) return 0;
  return copy_types(inferred.graph(), proto.mutable_graph()) && WEXITSTATUS(status) == 0 ? 1 : 0;
}

}  // namespace

bool infer_shapes_with_libonnx(onnx::ModelProto& proto) {
  hide_from_libonnx(proto.mutable_graph(), true);
  int result = infer_in_child(proto);
  if (result < 0) result = infer_in_process(proto) ? 1 : 0;
  hide_from_libonnx(proto.mutable_graph(), false);
  return result == 1;
}

}  // namespace openbpu::frontend
