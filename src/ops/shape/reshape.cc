// The reshape op: schema, shape inference, float64 reference, case
// table and kernels (through the strided-copy engine, kernels/copy.h).
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "ops/builtin_ops.h"
#include "ops/common/bench_keys.h"
#include "ops/common/cases.h"
#include "ops/common/checks.h"
#include "ops/shape/kernels/copy.h"
#include "ops/shape/move_ops.h"
#include "ops/shape/shape_util.h"
#include "opsnn/error.h"
#include "opsnn/op.h"
#include "opsnn/thread_pool.h"

namespace opsnn {
namespace {

using namespace shape;  // the shape family's helpers (shape_util.h)

// ---- reshape ----------------------------------------------------------------
Shape reshape_shape(const OpCall& call) {
  const Shape& in = call.in(0).shape;
  Shape out = call.attrs.ints("shape");
  const std::string arg = "attribute 'shape'";
  int64_t infer_at = -1, known = 1;
  for (size_t k = 0; k < out.size(); ++k) {
    if (out[k] == -1) {
      if (infer_at >= 0) call.fail(arg, "at most one -1", shape_str(out));
      infer_at = static_cast<int64_t>(k);
      continue;
    }
    if (out[k] == 0) {
      if (k >= in.size())
        call.fail(arg,
                  "0 (copy a dim) only at an index < the input rank " + std::to_string(in.size()),
                  shape_str(out));
      out[k] = in[k];
    }
    if (out[k] < 0) call.fail(arg, "dims >= -1", shape_str(call.attrs.ints("shape")));
    known = shape_numel({known, out[k]});
  }
  const int64_t n = call.in(0).numel();
  if (infer_at >= 0) {
    if (known == 0)
      call.fail(arg, "a -1 that can be inferred (other dims have no zero)",
                shape_str(call.attrs.ints("shape")));
    if (n % known)
      call.fail(arg,
                "a shape with " + std::to_string(n) + " elements (as input " + shape_str(in) + ")",
                shape_str(call.attrs.ints("shape")));
    out[static_cast<size_t>(infer_at)] = n / known;
  } else if (known != n) {
    call.fail(arg,
              "a shape with " + std::to_string(n) + " elements (as input " + shape_str(in) + ")",
              shape_str(out));
  }
  return out;
}

void reshape_kernel(const OpCall&, const Tensor* in, Tensor* out, const TileKernels& tiles) {
  copy_view(in[0], in[0].data(), in[0].shape(), in[0].strides(), out[0].data(), tiles);
}

}  // namespace

void add_reshape(Registry& r) {
  OpSchema s;
  s.name = "reshape";
  s.family = "shape";
  s.doc =
      "Contiguous copy of x with a new shape. In 'shape', 0 copies the input dim at that index and "
      "one -1 is inferred (ONNX Reshape, allowzero=0).";
  s.inputs = {{"x", "any dtype, any strides"}};
  s.outputs = {{"y", "contiguous, shape from 'shape'"}};
  s.attrs = {{"shape", AttrType::i64s, std::nullopt, "target shape; 0 = copy, -1 = infer"}};
  s.dtypes = kAll;
  s.infer = [](const OpCall& c) {
    return std::vector<TensorDesc>{{c.in(0).dtype, reshape_shape(c)}};
  };
  s.reference = [](const OpCall&, const std::vector<RefTensor>& in, std::vector<RefTensor>& out) {
    out[0].data = in[0].data;
  };
  s.cases = [](DType t) {
    using V = std::vector<int64_t>;
    std::vector<CheckCase> cs;
    cs.push_back(cc("[0]->[0,5]", {TensorDesc(t, {0})}, {{"shape", V{0, 5}}}));
    cs.push_back(cc("[1]->[]", {TensorDesc(t, {1})}, {{"shape", V{}}}));
    cs.push_back(cc("[3,5,7]->[-1]", {TensorDesc(t, {3, 5, 7})}, {{"shape", V{-1}}}));
    cs.push_back(cc("[3,5,7]->[0,-1]", {TensorDesc(t, {3, 5, 7})}, {{"shape", V{0, -1}}}));
    cs.push_back(cc("[4,6]->[2,-1,3]", {TensorDesc(t, {4, 6})}, {{"shape", V{2, -1, 3}}}));
    cs.push_back(cc("[1000]->[8,125]", {TensorDesc(t, {1000})}, {{"shape", V{8, 125}}}));
    cs.push_back(cc("[65537]->[1,-1,1]", {TensorDesc(t, {65537})}, {{"shape", V{1, -1, 1}}}));
    cs.push_back(
        cc("strided[33,17]^T->[-1]", {ops::transposed_desc(t, 33, 17)}, {{"shape", V{-1}}}));
    cs.push_back(cc("strided[4,5,6]->[0,30]", {TensorDesc(t, {4, 5, 6}, {70, 14, 2})},
                    {{"shape", V{0, 30}}}));
    return cs;
  };
  s.bench_case = [name = s.name](const std::map<std::string, std::string>& kv, DType t) {
    return ops::attr_bench_case(Registry::global().schema(name), kv, t);
  };
  r.add_op(std::move(s));
  add_move_kernels(r, "reshape", reshape_kernel);
}

}  // namespace opsnn
