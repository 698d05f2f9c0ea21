// Shape and data-movement ops: reshape, transpose, concat, split, slice, pad,
// expand, gather, embedding. Schemas, shape inference, float64 references,
// case tables and kernels (all kernels go through the strided-copy engine in
// kernels/copy.h, which is element-size generic, so every dtype is accepted).
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
#include "ops/shape/shape_util.h"
#include "opsnn/error.h"
#include "opsnn/op.h"
#include "opsnn/thread_pool.h"

namespace opsnn {
namespace shape {

void encode_value(DType t, double v, void* out) {
  auto sat = [&](auto lo, auto hi) {
    using I = decltype(lo);
    I r;
    if (v != v)
      r = 0;
    else if (v <= static_cast<double>(lo))
      r = lo;
    else if (v >= static_cast<double>(hi))
      r = hi;
    else
      r = static_cast<I>(v);
    std::memcpy(out, &r, sizeof r);
  };
  switch (t) {
    case DType::f32: {
      const float f = static_cast<float>(v);
      std::memcpy(out, &f, 4);
      return;
    }
    case DType::f16: {
      const uint16_t b = f32_to_f16_bits(static_cast<float>(v));
      std::memcpy(out, &b, 2);
      return;
    }
    case DType::bf16: {
      const uint16_t b = f32_to_bf16_bits(static_cast<float>(v));
      std::memcpy(out, &b, 2);
      return;
    }
    case DType::i8:
      return sat(std::numeric_limits<int8_t>::min(), std::numeric_limits<int8_t>::max());
    case DType::u8:
      return sat(std::numeric_limits<uint8_t>::min(), std::numeric_limits<uint8_t>::max());
    case DType::i32:
      return sat(std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max());
    case DType::i64:
      return sat(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max());
    case DType::boolean: {
      const uint8_t b = v != 0 ? 1 : 0;
      std::memcpy(out, &b, 1);
      return;
    }
  }
}

std::vector<SliceDim> slice_params(const OpCall& call) {
  const Shape& in = call.in(0).shape;
  const int64_t rank = call.in(0).rank();
  const auto& starts = call.attrs.ints("starts");
  const auto& ends = call.attrs.ints("ends");
  std::vector<int64_t> axes = call.attrs.ints("axes");
  std::vector<int64_t> steps = call.attrs.ints("steps");
  if (starts.size() != ends.size())
    call.fail("attribute 'ends'", std::to_string(starts.size()) + " values (as 'starts')",
              std::to_string(ends.size()));
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (axes.size() != starts.size())
    call.fail("attribute 'axes'", std::to_string(starts.size()) + " values (as 'starts')",
              std::to_string(axes.size()));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (steps.size() != starts.size())
    call.fail("attribute 'steps'", std::to_string(starts.size()) + " values (as 'starts')",
              std::to_string(steps.size()));
  std::vector<SliceDim> p(static_cast<size_t>(rank));
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t k = 0; k < rank; ++k) p[static_cast<size_t>(k)] = {0, 1, in[static_cast<size_t>(k)]};
  for (size_t i = 0; i < starts.size(); ++i) {
    const int64_t a = call.axis("attribute 'axes'", axes[i], rank);
    if (rank == 0) call.fail("input 'x'", "rank >= 1", "rank 0");
    if (seen[static_cast<size_t>(a)])
      call.fail("attribute 'axes'", "distinct axes", shape_str(axes));
    seen[static_cast<size_t>(a)] = true;
    const int64_t dim = in[static_cast<size_t>(a)], step = steps[i];
    if (step == 0) call.fail("attribute 'steps'", "non-zero steps", shape_str(steps));
    int64_t s = starts[i], e = ends[i];
    if (s < 0) s = s < -dim ? -1 : s + dim;  // -1 marks "before the first element"
    if (e < 0) e = e < -dim ? -1 : e + dim;
    int64_t len;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      len = e > s ? (e - s - 1) / step + 1 : 0;
    } else {
      s = std::clamp<int64_t>(s, -1, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      // len = ceil((s - e) / -step), computed without overflow for step = INT64_MIN.
      const uint64_t span = s > e ? static_cast<uint64_t>(s - e) : 0;
      const uint64_t st = static_cast<uint64_t>(-(step + 1)) + 1;
      len = static_cast<int64_t>(span ? (span - 1) / st + 1 : 0);
    }
    p[static_cast<size_t>(a)] = {len ? s : 0, step, len};
  }
  return p;
}

}  // namespace shape

