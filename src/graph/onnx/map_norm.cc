// ONNX normalisations -> layer_norm, batch_norm, instance_norm, group_norm.
// Training-only outputs (mean, inverse std, running statistics) must be absent.
#include "graph/onnx/onnx_map.h"

namespace opsnn::onnx {
namespace {

// The optional outputs Mean and InvStdDev (kept dims) are computed with
// mean, sub, mul, add and rsqrt beside the layer_norm node.
void layer_norm(MapContext& c) {
  if (c.i("stash_type", 1) != 1) c.fail("attribute 'stash_type'", "1 (f32 statistics)", "another");
  const int64_t axis = c.i("axis", -1);
  const double eps = c.f("epsilon", 1e-5);
  const ValueId x = c.required(0);
  c.emit("layer_norm", {x, c.in(1), c.in(2)}, {{"axis", axis}, {"eps", eps}}, {}, 1);
  if (!c.has_output(1) && !c.has_output(2)) return;
  int64_t rank = -1;
  if (c.graph().value(x).has_shape) rank = static_cast<int64_t>(c.graph().value(x).shape.size());
  std::vector<int64_t> axes;
  const int64_t max_rank = rank >= 0 ? rank : 64;  // the axes are listed one by one
  if (axis < -max_rank || axis > max_rank)
    c.fail("attribute 'axis'",
           "in [-" + std::to_string(max_rank) + ", " + std::to_string(max_rank) + "]",
           std::to_string(axis));
  if (axis < 0) {
    for (int64_t a = axis; a < 0; ++a) axes.push_back(a);
  } else {
    if (rank < 0)
      c.fail("input 'X'", "a declared rank (for Mean/InvStdDev with axis >= 0)", "none");
    for (int64_t a = axis; a < rank; ++a) axes.push_back(a);
  }
  const Attrs red{{"axes", axes}, {"keepdims", int64_t{1}}};
  const ValueId mean = c.add("mean", {x}, red)[0];
  c.alias(1, mean);
  if (!c.has_output(2)) return;
  const ValueId d = c.add("sub", {x, mean})[0];
  const ValueId var = c.add("mean", {c.add("mul", {d, d})[0]}, red)[0];
  const ValueId e = c.constant(Tensor::from<float>({static_cast<float>(eps)}, {}));
  c.alias(2, c.add("rsqrt", {c.add("add", {var, e})[0]})[0]);
}

void batch_norm(MapContext& c) {
  for (size_t i = 1; i < c.num_outputs(); ++i)
    if (c.has_output(i)) c.fail("output " + std::to_string(i), "absent (inference)", "requested");
  if (c.i("training_mode", 0) != 0) c.fail("attribute 'training_mode'", "0", "1");
  c.f("momentum", 0.9);
  if (c.opset() < 9) c.i("spatial", 1);
  c.emit("batch_norm", {c.required(0), c.required(1), c.required(2), c.required(3), c.required(4)},
         {{"eps", c.f("epsilon", 1e-5)}}, {}, 1);
}

void instance_norm(MapContext& c) {
  c.emit("instance_norm", {c.required(0), c.required(1), c.required(2)},
         {{"eps", c.f("epsilon", 1e-5)}});
}

// GroupNormalization-21: scale and bias per channel (the library's form).
// Opset 18's scale and bias are per group: X viewed as [N, G, rest] is
// instance-normalised with them (one channel per group), then viewed back.
void group_norm(MapContext& c) {
  c.i("stash_type", 1);
  const int64_t groups = c.i("num_groups", 1);
  const double eps = c.f("epsilon", 1e-5);
  const ValueId x = c.required(0);
  if (c.opset() >= 21) {
    c.emit("group_norm", {x, c.required(1), c.required(2)}, {{"num_groups", groups}, {"eps", eps}});
    return;
  }
  const ValueId grouped =
      c.add("reshape", {x}, {{"shape", std::vector<int64_t>{0, groups, -1}}})[0];
  const ValueId y =
      c.add("instance_norm", {grouped, c.required(1), c.required(2)}, {{"eps", eps}})[0];
  c.emit("reshape", {y}, {}, {{"shape", c.add("shape", {x})[0], graph::AttrInput::Kind::ints}});
}

}  // namespace

void add_norm_mappings(MappingTable& t) {
  const Mapping m[] = {{"LayerNormalization", 17, layer_norm},
                       {"BatchNormalization", 7, batch_norm},
                       {"InstanceNormalization", 7, instance_norm},
                       {"GroupNormalization", 18, group_norm}};
  t.insert(t.end(), std::begin(m), std::end(m));
}

}  // namespace opsnn::onnx
