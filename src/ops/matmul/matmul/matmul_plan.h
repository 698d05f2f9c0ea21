// How a matmul-family call maps onto the GEMM engine: per-batch offsets and
// in-matrix strides of A, B and the epilogue operands, computed in phase one
// from the descs (strided and broadcast inputs need no copy).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/gemm/gemm.h"
#include "opsnn/op.h"

namespace opsnn::matmul {

// One operand: input index, in-matrix strides and per output-batch-dim strides
// (0 where the operand broadcasts).
struct Operand {
  int input = -1;  // -1: absent
  int64_t rs = 0, cs = 0;
  std::vector<int64_t> bs;
};

struct Plan {
  int64_t M = 0, N = 0, K = 0;
  Shape batch;  // output batch dims
  Operand a, b, add, res;
  float alpha = 1, beta = 1, out_scale = 1;
  gemm::Act act = gemm::Act::none;
  bool gated = false;  // N = 2H B columns (gate | value), output H columns (gemm::Epilogue)
  DType packed_dtype = DType::f32;  // B panels keep B's dtype (16-bit weights stay 16-bit)
  DType a_dtype = DType::f32;
  DType out_dtype = DType::f32;
  int threads = 1;  // thread slots of the engine's scratch in the workspace (the count at create)
  bool b_shared() const {
    for (int64_t s : b.bs)
      if (s) return false;
    return true;
  }
};

// Per-batch strides of an operand of shape `shape` (whose trailing `mat_dims`
// dims are the matrix) against output batch dims `batch` (right-aligned).
std::vector<int64_t> batch_strides(const Shape& shape, const Strides& strides, int mat_dims,
                                   const Shape& batch);

// The op form (B not packed at create) reads B in place, unpacked: small M
// (decode) and a B layout gemm::run_unpacked reads.
bool reads_b_in_place(const Plan& plan);

// Above that, the op form stages B from the tensor panel by panel
// (gemm::run_staged_b) where its layout allows, else packs it per call.
bool stages_b(const Plan& plan, const gemm::Params& params);

// Runs the plan with the given engine parameters. `packed_b`: B packed at
// create (a constant, batch-shared B), or nullptr to read B in place
// (reads_b_in_place), stage it (stages_b) or pack it per call into `ws`. `ws` holds
// workspace_bytes(plan, params, packed_b != nullptr).
void run_plan(const Plan& plan, const gemm::Params& params, const Tensor* in, Tensor& out, void* ws,
              const void* packed_b = nullptr);
// B packed once (bytes).
size_t packed_b_bytes(const Plan& plan, const gemm::Params& params);
// B packed per call (unless packed at create or staged), then the engine's scratch for
// plan.threads threads, or one B and scratch per thread for batch-parallel calls.
size_t workspace_bytes(const Plan& plan, const gemm::Params& params, bool b_packed_at_create);

// Registers the GEMM kernels (every ISA x microkernel) for `op`; `plan_of`
// maps a validated call to its plan.
void register_gemm_kernels(Registry& r, const std::string& op, Plan (*plan_of)(const OpCall&));

}  // namespace opsnn::matmul