namespace {

using shape::for_each_index;
using shape::prod;
using shape::TileKernels;

CheckCase cc(std::string name, std::vector<TensorDesc> in, Attrs attrs = {},
             std::vector<ValueRange> ranges = {}) {
  CheckCase c;
  c.name = std::move(name);
  c.inputs = std::move(in);
  c.attrs = std::move(attrs);
  c.ranges = std::move(ranges);
  return c;
}

const std::vector<DType> kAll(std::begin(kAllDTypes), std::end(kAllDTypes));

// Registers the three copy-engine kernels (in-register transpose tiles per ISA).
void add_move_kernels(Registry& r, const std::string& op,
                      void (*fn)(const OpCall&, const Tensor*, Tensor*, const TileKernels&),
                      bool contiguous_inputs = false) {
  struct V {
    Isa isa;
    const char* suffix;
    TileKernels (*tiles)();
  };
  const V vs[] = {{Isa::avx512, "_copy_avx512", shape::tiles_avx512},
                  {Isa::avx2, "_copy_avx2", shape::tiles_avx2},
                  {Isa::scalar, "_copy", shape::tiles_scalar}};
  int pri = 30;
  for (const V& v : vs) {
    KernelDesc k;
    k.name = op + v.suffix;
    k.isa = v.isa;
    k.dtypes = kAll;
    k.contiguous_inputs = contiguous_inputs;
    k.priority = pri -= 10;
    const TileKernels tiles = v.tiles();
    k.create = simple_kernel([fn, tiles](const OpCall& c, const Tensor* in, Tensor* out,
                                         void*) { fn(c, in, out, tiles); },
                             nullptr);
    r.add_kernel(op, std::move(k));
  }
}

// Copies the view (shape, strides) at `src` into contiguous `dst`.
void copy_view(const Tensor& t, const void* src, const Shape& shape, const Strides& strides,
               void* dst, const TileKernels& tiles) {
  thread_local Strides dst_strides;  // per-thread scratch: run must not allocate
  dst_strides.resize(shape.size());
  int64_t acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    dst_strides[i] = acc;
    acc *= std::max<int64_t>(shape[i], 1);
  }
  shape::strided_copy(dtype_size(t.dtype()), shape, src, strides, dst, dst_strides, tiles);
}

const char* byte_ptr(const Tensor& t, int64_t elem_offset) {
  return static_cast<const char*>(t.data()) +
         elem_offset * static_cast<int64_t>(dtype_size(t.dtype()));
}

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
  thread_local Strides st;
  st.resize(static_cast<size_t>(rank));
  for (int64_t k = 0; k < rank; ++k) {
    int64_t p = perm.empty() ? rank - 1 - k : perm[static_cast<size_t>(k)];
    if (p < 0) p += rank;
    st[static_cast<size_t>(k)] = in[0].strides()[static_cast<size_t>(p)];
  }
  copy_view(in[0], in[0].data(), out[0].shape(), st, out[0].data(), tiles);
}

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

// ---- concat -----------------------------------------------------------------
void concat_kernel(const OpCall& call, const Tensor* in, Tensor* out, const TileKernels& tiles) {
  const int64_t rank = out[0].rank();
  const size_t ax = static_cast<size_t>(call.axis("attribute 'axis'", call.attrs.i("axis"), rank));
  const Strides ost = contiguous_strides(out[0].shape());
  int64_t off = 0;
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    shape::strided_copy(dtype_size(in[i].dtype()), in[i].shape(), in[i].data(), in[i].strides(),
                        static_cast<char*>(out[0].data()) +
                            off * ost[ax] * static_cast<int64_t>(dtype_size(in[i].dtype())),
                        ost, tiles);
    off += in[i].shape()[ax];
  }
}

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

// ---- slice --------------------------------------------------------------------
void slice_kernel(const OpCall& call, const Tensor* in, Tensor* out, const TileKernels& tiles) {
  if (out[0].numel() == 0) return;
  const auto p = shape::slice_params(call);
  int64_t off = 0;
  Strides st(p.size());
  for (size_t k = 0; k < p.size(); ++k) {
    off += p[k].start * in[0].strides()[k];
    st[k] = p[k].len > 1 ? p[k].step * in[0].strides()[k] : 0;
  }
  copy_view(in[0], byte_ptr(in[0], off), out[0].shape(), st, out[0].data(), tiles);
}

