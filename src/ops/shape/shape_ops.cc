// Shape and data-movement ops: the helpers shared by their files (reshape.cc,
// transpose.cc, concat_split.cc, slice_pad.cc, expand.cc, gather.cc; the
// kernels all go through the strided-copy engine in kernels/copy.h, which is
// element-size generic, so every dtype is accepted) and their registration.
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
#include "ops/common/kernel_names.h"
#include "ops/common/rank_array.h"
#include "ops/shape/kernels/copy.h"
#include "ops/shape/move_ops.h"
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

namespace {
// slice_params into `p` (a std::vector, or stack scratch in run); `seen` the
// same size, for the distinct-axes check.
template <class Dims, class Seen>
void fill_slice_params(const OpCall& call, Dims& p, Seen& seen) {
  const Shape& in = call.in(0).shape;
  const int64_t rank = call.in(0).rank();
  const auto& starts = call.attrs.ints("starts");
  const auto& ends = call.attrs.ints("ends");
  const auto& axes = call.attrs.ints("axes");
  const auto& steps = call.attrs.ints("steps");
  if (starts.size() != ends.size())
    call.fail("attribute 'ends'", std::to_string(starts.size()) + " values (as 'starts')",
              std::to_string(ends.size()));
  if (!axes.empty() && axes.size() != starts.size())
    call.fail("attribute 'axes'", std::to_string(starts.size()) + " values (as 'starts')",
              std::to_string(axes.size()));
  if (!steps.empty() && steps.size() != starts.size())
    call.fail("attribute 'steps'", std::to_string(starts.size()) + " values (as 'starts')",
              std::to_string(steps.size()));
  p.resize(static_cast<size_t>(rank));
  seen.resize(static_cast<size_t>(rank));
  for (int64_t k = 0; k < rank; ++k) {
    p[static_cast<size_t>(k)] = {0, 1, in[static_cast<size_t>(k)]};
    seen[static_cast<size_t>(k)] = false;
  }
  for (size_t i = 0; i < starts.size(); ++i) {
    const int64_t a =
        call.axis("attribute 'axes'", axes.empty() ? static_cast<int64_t>(i) : axes[i], rank);
    if (rank == 0) call.fail("input 'x'", "rank >= 1", "rank 0");
    if (seen[static_cast<size_t>(a)])
      call.fail("attribute 'axes'", "distinct axes", shape_str(axes));
    seen[static_cast<size_t>(a)] = true;
    const int64_t dim = in[static_cast<size_t>(a)], step = steps.empty() ? 1 : steps[i];
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
}
}  // namespace

std::vector<SliceDim> slice_params(const OpCall& call) {
  std::vector<SliceDim> p;
  std::vector<bool> seen;
  fill_slice_params(call, p, seen);
  return p;
}

void slice_params(const OpCall& call, ops::RankArray<SliceDim>& p) {
  ops::RankArray<bool> seen;
  fill_slice_params(call, p, seen);
}

}  // namespace shape

namespace shape {

CheckCase cc(std::string name, std::vector<TensorDesc> in, Attrs attrs,
             std::vector<ValueRange> ranges) {
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
                      bool contiguous_inputs) {
  struct V {
    Isa isa;
    TileKernels (*tiles)();
  };
  const V vs[] = {{Isa::avx512, shape::tiles_avx512},
                  {Isa::avx2, shape::tiles_avx2},
                  {Isa::scalar, shape::tiles_scalar}};
  for (const V& v : vs) {
    KernelDesc k;
    k.name = ops::kernel_name(op, "copy", v.isa);
    k.isa = v.isa;
    k.dtypes = kAll;
    k.contiguous_inputs = contiguous_inputs;
    k.priority = ops::isa_priority(v.isa);
    const TileKernels tiles = v.tiles();
    k.create = simple_kernel([fn, tiles](const OpCall& c, const Tensor* in, Tensor* out,
                                         void*) { fn(c, in, out, tiles); },
                             ops::ranks_fit);
    r.add_kernel(op, std::move(k));
  }
}

// Copies the view (shape, strides) at `src` into contiguous `dst`.
void copy_view(const Tensor& t, const void* src, std::span<const int64_t> shape,
               std::span<const int64_t> strides, void* dst, const TileKernels& tiles) {
  ops::RankArray<int64_t> dst_strides(shape.size());
  int64_t acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    dst_strides[i] = acc;
    acc *= std::max<int64_t>(shape[i], 1);
  }
  shape::strided_copy(dtype_size(t.dtype()), shape, src, strides, dst,
                      {dst_strides.data(), dst_strides.size()}, tiles);
}

const char* byte_ptr(const Tensor& t, int64_t elem_offset) {
  return static_cast<const char*>(t.data()) +
         elem_offset * static_cast<int64_t>(dtype_size(t.dtype()));
}

}  // namespace shape

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
