#include "ops/common/checks.h"

#include <algorithm>

namespace opsnn::ops {

std::string input_name(const OpCall& call, size_t i) {
  const auto& specs = call.schema->inputs;
  if (specs.empty()) return "input " + std::to_string(i);
  const ArgSpec& s = specs[std::min(i, specs.size() - 1)];
  return "input '" +
         (s.variadic ? s.name + "[" + std::to_string(i - (specs.size() - 1)) + "]" : s.name) + "'";
}

void require_float(const OpCall& call, size_t i) {
  const DType t = call.in(i).dtype;
  if (!is_float(t)) call.fail(input_name(call, i), "dtype f32, bf16 or f16", dtype_name(t));
}

void require_same_dtype(const OpCall& call, size_t i, size_t ref) {
  if (call.in(i).dtype != call.in(ref).dtype)
    call.fail(input_name(call, i),
              std::string("dtype ") + dtype_name(call.in(ref).dtype) + " (as " +
                  input_name(call, ref) + ")",
              dtype_name(call.in(i).dtype));
}

void require_rank(const OpCall& call, size_t i, int64_t rank) {
  if (call.in(i).rank() != rank)
    call.fail(input_name(call, i), "rank " + std::to_string(rank),
              "rank " + std::to_string(call.in(i).rank()) + " " + shape_str(call.in(i).shape));
}

void require_rank_at_least(const OpCall& call, size_t i, int64_t rank) {
  if (call.in(i).rank() < rank)
    call.fail(input_name(call, i), "rank >= " + std::to_string(rank),
              "rank " + std::to_string(call.in(i).rank()) + " " + shape_str(call.in(i).shape));
}

void require_shape(const OpCall& call, size_t i, const Shape& shape) {
  if (call.in(i).shape != shape)
    call.fail(input_name(call, i), "shape " + shape_str(shape), shape_str(call.in(i).shape));
}

void require_dtype(const OpCall& call, size_t i, std::initializer_list<DType> allowed) {
  const DType t = call.in(i).dtype;
  std::string names;
  for (DType a : allowed) {
    if (a == t) return;
    names += (names.empty() ? "" : "|") + std::string(dtype_name(a));
  }
  call.fail(input_name(call, i), "dtype " + names, dtype_name(t));
}

Shape broadcast_shapes(const OpCall& call, const Shape& a, const Shape& b) {
  const size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t k = 0; k < r; ++k) {
    const int64_t da = k < r - a.size() ? 1 : a[k - (r - a.size())];
    const int64_t db = k < r - b.size() ? 1 : b[k - (r - b.size())];
    if (da != db && da != 1 && db != 1)
      call.fail("inputs", "shapes that broadcast", shape_str(a) + " and " + shape_str(b));
    out[k] = da == 1 ? db : da;
  }
  return out;
}

std::vector<int64_t> normalize_axes(const OpCall& call, const std::string& arg,
                                    const std::vector<int64_t>& axes, int64_t rank) {
  std::vector<int64_t> r;
  if (axes.empty()) {
    for (int64_t i = 0; i < rank; ++i) r.push_back(i);
    return r;
  }
  for (int64_t a : axes) r.push_back(call.axis(arg, a, rank));
  std::sort(r.begin(), r.end());
  if (std::adjacent_find(r.begin(), r.end()) != r.end())
    call.fail(arg, "distinct axes", shape_str(axes));
  return r;
}

}  // namespace opsnn::ops