void add_slice(Registry& r) {
  OpSchema s;
  s.name = "slice";
  s.family = "shape";
  s.doc =
      "ONNX Slice with attributes: per listed axis, elements start, start+step, ... before end. "
      "Negative starts/ends count from the end; values are clamped to [0, dim] (step > 0) or "
      "[-1, dim-1] (step < 0); steps may be negative, not 0.";
  s.inputs = {{"x", "any dtype, any strides"}};
  s.outputs = {{"y", "contiguous"}};
  s.attrs = {
      {"starts", AttrType::i64s, std::nullopt, "first index per axis"},
      {"ends", AttrType::i64s, std::nullopt, "end (exclusive) per axis"},
      {"axes", AttrType::i64s, std::vector<int64_t>{}, "axes (default 0..n-1; negative allowed)"},
      {"steps", AttrType::i64s, std::vector<int64_t>{}, "steps (default 1)"}};
  s.dtypes = kAll;
  s.infer = [](const OpCall& c) {
    const auto p = shape::slice_params(c);
    Shape o;
    for (const auto& d : p) o.push_back(d.len);
    return std::vector<TensorDesc>{{c.in(0).dtype, o}};
  };
  s.reference = [](const OpCall& c, const std::vector<RefTensor>& in, std::vector<RefTensor>& out) {
    const auto p = shape::slice_params(c);
    std::vector<int64_t> src(p.size());
    for_each_index(out[0].shape, [&](const std::vector<int64_t>& idx, int64_t f) {
      for (size_t k = 0; k < p.size(); ++k) src[k] = p[k].start + idx[k] * p[k].step;
      out[0].data[static_cast<size_t>(f)] =
          in[0].data[static_cast<size_t>(shape::flat_index(src, in[0].shape))];
    });
  };
  s.cases = [](DType t) {
    using V = std::vector<int64_t>;
    std::vector<CheckCase> cs;
    auto add = [&](std::string name, TensorDesc d, V st, V en, V ax = {}, V sp = {}) {
      cs.push_back(cc(name, {d}, {{"starts", st}, {"ends", en}, {"axes", ax}, {"steps", sp}}));
    };
    add("[0]", TensorDesc(t, {0}), {0}, {5});
    add("[1]", TensorDesc(t, {1}), {0}, {1});
    add("[17]1:12:2", TensorDesc(t, {17}), {1}, {12}, {}, {2});
    add("[17]-1:-18:-1", TensorDesc(t, {17}), {-1}, {-18}, {}, {-1});
    add("[17]big", TensorDesc(t, {17}), {-1000}, {INT64_MAX}, {0}, {3});
    add("[17]rev_all", TensorDesc(t, {17}), {INT64_MAX}, {INT64_MIN}, {0}, {-1});
    add("[17]empty5:2", TensorDesc(t, {17}), {5}, {2});
    add("[4,33,5]ax-2", TensorDesc(t, {4, 33, 5}), {3}, {-3}, {-2});
    add("[4,33,5]2axes", TensorDesc(t, {4, 33, 5}), {30, 1}, {2, 5}, {1, 2}, {-4, 2});
    add("[2,3,4,5]", TensorDesc(t, {2, 3, 4, 5}), {1, 0, -1}, {2, 3, 0}, {0, 1, 2}, {1, 1, -1});
    add("[300,257]", TensorDesc(t, {300, 257}), {5, 17}, {290, 250}, {0, 1}, {1, 1});
    add("[300,257]rev", TensorDesc(t, {300, 257}), {-1}, {-300}, {1}, {-1});
    add("strided[33,17]^T", ops::transposed_desc(t, 33, 17), {2, 1}, {30, 16}, {}, {3, 1});
    add("strided[4,5,6]", TensorDesc(t, {4, 5, 6}, {70, 14, 2}), {1, -1}, {3, 0}, {0, 2}, {1, -2});
    return cs;
  };
  s.bench_case = [name = s.name](const std::map<std::string, std::string>& kv, DType t) {
    return ops::attr_bench_case(Registry::global().schema(name), kv, t);
  };
  r.add_op(std::move(s));
  add_move_kernels(r, "slice", slice_kernel);
}

// ---- pad ------------------------------------------------------------------------
enum class PadMode { constant, reflect, edge };
PadMode pad_mode(const OpCall& c) {
  const std::string& m = c.attrs.s("mode");
  if (m == "constant") return PadMode::constant;
  if (m == "reflect") return PadMode::reflect;
  if (m == "edge") return PadMode::edge;
  c.fail("attribute 'mode'", "constant|reflect|edge", "'" + m + "'");
}

