// Small-M GEMM on unpacked weights: the op form of decode, where B is a plain
// tensor (not pre-packed, not a constant operand) and packing it per call
// would cost more than the GEMM. B is read in place, converted to f32 in the
// loads (16-bit weights stream at half the bytes), threaded over N:
//
// * row-major K x N (B column stride 1, matmul's b): the packed decode
//   path's FMA sequence over the same K-blocks, so the bits equal the packed
//   path's (gemm::run) for f32 A;
// * transposed N x K (B row stride 1, a linear weight): dot products over K,
//   several weight rows at once, lanes summed at the end.
//
// The epilogue (plain or gated) is the packed path's.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/gemm/gemm.h"
#include "opsnn/cpu.h"

namespace opsnn::gemm {

// Largest M the op form runs on unpacked weights (above it, B is packed per
// call and reused by M / MR row panels).
inline constexpr int64_t kUnpackedMaxM = 16;

// B's layout is one the unpacked path reads (unit row or column stride).
bool unpacked_layout_ok(int64_t N, int64_t K, int64_t b_rs, int64_t b_cs);
// Workspace of run_unpacked: A converted to f32 unless it is f32 with unit
// column stride.
size_t unpacked_workspace_bytes(int64_t M, int64_t K, DType a_dtype, int64_t a_cs);

// C = epilogue(A·B) for M <= kUnpackedMaxM, B any float dtype in place.
// With ep.gated, N is B's 2H columns and C has H columns. `ws` holds
// unpacked_workspace_bytes(M, K, a.t, a.cs).
void run_unpacked(const Params& p, int64_t M, int64_t N, int64_t K, const MatView& a,
                  const MatView& b, const OutView& c, const Epilogue& ep, void* ws);

// Per-ISA entry points (gemm_unpacked_{scalar,avx2,avx512}.cc); p.kc is the
// packed path's K-block, `a` is f32 with unit column stride.
// a_pairs: A's rows in the pair order of bf16 weight rows (rows_to_f32_pairs
// in gemm_unpacked.cc; AVX-512 only).
using UnpackedFn = void (*)(const Params& p, int64_t M, int64_t N, int64_t K, const float* a,
                            int64_t lda, const MatView& b, const OutView& c, const Epilogue& ep,
                            bool a_pairs);
// AVX512_BF16 (params.bf16_dot): a bf16 B and a bf16 A with unit column
// stride, on vdpbf16ps (gemm_unpacked_avx512bf16.cc).
using UnpackedDpFn = void (*)(const Params& p, int64_t M, int64_t N, int64_t K, const bf16* a,
                              int64_t lda, const MatView& b, const OutView& c, const Epilogue& ep);
UnpackedDpFn unpacked_dp_avx512bf16();
// An ISA's entry point and how it reads bf16 weight rows: pair_lanes > 0
// (its floats per vector) when in pairs, so A must come in pair order
// (kDotPairs of its file), else 0.
struct UnpackedKernel {
  UnpackedFn fn;
  int pair_lanes;
};
UnpackedKernel unpacked_scalar();
UnpackedKernel unpacked_avx2();
UnpackedKernel unpacked_avx512();

}  // namespace opsnn::gemm
