// The concat and split ops: schema, shape inference, float64 reference, case
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

// ---- concat -----------------------------------------------------------------
void concat_kernel(const OpCall& call, const Tensor* in, Tensor* out, const TileKernels& tiles) {
  const int64_t rank = out[0].rank();
  const size_t ax = static_cast<size_t>(call.axis("attribute 'axis'", call.attrs.i("axis"), rank));
  ops::RankArray<int64_t> ost(out[0].shape().size());
  for (size_t k = 0; k < ost.size(); ++k) ost[k] = out[0].strides()[k];
  const std::span<const int64_t> osts{ost.data(), ost.size()};
  int64_t off = 0;
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    shape::strided_copy(dtype_size(in[i].dtype()), in[i].shape(), in[i].data(), in[i].strides(),
                        static_cast<char*>(out[0].data()) +
                            off * ost[ax] * static_cast<int64_t>(dtype_size(in[i].dtype())),
                        osts, tiles);
    off += in[i].shape()[ax];
  }
}

// ---- split --------------------------------------------------------------------
std::vector<int64_t> split_sizes(const OpCall& call) {
  const int64_t rank = call.in(0).rank();
  if (rank == 0) call.fail("input 'x'", "rank >= 1", "rank 0");
  const size_t ax = static_cast<size_t>(call.axis("attribute 'axis'", call.attrs.i("axis"), rank));
  const int64_t dim = call.in(0).shape[ax];
  std::vector<int64_t> sizes = call.attrs.ints("split");
  const int64_t n = call.attrs.i("num_outputs");
  if (!sizes.empty()) {
    if (n != 0 && n != static_cast<int64_t>(sizes.size()))
      call.fail("attribute 'num_outputs'",
                "0 or " + std::to_string(sizes.size()) + " (the length of 'split')",
                std::to_string(n));
    int64_t sum = 0;
    for (int64_t v : sizes) {
      if (v < 0) call.fail("attribute 'split'", "sizes >= 0", shape_str(sizes));
      sum = call.checked_add("attribute 'split'", sum, v);
    }
    if (sum != dim)
      call.fail("attribute 'split'",
                "sizes summing to " + std::to_string(dim) + " (dim " + std::to_string(ax) + ")",
                shape_str(sizes) + " (sum " + std::to_string(sum) + ")");
    return sizes;
  }
  if (n <= 0)
    call.fail("attribute 'num_outputs'", "a value >= 1 (or a 'split' list)", std::to_string(n));
  if (n > 4096) call.fail("attribute 'num_outputs'", "at most 4096", std::to_string(n));
  const int64_t chunk = (dim + n - 1) / n;
  if (dim > 0 && chunk * (n - 1) > dim)
    call.fail("attribute 'num_outputs'",
              "a count whose ceil-sized chunks fit dim " + std::to_string(dim), std::to_string(n));
  for (int64_t i = 0; i < n; ++i) sizes.push_back(std::min(chunk, dim - chunk * i));
  return sizes;
}

void split_kernel(const OpCall& call, const Tensor* in, Tensor* out, const TileKernels& tiles) {
  const size_t ax = static_cast<size_t>(call.axis("axis", call.attrs.i("axis"), in[0].rank()));
  int64_t off = 0;
  for (size_t i = 0; i < call.outputs.size(); ++i) {
    if (out[i].numel())
      copy_view(in[0], byte_ptr(in[0], off * in[0].strides()[ax]), out[i].shape(), in[0].strides(),
                out[i].data(), tiles);
    off += out[i].shape()[ax];
  }
}

}  // namespace