Shape pad_shape(const OpCall& c) {
  const Shape& in = c.in(0).shape;
  const size_t rank = in.size();
  const auto& pads = c.attrs.ints("pads");
  if (pads.size() != 2 * rank)
    c.fail("attribute 'pads'", std::to_string(2 * rank) + " values (2 x rank, ONNX order)",
           std::to_string(pads.size()));
  const PadMode mode = pad_mode(c);
  Shape o(rank);
  for (size_t k = 0; k < rank; ++k) {
    const int64_t b = pads[k], e = pads[k + rank];
    if (b < 0 || e < 0) c.fail("attribute 'pads'", "values >= 0", shape_str(pads));
    if (mode == PadMode::reflect && (b > in[k] - 1 || e > in[k] - 1) && (b || e))
      c.fail("attribute 'pads'",
             "reflect pads <= dim - 1 = " + std::to_string(in[k] - 1) + " on axis " +
                 std::to_string(k),
             shape_str(pads));
    if (mode == PadMode::edge && in[k] == 0 && (b || e))
      c.fail("attribute 'pads'", "no edge padding of the empty axis " + std::to_string(k),
             shape_str(pads));
    if (b > (INT64_MAX - in[k]) / 2 || e > (INT64_MAX - in[k]) / 2)
      c.fail("attribute 'pads'", "pads whose sum with the dims fits in int64", shape_str(pads));
    o[k] = in[k] + b + e;
  }
  return o;
}

void pad_kernel(const OpCall& c, const Tensor* in, Tensor* out, const TileKernels& tiles) {
  const Tensor& x = in[0];
  Tensor& y = out[0];
  const size_t rank = static_cast<size_t>(x.rank());
  const size_t es = dtype_size(x.dtype());
  const auto& pads = c.attrs.ints("pads");
  const PadMode mode = pad_mode(c);
  const Strides ost = contiguous_strides(y.shape());
  char* base = static_cast<char*>(y.data());
  auto at = [&](const std::vector<int64_t>& idx) {
    int64_t o = 0;
    for (size_t k = 0; k < rank; ++k) o += idx[k] * ost[k];
    return base + o * static_cast<int64_t>(es);
  };
  if (y.numel() == 0) return;
  std::vector<int64_t> interior(pads.begin(), pads.begin() + static_cast<long>(rank));
  if (mode == PadMode::constant) {
    uint64_t v = 0;
    shape::encode_value(y.dtype(), c.attrs.f("value"), &v);
    shape::fill(es, base, y.numel(), &v);
  }
  if (x.numel())
    shape::strided_copy(es, x.shape(), x.data(), x.strides(), at(interior), ost, tiles);
  if (mode == PadMode::constant || x.numel() == 0) return;
  // Borders axis by axis, innermost first, copying from the output itself.
  for (size_t d = rank; d-- > 0;) {
    const int64_t b = pads[d], e = pads[d + rank], n = x.shape()[d];
    Shape region(rank);
    std::vector<int64_t> start(rank, 0);
    for (size_t k = 0; k < rank; ++k) {
      region[k] = k < d ? x.shape()[k] : y.shape()[k];
      start[k] = k < d ? pads[k] : 0;
    }
    for (int side = 0; side < 2; ++side) {
      const int64_t len = side == 0 ? b : e;
      if (!len) continue;
      region[d] = len;
      std::vector<int64_t> dst = start, src = start;
      Strides sst = ost;
      dst[d] = side == 0 ? 0 : b + n;
      if (mode == PadMode::edge) {
        src[d] = side == 0 ? b : b + n - 1;
        sst[d] = 0;
      } else if (side == 0) {  // y[i] = y[2b - i], i in [0, b)
        src[d] = 2 * b;
        sst[d] = -ost[d];
      } else {  // y[i] = y[2(b + n - 1) - i], i in [b + n, b + n + e)
        src[d] = b + n - 2;
        sst[d] = -ost[d];
      }
      shape::strided_copy(es, region, at(src), sst, at(dst), ost, tiles);
    }
  }
}

