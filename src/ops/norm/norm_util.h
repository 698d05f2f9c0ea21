// Helpers shared by the norm schemas (row_norms.cc, channel_norms.cc).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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
// Per-ISA kernels, best first.
struct IsaFns {
  Isa isa;
  Fns fns;
};
std::vector<IsaFns> isa_fns();

}  // namespace opsnn::norm

namespace opsnn::norm {
// Benchmark cost: bytes of every present input read and every output written.
void io_cost(const OpCall& call, double* bytes, double* flops);
}  // namespace opsnn::norm