void add_concat(Registry& r) {
  OpSchema s;
  s.name = "concat";
  s.family = "shape";
  s.doc = "Joins the inputs along 'axis'; all other dims and the dtypes must match.";
  s.inputs = {{"inputs", "one or more tensors", false, true}};
  s.outputs = {{"y", "contiguous"}};
  s.attrs = {
      {"axis", AttrType::i64, int64_t{0}, "axis to join along (negative counts from the end)"}};
  s.dtypes = kAll;
  s.infer = [](const OpCall& c) {
    if (c.inputs.empty()) c.fail("inputs", "at least 1 tensor", "0");
    const int64_t rank = c.in(0).rank();
    if (rank == 0) c.fail(ops::input_name(c, 0), "rank >= 1", "rank 0");
    const size_t ax = static_cast<size_t>(c.axis("attribute 'axis'", c.attrs.i("axis"), rank));
    Shape o = c.in(0).shape;
    o[ax] = 0;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      ops::require_same_dtype(c, i, 0);
      const Shape& sh = c.in(i).shape;
      Shape want = c.in(0).shape;
      if (static_cast<int64_t>(sh.size()) == rank) want[ax] = sh[ax];
      if (sh != want)
        c.fail(ops::input_name(c, i),
               "shape " + shape_str(want) + " (all dims but axis " + std::to_string(ax) +
                   " as input 0)",
               shape_str(sh));
      o[ax] = c.checked_add(ops::input_name(c, i), o[ax], sh[ax]);
    }
    return std::vector<TensorDesc>{{c.in(0).dtype, o}};
  };
  s.reference = [](const OpCall& c, const std::vector<RefTensor>& in, std::vector<RefTensor>& out) {
    const size_t ax = static_cast<size_t>(c.axis("axis", c.attrs.i("axis"), c.in(0).rank()));
    std::vector<int64_t> src;
    for_each_index(out[0].shape, [&](const std::vector<int64_t>& idx, int64_t f) {
      int64_t a = idx[ax];
      size_t i = 0;
      while (a >= in[i].shape[ax]) a -= in[i++].shape[ax];
      src = idx;
      src[ax] = a;
      out[0].data[static_cast<size_t>(f)] =
          in[i].data[static_cast<size_t>(shape::flat_index(src, in[i].shape))];
    });
  };
  s.cases = [](DType t) {
    std::vector<CheckCase> cs;
    auto d = [&](Shape sh) { return TensorDesc(t, sh); };
    cs.push_back(cc("one[7]", {d({7})}, {}));
    cs.push_back(cc("[0]+[3]+[1]", {d({0}), d({3}), d({1})}, {}));
    cs.push_back(cc("[2,3]+[2,5]ax1", {d({2, 3}), d({2, 5})}, {{"axis", int64_t{1}}}));
    cs.push_back(cc("[2,3]+[2,5]ax-1", {d({2, 3}), d({2, 5})}, {{"axis", int64_t{-1}}}));
    cs.push_back(cc("[3,4,5]+[2,4,5]+[1,4,5]", {d({3, 4, 5}), d({2, 4, 5}), d({1, 4, 5})}, {}));
    cs.push_back(
        cc("[4,3,17]+[4,5,17]ax1", {d({4, 3, 17}), d({4, 5, 17})}, {{"axis", int64_t{1}}}));
    cs.push_back(cc("[300,129]+[300,1]ax1", {d({300, 129}), d({300, 1})}, {{"axis", int64_t{1}}}));
    cs.push_back(cc("strided[33,17]^T+[33,5]ax1", {ops::transposed_desc(t, 33, 17), d({33, 5})},
                    {{"axis", int64_t{1}}}));
    cs.push_back(cc("[2,0,3]+[2,0,3]ax1", {d({2, 0, 3}), d({2, 0, 3})}, {{"axis", int64_t{1}}}));
    return cs;
  };
  s.bench_case = [](const std::map<std::string, std::string>& kv, DType t) {
    ops::CaseKeys keys("concat", kv);
    const int64_t n = keys.i("n", 2);
    CheckCase c = ops::attr_bench_case(Registry::global().schema("concat"), keys, t);
    keys.done();
    c.inputs.assign(static_cast<size_t>(n),
                    c.inputs.empty() ? TensorDesc(t, {1 << 24}) : c.inputs.front());
    return c;
  };
  r.add_op(std::move(s));
  add_move_kernels(r, "concat", concat_kernel);
}