void add_pad(Registry& r) {
  OpSchema s;
  s.name = "pad";
  s.family = "shape";
  s.doc =
      "Pads x by 'pads' = [x1_begin, x2_begin, ..., x1_end, x2_end, ...] (ONNX order, values >= "
      "0). "
      "mode constant fills 'value' (converted to x's dtype), reflect mirrors without repeating the "
      "edge (pads <= dim - 1), edge repeats the border element.";
  s.inputs = {{"x", "any dtype, any strides"}};
  s.outputs = {{"y", "contiguous"}};
  s.attrs = {{"pads", AttrType::i64s, std::nullopt, "begin pads of every axis, then end pads"},
             {"mode", AttrType::str, std::string("constant"), "constant|reflect|edge"},
             {"value", AttrType::f64, 0.0, "fill value of mode constant"}};
  s.dtypes = kAll;
  s.infer = [](const OpCall& c) { return std::vector<TensorDesc>{{c.in(0).dtype, pad_shape(c)}}; };
  s.reference = [](const OpCall& c, const std::vector<RefTensor>& in, std::vector<RefTensor>& out) {
    const auto& pads = c.attrs.ints("pads");
    const PadMode mode = pad_mode(c);
    const size_t rank = in[0].shape.size();
    const double value = c.attrs.f("value");
    std::vector<int64_t> src(rank);
    for_each_index(out[0].shape, [&](const std::vector<int64_t>& idx, int64_t f) {
      bool outside = false;
      for (size_t k = 0; k < rank; ++k) {
        const int64_t n = in[0].shape[k];
        int64_t i = idx[k] - pads[k];
        if (i < 0 || i >= n) {
          if (mode == PadMode::constant)
            outside = true;
          else if (mode == PadMode::edge)
            i = i < 0 ? 0 : n - 1;
          else
            i = i < 0 ? -i : 2 * (n - 1) - i;
        }
        src[k] = i;
      }
      out[0].data[static_cast<size_t>(f)] =
          outside ? value : in[0].data[static_cast<size_t>(shape::flat_index(src, in[0].shape))];
    });
  };
  s.cases = [](DType t) {
    using V = std::vector<int64_t>;
    std::vector<CheckCase> cs;
    for (const char* mode : {"constant", "reflect", "edge"}) {
      const std::string m = mode;
      auto add = [&](std::string name, TensorDesc d, V pads, double value = 0) {
        cs.push_back(cc(m + name, {d}, {{"pads", pads}, {"mode", m}, {"value", value}}));
      };
      if (m == "constant") {
        add("[0]", TensorDesc(t, {0}), {2, 3}, 1.5);
        add("[2,0]", TensorDesc(t, {2, 0}), {1, 1, 0, 2}, -2);
      }
      add("[1]", TensorDesc(t, {1}), m == "reflect" ? V{0, 0} : V{1, 2}, 2);
      add("[17]", TensorDesc(t, {17}), {3, 16}, -1);
      add("[5,7]", TensorDesc(t, {5, 7}), {1, 2, 4, 6});
      add("[3,4,5]", TensorDesc(t, {3, 4, 5}), {0, 1, 2, 2, 0, 3}, 7);
      add("[2,3,4,5]", TensorDesc(t, {2, 3, 4, 5}), {1, 0, 3, 1, 0, 2, 1, 4}, 7);
      add("[64,257]", TensorDesc(t, {64, 257}), {3, 5, 2, 17});
      add("strided[33,17]^T", ops::transposed_desc(t, 33, 17), {1, 2, 3, 4}, 0.5);
    }
    return cs;
  };
  s.bench_case = [name = s.name](const std::map<std::string, std::string>& kv, DType t) {
    return ops::attr_bench_case(Registry::global().schema(name), kv, t);
  };
  r.add_op(std::move(s));
  add_move_kernels(r, "pad", pad_kernel);
}

// ---- expand ---------------------------------------------------------------------
Shape expand_shape(const OpCall& c) {
  const Shape& a = c.in(0).shape;
  const Shape& b = c.attrs.ints("shape");
  const size_t r = std::max(a.size(), b.size());
  Shape o(r);
  for (size_t k = 0; k < r; ++k) {
    const int64_t da = k < r - a.size() ? 1 : a[k - (r - a.size())];
    const int64_t db = k < r - b.size() ? 1 : b[k - (r - b.size())];
    if (db < 0) c.fail("attribute 'shape'", "dims >= 0", shape_str(b));
    if (da != db && da != 1 && db != 1)
      c.fail("attribute 'shape'", "a shape that input " + shape_str(a) + " broadcasts to",
             shape_str(b));
    o[k] = da == 1 ? db : da;
  }
  return o;
}

Strides broadcast_strides(const Shape& in, const Strides& st, const Shape& out) {
  Strides r(out.size(), 0);
  const size_t off = out.size() - in.size();
  for (size_t k = 0; k < in.size(); ++k) r[k + off] = in[k] == 1 && out[k + off] != 1 ? 0 : st[k];
  return r;
}

void expand_kernel(const OpCall&, const Tensor* in, Tensor* out, const TileKernels& tiles) {
  copy_view(in[0], in[0].data(), out[0].shape(),
            broadcast_strides(in[0].shape(), in[0].strides(), out[0].shape()), out[0].data(),
            tiles);
}

