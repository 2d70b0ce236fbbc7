#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "openbpu/common/atomic_file.h"
#include "openbpu/common/error.h"
#include "openbpu/frontend/onnx_model.h"
#include "openbpu/ir/dump.h"
#include "openbpu/ir/verifier.h"

namespace openbpu::frontend {
namespace {

namespace fs = std::filesystem;
using kernels::DataType;
using kernels::Tensor;

const fs::path kTestData = "/usr/share/libonnx-testdata/data";

fs::path temp_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("openbpu_frontend_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void add_value_info(onnx::ValueInfoProto* info, const std::string& name,
                    std::vector<int64_t> dims) {
  info->set_name(name);
  auto* tt = info->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

// x[2] -> Abs -> a -> Neg -> y, written with the Neg node first (not sorted).
onnx::ModelProto unsorted_model(int64_t opset = 13, int64_t ir = 7) {
  onnx::ModelProto m;
  m.set_ir_version(ir);
  m.add_opset_import()->set_version(opset);
  auto* g = m.mutable_graph();
  g->set_name("g");
  add_value_info(g->add_input(), "x", {2});
  add_value_info(g->add_output(), "y", {2});
  auto* neg = g->add_node();
  neg->set_op_type("Neg");
  neg->set_name("neg");
  neg->add_input("a");
  neg->add_output("y");
  auto* abs = g->add_node();
  abs->set_op_type("Abs");
  abs->set_name("abs");
  abs->add_input("x");
  abs->add_output("a");
  return m;
}

std::string load_error(const std::string& bytes, const std::string& name = "m.onnx") {
  try {
    load_onnx_from_bytes(bytes, name, ".");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(OnnxFrontend, SortsUnsortedGraphsAndInfersShapes) {
  const ir::Model m = load_onnx_from_bytes(unsorted_model().SerializeAsString(), "m.onnx", ".");
  ASSERT_EQ(m.graph->nodes().size(), 2u);
  EXPECT_EQ(m.graph->nodes()[0]->op_type(), "Abs");
  EXPECT_EQ(m.graph->find_value("a")->type().to_string(), "float32[2]");
}

TEST(OnnxFrontend, RejectsWhatItCannotLoadWithTheFileAndTheReason) {
  EXPECT_NE(load_error("").find("m.onnx: empty file"), std::string::npos);
  EXPECT_NE(load_error("this is not a model").find("m.onnx: not an ONNX model"), std::string::npos);
  const std::string good = unsorted_model().SerializeAsString();
  EXPECT_NE(load_error(good.substr(0, good.size() / 2)).find("m.onnx: not an ONNX model"),
            std::string::npos);
  EXPECT_NE(load_error(unsorted_model(20).SerializeAsString()).find("opset 20 is newer"),
            std::string::npos);
  EXPECT_NE(load_error(unsorted_model(13, 10).SerializeAsString()).find("IR version 10"),
            std::string::npos);
  auto unknown = unsorted_model();
  unknown.mutable_graph()->mutable_node(0)->set_op_type("NoSuchOp");
  const std::string e = load_error(unknown.SerializeAsString());
  EXPECT_NE(e.find("m.onnx: onnx checker"), std::string::npos) << e;
  EXPECT_NE(e.find("NoSuchOp"), std::string::npos) << e;
  auto dangling = unsorted_model();
  dangling.mutable_graph()->mutable_node(1)->set_input(0, "nowhere");
  EXPECT_NE(load_error(dangling.SerializeAsString()).find("'nowhere'"), std::string::npos);
}

TEST(OnnxFrontend, FoldsConstantNodesIntoInitializers) {
  auto m = unsorted_model();
  auto* g = m.mutable_graph();
  auto* c = g->add_node();
  c->set_op_type("Constant");
  c->add_output("k");
  auto* attr = c->add_attribute();
  attr->set_name("value_floats");
  attr->set_type(onnx::AttributeProto::FLOATS);
  attr->add_floats(1.5f);
  attr->add_floats(-2.f);
  auto* add = g->add_node();
  add->set_op_type("Add");
  add->add_input("y");
  add->add_input("k");
  add->add_output("z");
  add_value_info(g->add_output(), "z", {2});
  const ir::Model folded = load_onnx_from_bytes(m.SerializeAsString(), "m.onnx", ".");
  EXPECT_EQ(folded.graph->nodes().size(), 3u);
  const ir::Value* k = folded.graph->find_value("k");
  ASSERT_NE(k, nullptr);
  ASSERT_TRUE(k->is_constant());
  EXPECT_EQ(k->constant()->float_at(1), -2.0);
  OnnxLoadOptions keep;
  keep.fold_constant_nodes = false;
  EXPECT_EQ(load_onnx_from_bytes(m.SerializeAsString(), "m.onnx", ".", keep).graph->nodes().size(),
            4u);
}

TEST(OnnxFrontend, ReadsExternalData) {
  const fs::path dir = temp_dir("external");
  const float weights[] = {1, 2, 3, 4};
  write_file_atomically(dir / "w.bin", std::string("PAD!") + std::string(reinterpret_cast<const char*>(weights), sizeof weights));
  auto m = unsorted_model();
  auto* init = m.mutable_graph()->add_initializer();
  init->set_name("w");
  init->set_data_type(onnx::TensorProto::FLOAT);
  init->add_dims(4);
  init->set_data_location(onnx::TensorProto::EXTERNAL);
  auto add_entry = [&](const std::string& k, const std::string& v) {
    auto* e = init->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  add_entry("location", "w.bin");
  add_entry("offset", "4");
  add_entry("length", "16");
  write_file_atomically(dir / "m.onnx", m.SerializeAsString());
  const ir::Model loaded = load_onnx(dir / "m.onnx");
  const ir::Value* w = loaded.graph->find_value("w");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->constant()->float_at(3), 4.0);

  init->mutable_external_data(2)->set_value("64");
  write_file_atomically(dir / "m.onnx", m.SerializeAsString());
  try {
    load_onnx(dir / "m.onnx");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is truncated"), std::string::npos) << e.what();
  }
  init->mutable_external_data(0)->set_value("../escape.bin");
  write_file_atomically(dir / "m.onnx", m.SerializeAsString());
  EXPECT_THROW(load_onnx(dir / "m.onnx"), Error);
  fs::remove_all(dir);
}

TEST(OnnxFrontend, RoundTripKeepsNodesNamesInitializersAndAttributes) {
  OnnxLoadOptions exact;
  exact.fold_constant_nodes = false;
  int checked = 0;
  for (const char* name : {"node/test_conv_with_strides_and_asymmetric_padding",
                           "node/test_gemm_all_attributes", "node/test_lstm_with_peepholes",
                           "node/test_resize_downsample_scales_cubic_align_corners",
                           "pytorch-converted/test_ConvTranspose2d", "simple/test_expand_shape_model1",
                           "node/test_if", "node/test_constant"}) {
    const fs::path path = kTestData / name / "model.onnx";
    const ir::Model first = load_onnx(path, exact);
    const fs::path dir = temp_dir("roundtrip");
    save_onnx(first, dir / "m.onnx");
    const ir::Model second = load_onnx(dir / "m.onnx", exact);
    EXPECT_EQ(ir::dump(first), ir::dump(second)) << name;
    EXPECT_EQ(first.graph->constants().size(), second.graph->constants().size()) << name;
    for (const ir::Value* c : first.graph->constants()) {
      const ir::Value* d = second.graph->find_value(c->name());
      ASSERT_NE(d, nullptr) << name << " lost initializer " << c->name();
      ASSERT_EQ(c->constant()->byte_size(), d->constant()->byte_size());
      EXPECT_EQ(0, std::memcmp(c->constant()->raw_data(), d->constant()->raw_data(),
                               c->constant()->byte_size()));
    }
    EXPECT_EQ(serialize_onnx(first), serialize_onnx(second)) << name;
    fs::remove_all(dir);
    ++checked;
  }
  EXPECT_EQ(checked, 8);
}

TEST(OnnxFrontend, ReadsTestDataTensors) {
  const Tensor t = read_tensor_pb(kTestData / "node/test_abs/test_data_set_0/input_0.pb");
  EXPECT_EQ(t.dtype(), DataType::kFloat32);
  EXPECT_EQ(t.shape(), (kernels::Shape{3, 4, 5}));
  onnx::TensorProto p;
  tensor_to_proto(t, "x", &p);
  const Tensor back = tensor_from_proto(p, "mem");
  EXPECT_EQ(0, std::memcmp(t.raw_data(), back.raw_data(), t.byte_size()));
  onnx::TensorProto bad = p;
  bad.set_raw_data(p.raw_data().substr(4));
  EXPECT_THROW(tensor_from_proto(bad, "mem"), Error);
  onnx::TensorProto typed;
  typed.set_data_type(onnx::TensorProto::INT64);
  typed.add_dims(2);
  typed.add_int64_data(-7);
  typed.add_int64_data(9);
  EXPECT_EQ(tensor_from_proto(typed, "mem").to_int64_vector(), (std::vector<int64_t>{-7, 9}));
}

}  // namespace
}  // namespace openbpu::frontend

namespace openbpu::frontend {
namespace {

// Control-flow bodies load as graph attributes; names from the enclosing graph become
// outer-scope values of the body.
TEST(OnnxFrontend, LoadsSubgraphAttributes) {
  const ir::Model m = load_onnx(kTestData / "node/test_range_float_type_positive_delta_expanded/model.onnx");
  const ir::Node* loop = nullptr;
  for (const ir::Node* n : m.graph->nodes()) {
    if (n->op_type() == "Loop") loop = n;
  }
  ASSERT_NE(loop, nullptr);
  ASSERT_EQ(loop->graph_attrs().size(), 1u);
  const ir::Graph& body = *loop->graph_attrs()[0].graphs[0];
  EXPECT_FALSE(body.nodes().empty());
  bool outer = false;
  for (const ir::Value* v : body.values()) outer = outer || v->is_outer_scope();
  EXPECT_TRUE(outer) << ir::dump(body);
  EXPECT_TRUE(ir::verify(*m.graph).empty());
}

}  // namespace
}  // namespace openbpu::frontend
