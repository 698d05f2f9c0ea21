// cast: converts between all 8 dtypes. Strided inputs are read directly
// (contiguous runs converted in place, other runs gathered 256 at a time).
#include "ops/shape/cast.h"

#include <algorithm>
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
#include "ops/shape/shape_util.h"
#include "opsnn/error.h"
#include "opsnn/op.h"
#include "opsnn/thread_pool.h"

namespace opsnn {
namespace {

DType cast_to(const OpCall& c) {
  const std::string& n = c.attrs.s("to");
  for (DType t : kAllDTypes)
    if (n == dtype_name(t)) return t;
  try {
    return dtype_from_name(n);
  } catch (const Error&) {
    c.fail("attribute 'to'", "a dtype name (f32|f16|bf16|i8|u8|i32|i64|bool)", "'" + n + "'");
  }
}

// The float64 reference of one element (the rules of cast_impl.h).
double cast_value(double v, DType from, DType to) {
  (void)from;
  auto sat = [&](double lo, double hi) {
    if (v != v) return 0.0;
    if (v <= lo) return lo;
    if (v >= hi) return hi;
    return std::trunc(v);
  };
  switch (to) {
    case DType::f32:
      return static_cast<double>(static_cast<float>(v));
    case DType::f16:  // through f32, nearest even; overflow -> Inf
      return f16_bits_to_f32(f32_to_f16_bits(static_cast<float>(v)));
    case DType::bf16:
      return bf16_bits_to_f32(f32_to_bf16_bits(static_cast<float>(v)));
    case DType::i8:
      return sat(-128, 127);
    case DType::u8:
      return sat(0, 255);
    case DType::i32:
      return sat(-2147483648.0, 2147483647.0);
    case DType::i64:
      return sat(-9223372036854775808.0, 9223372036854775807.0);
    case DType::boolean:
      return v != 0 ? 1 : 0;
  }
  return v;
}

void run_cast(cast::TableFn table, const Tensor& x, Tensor& y) {
  const cast::ConvFn fn = table(x.dtype(), y.dtype());
  const int64_t n = x.numel();
  if (n == 0) return;
  const int64_t ies = static_cast<int64_t>(dtype_size(x.dtype()));
  const int64_t oes = static_cast<int64_t>(dtype_size(y.dtype()));
  const char* src = static_cast<const char*>(x.data());
  char* dst = static_cast<char*>(y.data());
  // Merge dims that are contiguous in the source (the output is contiguous).
  struct Dim {
    int64_t n, s;
  };
  ops::RankArray<Dim> dims;
  for (size_t k = 0; k < x.shape().size(); ++k) {
    if (x.shape()[k] == 1) continue;
    Dim d{x.shape()[k], x.strides()[k]};
    if (!dims.empty() && dims.back().s == d.s * d.n)
      dims.back() = {dims.back().n * d.n, d.s};
    else
      dims.push_back(d);
  }
  if (dims.empty()) dims.push_back({1, 1});
  const Dim in = dims.back();
  dims.pop_back();
  constexpr int64_t kPiece = 4096;
  const int64_t pieces = (in.n + kPiece - 1) / kPiece;
  int64_t outer = 1;
  for (const Dim& d : dims) outer *= d.n;
  parallel_for(outer * pieces, std::max<int64_t>(1, 16384 / std::min(in.n, kPiece)),
               [&](int64_t b, int64_t e) {
                 alignas(64) char buf[256 * 8];
                 for (int64_t t = b; t < e; ++t) {
                   int64_t o = t / pieces, so = 0;
                   for (size_t k = dims.size(); k-- > 0;) {
                     so += (o % dims[k].n) * dims[k].s;
                     o /= dims[k].n;
                   }
                   const int64_t i0 = (t % pieces) * kPiece, len = std::min(kPiece, in.n - i0);
                   const int64_t flat = (t / pieces) * in.n + i0;
                   const char* s = src + (so + i0 * in.s) * ies;
                   char* d = dst + flat * oes;
                   if (in.s == 1) {
                     fn(s, d, len);
                     continue;
                   }
                   for (int64_t j = 0; j < len; j += 256) {
                     const int64_t m = std::min<int64_t>(256, len - j);
                     for (int64_t q = 0; q < m; ++q)
                       std::memcpy(buf + q * ies, s + (j + q) * in.s * ies,
                                   static_cast<size_t>(ies));
                     fn(buf, d + j * oes, m);
                   }
                 }
               });
}

CheckCase cc(std::string name, TensorDesc in, DType to, ValueRange r) {
  CheckCase c;
  c.name = std::move(name);
  c.inputs = {std::move(in)};
  c.attrs = {{"to", std::string(dtype_name(to))}};
  c.ranges = {r};
  c.keep_dtypes = true;
  return c;
}

}  // namespace

void register_cast_op(Registry& r) {
  OpSchema s;
  s.name = "cast";
  s.family = "shape";
  s.doc =
      "Converts x to dtype 'to' (any of the 8 dtypes, either way). float -> float rounds to "
      "nearest "
      "even (through f32; NaN stays NaN, overflow gives Inf); float -> integer truncates toward "
      "zero "
      "and saturates to the target range, NaN -> 0; integer -> integer saturates; integer -> "
      "bf16/f16 rounds through f32; any -> bool is x != 0 (NaN -> true); bool -> any is 0 or 1.";
  s.inputs = {{"x", "any dtype, any strides"}};
  s.outputs = {{"y", "dtype 'to', contiguous"}};
  s.attrs = {
      {"to", AttrType::str, std::nullopt, "target dtype name: f32|f16|bf16|i8|u8|i32|i64|bool"}};
  s.dtypes = std::vector<DType>(std::begin(kAllDTypes), std::end(kAllDTypes));
  s.infer = [](const OpCall& c) { return std::vector<TensorDesc>{{cast_to(c), c.in(0).shape}}; };
  s.reference = [](const OpCall& c, const std::vector<RefTensor>& in, std::vector<RefTensor>& out) {
    const DType to = cast_to(c);
    for (size_t i = 0; i < in[0].data.size(); ++i)
      out[0].data[i] = cast_value(in[0].data[i], c.in(0).dtype, to);
  };
  s.cases = [](DType from) {
    std::vector<CheckCase> cs;
    ValueRange range;
    switch (from) {
      case DType::f32:
      case DType::bf16:
        range = {-3e9, 3e9};
        break;
      case DType::f16:
        range = {-400, 400};
        break;
      case DType::i8:
        range = {-128, 127, true};
        break;
      case DType::u8:
        range = {0, 255, true};
        break;
      case DType::i32:
      case DType::i64:
        range = {-100000, 100000, true};
        break;
      case DType::boolean:
        range = {0, 1, true};
        break;
    }
    const ValueRange small = is_float(from) ? ValueRange{-300, 300} : range;
    for (DType to : kAllDTypes) {
      const std::string tn = std::string("->") + dtype_name(to);
      cs.push_back(cc("[0]" + tn, TensorDesc(from, {0}), to, range));
      cs.push_back(cc("[1]" + tn, TensorDesc(from, {1}), to, small));
      cs.push_back(cc("[37]" + tn, TensorDesc(from, {37}), to, small));
      cs.push_back(cc("[1000]" + tn, TensorDesc(from, {1000}), to, range));
      cs.push_back(cc("[3,5,7]" + tn, TensorDesc(from, {3, 5, 7}), to, small));
      cs.push_back(cc("[5000]" + tn, TensorDesc(from, {5000}), to, small));
      cs.push_back(cc("strided[33,17]^T" + tn, ops::transposed_desc(from, 33, 17), to, small));
      cs.push_back(cc("strided[4,5,6]" + tn, TensorDesc(from, {4, 5, 6}, {70, 14, 2}), to, range));
    }
    return cs;
  };
  s.bench_case = [](const std::map<std::string, std::string>& kv, DType t) {
    CheckCase c = ops::attr_bench_case(Registry::global().schema("cast"), kv, t);
    c.keep_dtypes = true;
    c.ranges = {{-100, 100}};
    return c;
  };
  r.add_op(std::move(s));

  struct V {
    Isa isa;
    cast::TableFn table;
  };
  const V vs[] = {{Isa::avx512, cast::table_avx512},
                  {Isa::avx2, cast::table_avx2},
                  {Isa::scalar, cast::table_scalar}};
  for (const V& v : vs) {
    KernelDesc k;
    k.name = ops::kernel_name("cast", "", v.isa);
    k.isa = v.isa;
    k.dtypes = std::vector<DType>(std::begin(kAllDTypes), std::end(kAllDTypes));
    k.contiguous_inputs = false;
    k.priority = ops::isa_priority(v.isa);
    k.create = simple_kernel([table = v.table](const OpCall&, const Tensor* in, Tensor* out,
                                               void*) { run_cast(table, in[0], out[0]); },
                             ops::ranks_fit);
    r.add_kernel("cast", std::move(k));
  }
}

}  // namespace opsnn