void add_expand(Registry& r) {
  OpSchema s;
  s.name = "expand";
  s.family = "shape";
  s.doc =
      "Broadcasts x to 'shape' with NumPy rules (as ONNX Expand: output = broadcast(x.shape, "
      "shape)).";
  s.inputs = {{"x", "any dtype, any strides"}};
  s.outputs = {{"y", "contiguous"}};
  s.attrs = {{"shape", AttrType::i64s, std::nullopt, "target shape"}};
  s.dtypes = kAll;
  s.infer = [](const OpCall& c) {
    return std::vector<TensorDesc>{{c.in(0).dtype, expand_shape(c)}};
  };
  s.reference = [](const OpCall&, const std::vector<RefTensor>& in, std::vector<RefTensor>& out) {
    const Shape& is = in[0].shape;
    const size_t off = out[0].shape.size() - is.size();
    std::vector<int64_t> src(is.size());
    for_each_index(out[0].shape, [&](const std::vector<int64_t>& idx, int64_t f) {
      for (size_t k = 0; k < is.size(); ++k) src[k] = is[k] == 1 ? 0 : idx[k + off];
      out[0].data[static_cast<size_t>(f)] =
          in[0].data[static_cast<size_t>(shape::flat_index(src, is))];
    });
  };
  s.cases = [](DType t) {
    using V = std::vector<int64_t>;
    std::vector<CheckCase> cs;
    auto add = [&](std::string name, TensorDesc d, V sh) {
      cs.push_back(cc(name, {d}, {{"shape", sh}}));
    };
    add("[1]->[0]", TensorDesc(t, {1}), {0});
    add("[1]->[1]", TensorDesc(t, {1}), {1});
    add("[1]->[17]", TensorDesc(t, {1}), {17});
    add("[3,1]->[3,33]", TensorDesc(t, {3, 1}), {3, 33});
    add("[5]->[4,5]", TensorDesc(t, {5}), {4, 5});
    add("[2,1,7]->[2,3,1]", TensorDesc(t, {2, 1, 7}), {2, 3, 1});
    add("[1,17,1]->[2,3,17,5]", TensorDesc(t, {1, 17, 1}), {2, 3, 17, 5});
    add("[257]->[300,1]", TensorDesc(t, {257}), {300, 1});
    add("strided[33,17]^T->[2,33,17]", ops::transposed_desc(t, 33, 17), {2, 1, 1});
    return cs;
  };
  s.bench_case = [name = s.name](const std::map<std::string, std::string>& kv, DType t) {
    return ops::attr_bench_case(Registry::global().schema(name), kv, t);
  };
  r.add_op(std::move(s));
  add_move_kernels(r, "expand", expand_kernel);
}

// ---- gather / embedding -------------------------------------------------------
int64_t index_at(const Tensor& idx, int64_t i) {
  return idx.dtype() == DType::i64 ? idx.data_as<int64_t>()[i] : idx.data_as<int32_t>()[i];
}

// out[o, j, i] = data[o, idx[j], i]; data and indices contiguous.
void gather_rows(const OpCall& c, const Tensor& data, const Tensor& idx, Tensor& out, int64_t axis,
                 bool allow_negative) {
  const int64_t n = data.shape()[static_cast<size_t>(axis)];
  const int64_t outer = prod(data.shape(), 0, static_cast<size_t>(axis));
  const int64_t inner = prod(data.shape(), static_cast<size_t>(axis) + 1, data.shape().size());
  const int64_t J = idx.numel();
  const int64_t es = static_cast<int64_t>(dtype_size(data.dtype()));
  for (int64_t j = 0; j < J; ++j) {
    const int64_t v = index_at(idx, j);
    if (v >= n || v < (allow_negative ? -n : 0))
      c.fail(
          ops::input_name(c, 1),
          "indices in [" + std::to_string(allow_negative ? -n : 0) + ", " + std::to_string(n) + ")",
          std::to_string(v) + " at flat position " + std::to_string(j));
  }
  const int64_t row = inner * es;
  const char* src = static_cast<const char*>(data.data());
  char* dst = static_cast<char*>(out.data());
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, row));
  parallel_for(outer * J, grain, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t o = t / J, j = t % J;
      int64_t v = index_at(idx, j);
      if (v < 0) v += n;
      std::memcpy(dst + t * row, src + (o * n + v) * row, static_cast<size_t>(row));
    }
  });
}

void gather_kernel(const OpCall& c, const Tensor* in, Tensor* out, const TileKernels&) {
  if (out[0].numel() == 0 && in[1].numel() == 0) return;
  gather_rows(c, in[0], in[1], out[0], c.axis("axis", c.attrs.i("axis"), in[0].rank()), true);
}

void embedding_kernel(const OpCall& c, const Tensor* in, Tensor* out, const TileKernels&) {
  gather_rows(c, in[0], in[1], out[0], 0, false);
}

