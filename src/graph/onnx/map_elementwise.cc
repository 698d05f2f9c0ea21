// ONNX element-wise and activation ops -> add, sub, ..., relu, gelu, clip, where.
#include <cmath>
#include <limits>

#include "graph/onnx/onnx_map.h"

namespace opsnn::onnx {
namespace {

template <const char* Op>
void binary(MapContext& c) {
  if (c.opset() < 7 && c.has("broadcast")) c.i("broadcast", 0);
  c.emit(Op, {c.required(0), c.required(1)});
}
constexpr char kEqual[] = "equal", kLess[] = "less", kLessEqual[] = "less_equal",
               kGreater[] = "greater", kGreaterEqual[] = "greater_equal", kAnd[] = "logical_and",
               kOr[] = "logical_or", kXor[] = "logical_xor", kNot[] = "logical_not";
constexpr char kAdd[] = "add", kSub[] = "sub", kMul[] = "mul", kDiv[] = "div", kPow[] = "pow";

template <const char* Op>
void unary(MapContext& c) {
  c.emit(Op, {c.required(0)});
}
constexpr char kRelu[] = "relu", kSigmoid[] = "sigmoid", kTanh[] = "tanh", kExp[] = "exp",
               kLog[] = "log", kSqrt[] = "sqrt", kReciprocal[] = "reciprocal", kNeg[] = "neg",
               kAbs[] = "abs", kErf[] = "erf", kSoftplus[] = "softplus", kMish[] = "mish",
               kHardSwish[] = "hardswish", kFloor[] = "floor", kCeil[] = "ceil", kRound[] = "round",
               kSign[] = "sign";

// Max/Min/Sum of any number of inputs: a chain of the binary op.
template <const char* Op>
void variadic(MapContext& c) {
  if (c.num_inputs() == 0) c.fail("inputs", "at least one", "none");
  if (c.num_inputs() == 1) {
    c.alias(0, c.required(0));
    return;
  }
  ValueId acc = c.required(0);
  for (size_t i = 1; i + 1 < c.num_inputs(); ++i) acc = c.add(Op, {acc, c.required(i)})[0];
  c.emit(Op, {acc, c.required(c.num_inputs() - 1)});
}
constexpr char kMaximum[] = "maximum", kMinimum[] = "minimum";

void leaky_relu(MapContext& c) {
  c.emit("leaky_relu", {c.required(0)}, {{"alpha", c.f("alpha", 0.01)}});
}

void gelu(MapContext& c) {
  c.emit("gelu", {c.required(0)}, {{"approximate", c.s("approximate", "none")}});
}

void clip(MapContext& c) {
  const double inf = std::numeric_limits<double>::infinity();
  if (c.opset() < 11) {
    c.emit("clip", {c.required(0)}, {{"min", c.f("min", -inf)}, {"max", c.f("max", inf)}});
    return;
  }
  Attrs a{{"min", -inf}, {"max", inf}};
  std::vector<graph::AttrInput> ai;
  if (c.in(1) != graph::kNoValue) ai.push_back({"min", c.in(1), graph::AttrInput::Kind::f64});
  if (c.in(2) != graph::kNoValue) ai.push_back({"max", c.in(2), graph::AttrInput::Kind::f64});
  c.emit("clip", {c.required(0)}, a, ai);
}

void mod(MapContext& c) {
  c.emit("mod", {c.required(0), c.required(1)}, {{"fmod", c.i("fmod", 0)}});
}

void where(MapContext& c) { c.emit("where", {c.required(0), c.required(1), c.required(2)}); }

void identity(MapContext& c) { c.alias(0, c.required(0)); }

// Inference: Dropout is the identity (its mask output is not computed).
void dropout(MapContext& c) {
  c.f("ratio", 0.5);
  c.i("seed", 0);
  if (c.opset() < 7) c.i("is_test", 0);
  if (c.has_output(1)) c.fail("output 'mask'", "absent (inference only)", "requested");
  if (c.in(2) != graph::kNoValue) {  // training_mode: only a constant false is inference
    const Tensor* t = c.constant_in(2);
    if (!t || t->numel() != 1 || t->flat_get(0) != 0)
      c.fail("input 'training_mode'", "absent or a constant false",
             t ? "true" : "a value known only at run time");
  }
  c.alias(0, c.required(0));
}

// Softmax and LogSoftmax: opset 13 normalises one axis; before 13 the dims
// from `axis` on are coerced into one (flatten, normalise, restore).
template <const char* Op>
void softmax(MapContext& c) {
  if (c.opset() >= 13) {
    c.emit(Op, {c.required(0)}, {{"axis", c.i("axis", -1)}});
    return;
  }
  const ValueId x = c.required(0);
  const ValueId flat = c.add("flatten", {x}, {{"axis", c.i("axis", 1)}})[0];
  const ValueId y = c.add(Op, {flat}, {{"axis", int64_t{1}}})[0];
  const ValueId shape = c.add("shape", {x})[0];
  c.emit("reshape", {y}, {}, {{"shape", shape, graph::AttrInput::Kind::ints}});
}
constexpr char kSoftmax[] = "softmax", kLogSoftmax[] = "log_softmax";

}  // namespace

void add_elementwise_mappings(MappingTable& t) {
  const Mapping m[] = {
      {"Add", 7, binary<kAdd>},
      {"Sub", 7, binary<kSub>},
      {"Mul", 7, binary<kMul>},
      {"Div", 7, binary<kDiv>},
      {"Pow", 7, binary<kPow>},
      {"Max", 8, variadic<kMaximum>},
      {"Min", 8, variadic<kMinimum>},
      {"Sum", 8, variadic<kAdd>},
      {"Equal", 7, binary<kEqual>},
      {"Less", 7, binary<kLess>},
      {"LessOrEqual", 12, binary<kLessEqual>},
      {"Greater", 7, binary<kGreater>},
      {"GreaterOrEqual", 12, binary<kGreaterEqual>},
      {"And", 7, binary<kAnd>},
      {"Or", 7, binary<kOr>},
      {"Xor", 7, binary<kXor>},
      {"Not", 7, unary<kNot>},
      {"Relu", 7, unary<kRelu>},
      {"Sigmoid", 7, unary<kSigmoid>},
      {"Tanh", 7, unary<kTanh>},
      {"Exp", 7, unary<kExp>},
      {"Log", 7, unary<kLog>},
      {"Sqrt", 7, unary<kSqrt>},
      {"Reciprocal", 7, unary<kReciprocal>},
      {"Neg", 7, unary<kNeg>},
      {"Abs", 7, unary<kAbs>},
      {"Erf", 9, unary<kErf>},
      {"Softplus", 7, unary<kSoftplus>},
      {"Mish", 18, unary<kMish>},
      {"HardSwish", 14, unary<kHardSwish>},
      {"Floor", 7, unary<kFloor>},
      {"Ceil", 7, unary<kCeil>},
      {"Round", 11, unary<kRound>},
      {"Sign", 9, unary<kSign>},
      {"LeakyRelu", 7, leaky_relu},
      {"Gelu", 20, gelu},
      {"Clip", 7, clip},
      {"Where", 9, where},
      {"Mod", 10, mod},
      {"Identity", 7, identity},
      {"Dropout", 7, dropout},
      {"Softmax", 7, softmax<kSoftmax>},
      {"LogSoftmax", 7, softmax<kLogSoftmax>},
  };
  t.insert(t.end(), std::begin(m), std::end(m));
}

}  // namespace opsnn::onnx