void add_split(Registry& r) {
  OpSchema s;
  s.name = "split";
  s.family = "shape";
  s.doc =
      "Splits x along 'axis' into parts of sizes 'split', or into 'num_outputs' parts of "
      "ceil(dim / num_outputs) (the last one smaller), as ONNX Split-18.";
  s.inputs = {{"x", "any dtype, any strides"}};
  s.outputs = {{"y", "one output per part", false, true}};
  s.attrs = {{"axis", AttrType::i64, int64_t{0}, "axis to split (negative counts from the end)"},
             {"split", AttrType::i64s, std::vector<int64_t>{}, "sizes of the parts"},
             {"num_outputs", AttrType::i64, int64_t{0}, "number of equal parts (when no 'split')"}};
  s.dtypes = kAll;
  s.infer = [](const OpCall& c) {
    const auto sizes = split_sizes(c);
    const size_t ax =
        static_cast<size_t>(c.axis("attribute 'axis'", c.attrs.i("axis"), c.in(0).rank()));
    std::vector<TensorDesc> o;
    for (int64_t v : sizes) {
      Shape sh = c.in(0).shape;
      sh[ax] = v;
      o.emplace_back(c.in(0).dtype, sh);
    }
    return o;
  };
  s.reference = [](const OpCall& c, const std::vector<RefTensor>& in, std::vector<RefTensor>& out) {
    const size_t ax = static_cast<size_t>(c.axis("axis", c.attrs.i("axis"), c.in(0).rank()));
    int64_t off = 0;
    std::vector<int64_t> src;
    for (RefTensor& o : out) {
      for_each_index(o.shape, [&](const std::vector<int64_t>& idx, int64_t f) {
        src = idx;
        src[ax] += off;
        o.data[static_cast<size_t>(f)] =
            in[0].data[static_cast<size_t>(shape::flat_index(src, in[0].shape))];
      });
      off += o.shape[ax];
    }
  };
  s.cases = [](DType t) {
    using V = std::vector<int64_t>;
    std::vector<CheckCase> cs;
    cs.push_back(cc("[7]n1", {TensorDesc(t, {7})}, {{"num_outputs", int64_t{1}}}));
    cs.push_back(cc("[7]n3", {TensorDesc(t, {7})}, {{"num_outputs", int64_t{3}}}));
    cs.push_back(cc("[0,4]n2", {TensorDesc(t, {0, 4})}, {{"num_outputs", int64_t{2}}}));
    cs.push_back(cc("[6,5]split1,0,5ax0", {TensorDesc(t, {6, 5})}, {{"split", V{1, 0, 5}}}));
    cs.push_back(cc("[4,33,5]split16,17ax-2", {TensorDesc(t, {4, 33, 5})},
                    {{"split", V{16, 17}}, {"axis", int64_t{-2}}}));
    cs.push_back(cc("[3,1000]n4ax1", {TensorDesc(t, {3, 1000})},
                    {{"num_outputs", int64_t{4}}, {"axis", int64_t{1}}}));
    cs.push_back(cc("[2,3,4,5]split2,3ax3", {TensorDesc(t, {2, 3, 4, 5})},
                    {{"split", V{2, 3}}, {"axis", int64_t{3}}}));
    cs.push_back(cc("strided[33,17]^Tn2ax1", {ops::transposed_desc(t, 33, 17)},
                    {{"num_outputs", int64_t{2}}, {"axis", int64_t{1}}}));
    return cs;
  };
  s.bench_case = [name = s.name](const std::map<std::string, std::string>& kv, DType t) {
    return ops::attr_bench_case(Registry::global().schema(name), kv, t);
  };
  r.add_op(std::move(s));
  add_move_kernels(r, "split", split_kernel);
}

}  // namespace opsnn