void gather_ref(const OpCall& c, const std::vector<RefTensor>& in, std::vector<RefTensor>& out,
                int64_t axis, bool allow_negative) {
  const Shape& ds = in[0].shape;
  const int64_t n = ds[static_cast<size_t>(axis)];
  for (size_t j = 0; j < in[1].data.size(); ++j) {
    const double v = in[1].data[j];
    if (v >= static_cast<double>(n) || v < (allow_negative ? -static_cast<double>(n) : 0.0))
      c.fail(
          ops::input_name(c, 1),
          "indices in [" + std::to_string(allow_negative ? -n : 0) + ", " + std::to_string(n) + ")",
          std::to_string(static_cast<int64_t>(v)) + " at flat position " + std::to_string(j));
  }
  const int64_t outer = prod(ds, 0, static_cast<size_t>(axis));
  const int64_t inner = prod(ds, static_cast<size_t>(axis) + 1, ds.size());
  const int64_t J = static_cast<int64_t>(in[1].data.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < J; ++j) {
      int64_t v = static_cast<int64_t>(in[1].data[static_cast<size_t>(j)]);
      if (v < 0) v += n;
      for (int64_t i = 0; i < inner; ++i)
        out[0].data[static_cast<size_t>((o * J + j) * inner + i)] =
            in[0].data[static_cast<size_t>((o * n + v) * inner + i)];
    }
}

// gather / embedding: output written + indices read + the rows read.
void gather_cost(const OpCall& call, double* bytes, double* flops) {
  const TensorDesc& y = call.outputs.at(0);
  const TensorDesc& idx = call.in(1);
  *bytes = 2.0 * static_cast<double>(y.numel()) * static_cast<double>(dtype_size(y.dtype)) +
           static_cast<double>(idx.numel()) * static_cast<double>(dtype_size(idx.dtype));
  *flops = 0;
}

void add_gather(Registry& r) {
  OpSchema s;
  s.name = "gather";
  s.family = "shape";
  s.doc =
      "y = x taken at 'indices' along 'axis' (ONNX Gather): shape x[:axis] + indices + x[axis+1:]. "
      "Indices may be negative (counted from the end); an index outside [-dim, dim) is an error "
      "raised at run time (opsnn::Error naming input 'indices'), before anything is written.";
  s.inputs = {{"x", "any dtype"}, {"indices", "i64 or i32, any shape"}};
  s.outputs = {{"y", "x's dtype"}};
  s.attrs = {
      {"axis", AttrType::i64, int64_t{0}, "axis of x to index (negative counts from the end)"}};
  s.dtypes = kAll;
  s.infer = [](const OpCall& c) {
    ops::require_dtype(c, 1, {DType::i64, DType::i32});
    if (c.in(0).rank() == 0) c.fail("input 'x'", "rank >= 1", "rank 0");
    const size_t ax =
        static_cast<size_t>(c.axis("attribute 'axis'", c.attrs.i("axis"), c.in(0).rank()));
    const Shape& ds = c.in(0).shape;
    if (ds[ax] == 0 && c.in(1).numel() > 0)
      c.fail("input 'x'", "a non-empty axis " + std::to_string(ax) + " to gather from",
             shape_str(ds));
    Shape o(ds.begin(), ds.begin() + static_cast<long>(ax));
    o.insert(o.end(), c.in(1).shape.begin(), c.in(1).shape.end());
    o.insert(o.end(), ds.begin() + static_cast<long>(ax) + 1, ds.end());
    return std::vector<TensorDesc>{{c.in(0).dtype, o}};
  };
  s.reference = [](const OpCall& c, const std::vector<RefTensor>& in, std::vector<RefTensor>& out) {
    gather_ref(c, in, out, c.axis("axis", c.attrs.i("axis"), c.in(0).rank()), true);
  };
  s.cases = [](DType t) {
    std::vector<CheckCase> cs;
    auto add = [&](std::string name, Shape ds, TensorDesc idx, int64_t axis, ValueRange ir,
                   TensorDesc data = {}) {
      cs.push_back(cc(name, {data.shape.empty() ? TensorDesc(t, ds) : data, idx}, {{"axis", axis}},
                      {{}, ir}));
    };
    add("[5]idx[0]", {5}, TensorDesc(DType::i64, {0}), 0, {0, 4, true});
    add("[1]idx[1]", {1}, TensorDesc(DType::i64, {1}), 0, {-1, 0, true});
    add("[17]idx[7]neg", {17}, TensorDesc(DType::i64, {7}), 0, {-17, 16, true});
    add("[33,5]idx[3,4]", {33, 5}, TensorDesc(DType::i32, {3, 4}), 0, {-33, 32, true});
    add("[4,33,5]ax1", {4, 33, 5}, TensorDesc(DType::i64, {9}), 1, {-33, 32, true});
    add("[4,33,5]ax-1", {4, 33, 5}, TensorDesc(DType::i64, {2, 3}), -1, {-5, 4, true});
    add("[4,33,5]idx[]", {4, 33, 5}, TensorDesc(DType::i64, {}), 2, {0, 4, true});
    add("[1000,129]idx[300]", {1000, 129}, TensorDesc(DType::i64, {300}), 0, {-1000, 999, true});
    add("strided[33,17]^Tax1", {}, TensorDesc(DType::i64, {5}), 1, {-17, 16, true},
        ops::transposed_desc(t, 33, 17));
    return cs;
  };
  // bench: x=AxB, idx=N indices, axis.
  s.bench_case = [](const std::map<std::string, std::string>& kv, DType t) {
    ops::CaseKeys keys("gather", kv);
    const int64_t n = keys.i("idx", 1024);
    CheckCase c = ops::attr_bench_case(Registry::global().schema("gather"), keys, t);
    keys.done();
    const int64_t axis = c.attrs.has("axis") ? c.attrs.i("axis") : 0;
    const Shape& xs = c.inputs[0].shape;
    const int64_t dim =
        xs[static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(xs.size()) : axis)];
    c.inputs[1] = TensorDesc(DType::i64, {n});
    c.ranges = {{}, {0, static_cast<double>(dim - 1), true}};
    return c;
  };
  // Bytes moved: the output written, the indices read and the selected
  // slices read (as many bytes as the output; the rest of x is never touched).
  s.cost = gather_cost;
  r.add_op(std::move(s));
  add_move_kernels(r, "gather", gather_kernel, true);
}

