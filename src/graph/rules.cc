#include "graph/rules.h"

#include <algorithm>
#include <limits>

namespace opsnn::graph::rules {

bool folds_from_shapes(const std::string& op) { return op == "shape"; }

std::vector<Tensor> fold_from_shapes(const std::string& op, const std::vector<TensorDesc>& inputs,
                                     const Attrs& attrs) {
  // Only "shape" so far: the same rule as its schema (ONNX Shape-15 start/end).
  (void)op;
  OpCall call = make_call(Registry::global().schema("shape"), inputs, attrs);
  const Shape& dims = inputs[0].shape;
  const auto rank = static_cast<int64_t>(dims.size());
  auto clampi = [&](int64_t i) { return std::clamp(i < 0 ? i + rank : i, int64_t{0}, rank); };
  const int64_t start = clampi(call.attrs.i("start"));
  const int64_t end = clampi(call.attrs.i("end"));
  Tensor t = Tensor::empty(call.outputs[0].shape, DType::i64);
  for (int64_t i = start; i < end; ++i) t.data_as<int64_t>()[i - start] = dims[i];
  return {t};
}

bool is_view(const std::string& op) {
  return op == "reshape" || op == "squeeze" || op == "unsqueeze" || op == "flatten";
}

bool may_write_over_input(const std::string& op) {
  const OpSchema* s = Registry::global().find(op);
  if (!s || s->outputs.size() != 1) return false;
  if (s->family == "elementwise") return true;  // add ... minimum, where
  // Unary activations (one input, same shape out); gated ones change the shape
  // and are excluded by the planner's same-shape test.
  return s->family == "activation" && s->inputs.size() == 1;
}

}  // namespace opsnn::graph::rules
