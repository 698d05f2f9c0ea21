// scatter_nd (ONNX ScatterND): y = x, then for each index tuple t in
// indices[..., :k] the slice y[t] (x.shape[k:]) is replaced by, or combined
// (reduction add / mul / max / min) with, the matching slice of updates.
// Tuples are applied in order (a repeated tuple: the last write wins, or all
// are combined), one thread; negative coordinates count from the end. Any
// dtype; arithmetic in the element type (16-bit floats through f32).
#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/builtin_ops.h"
#include "ops/common/cases.h"
#include "ops/common/checks.h"
#include "ops/common/kernel_names.h"
#include "ops/shape/shape_util.h"
#include "opsnn/error.h"
#include "opsnn/op.h"

namespace opsnn {
namespace {

enum class Red { none, add, mul, max, min };

Red red_of(const OpCall& c) {
  const std::string& s = c.attrs.s("reduction");
  if (s == "none") return Red::none;
  if (s == "add") return Red::add;
  if (s == "mul") return Red::mul;
  if (s == "max") return Red::max;
  if (s == "min") return Red::min;
  c.fail("attribute 'reduction'", "none|add|mul|max|min", "'" + s + "'");
}

double combine(Red r, double a, double b) {
  switch (r) {
    case Red::add:
      return a + b;
    case Red::mul:
      return a * b;
    case Red::max:
      return std::max(a, b);
    case Red::min:
      return std::min(a, b);
    case Red::none:
      break;
  }
  return b;
}

// The reference's combine for an integer dtype: in that type, wrapping as
// the kernel does (a double product of two int32 would lose low bits).
double combine_int(Red r, DType t, double a, double b) {
  const auto x = static_cast<int64_t>(a), y = static_cast<int64_t>(b);
  uint64_t v;
  if (r == Red::add)
    v = static_cast<uint64_t>(x) + static_cast<uint64_t>(y);
  else if (r == Red::mul)
    v = static_cast<uint64_t>(x) * static_cast<uint64_t>(y);
  else
    return combine(r, a, b);
  switch (t) {
    case DType::i8:
      return static_cast<int8_t>(v);
    case DType::u8:
      return static_cast<uint8_t>(v);
    case DType::i32:
      return static_cast<int32_t>(v);
    default:
      return static_cast<double>(static_cast<int64_t>(v));
  }
}

template <class T>
void combine_row(Red r, T* dst, const T* src, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<T, bf16> || std::is_same_v<T, f16>) {
      const float v = static_cast<float>(combine(r, to_f32(dst[i]), to_f32(src[i])));
      if constexpr (std::is_same_v<T, bf16>)
        dst[i] = to_bf16(v);
      else
        dst[i] = to_f16(v);
    } else if constexpr (std::is_same_v<T, bool>) {
      dst[i] = r == Red::add || r == Red::max ? (dst[i] || src[i]) : (dst[i] && src[i]);
    } else if constexpr (std::is_floating_point_v<T>) {
      dst[i] = static_cast<T>(combine(r, dst[i], src[i]));
    } else {  // integers in their own type (wrapping as the hardware does)
      using U = std::make_unsigned_t<T>;
      if (r == Red::add)
        dst[i] = static_cast<T>(static_cast<U>(dst[i]) + static_cast<U>(src[i]));
      else if (r == Red::mul)
        dst[i] = static_cast<T>(static_cast<U>(dst[i]) * static_cast<U>(src[i]));
      else
        dst[i] = r == Red::max ? std::max(dst[i], src[i]) : std::min(dst[i], src[i]);
    }
  }
}

