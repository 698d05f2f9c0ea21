// ONNX import: models written with the protobuf API, run through a Plan, and
// malformed or unsupported ones refused with clear errors.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "onnx/onnx.pb.h"
#include "opsnn/graph.h"
#include "opsnn/onnx.h"
#include "opsnn/opsnn.h"

namespace opsnn::onnx {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

struct ModelBuilder {
  ::onnx::ModelProto m;
  ::onnx::GraphProto* g;
  explicit ModelBuilder(int opset = 17) {
    m.set_ir_version(8);
    auto* o = m.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    g = m.mutable_graph();
    g->set_name("t");
  }
  void input(const std::string& name, int elem, std::vector<int64_t> dims) {
    auto* vi = g->add_input();
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem);
    for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
  }
  void output(const std::string& name) { g->add_output()->set_name(name); }
  ::onnx::NodeProto* node(const std::string& op, std::vector<std::string> ins,
                          std::vector<std::string> outs, const std::string& name = "") {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (auto& i : ins) n->add_input(i);
    for (auto& o : outs) n->add_output(o);
    return n;
  }
  void init_f32(const std::string& name, std::vector<int64_t> dims, std::vector<float> v) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(::onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    for (float x : v) t->add_float_data(x);
  }
  void init_i64(const std::string& name, std::vector<int64_t> v) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(::onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(v.size()));
    for (int64_t x : v) t->add_int64_data(x);
  }
  std::string bytes() const { return m.SerializeAsString(); }
  graph::Graph import() const {
    const std::string b = bytes();
    return import_model_bytes(b.data(), b.size());
  }
};

void attr_i(::onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INT);
  a->set_i(v);
}

TEST(OnnxImport, GemmAndShapePlumbingRun) {
  ModelBuilder b;
  b.input("x", ::onnx::TensorProto::FLOAT, {2, 3});
  b.init_f32("w", {4, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1});
  b.init_f32("c", {4}, {0.5f, 0, 0, -1});
  auto* gemm = b.node("Gemm", {"x", "w", "c"}, {"y"}, "gemm");
  attr_i(gemm, "transB", 1);
  // y [2,4] -> Shape -> Gather(1) -> Unsqueeze -> Concat([-1], .) -> Reshape
  b.init_i64("one", {1});
  b.init_i64("neg", {-1});
  b.init_i64("ax0", {0});
  b.node("Shape", {"y"}, {"s"});
  b.node("Gather", {"s", "one"}, {"d1"});  // [1]: shape [1]
  b.node("Concat", {"d1", "neg"}, {"shape"})->add_attribute()->CopyFrom([] {
    ::onnx::AttributeProto a;
    a.set_name("axis");
    a.set_type(::onnx::AttributeProto::INT);
    a.set_i(0);
    return a;
  }());
  b.node("Reshape", {"y", "shape"}, {"z"});
  b.output("z");
  graph::Graph g = b.import();
  graph::Plan p = graph::Plan::create(g, {TensorDesc(DType::f32, {2, 3})});
  EXPECT_EQ(p.output_descs()[0].shape, (Shape{4, 2}));
  Tensor x = Tensor::from<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor z = p({x})[0];
  const float want[] = {1.5f, 2, 3, 5, 4.5f, 5, 6, 14};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(z.data_as<float>()[i], want[i]) << i;
}

TEST(OnnxImport, UnsupportedOpsListedInOneError) {
  ModelBuilder b;
  b.input("x", ::onnx::TensorProto::FLOAT, {4});
  b.node("Relu", {"x"}, {"a"}, "r");
  b.node("Frobnicate", {"a"}, {"b"}, "f1");
  b.node("Frobnicate", {"b"}, {"c"}, "f2");
  b.node("LpPool", {"c"}, {"d"}, "p");
  b.output("d");
  const std::string e = error_of([&] { b.import(); });
  EXPECT_NE(e.find("2 unsupported op type(s)"), std::string::npos) << e;
  EXPECT_NE(e.find("Frobnicate-17 (nodes f1, f2)"), std::string::npos) << e;
  EXPECT_NE(e.find("LpPool-17 (nodes p)"), std::string::npos) << e;
}

