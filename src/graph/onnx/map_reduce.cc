// ONNX reductions and index ops -> sum, mean, max, min, argmax, topk, cumsum.
#include "graph/onnx/onnx_map.h"

namespace opsnn::onnx {
namespace {

using graph::AttrInput;
using graph::kNoValue;

// `axes_input_since`: the opset from which axes is an input (13 for
// ReduceSum, 18 for the others).
template <const char* Op, int AxesInputSince>
void reduce(MapContext& c) {
  Attrs a{{"keepdims", c.i("keepdims", 1)}};
  std::vector<AttrInput> ai;
  if (c.opset() < AxesInputSince) {
    a.set("axes", c.ints("axes"));
  } else {
    const bool noop = c.i("noop_with_empty_axes", 0) != 0;
    const Tensor* axes = c.constant_in(1);
    if (c.in(1) == kNoValue || (axes && axes->numel() == 0)) {
      if (noop) {
        c.alias(0, c.required(0));
        return;
      }
    } else {
      ai.push_back({"axes", c.in(1), AttrInput::Kind::ints});
    }
  }
  c.emit(Op, {c.required(0)}, a, ai);
}
constexpr char kSum[] = "sum", kMean[] = "mean", kMax[] = "max", kMin[] = "min";

void argmax(MapContext& c) {
  if (c.i("select_last_index", 0) != 0) c.fail("attribute 'select_last_index'", "0", "1");
  c.emit("argmax", {c.required(0)}, {{"axis", c.i("axis", 0)}, {"keepdims", c.i("keepdims", 1)}});
}

void topk(MapContext& c) {
  c.emit("topk", {c.required(0)},
         {{"axis", c.i("axis", -1)}, {"largest", c.i("largest", 1)}, {"sorted", c.i("sorted", 1)}},
         {{"k", c.required(1), AttrInput::Kind::i64}});
}

void cumsum(MapContext& c) {
  c.emit("cumsum", {c.required(0)},
         {{"exclusive", c.i("exclusive", 0)}, {"reverse", c.i("reverse", 0)}},
         {{"axis", c.required(1), AttrInput::Kind::i64}});
}

}  // namespace

void add_reduce_mappings(MappingTable& t) {
  const Mapping m[] = {
      {"ReduceSum", 7, reduce<kSum, 13>},
      {"ReduceMean", 7, reduce<kMean, 18>},
      {"ReduceMax", 7, reduce<kMax, 18>},
      {"ReduceMin", 7, reduce<kMin, 18>},
      {"ArgMax", 7, argmax},
      {"TopK", 10, topk},
      {"CumSum", 11, cumsum},
  };
  t.insert(t.end(), std::begin(m), std::end(m));
}

}  // namespace opsnn::onnx
