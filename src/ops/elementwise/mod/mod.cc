// mod (ONNX Mod): the remainder of a / b with NumPy broadcasting, for every
// numeric dtype. fmod=0: the sign of b (Python's %, integers only in ONNX);
// fmod=1: the sign of a (C fmod). Float remainders are exact (std::fmod),
// which a vector a - trunc(a / b) * b is not, so the kernel is one typed
// scalar loop (integers in their own type: exact for all of int64).
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/builtin_ops.h"
#include "ops/common/cases.h"
#include "ops/common/checks.h"
#include "ops/common/kernel_names.h"
#include "ops/elementwise/broadcast.h"
#include "opsnn/op.h"
#include "opsnn/thread_pool.h"

namespace opsnn {
namespace {

double mod_ref(double a, double b, bool fmod) {
  double r = std::fmod(a, b);
  if (!fmod && r != 0 && (r < 0) != (b < 0)) r += b;
  return r;
}

// Integers: b == 0 gives 0 (undefined in ONNX), and MIN % -1 is 0 (C++ UB).
template <class T>
T mod_int(T a, T b, bool fmod) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return 0;
  }
  T r = static_cast<T>(a % b);
  if constexpr (std::is_signed_v<T>) {
    if (!fmod && r != 0 && (r < 0) != (b < 0)) r = static_cast<T>(r + b);
  }
  return r;
}

template <class T>
T load(const void* p, int64_t i) {
  return static_cast<const T*>(p)[i];
}

template <class T, class F>
void run_typed(const OpCall& call, const Tensor* in, Tensor* out, F f) {
  const Shape& os = call.out(0).shape;
  const Shape& as = call.in(0).shape;
  const Shape& bs = call.in(1).shape;
  const void* a = in[0].data();
  const void* b = in[1].data();
  T* y = out[0].data_as<T>();
  parallel_for(out[0].numel(), 4096, [&](int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o)
      y[o] = f(load<T>(a, ops::broadcast_index(os, as, o)),
               load<T>(b, ops::broadcast_index(os, bs, o)));
  });
}

void mod_kernel(const OpCall& call, const Tensor* in, Tensor* out, void*) {
  const bool fm = call.attrs.i("fmod") != 0;
  auto flt = [fm](auto a, auto b) {
    using T = decltype(a);
    const auto f32 = [](T v) {
      if constexpr (std::is_same_v<T, float>)
        return v;
      else
        return to_f32(v);
    };
    const float r = static_cast<float>(mod_ref(f32(a), f32(b), fm));
    if constexpr (std::is_same_v<T, float>)
      return r;
    else if constexpr (std::is_same_v<T, bf16>)
      return to_bf16(r);
    else
      return to_f16(r);
  };
  auto int_mod = [fm](auto a, auto b) { return mod_int(a, b, fm); };
  switch (call.in(0).dtype) {
    case DType::f32:
      return run_typed<float>(call, in, out, flt);
    case DType::bf16:
      return run_typed<bf16>(call, in, out, flt);
    case DType::f16:
      return run_typed<f16>(call, in, out, flt);
    case DType::i8:
      return run_typed<int8_t>(call, in, out, int_mod);
    case DType::u8:
      return run_typed<uint8_t>(call, in, out, int_mod);
    case DType::i32:
      return run_typed<int32_t>(call, in, out, int_mod);
    case DType::i64:
      return run_typed<int64_t>(call, in, out, int_mod);
    default:
      return;
  }
}

}  // namespace