void add_embedding(Registry& r) {
  OpSchema s;
  s.name = "embedding";
  s.family = "shape";
  s.doc =
      "Looks up rows of 'table' [V, D] at 'ids' (any shape) -> [..., D]. Ids must be in [0, V); "
      "any other id is an error raised at run time (input 'ids'), before anything is written.";
  s.inputs = {{"table", "[V, D]"}, {"ids", "i64 or i32, any shape"}};
  s.outputs = {{"y", "ids.shape + [D], table's dtype"}};
  s.dtypes = ops::kFloatDTypes;
  s.infer = [](const OpCall& c) {
    ops::require_rank(c, 0, 2);
    ops::require_dtype(c, 0, {DType::f32, DType::bf16, DType::f16});  // as s.dtypes lists
    ops::require_dtype(c, 1, {DType::i64, DType::i32});
    if (c.in(0).shape[0] == 0 && c.in(1).numel() > 0)
      c.fail("input 'table'", "at least one row to look up", shape_str(c.in(0).shape));
    Shape o = c.in(1).shape;
    o.push_back(c.in(0).shape[1]);
    return std::vector<TensorDesc>{{c.in(0).dtype, o}};
  };
  s.reference = [](const OpCall& c, const std::vector<RefTensor>& in, std::vector<RefTensor>& out) {
    gather_ref(c, in, out, 0, false);
  };
  s.cases = [](DType t) {
    std::vector<CheckCase> cs;
    auto add = [&](std::string name, Shape ts, TensorDesc ids) {
      cs.push_back(
          cc(name, {TensorDesc(t, ts), ids}, {}, {{}, {0, static_cast<double>(ts[0] - 1), true}}));
    };
    add("[5,0]ids[3]", {5, 0}, TensorDesc(DType::i64, {3}));
    add("[7,1]ids[0]", {7, 1}, TensorDesc(DType::i64, {0}));
    add("[1,17]ids[2,3]", {1, 17}, TensorDesc(DType::i32, {2, 3}));
    add("[100,33]ids[2,7]", {100, 33}, TensorDesc(DType::i64, {2, 7}));
    add("[1000,768]ids[4,17]", {1000, 768}, TensorDesc(DType::i64, {4, 17}));
    return cs;
  };
  // bench: v=rows, d=width, ids=N.
  s.bench_case = [](const std::map<std::string, std::string>& kv, DType t) {
    ops::CaseKeys keys("embedding", kv);
    const int64_t V = keys.i("v", 32000), D = keys.i("d", 4096), n = keys.i("ids", 512);
    keys.done();
    CheckCase c;
    c.name = "bench";
    c.inputs = {TensorDesc(t, {V, D}), TensorDesc(DType::i64, {n})};
    c.ranges = {{}, {0, static_cast<double>(V - 1), true}};
    return c;
  };
  // Bytes moved: the output written, the indices read and the selected
  // slices read (as many bytes as the output; the rest of x is never touched).
  s.cost = gather_cost;
  r.add_op(std::move(s));
  add_move_kernels(r, "embedding", embedding_kernel, true);
}

}  // namespace

void register_shape_ops(Registry& r) {
  add_reshape(r);
  add_transpose(r);
  add_concat(r);
  add_split(r);
  add_slice(r);
  add_pad(r);
  add_expand(r);
  add_gather(r);
  add_embedding(r);
}

}  // namespace opsnn
