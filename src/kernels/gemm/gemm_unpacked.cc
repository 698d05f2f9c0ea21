#include "kernels/gemm/gemm_unpacked.h"

#include "opsnn/thread_pool.h"

namespace opsnn::gemm {

bool unpacked_layout_ok(int64_t N, int64_t K, int64_t b_rs, int64_t b_cs) {
  return b_cs == 1 || b_rs == 1 || N <= 1 || K <= 1;
}

size_t unpacked_workspace_bytes(int64_t M, int64_t K, DType a_dtype, int64_t a_cs) {
  if (a_dtype == DType::f32 && a_cs == 1) return 0;
  return static_cast<size_t>(M * K) * sizeof(float);
}

namespace {

template <class T>
void rows_to_f32(const T* a, int64_t rs, int64_t cs, int64_t M, int64_t K, float* dst) {
  parallel_for(M, 1, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i)
      for (int64_t k = 0; k < K; ++k) dst[i * K + k] = to_f32(a[i * rs + k * cs]);
  });
}

}  // namespace

void run_unpacked(const Params& p, int64_t M, int64_t N, int64_t K, const MatView& a,
                  const MatView& b, const OutView& c, const Epilogue& ep, void* ws) {
  if (M <= 0 || N <= 0) return;
  OutView out = c;
  const int64_t out_bytes = M * (ep.gated ? N / 2 : N) * static_cast<int64_t>(dtype_size(c.t));
  out.stream = p.stream_min_bytes > 0 && out_bytes >= p.stream_min_bytes;
  if (p.bf16_dot && b.t == DType::bf16 && a.t == DType::bf16 && a.cs == 1 &&
      (b.rs == 1 || b.cs == 1))
    return unpacked_dp_avx512bf16()(p, M, N, K, static_cast<const bf16*>(a.p), a.rs, b, out, ep);
  const float* af = static_cast<const float*>(a.p);
  int64_t lda = a.rs;
  if (a.t != DType::f32 || a.cs != 1) {
    float* w = static_cast<float*>(ws);
    switch (a.t) {
      case DType::bf16:
        rows_to_f32(static_cast<const bf16*>(a.p), a.rs, a.cs, M, K, w);
        break;
      case DType::f16:
        rows_to_f32(static_cast<const f16*>(a.p), a.rs, a.cs, M, K, w);
        break;
      default:
        rows_to_f32(static_cast<const float*>(a.p), a.rs, a.cs, M, K, w);
        break;
    }
    af = w;
    lda = K;
  }
  // B's strides as given: a unit column stride is read row-major, a unit row
  // stride as weight rows (the per-ISA code decides).
  // N == 1 or K == 1 (unpacked_layout_ok) with neither stride 1: the stride
  // of the dim of size 1 is free, the other one is not.
  MatView bv = b;
  if (bv.cs != 1 && bv.rs != 1) {
    if (N <= 1)
      bv.cs = 1;  // one column, B[k][0] at k * rs: read row-major
    else
      bv.rs = 1;  // one row, B[0][n] at n * cs: read as weight rows
  }
  UnpackedFn fn = p.isa == Isa::avx512 ? unpacked_avx512()
                  : p.isa == Isa::avx2 ? unpacked_avx2()
                                       : unpacked_scalar();
  fn(p, M, N, K, af, lda, bv, out, ep);
}

}  // namespace opsnn::gemm
