// Helpers shared by the norm schemas (row_norms.cc, channel_norms.cc).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ops/common/checks.h"
#include "ops/common/isa_kernels.h"
#include "ops/norm/norm.h"
#include "opsnn/op.h"

namespace opsnn::norm {

void register_row_norms(Registry& r);
void register_channel_norms(Registry& r);

// Contiguous float tensor (f32, bf16, f16) -> f32.
void to_f32(const Tensor& t, float* dst);
// Bytes of n floats rounded up to the 64-byte alignment.
size_t floats_bytes(int64_t n);
// eps attribute: finite and >= 0.
float eps_of(const OpCall& call);
// Input i must be a float tensor of shape `shape` (any float dtype).
void require_param(const OpCall& call, size_t i, const Shape& shape, const std::string& what);
// Per-ISA kernel entry points.
ops::PerIsa<Fns> isa_fns();

// Benchmark cost: bytes of every present input read and every output written.
void io_cost(const OpCall& call, double* bytes, double* flops);

// The schema parts the row and channel norms share: float dtypes, f32
// tolerance, io_cost, and infer / reference / cases / bench_case bound to the
// op's form `f` (the file's own functions of that name).
template <class Form, class Infer, class Ref, class Cases, class Bench>
void set_norm_schema(OpSchema& s, Form f, Infer infer, Ref reference, Cases cases, Bench bench) {
  s.dtypes = ops::kFloatDTypes;
  s.infer = [f, infer](const OpCall& call) { return infer(call, f); };
  s.reference = [f, reference](const OpCall& call, const std::vector<RefTensor>& in,
                               std::vector<RefTensor>& out) { reference(call, f, in, out); };
  s.cases = [f, cases](DType t) { return cases(f, t); };
  s.tolerance = [](DType t) {
    if (t == DType::f32) return Tolerance{1e-5, 2e-5};
    return default_tolerance(t);
  };
  s.bench_case = [f, bench, name = s.name](const std::map<std::string, std::string>& kv, DType t) {
    return bench(f, name, kv, t);
  };
  s.cost = io_cost;
}

}  // namespace opsnn::norm