void combine_bytes(DType t, Red r, void* dst, const void* src, int64_t n) {
  switch (t) {
    case DType::f32:
      return combine_row(r, static_cast<float*>(dst), static_cast<const float*>(src), n);
    case DType::bf16:
      return combine_row(r, static_cast<bf16*>(dst), static_cast<const bf16*>(src), n);
    case DType::f16:
      return combine_row(r, static_cast<f16*>(dst), static_cast<const f16*>(src), n);
    case DType::i8:
      return combine_row(r, static_cast<int8_t*>(dst), static_cast<const int8_t*>(src), n);
    case DType::u8:
      return combine_row(r, static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src), n);
    case DType::i32:
      return combine_row(r, static_cast<int32_t*>(dst), static_cast<const int32_t*>(src), n);
    case DType::i64:
      return combine_row(r, static_cast<int64_t*>(dst), static_cast<const int64_t*>(src), n);
    case DType::boolean:
      return combine_row(r, static_cast<bool*>(dst), static_cast<const bool*>(src), n);
  }
}

// Flat offset (in slices) of tuple j of the indices, or fails naming it.
int64_t tuple_offset(const OpCall& c, const Shape& xs, int64_t k, int64_t j, auto coord) {
  int64_t off = 0;
  for (int64_t d = 0; d < k; ++d) {
    const int64_t n = xs[static_cast<size_t>(d)];
    int64_t v = coord(j * k + d);
    if (v < -n || v >= n)
      c.fail("input 'indices'",
             "coordinate " + std::to_string(d) + " in [" + std::to_string(-n) + ", " +
                 std::to_string(n) + ")",
             std::to_string(v) + " in tuple " + std::to_string(j));
    off = off * n + (v < 0 ? v + n : v);
  }
  return off;
}

void scatter_nd_kernel(const OpCall& c, const Tensor* in, Tensor* out, void*) {
  const Shape& xs = c.in(0).shape;
  const Shape& is = c.in(1).shape;
  const int64_t k = is.back();
  const int64_t tuples = shape::prod(is, 0, is.size() - 1);
  const int64_t slice = shape::prod(xs, static_cast<size_t>(k), xs.size());
  const auto es = static_cast<int64_t>(dtype_size(c.in(0).dtype));
  const Tensor& idx = in[1];
  auto coord = [&](int64_t i) {
    return idx.dtype() == DType::i64 ? idx.data_as<int64_t>()[i] : idx.data_as<int32_t>()[i];
  };
  for (int64_t j = 0; j < tuples && k > 0; ++j) tuple_offset(c, xs, k, j, coord);  // check first
  char* y = static_cast<char*>(out[0].data());
  if (out[0].numel()) std::memcpy(y, in[0].data(), static_cast<size_t>(out[0].numel() * es));
  const char* u = static_cast<const char*>(in[2].data());
  const Red red = red_of(c);
  for (int64_t j = 0; j < tuples; ++j) {
    char* dst = y + tuple_offset(c, xs, k, j, coord) * slice * es;
    const char* src = u + j * slice * es;
    if (red == Red::none)
      std::memcpy(dst, src, static_cast<size_t>(slice * es));
    else
      combine_bytes(c.in(0).dtype, red, dst, src, slice);
  }
}

}  // namespace