TEST(OnnxImport, MalformedModelsGiveErrors) {
  ModelBuilder b;
  b.input("x", ::onnx::TensorProto::FLOAT, {4});
  b.node("Relu", {"x"}, {"y"}, "r");
  b.output("y");
  const std::string good = b.bytes();
  EXPECT_EQ(error_of([&] { import_model_bytes(good.data(), good.size()); }), "");
  // Truncated.
  EXPECT_NE(error_of([&] { import_model_bytes(good.data(), good.size() / 2); }).find("ModelProto"),
            std::string::npos);
  // Dangling input name.
  ModelBuilder d;
  d.input("x", ::onnx::TensorProto::FLOAT, {4});
  d.node("Relu", {"nothing"}, {"y"}, "r");
  d.output("y");
  EXPECT_NE(error_of([&] { d.import(); }).find("'nothing'"), std::string::npos);
  // A cycle (nodes out of order) reads a name before it is produced.
  ModelBuilder c;
  c.input("x", ::onnx::TensorProto::FLOAT, {4});
  c.node("Add", {"x", "b"}, {"a"}, "n1");
  c.node("Relu", {"a"}, {"b"}, "n2");
  c.output("b");
  EXPECT_NE(error_of([&] { c.import(); }).find("n1"), std::string::npos);
  // Wrong attribute type.
  ModelBuilder w;
  w.input("x", ::onnx::TensorProto::FLOAT, {2, 3});
  auto* sm = w.node("Softmax", {"x"}, {"y"}, "sm");
  auto* a = sm->add_attribute();
  a->set_name("axis");
  a->set_type(::onnx::AttributeProto::FLOAT);
  a->set_f(1);
  w.output("y");
  EXPECT_EQ(error_of([&] { w.import(); }),
            "sm (Softmax-17): attribute 'axis': expected INT, got FLOAT");
  // Initializer data contradicting its shape.
  ModelBuilder s;
  s.input("x", ::onnx::TensorProto::FLOAT, {4});
  s.init_f32("w", {5}, {1, 2, 3});
  s.node("Add", {"x", "w"}, {"y"});
  s.output("y");
  EXPECT_NE(error_of([&] { s.import(); }).find("5 values for [5]"), std::string::npos);
  // Old IR / opset.
  ModelBuilder o(5);
  o.input("x", ::onnx::TensorProto::FLOAT, {4});
  o.node("Relu", {"x"}, {"y"});
  o.output("y");
  EXPECT_NE(error_of([&] { o.import(); }).find("opset"), std::string::npos);
  // Shapes that contradict the ops: found when the plan is made.
  ModelBuilder m;
  m.input("x", ::onnx::TensorProto::FLOAT, {2, 3});
  m.init_f32("w", {4, 2}, {0, 0, 0, 0, 0, 0, 0, 0});
  m.node("MatMul", {"x", "w"}, {"y"}, "mm");
  m.output("y");
  graph::Graph g = m.import();
  EXPECT_NE(error_of([&] {
              graph::Plan::create(g, {TensorDesc(DType::f32, {2, 3})});
            }).find("matmul"),
            std::string::npos);
}

TEST(OnnxImport, ExternalDataAndTensorFiles) {
  const std::string dir = ::testing::TempDir();
  {
    std::ofstream f(dir + "/w.bin", std::ios::binary);
    const float v[4] = {1, 2, 3, 4};
    f.write(reinterpret_cast<const char*>(v), sizeof v);
  }
  ModelBuilder b;
  b.input("x", ::onnx::TensorProto::FLOAT, {4});
  auto* t = b.g->add_initializer();
  t->set_name("w");
  t->set_data_type(::onnx::TensorProto::FLOAT);
  t->add_dims(4);
  t->set_data_location(::onnx::TensorProto::EXTERNAL);
  auto* kv = t->add_external_data();
  kv->set_key("location");
  kv->set_value("w.bin");
  b.node("Mul", {"x", "w"}, {"y"});
  b.output("y");
  {
    std::ofstream f(dir + "/m.onnx", std::ios::binary);
    f << b.bytes();
  }
  graph::Graph g = import_model(dir + "/m.onnx");
  graph::Plan p = graph::Plan::create(g, {TensorDesc(DType::f32, {4})});
  Tensor y = p({Tensor::from<float>({1, 1, 2, 2}, {4})})[0];
  EXPECT_EQ(y.data_as<float>()[3], 8.0f);
  // Without a folder the same bytes are refused.
  const std::string bytes = b.bytes();
  EXPECT_NE(error_of([&] { import_model_bytes(bytes.data(), bytes.size()); }).find("external"),
            std::string::npos);
  // TensorProto files round-trip with dtype and shape.
  Tensor i = Tensor::from<int64_t>({1, -2, 3, 4, 5, 6}, {2, 3});
  write_tensor(dir + "/t.pb", i, "t");
  Tensor r = read_tensor(dir + "/t.pb");
  EXPECT_EQ(r.dtype(), DType::i64);
  EXPECT_EQ(r.shape(), (Shape{2, 3}));
  EXPECT_EQ(r.data_as<int64_t>()[1], -2);
}

}  // namespace
}  // namespace opsnn::onnx
