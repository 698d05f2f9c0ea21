// ONNX reductions and index ops -> sum, mean, max, min, prod, sum_square, l1,
// l2, argmax, argmin, topk, cumsum. ReduceLogSum is log(sum); ReduceLogSumExp
// is m + log(sum(exp(x - m))) with m the max (no overflow for large x).
#include "graph/onnx/onnx_map.h"

namespace opsnn::onnx {
namespace {

using graph::AttrInput;
using graph::kNoValue;

// The attributes of a reduction: keepdims, and axes (an attribute before
// `axes_input_since`, 13 for ReduceSum and 18 for the others, an input from
// then on). Returns false for noop_with_empty_axes with no axes: the node is
// the identity (its output aliased to X).
bool reduce_attrs(MapContext& c, int axes_input_since, Attrs& a, std::vector<AttrInput>& ai) {
  a.set("keepdims", c.i("keepdims", 1));
  if (c.opset() < axes_input_since) {
    a.set("axes", c.ints("axes"));
    return true;
  }
  const bool noop = c.i("noop_with_empty_axes", 0) != 0;
  const Tensor* axes = c.constant_in(1);
  if (c.in(1) == kNoValue || (axes && axes->numel() == 0)) {
    if (noop) {
      c.alias(0, c.required(0));
      return false;
    }
  } else {
    ai.push_back({"axes", c.in(1), AttrInput::Kind::ints});
  }
  return true;
}

template <const char* Op, int AxesInputSince>
void reduce(MapContext& c) {
  Attrs a;
  std::vector<AttrInput> ai;
  if (reduce_attrs(c, AxesInputSince, a, ai)) c.emit(Op, {c.required(0)}, a, ai);
}
constexpr char kSum[] = "sum", kMean[] = "mean", kMax[] = "max", kMin[] = "min", kProd[] = "prod",
               kSumSquare[] = "sum_square", kL1[] = "l1", kL2[] = "l2";

void reduce_log_sum(MapContext& c) {
  Attrs a;
  std::vector<AttrInput> ai;
  if (!reduce_attrs(c, 18, a, ai)) return;
  c.emit("log", {c.add("sum", {c.required(0)}, a, ai)[0]});
}

void reduce_log_sum_exp(MapContext& c) {
  Attrs a;
  std::vector<AttrInput> ai;
  if (!reduce_attrs(c, 18, a, ai)) return;
  const ValueId x = c.required(0);
  Attrs keep = a;
  keep.set("keepdims", int64_t{1});
  const ValueId m = c.add("max", {x}, keep, ai)[0];
  const ValueId e = c.add("exp", {c.add("sub", {x, m})[0]})[0];
  const ValueId l = c.add("log", {c.add("sum", {e}, a, ai)[0]})[0];
  c.emit("add", {l, a.i("keepdims") != 0 ? m : c.add("max", {x}, a, ai)[0]});
}

template <const char* Op>
void argmax_or_min(MapContext& c) {
  if (c.i("select_last_index", 0) != 0) c.fail("attribute 'select_last_index'", "0", "1");
  c.emit(Op, {c.required(0)}, {{"axis", c.i("axis", 0)}, {"keepdims", c.i("keepdims", 1)}});
}
constexpr char kArgmax[] = "argmax", kArgmin[] = "argmin";

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
      {"ReduceProd", 7, reduce<kProd, 18>},
      {"ReduceSumSquare", 7, reduce<kSumSquare, 18>},
      {"ReduceL1", 7, reduce<kL1, 18>},
      {"ReduceL2", 7, reduce<kL2, 18>},
      {"ReduceLogSum", 7, reduce_log_sum},
      {"ReduceLogSumExp", 7, reduce_log_sum_exp},
      {"ArgMax", 7, argmax_or_min<kArgmax>},
      {"ArgMin", 7, argmax_or_min<kArgmin>},
      {"TopK", 10, topk},
      {"CumSum", 11, cumsum},
  };
  t.insert(t.end(), std::begin(m), std::end(m));
}

}  // namespace opsnn::onnx
