// trilu (ONNX Trilu): the upper (upper=1) or lower triangle of the last two
// dims, from diagonal k on; the rest is zero. Any dtype: the kernel copies
// each row's kept span and zero-fills the rest (zero bytes are 0 / false).
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "ops/builtin_ops.h"
#include "ops/common/cases.h"
#include "ops/common/checks.h"
#include "ops/common/kernel_names.h"
#include "opsnn/op.h"
#include "opsnn/thread_pool.h"

namespace opsnn {
namespace {

// Row i keeps columns [lo, hi): upper keeps j - i >= k, lower j - i <= k.
void kept_span(bool upper, int64_t k, int64_t i, int64_t cols, int64_t* lo, int64_t* hi) {
  if (upper) {
    *lo = std::clamp<int64_t>(i + k, 0, cols);
    *hi = cols;
  } else {
    *lo = 0;
    *hi = std::clamp<int64_t>(i + k + 1, 0, cols);
  }
}

void trilu_kernel(const OpCall& c, const Tensor* in, Tensor* out, void*) {
  const Shape& xs = c.in(0).shape;
  if (out[0].numel() == 0) return;
  const int64_t rows = xs[xs.size() - 2], cols = xs.back();
  const auto es = static_cast<int64_t>(dtype_size(c.in(0).dtype));
  const bool upper = c.attrs.i("upper") != 0;
  const int64_t k = c.attrs.i("k");
  const char* x = static_cast<const char*>(in[0].data());
  char* y = static_cast<char*>(out[0].data());
  const int64_t nrows = out[0].numel() / cols;
  parallel_for(nrows, std::max<int64_t>(1, 16384 / (cols * es)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      int64_t lo, hi;
      kept_span(upper, k, r % rows, cols, &lo, &hi);
      char* d = y + r * cols * es;
      const char* s = x + r * cols * es;
      std::memset(d, 0, static_cast<size_t>(lo * es));
      if (hi > lo) std::memcpy(d + lo * es, s + lo * es, static_cast<size_t>((hi - lo) * es));
      std::memset(d + std::max(hi, lo) * es, 0,
                  static_cast<size_t>((cols - std::max(hi, lo)) * es));
    }
  });
}

}  // namespace

void register_trilu_op(Registry& r) {
  OpSchema s;
  s.name = "trilu";
  s.family = "shape";
  s.doc =
      "upper (upper=1: j - i >= k) or lower (j - i <= k) triangle of the last two dims, zero "
      "elsewhere (ONNX Trilu); any dtype";
  s.inputs = {{"x", "any dtype, rank >= 2"}};
  s.outputs = {{"y", "x's shape and dtype"}};
  s.attrs = {{"upper", AttrType::i64, int64_t{1}, "1: upper triangle; 0: lower"},
             {"k", AttrType::i64, int64_t{0}, "diagonal offset (> 0: above the main one)"}};
  s.dtypes = std::vector<DType>(std::begin(kAllDTypes), std::end(kAllDTypes));
  s.infer = [](const OpCall& c) {
    ops::require_rank_at_least(c, 0, 2);
    const int64_t u = c.attrs.i("upper");
    if (u != 0 && u != 1) c.fail("attribute 'upper'", "0 or 1", std::to_string(u));
    return std::vector<TensorDesc>{{c.in(0).dtype, c.in(0).shape}};
  };
  s.reference = [](const OpCall& c, const std::vector<RefTensor>& in, std::vector<RefTensor>& out) {
    const Shape& xs = in[0].shape;
    const int64_t rows = xs[xs.size() - 2], cols = xs.back();
    const bool upper = c.attrs.i("upper") != 0;
    const int64_t k = c.attrs.i("k");
    for (size_t f = 0; f < in[0].data.size(); ++f) {
      const int64_t j = static_cast<int64_t>(f) % cols, i = static_cast<int64_t>(f) / cols % rows;
      const bool keep = upper ? j - i >= k : j - i <= k;
      out[0].data[f] = keep ? in[0].data[f] : 0.0;
    }
  };
  s.cases = [](DType t) {
    std::vector<CheckCase> cs;
    auto add = [&](std::string name, TensorDesc x, int64_t upper, int64_t k) {
      cs.push_back({std::move(name), {std::move(x)}, {{"upper", upper}, {"k", k}}, {}});
    };
    for (int64_t up : {0, 1}) {
      const std::string u = up ? "triu " : "tril ";
      add(u + "[5,5]", TensorDesc(t, {5, 5}), up, 0);
      add(u + "[4,7] k=2", TensorDesc(t, {4, 7}), up, 2);
      add(u + "[7,4] k=-3", TensorDesc(t, {7, 4}), up, -3);
      add(u + "[2,3,33,17] k=1", TensorDesc(t, {2, 3, 33, 17}), up, 1);
      add(u + "[3,5] k=9 (all out)", TensorDesc(t, {3, 5}), up, 9);
      add(u + "[3,5] k=-9", TensorDesc(t, {3, 5}), up, -9);
      add(u + "[1,1000]", TensorDesc(t, {1, 1000}), up, 0);
      add(u + "empty [0,3,3]", TensorDesc(t, {0, 3, 3}), up, 0);
      add(u + "strided[33,17]^T", ops::transposed_desc(t, 33, 17), up, -1);
    }
    return cs;
  };
  r.add_op(std::move(s));
  KernelDesc k;
  k.name = ops::kernel_name("trilu", "copy", k.isa);
  k.dtypes = std::vector<DType>(std::begin(kAllDTypes), std::end(kAllDTypes));
  k.priority = ops::isa_priority(k.isa);
  k.create = simple_kernel(trilu_kernel, nullptr);
  r.add_kernel("trilu", std::move(k));
}

}  // namespace opsnn
