// The transpose op: schema, shape inference, float64 reference, case
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
#include "ops/common/rank_array.h"
#include "ops/shape/kernels/copy.h"
#include "ops/shape/move_ops.h"
#include "ops/shape/shape_util.h"
#include "opsnn/error.h"
#include "opsnn/op.h"
#include "opsnn/thread_pool.h"

namespace opsnn {
namespace {

using namespace shape;  // the shape family's helpers (shape_util.h)

// ---- transpose --------------------------------------------------------------
std::vector<int64_t> transpose_perm(const OpCall& call) {
  const int64_t rank = call.in(0).rank();
  std::vector<int64_t> perm = call.attrs.ints("perm");
  if (perm.empty()) {
    for (int64_t k = rank - 1; k >= 0; --k) perm.push_back(k);
    return perm;
  }
  if (static_cast<int64_t>(perm.size()) != rank)
    call.fail("attribute 'perm'", std::to_string(rank) + " axes (input rank)", shape_str(perm));
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t& p : perm) {
    p = call.axis("attribute 'perm'", p, rank);
    if (seen[static_cast<size_t>(p)])
      call.fail("attribute 'perm'", "a permutation of 0.." + std::to_string(rank - 1),
                shape_str(call.attrs.ints("perm")));
    seen[static_cast<size_t>(p)] = true;
  }
  return perm;
}

void transpose_kernel(const OpCall& call, const Tensor* in, Tensor* out, const TileKernels& tiles) {
  // The permutation was validated at create; read it in place into
  // per-thread scratch (run must not allocate).
  const std::vector<int64_t>& perm = call.attrs.ints("perm");
  const int64_t rank = in[0].rank();
  ops::RankArray<int64_t> st(static_cast<size_t>(rank));
  for (int64_t k = 0; k < rank; ++k) {
    int64_t p = perm.empty() ? rank - 1 - k : perm[static_cast<size_t>(k)];
    if (p < 0) p += rank;
    st[static_cast<size_t>(k)] = in[0].strides()[static_cast<size_t>(p)];
  }
  copy_view(in[0], in[0].data(), out[0].shape(), {st.data(), st.size()}, out[0].data(), tiles);
}

}  // namespace

void add_transpose(Registry& r) {
  OpSchema s;
  s.name = "transpose";
  s.family = "shape";
  s.doc = "y[i_0..i_n] = x[i at perm]: output dim k is input dim perm[k]; default perm reverses.";
  s.inputs = {{"x", "any dtype, any strides"}};
  s.outputs = {{"y", "contiguous"}};
  s.attrs = {{"perm", AttrType::i64s, std::vector<int64_t>{}, "permutation (negative allowed)"}};
  s.dtypes = kAll;
  s.infer = [](const OpCall& c) {
    const auto perm = transpose_perm(c);
    Shape o;
    for (int64_t p : perm) o.push_back(c.in(0).shape[static_cast<size_t>(p)]);
    return std::vector<TensorDesc>{{c.in(0).dtype, o}};
  };
  s.reference = [](const OpCall& c, const std::vector<RefTensor>& in, std::vector<RefTensor>& out) {
    const auto perm = transpose_perm(c);
    std::vector<int64_t> src(perm.size());
    for_each_index(out[0].shape, [&](const std::vector<int64_t>& idx, int64_t f) {
      for (size_t k = 0; k < perm.size(); ++k) src[static_cast<size_t>(perm[k])] = idx[k];
      out[0].data[static_cast<size_t>(f)] =
          in[0].data[static_cast<size_t>(shape::flat_index(src, in[0].shape))];
    });
  };
  s.cases = [](DType t) {
    using V = std::vector<int64_t>;
    std::vector<CheckCase> cs;
    for (Shape sh : {Shape{0, 5}, Shape{1, 1}, Shape{7, 9}, Shape{16, 16}, Shape{17, 33},
                     Shape{257, 129}, Shape{1000, 3}})
      cs.push_back(cc("2d" + shape_str(sh), {TensorDesc(t, sh)}, {}));
    cs.push_back(
        cc("[2,3,4,5]perm0,2,3,1", {TensorDesc(t, {2, 3, 4, 5})}, {{"perm", V{0, 2, 3, 1}}}));
    cs.push_back(cc("[2,19,35]perm0,2,1", {TensorDesc(t, {2, 19, 35})}, {{"perm", V{0, -1, -2}}}));
    cs.push_back(cc("[3,4,5]perm1,0,2", {TensorDesc(t, {3, 4, 5})}, {{"perm", V{1, 0, 2}}}));
    cs.push_back(
        cc("[2,33,2,40]perm2,3,0,1", {TensorDesc(t, {2, 33, 2, 40})}, {{"perm", V{2, 3, 0, 1}}}));
    cs.push_back(cc("[5]", {TensorDesc(t, {5})}, {}));
    cs.push_back(cc("strided[33,17]^T", {ops::transposed_desc(t, 33, 17)}, {}));
    cs.push_back(cc("strided[4,5,6]perm2,0,1", {TensorDesc(t, {4, 5, 6}, {70, 14, 2})},
                    {{"perm", V{2, 0, 1}}}));
    // 16 MiB of f32 and more: the non-temporal tile path (ragged edges too).
    if (t == DType::f32) {
      cs.push_back(cc("2d[2048,2049] (streamed)", {TensorDesc(t, {2048, 2049})}, {}));
      cs.push_back(cc("[4,1024,1040]perm0,2,1 (streamed)", {TensorDesc(t, {4, 1024, 1040})},
                      {{"perm", V{0, 2, 1}}}));
    }
    return cs;
  };
  s.bench_case = [name = s.name](const std::map<std::string, std::string>& kv, DType t) {
    return ops::attr_bench_case(Registry::global().schema(name), kv, t);
  };
  r.add_op(std::move(s));
  add_move_kernels(r, "transpose", transpose_kernel);
}

}  // namespace opsnn
