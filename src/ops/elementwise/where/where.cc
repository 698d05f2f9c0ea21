// Schema, float64 reference, case table and kernels of where(cond, a, b).
#include "ops/elementwise/where/where.h"

#include <map>
#include <memory>
#include <string>

#include "ops/builtin_ops.h"
#include "ops/common/bench_keys.h"
#include "ops/common/cases.h"
#include "ops/common/checks.h"
#include "ops/common/isa_kernels.h"
#include "opsnn/error.h"
#include "opsnn/op.h"

namespace opsnn {
namespace {

class WhereKernel : public KernelInstance {
 public:
  WhereKernel(const OpCall& call, where::RunFn fn)
      : fn_(fn),
        plan_(ops::make_broadcast_plan(call.out(0).shape,
                                       {call.in(0).shape, call.in(1).shape, call.in(2).shape})) {}
  void run(const Tensor* in, Tensor* out, void*) override {
    fn_(out[0].dtype(), plan_, static_cast<const uint8_t*>(in[0].data()), in[1].data(),
        in[2].data(), out[0].data());
  }

 private:
  where::RunFn fn_;
  ops::BroadcastPlan plan_;
};

std::vector<CheckCase> where_cases(DType t) {
  const ValueRange cr = {0, 1, true}, vr = {-3, 3};
  std::vector<CheckCase> cs;
  auto add = [&](std::string name, Shape c, TensorDesc a, TensorDesc b, DType ct = DType::boolean) {
    cs.push_back({std::move(name),
                  {TensorDesc(ct, std::move(c)), std::move(a), std::move(b)},
                  {},
                  {cr, vr, vr}});
  };
  for (const Shape& sh : ops::elementwise_shapes())
    add(shape_str(sh), sh, TensorDesc(t, sh), TensorDesc(t, sh));
  add("u8cond[1000]", {1000}, TensorDesc(t, {1000}), TensorDesc(t, {1000}), DType::u8);
  cs.back().ranges[0] = {0, 3, true};  // any nonzero byte is true
  add("cond_row[33,17]", {17}, TensorDesc(t, {33, 17}), TensorDesc(t, {33, 17}));
  add("cond_col[33,17]", {33, 1}, TensorDesc(t, {33, 17}), TensorDesc(t, {33, 17}));
  add("cond_scalar[1000]", {1}, TensorDesc(t, {1000}), TensorDesc(t, {1000}));
  add("a_scalar[33,17]", {33, 17}, TensorDesc(t, {1}), TensorDesc(t, {33, 17}));
  add("b_scalar[33,17]", {33, 17}, TensorDesc(t, {33, 17}), TensorDesc(t, Shape{}));
  add("mask[2,1,5,7]+[2,4,5,7]+[1]", {2, 1, 5, 7}, TensorDesc(t, {2, 4, 5, 7}), TensorDesc(t, {1}));
  add("all3[5,1,1]+[1,3,1]+[1,1,7]", {5, 1, 1}, TensorDesc(t, {1, 3, 1}), TensorDesc(t, {1, 1, 7}));
  add("large[65537]", {65537}, TensorDesc(t, {65537}), TensorDesc(t, {65537}));
  add("large[3,65537]+[65537]", {3, 65537}, TensorDesc(t, {65537}), TensorDesc(t, {3, 65537}));
  add("empty[0,5]", {0, 5}, TensorDesc(t, {5}), TensorDesc(t, {0, 5}));
  add("strided_a[33,17]^T", {33, 17}, ops::transposed_desc(t, 33, 17), TensorDesc(t, {17}));
  cs.push_back({"strided_cond[33,17]^T",
                {TensorDesc(DType::boolean, {33, 17}, {1, 33}), TensorDesc(t, {33, 17}),
                 ops::transposed_desc(t, 33, 17)},
                {},
                {cr, vr, vr}});
  return cs;
}

// `opsnn bench --op where --case shape=AxB`: cond (bool), a and b all of `shape`.
CheckCase where_bench_case(const std::map<std::string, std::string>& kv, DType t) {
  ops::CaseKeys keys("where", kv);
  const Shape sh = keys.dims("shape", {int64_t{1} << 24});
  keys.done();
  CheckCase c;
  c.name = "bench";
  c.inputs = {TensorDesc(DType::boolean, sh), TensorDesc(t, sh), TensorDesc(t, sh)};
  c.ranges = {{0, 1, true}, {-3, 3}, {-3, 3}};
  return c;
}

}  // namespace

void register_where_ops(Registry& r) {
  OpSchema s;
  s.name = "where";
  s.family = "elementwise";
  s.doc =
      "cond ? a : b elementwise, NumPy broadcasting of all three; cond is bool or u8 (nonzero = "
      "true)";
  s.inputs = {{"cond", "bool or u8 condition"},
              {"a", "values where cond is true"},
              {"b", "values where cond is false"}};
  s.outputs = {{"y", "broadcast shape of cond, a and b; dtype of a"}};
  s.dtypes = ops::kFloatDTypes;
  s.infer = [](const OpCall& call) {
    ops::require_dtype(call, 0, {DType::boolean, DType::u8});
    if (!is_float(call.in(1).dtype))  // integer values: the reference kernel
      ops::require_dtype(call, 1,
                         {DType::f32, DType::bf16, DType::f16, DType::i8, DType::u8, DType::i32,
                          DType::i64, DType::boolean});
    ops::require_same_dtype(call, 2, 1);
    const Shape ab = ops::broadcast_shapes(call, call.in(1).shape, call.in(2).shape);
    return std::vector<TensorDesc>{
        TensorDesc(call.in(1).dtype, ops::broadcast_shapes(call, call.in(0).shape, ab))};
  };
  s.reference = [](const OpCall&, const std::vector<RefTensor>& in, std::vector<RefTensor>& out) {
    const Shape& os = out[0].shape;
    for (size_t o = 0; o < out[0].data.size(); ++o) {
      const int64_t io = static_cast<int64_t>(o);
      const bool c =
          in[0].data[static_cast<size_t>(ops::broadcast_index(os, in[0].shape, io))] != 0;
      const RefTensor& src = c ? in[1] : in[2];
      out[0].data[o] = src.data[static_cast<size_t>(ops::broadcast_index(os, src.shape, io))];
    }
  };
  s.cases = where_cases;
  s.bench_case = where_bench_case;
  r.add_op(std::move(s));

  ops::add_isa_kernels(
      r, "where",
      ops::PerIsa<where::RunFn>{where::run_avx512(), where::run_avx2(), where::run_scalar()},
      [](where::RunFn fn, Isa) {
        return [fn](const OpCall& call, std::string* why) -> std::unique_ptr<KernelInstance> {
          if (!is_float(call.out(0).dtype)) {
            if (why) *why = "integer dtypes run on the reference kernel";
            return nullptr;
          }
          return std::make_unique<WhereKernel>(call, fn);
        };
      },
      "where_bcast_");
}

}  // namespace opsnn
