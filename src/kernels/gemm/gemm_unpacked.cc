#include "kernels/gemm/gemm_unpacked.h"

#include <type_traits>

#include "opsnn/thread_pool.h"

namespace opsnn::gemm {

bool unpacked_layout_ok(int64_t N, int64_t K, int64_t b_rs, int64_t b_cs) {
  return b_cs == 1 || b_rs == 1 || N <= 1 || K <= 1;
}

// Whole pairs of the widest vectors (2 x 16 floats): the pair order's padding.
constexpr int64_t kPairPad = 32;

size_t unpacked_workspace_bytes(int64_t M, int64_t K, DType a_dtype, int64_t a_cs) {
  if (a_dtype == DType::f32 && a_cs == 1) return 0;
  return static_cast<size_t>(M * ((K + kPairPad - 1) / kPairPad * kPairPad)) * sizeof(float);
}

namespace {

// f(stride) with a compile-time 1 where cs is 1 (the usual case), so that
// the loops over unit-stride rows vectorise.
template <class F>
void with_col_stride(int64_t cs, F&& f) {
  if (cs == 1)
    f(std::integral_constant<int64_t, 1>{});
  else
    f(cs);
}

template <class T>
void rows_to_f32(const T* a, int64_t rs, int64_t cs, int64_t M, int64_t K, float* dst) {
  parallel_for(M, 1, [&](int64_t i0, int64_t i1) {
    with_col_stride(cs, [&](auto cstride) {
      for (int64_t i = i0; i < i1; ++i)
        for (int64_t k = 0; k < K; ++k) dst[i * K + k] = to_f32(a[i * rs + k * cstride]);
    });
  });
}

// The order of bf16 weight rows read in pairs (dot_span's Pairs): in each
// block of 2L columns (L floats a vector), lane l of the first L holds column
// (l / 4) * 8 + l % 4 and lane l of the second L that + 4, the order
// vpunpck{l,h}wd widens a weight row's 2L bf16 in; columns past K are zero.
// Written as runs of four columns: with the index computed per element (a
// division by the run-time L) bf16 `linear` 8x48x4096 took 175 us against
// 75 now, most of it this conversion (Zen 3, 1 thread; packed 63-78 us).
template <class T>
void rows_to_f32_pairs(const T* a, int64_t rs, int64_t cs, int64_t M, int64_t K, int64_t L,
                       int64_t ld, float* dst) {
  parallel_for(M, 1, [&](int64_t i0, int64_t i1) {
    with_col_stride(cs, [&](auto cstride) {
      for (int64_t i = i0; i < i1; ++i) {
        const T* src = a + i * rs;
        float* d = dst + i * ld;
        // Source columns k .. k + 3 to dd[0 .. 3], zero past K.
        auto run4 = [&](int64_t k, float* dd) {
          if (k + 4 <= K) {
            for (int64_t q = 0; q < 4; ++q) dd[q] = to_f32(src[(k + q) * cstride]);
          } else {
            for (int64_t q = 0; q < 4; ++q)
              dd[q] = k + q < K ? to_f32(src[(k + q) * cstride]) : 0.0f;
          }
        };
        for (int64_t b = 0; b < ld; b += 2 * L)
          for (int64_t j = 0; j < L / 4; ++j) {
            run4(b + 8 * j, d + b + 4 * j);
            run4(b + 8 * j + 4, d + b + L + 4 * j);
          }
      }
    });
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
  const float* af = static_cast<const float*>(a.p);
  int64_t lda = a.rs;
  const UnpackedKernel uk = p.isa == Isa::avx512 ? unpacked_avx512()
                            : p.isa == Isa::avx2 ? unpacked_avx2()
                                                 : unpacked_scalar();
  const bool convert = a.t != DType::f32 || a.cs != 1;
  // An ISA that reads bf16 weight rows in pairs (dot_span's Pairs) gets A,
  // converted anyway, written in their order.
  const int64_t L = uk.pair_lanes;
  const bool a_pairs =
      convert && b.t == DType::bf16 && L > 0 && bv.rs == 1 && (bv.cs != 1 || N == 1);
  if (convert) {
    float* w = static_cast<float*>(ws);
    lda = a_pairs ? (K + 2 * L - 1) / (2 * L) * (2 * L) : K;
    auto to_f32_rows = [&](const auto* src) {
      if (a_pairs)
        rows_to_f32_pairs(src, a.rs, a.cs, M, K, L, lda, w);
      else
        rows_to_f32(src, a.rs, a.cs, M, K, w);
    };
    switch (a.t) {
      case DType::bf16:
        to_f32_rows(static_cast<const bf16*>(a.p));
        break;
      case DType::f16:
        to_f32_rows(static_cast<const f16*>(a.p));
        break;
      default:
        to_f32_rows(static_cast<const float*>(a.p));
        break;
    }
    af = w;
  }
  uk.fn(p, M, N, K, af, lda, bv, out, ep, a_pairs);
}

}  // namespace opsnn::gemm