void register_mod_op(Registry& r) {
  OpSchema s;
  s.name = "mod";
  s.family = "elementwise";
  s.doc =
      "remainder of a / b (ONNX Mod), NumPy broadcasting: fmod=0 takes the sign of b (Python %), "
      "fmod=1 the sign of a (C fmod); floats exact; integer b = 0 gives 0";
  s.inputs = {{"a", "dividend"}, {"b", "divisor, broadcast against a, a's dtype"}};
  s.outputs = {{"y", "broadcast shape, a's dtype"}};
  s.attrs = {{"fmod", AttrType::i64, int64_t{0}, "0: sign of b; 1: sign of a (C fmod)"}};
  s.dtypes = {DType::f32, DType::bf16, DType::f16, DType::i8, DType::u8, DType::i32, DType::i64};
  s.infer = [](const OpCall& call) {
    ops::require_dtype(
        call, 0,
        {DType::f32, DType::bf16, DType::f16, DType::i8, DType::u8, DType::i32, DType::i64});
    ops::require_same_dtype(call, 1, 0);
    const int64_t fm = call.attrs.i("fmod");
    if (fm != 0 && fm != 1) call.fail("attribute 'fmod'", "0 or 1", std::to_string(fm));
    return std::vector<TensorDesc>{TensorDesc(
        call.in(0).dtype, ops::broadcast_shapes(call, call.in(0).shape, call.in(1).shape))};
  };
  s.reference = [](const OpCall& call, const std::vector<RefTensor>& in,
                   std::vector<RefTensor>& out) {
    const bool fm = call.attrs.i("fmod") != 0;
    const bool flt = is_float(call.in(0).dtype);
    const Shape& os = out[0].shape;
    for (size_t o = 0; o < out[0].data.size(); ++o) {
      const auto io = static_cast<int64_t>(o);
      const double a = in[0].data[static_cast<size_t>(ops::broadcast_index(os, in[0].shape, io))];
      const double b = in[1].data[static_cast<size_t>(ops::broadcast_index(os, in[1].shape, io))];
      out[0].data[o] = flt ? mod_ref(a, b, fm) : b == 0 || b == -1 ? 0.0 : mod_ref(a, b, fm);
    }
  };
  s.cases = [](DType t) {
    std::vector<CheckCase> cs;
    auto add = [&](std::string name, TensorDesc a, TensorDesc b, int64_t fm, ValueRange rb,
                   bool keep = false) {
      CheckCase c{std::move(name), {std::move(a), std::move(b)}, {{"fmod", fm}}, {{-20, 20}, rb}};
      c.keep_dtypes = keep;
      if (keep) c.ranges[0].integer = true;
      cs.push_back(std::move(c));
    };
    for (int64_t fm : {0, 1}) {
      const std::string f = fm ? " fmod" : "";
      add("[1000]" + f, TensorDesc(t, {1000}), TensorDesc(t, {1000}), fm, {0.5, 7});
      add("negdiv[33,17]+[17]" + f, TensorDesc(t, {33, 17}), TensorDesc(t, {17}), fm, {-7, -0.5});
      add("[]+[]" + f, TensorDesc(t, Shape{}), TensorDesc(t, Shape{}), fm, {1, 3});
      add("empty[0,5]+[5]" + f, TensorDesc(t, {0, 5}), TensorDesc(t, {5}), fm, {1, 3});
      add("strided[33,17]^T+[17]" + f, ops::transposed_desc(t, 33, 17), TensorDesc(t, {17}), fm,
          {-5, 5});
      for (DType it : {DType::i64, DType::i32, DType::i8})
        add(std::string(dtype_name(it)) + "[5,1,7]+[1,3,1]" + f, TensorDesc(it, {5, 1, 7}),
            TensorDesc(it, {1, 3, 1}), fm, {-6, 6, true}, true);
    }
    add("u8[100]", TensorDesc(DType::u8, {100}), TensorDesc(DType::u8, {100}), 0, {1, 9, true},
        true);
    cs.back().ranges[0] = {0, 200, true};
    return cs;
  };
  r.add_op(std::move(s));
  KernelDesc k;
  k.isa = Isa::scalar;
  k.name = ops::kernel_name("mod", "loop", k.isa);
  k.dtypes = {DType::f32, DType::bf16, DType::f16, DType::i8, DType::u8, DType::i32, DType::i64};
  k.priority = ops::isa_priority(k.isa);
  k.create = simple_kernel(mod_kernel, nullptr);
  r.add_kernel("mod", std::move(k));
}

}  // namespace opsnn