void register_scatter_nd_op(Registry& r) {
  OpSchema s;
  s.name = "scatter_nd";
  s.family = "shape";
  s.doc =
      "y = x with the slices at indices[..., :k] replaced by (or combined with, 'reduction') "
      "updates (ONNX ScatterND); tuples applied in order";
  s.inputs = {{"x", "any dtype, rank r"},
              {"indices", "i64 or i32 [..., k], k <= r"},
              {"updates", "indices.shape[:-1] + x.shape[k:], x's dtype"}};
  s.outputs = {{"y", "x's shape and dtype"}};
  s.attrs = {{"reduction", AttrType::str, std::string("none"), "none|add|mul|max|min"}};
  s.dtypes = std::vector<DType>(std::begin(kAllDTypes), std::end(kAllDTypes));
  s.infer = [](const OpCall& c) {
    ops::require_dtype(c, 1, {DType::i64, DType::i32});
    ops::require_same_dtype(c, 2, 0);
    red_of(c);
    const Shape& xs = c.in(0).shape;
    const Shape& is = c.in(1).shape;
    if (is.empty()) c.fail("input 'indices'", "rank >= 1", "rank 0");
    const int64_t k = is.back();
    if (k < 0 || k > static_cast<int64_t>(xs.size()))
      c.fail("input 'indices'", "a last dim <= x's rank " + std::to_string(xs.size()),
             shape_str(is));
    Shape us(is.begin(), is.end() - 1);
    us.insert(us.end(), xs.begin() + k, xs.end());
    if (c.in(2).shape != us)
      c.fail("input 'updates'", "shape " + shape_str(us), shape_str(c.in(2).shape));
    return std::vector<TensorDesc>{{c.in(0).dtype, xs}};
  };
  s.reference = [](const OpCall& c, const std::vector<RefTensor>& in, std::vector<RefTensor>& out) {
    const Shape& xs = in[0].shape;
    const int64_t k = in[1].shape.back();
    const int64_t tuples = shape::prod(in[1].shape, 0, in[1].shape.size() - 1);
    const int64_t slice = shape::prod(xs, static_cast<size_t>(k), xs.size());
    const Red red = red_of(c);
    const bool is_bool = c.in(0).dtype == DType::boolean;
    const bool is_int = !is_bool && !is_float(c.in(0).dtype);
    out[0].data = in[0].data;
    auto coord = [&](int64_t i) {
      return static_cast<int64_t>(in[1].data[static_cast<size_t>(i)]);
    };
    for (int64_t j = 0; j < tuples; ++j) {
      const int64_t off = tuple_offset(c, xs, k, j, coord) * slice;
      for (int64_t e = 0; e < slice; ++e) {
        double& d = out[0].data[static_cast<size_t>(off + e)];
        const double v = in[2].data[static_cast<size_t>(j * slice + e)];
        d = red == Red::none ? v
            : is_int         ? combine_int(red, c.in(0).dtype, d, v)
                             : combine(red, d, v);
        if (is_bool) d = d != 0;
      }
    }
  };
  s.cases = [](DType t) {
    std::vector<CheckCase> cs;
    auto add = [&](std::string name, Shape xs, Shape is, ValueRange ir, std::string red) {
      const int64_t k = is.back();
      Shape us(is.begin(), is.end() - 1);
      us.insert(us.end(), xs.begin() + k, xs.end());
      cs.push_back({std::move(name),
                    {TensorDesc(t, xs), TensorDesc(DType::i64, is), TensorDesc(t, us)},
                    {{"reduction", std::move(red)}},
                    {{}, ir, {}}});
    };
    for (const char* red : {"none", "add", "mul", "max", "min"}) {
      const std::string rs = std::string(" ") + red;
      add("[4,4,4] rows idx[2,1]" + rs, {4, 4, 4}, {2, 1}, {0, 3, true}, red);
      add("[4,4,4] elems idx[5,3]" + rs, {4, 4, 4}, {5, 3}, {-4, 3, true}, red);
      add("[8] idx[3,1]" + rs, {8}, {3, 1}, {-8, 7, true}, red);
      add("[5,5,33] idx[2,3,2]" + rs, {5, 5, 33}, {2, 3, 2}, {-5, 4, true}, red);
    }
    add("whole tensor idx[1,0]", {3, 5}, {1, 0}, {0, 0, true}, "none");
    add("no tuples idx[0,1]", {6, 2}, {0, 1}, {0, 5, true}, "add");
    return cs;
  };
  r.add_op(std::move(s));
  KernelDesc k;
  k.name = ops::kernel_name("scatter_nd", "copy", k.isa);
  k.dtypes = std::vector<DType>(std::begin(kAllDTypes), std::end(kAllDTypes));
  k.priority = ops::isa_priority(k.isa);
  k.create = simple_kernel(scatter_nd_kernel, nullptr);
  r.add_kernel("scatter_nd", std::move(k));
}

}  // namespace opsnn
