// ONNX shape and data-movement ops -> reshape, squeeze, unsqueeze, flatten,
// transpose, concat, split, slice, gather, expand, cast, pad, shape, and the
// plumbing exporters emit (Constant, ConstantOfShape), and tile, trilu,
// gather_elements, scatter_nd. Shape-valued inputs
// become plan-time attributes, so Shape -> Gather -> Concat -> Reshape chains
// fold when the plan is made.
#include <limits>

#include "graph/onnx/onnx_map.h"

namespace opsnn::onnx {
namespace {

using graph::AttrInput;
using graph::kNoValue;
constexpr auto kInts = AttrInput::Kind::ints;

void reshape(MapContext& c) {
  if (c.opset() >= 14 && c.i("allowzero", 0) != 0) {
    // allowzero=1 means a 0 is a real 0; the library's reshape copies the
    // input dim for a 0, so accept it only when the shape has no zero.
    const Tensor* s = c.constant_in(1);
    bool zero = !s;
    for (int64_t i = 0; s && i < s->numel(); ++i) zero = zero || s->flat_get(i) == 0;
    if (zero) c.fail("attribute 'allowzero'", "0, or a constant shape without zeros", "1");
  }
  c.emit("reshape", {c.required(0)}, {}, {{"shape", c.required(1), kInts}});
}

void flatten(MapContext& c) { c.emit("flatten", {c.required(0)}, {{"axis", c.i("axis", 1)}}); }

void squeeze(MapContext& c) {
  if (c.opset() < 13) {
    c.emit("squeeze", {c.required(0)}, {{"axes", c.ints("axes")}});
  } else if (c.in(1) == kNoValue) {
    c.emit("squeeze", {c.required(0)});
  } else {
    c.emit("squeeze", {c.required(0)}, {}, {{"axes", c.in(1), kInts}});
  }
}

void unsqueeze(MapContext& c) {
  if (c.opset() < 13)
    c.emit("unsqueeze", {c.required(0)}, {{"axes", c.ints("axes")}});
  else
    c.emit("unsqueeze", {c.required(0)}, {}, {{"axes", c.required(1), kInts}});
}

void transpose(MapContext& c) {
  Attrs a;
  if (c.has("perm")) a.set("perm", c.ints("perm"));
  c.emit("transpose", {c.required(0)}, a);
}

void concat(MapContext& c) {
  std::vector<ValueId> ins;
  for (size_t i = 0; i < c.num_inputs(); ++i) ins.push_back(c.required(i));
  c.emit("concat", ins, {{"axis", c.i("axis", 0)}});
}

void split(MapContext& c) {
  Attrs a{{"axis", c.i("axis", 0)}};
  std::vector<AttrInput> ai;
  if (c.opset() < 13 && c.has("split")) a.set("split", c.ints("split"));
  if (c.opset() >= 13 && c.in(1) != kNoValue) ai.push_back({"split", c.in(1), kInts});
  const int64_t n = c.opset() >= 18 ? c.i("num_outputs", 0) : 0;
  if (ai.empty() && !a.has("split"))
    a.set("num_outputs", n ? n : static_cast<int64_t>(c.num_outputs()));
  c.emit("split", {c.required(0)}, a, ai);
}

void slice(MapContext& c) {
  if (c.opset() < 10) {
    Attrs a{{"starts", c.ints("starts")}, {"ends", c.ints("ends")}};
    if (c.has("axes")) a.set("axes", c.ints("axes"));
    c.emit("slice", {c.required(0)}, a);
    return;
  }
  std::vector<AttrInput> ai{{"starts", c.required(1), kInts}, {"ends", c.required(2), kInts}};
  if (c.in(3) != kNoValue) ai.push_back({"axes", c.in(3), kInts});
  if (c.in(4) != kNoValue) ai.push_back({"steps", c.in(4), kInts});
  c.emit("slice", {c.required(0)}, {}, ai);
}

void gather(MapContext& c) {
  c.emit("gather", {c.required(0), c.required(1)}, {{"axis", c.i("axis", 0)}});
}

void expand(MapContext& c) {
  c.emit("expand", {c.required(0)}, {}, {{"shape", c.required(1), kInts}});
}

void cast(MapContext& c) {
  const DType to =
      dtype_from_onnx(static_cast<int32_t>(c.i("to", 0)), c.name() + " attribute 'to'");
  if (c.opset() >= 19) c.i("saturate", 1);
  c.emit("cast", {c.required(0)}, {{"to", std::string(dtype_name(to))}});
}

void shape(MapContext& c) {
  Attrs a;
  if (c.opset() >= 15) {
    a.set("start", c.i("start", 0));
    a.set("end", c.i("end", std::numeric_limits<int64_t>::max()));
  }
  c.emit("shape", {c.required(0)}, a);
}

void constant(MapContext& c) {
  Tensor t;
  if (c.has("value")) {
    t = c.tensor("value");
  } else if (c.has("value_float")) {
    t = Tensor::from<float>({static_cast<float>(c.f("value_float", 0))}, {});
  } else if (c.has("value_int")) {
    t = Tensor::from<int64_t>({c.i("value_int", 0)}, {});
  } else if (c.has("value_floats")) {
    const auto v = c.floats("value_floats");
    t = Tensor::empty({static_cast<int64_t>(v.size())}, DType::f32);
    for (size_t i = 0; i < v.size(); ++i) t.data_as<float>()[i] = static_cast<float>(v[i]);
  } else if (c.has("value_ints")) {
    const auto v = c.ints("value_ints");
    t = Tensor::empty({static_cast<int64_t>(v.size())}, DType::i64);
    for (size_t i = 0; i < v.size(); ++i) t.data_as<int64_t>()[i] = v[i];
  } else {
    c.fail("attributes", "one of value, value_float(s), value_int(s)",
           c.has("sparse_value") ? "sparse_value (unsupported)" : "none");
  }
  if (!c.has_output(0)) c.fail("output 0", "named", "empty");
  c.alias(0, c.graph().constant(c.node().output(0), t));
}

// ConstantOfShape: the value (default f32 0) expanded to the shape input.
void constant_of_shape(MapContext& c) {
  Tensor v = c.has("value") ? c.tensor("value") : Tensor::zeros({1}, DType::f32);
  if (v.numel() != 1) c.fail("attribute 'value'", "one element", v.desc().str());
  v = v.reshape({});
  c.emit("expand", {c.constant(v)}, {}, {{"shape", c.required(0), kInts}});
}

// Range: the library's range with start/limit/delta known at plan time
// (exporters feed it from Shape/Gather, which fold).
void range(MapContext& c) {
  const ValueId s0 = c.required(0);
  c.emit("range", {}, {},
         {{"dtype", s0, AttrInput::Kind::dtype},
          {"start", s0, AttrInput::Kind::f64},
          {"limit", c.required(1), AttrInput::Kind::f64},
          {"delta", c.required(2), AttrInput::Kind::f64}});
}

void pad(MapContext& c) {
  Attrs a{{"mode", c.s("mode", "constant")}};
  std::vector<AttrInput> ai;
  if (c.opset() < 11) {
    a.set("pads", c.ints("pads"));
    a.set("value", c.f("value", 0.0));
  } else {
    ai.push_back({"pads", c.required(1), kInts});
    if (c.in(2) != kNoValue) ai.push_back({"value", c.in(2), AttrInput::Kind::f64});
    if (c.in(3) != kNoValue) c.fail("input 'axes'", "absent (pads for every axis)", "present");
  }
  c.emit("pad", {c.required(0)}, a, ai);
}

void tile(MapContext& c) {
  c.emit("tile", {c.required(0)}, {}, {{"repeats", c.required(1), kInts}});
}

void trilu(MapContext& c) {
  std::vector<AttrInput> ai;
  if (c.in(1) != kNoValue) ai.push_back({"k", c.in(1), AttrInput::Kind::i64});
  c.emit("trilu", {c.required(0)}, {{"upper", c.i("upper", 1)}}, ai);
}

void gather_elements(MapContext& c) {
  c.emit("gather_elements", {c.required(0), c.required(1)}, {{"axis", c.i("axis", 0)}});
}

void scatter_nd(MapContext& c) {
  const std::string red = c.opset() >= 16 ? c.s("reduction", "none") : "none";
  c.emit("scatter_nd", {c.required(0), c.required(1), c.required(2)}, {{"reduction", red}});
}

}  // namespace

void add_shape_mappings(MappingTable& t) {
  const Mapping m[] = {
      {"Reshape", 7, reshape},
      {"Flatten", 7, flatten},
      {"Squeeze", 7, squeeze},
      {"Unsqueeze", 7, unsqueeze},
      {"Transpose", 7, transpose},
      {"Concat", 7, concat},
      {"Split", 7, split},
      {"Slice", 7, slice},
      {"Gather", 7, gather},
      {"Expand", 8, expand},
      {"Cast", 7, cast},
      {"Shape", 7, shape},
      {"Constant", 7, constant},
      {"ConstantOfShape", 9, constant_of_shape},
      {"Pad", 7, pad},
      {"Range", 11, range},
      {"Tile", 7, tile},
      {"Trilu", 14, trilu},
      {"GatherElements", 11, gather_elements},
      {"ScatterND", 11, scatter_nd},
  };
  t.insert(t.end(), std::begin(m), std::end(m));
}

}  // namespace opsnn::onnx
